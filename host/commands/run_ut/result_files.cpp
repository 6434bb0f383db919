#include "commands/run_ut/result_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <stdexcept>

#include <acccheck/csv.hpp>
#include <acccheck/output_file.hpp>

#include "verdict/details_columns.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

namespace {

template <typename Columns>
std::string header_line(const Columns& columns) {
  std::string out(kUtf8Bom);
  append_csv_record(out, std::vector<std::string>(columns.begin(), columns.end()));
  return out;
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputFailure(path + ": cannot write: " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

int open_output(const std::string& path, bool create) {
  int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_EXCL : 0);
  int fd = ::open(path.c_str(), flags, 0640);
  if (fd < 0) {
    if (errno == ELOOP) throw std::runtime_error(path + ": refusing to write through a symbolic link");
    if (errno == EEXIST) throw std::runtime_error(path + ": exists already (use -csv_path to resume it)");
    throw std::runtime_error(path + ": cannot open for writing: " + std::strerror(errno));
  }
  return fd;
}

// Bytes of `path` up to and including its last line break (a killed writer can leave half a line).
std::string complete_lines(const std::string& path) {
  std::string s = [&] {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    std::string b;
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) b.append(buf, n);
    std::fclose(f);
    return b;
  }();
  // A cut inside a quoted field: keep only up to the last line break outside quotes.
  std::size_t keep = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') quoted = !quoted;
    else if (s[i] == '\n' && !quoted) keep = i + 1;
  }
  s.resize(keep);
  return s;
}


}  // namespace

std::string api_of_details_row(const std::string& name) {
  std::string s = name;
  for (int i = 0; i < 3; ++i) {
    auto dot = s.rfind('.');
    if (dot == std::string::npos) return name;
    s.resize(dot);
  }
  return s;
}

ResultFiles ResultFiles::create(const std::string& out_dir, const std::string& ts) {
  std::error_code ec;
  if (is_symlinked_folder(out_dir)) throw std::runtime_error(out_dir + ": refusing to write into a symlinked folder");
  fs::create_directories(out_dir, ec);
  if (!fs::is_directory(out_dir)) throw std::runtime_error(out_dir + ": cannot create the output folder");
  ResultFiles f;
  f.result_path_ = (fs::path(out_dir) / ("accuracy_checking_result_" + ts + ".csv")).string();
  f.details_path_ = (fs::path(out_dir) / ("accuracy_checking_details_" + ts + ".csv")).string();
  f.result_fd_ = open_output(f.result_path_, true);
  f.details_fd_ = open_output(f.details_path_, true);
  write_all(f.result_fd_, header_line(replay::kResultColumns), f.result_path_);
  write_all(f.details_fd_, header_line(replay::kDetailsColumns), f.details_path_);
  return f;
}

ResultFiles ResultFiles::resume(const std::string& result_csv) {
  static const std::regex name("^accuracy_checking_result_\\d{14}\\.csv$");
  if (!std::regex_match(fs::path(result_csv).filename().string(), name))
    throw std::runtime_error(result_csv + ": When continue run ut, please do not modify the result csv name.");
  ResultFiles f;
  f.result_path_ = result_csv;
  std::string base = fs::path(result_csv).filename().string();
  for (std::size_t p; (p = base.find("result")) != std::string::npos;) base.replace(p, 6, "details");
  f.details_path_ = (fs::path(result_csv).parent_path() / base).string();
  if (!fs::exists(f.details_path_)) throw std::runtime_error(f.details_path_ + ": missing (the details file of " + result_csv + ")");
  refuse_symlink_destination(f.result_path_);
  refuse_symlink_destination(f.details_path_);

  // Repair: keep complete result rows; keep details rows only of APIs that have a result row.
  std::string result_bytes = complete_lines(f.result_path_);
  {
    AtomicOutputFile out(f.result_path_);
    out.write(result_bytes);
    out.commit();
  }
  auto results = read_csv_records(f.result_path_);
  for (std::size_t i = 1; i < results.size(); ++i)
    if (!results[i].empty()) f.done_.insert(results[i][0]);
  std::string details_bytes = complete_lines(f.details_path_);
  {
    AtomicOutputFile out(f.details_path_);
    out.write(details_bytes);
    out.commit();
  }
  auto details = read_csv_records(f.details_path_);
  std::string kept = header_line(replay::kDetailsColumns);
  bool dropped = false;
  for (std::size_t i = 1; i < details.size(); ++i) {
    if (!details[i].empty() && f.done_.count(api_of_details_row(details[i][0]))) append_csv_record(kept, details[i]);
    else dropped = true;
  }
  if (dropped) {
    AtomicOutputFile out(f.details_path_);
    out.write(kept);
    out.commit();
  }
  f.result_fd_ = open_output(f.result_path_, false);
  f.details_fd_ = open_output(f.details_path_, false);
  return f;
}

ResultFiles::ResultFiles(ResultFiles&& o) noexcept
    : result_path_(std::move(o.result_path_)), details_path_(std::move(o.details_path_)),
      result_fd_(o.result_fd_), details_fd_(o.details_fd_), done_(std::move(o.done_)) {
  o.result_fd_ = o.details_fd_ = -1;
}

ResultFiles::~ResultFiles() {
  if (result_fd_ >= 0) ::close(result_fd_);
  if (details_fd_ >= 0) ::close(details_fd_);
}

void ResultFiles::append(const ApiRows& rows) {
  std::string details;
  for (const auto& r : rows.details) append_csv_record(details, r);
  write_all(details_fd_, details, details_path_);
  std::string result;
  append_csv_record(result, rows.result);
  write_all(result_fd_, result, result_path_);
  if (!rows.result.empty()) done_.insert(rows.result[0]);
}

std::string ResultFiles::timestamp() const {
  std::string base = fs::path(result_path_).stem().string();
  return base.substr(base.rfind('_') + 1);
}

ResultTable read_result_table(const std::string& result_csv, const std::string& details_csv) {
  ResultTable t;
  auto results = read_csv_records(result_csv);
  auto details = read_csv_records(details_csv);
  if (results.empty()) throw std::runtime_error(result_csv + ": empty, expected a header line");
  if (details.empty()) throw std::runtime_error(details_csv + ": empty, expected a header line");
  t.result_header = results[0];
  t.details_header = details[0];
  std::map<std::string, std::vector<std::vector<std::string>>> by_api;
  // A blank line is no row (it had been counted as an API).
  auto blank = [](const std::vector<std::string>& r) { return r.empty() || (r.size() == 1 && r[0].empty()); };
  for (std::size_t i = 1; i < details.size(); ++i)
    if (!blank(details[i])) by_api[api_of_details_row(details[i][0])].push_back(details[i]);
  for (std::size_t i = 1; i < results.size(); ++i) {
    if (blank(results[i])) continue;
    ApiRows rows;
    rows.result = results[i];
    if (auto it = by_api.find(results[i][0]); it != by_api.end()) rows.details = std::move(it->second);
    t.apis.push_back(std::move(rows));
  }
  return t;
}

}  // namespace acccheck::host
