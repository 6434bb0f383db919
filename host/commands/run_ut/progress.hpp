// run_ut's progress: a bar with done/total, rate and ETA on a terminal, a plain line every few
// seconds otherwise (CI logs, files), then the final summary.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace acccheck::host {

class Progress {
 public:
  Progress(std::size_t total, std::FILE* out);
  void done(std::size_t n = 1);  // n APIs finished
  void finish();

 private:
  void draw(bool force);
  std::size_t total_, done_ = 0;
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

// Counts per status and the slowest APIs, printed at the end.
class RunSummary {
 public:
  void add(const std::vector<std::string>& result_row, double seconds);
  void print(std::FILE* out, const std::string& result_csv, const std::string& details_csv) const;
  std::size_t count(const std::string& forward_status) const;

 private:
  std::map<std::string, std::size_t> forward_, backward_;
  std::vector<std::pair<double, std::string>> slowest_;
};

}  // namespace acccheck::host
