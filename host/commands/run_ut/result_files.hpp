// The two outputs of run_ut, accuracy_checking_result_<ts>.csv and accuracy_checking_details_<ts>.csv
// (run-ut.md §7), appended one API at a time — details rows first, then the API's result row —
// and flushed, so a killed run loses at most the API in flight. Resuming (-csv_path) first repairs
// what a kill can leave: a cut last line, details rows of an API whose result row never came.
#pragma once

#include <set>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <vector>

namespace acccheck::host {

#include <stdexcept>

// Appending a row failed (disk full, I/O error): the rows before it are on disk.
class OutputFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ApiRows {
  std::vector<std::string> result;                 // 3 or 4 fields
  std::vector<std::vector<std::string>> details;   // 23 fields each
  double worker_seconds = 0, operator_seconds = 0; // timing reported by the worker (not written)
  // Device configuration entries (npu-sim's faults) and the calls this API's run matched (not written).
  std::vector<std::pair<std::string, std::uint64_t>> configuration_use;
  std::string error_data_problem;  // -save_error_data failed for this API: "<path>: <reason>" (not written)
};

class ResultFiles {
 public:
  // New files in `out_dir` with this timestamp; throws std::runtime_error naming the path when a
  // file exists already, the folder is a symlink or cannot be written.
  static ResultFiles create(const std::string& out_dir, const std::string& timestamp);
  // Existing files for resume: `result_csv` must be named accuracy_checking_result_<14 digits>.csv
  // and its details file must sit beside it.
  static ResultFiles resume(const std::string& result_csv);

  ResultFiles(ResultFiles&&) noexcept;
  ~ResultFiles();

  void append(const ApiRows& rows);
  const std::set<std::string>& done() const { return done_; }  // APIs with a result row
  const std::string& result_path() const { return result_path_; }
  const std::string& details_path() const { return details_path_; }
  std::string timestamp() const;

 private:
  ResultFiles() = default;
  std::string result_path_, details_path_;
  int result_fd_ = -1, details_fd_ = -1;
  std::set<std::string> done_;
};

// The API a details row belongs to: "Functional.linear.0.forward.output.1" → "Functional.linear.0".
std::string api_of_details_row(const std::string& row_name);

// Reads a result/details pair written by run_ut (this tool's or the reference's).
struct ResultTable {
  std::vector<std::string> result_header, details_header;
  std::vector<ApiRows> apis;  // in file order; details grouped under their API
};
ResultTable read_result_table(const std::string& result_csv, const std::string& details_csv);

}  // namespace acccheck::host
