// What an HTML report shows, gathered from the files of a run: the result and details CSVs of
// `compare` (NPU vs GPU) or of `run_ut` (device vs benchmark), optionally both sides' run_ut
// details (every metric of both sides) and the dump (input dtypes and shapes, call order, stacks).
// Torch-free: the report is built by the host from files alone.
#pragma once

#include <acccheck/json.hpp>

#include <stdexcept>
#include <string>

namespace acccheck::host {

struct ReportSources {
  std::string result;       // api_precision_compare_result_*.csv or accuracy_checking_result_*.csv
  std::string details;      // the matching details file
  std::string npu_details;  // compare mode, optional: run_ut details of the NPU side
  std::string gpu_details;  // compare mode, optional: run_ut details of the GPU side
  std::string dump_json;    // optional: dump.json (stack.json beside it is read when present)
  std::string title;
};

// Raised for a missing or malformed input: one line naming the file (and record).
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The newest pair of outputs in `dir` (compare outputs preferred over run_ut outputs): fills
// result and details; throws ReportError naming the folder when it holds neither.
void find_run_outputs(const std::string& dir, ReportSources& sources);

// The report's data: {mode, title, sources, columns, side_columns, apis: [...]} (report.js reads it).
Json build_report_model(const ReportSources& sources);

}  // namespace acccheck::host
