// run_ut's progress: a bar with done/total, rate and ETA on a terminal, a plain line every few
// seconds otherwise (CI logs, files), then the final summary.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/skip_reasons.hpp"

namespace acccheck::host {

class Progress {
 public:
  Progress(std::size_t total, std::FILE* out);  // out null: silent
  void done(std::size_t n = 1);  // n APIs finished
  void finish();

 private:
  void draw(bool force);
  std::size_t total_, done_ = 0;
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

// Counts per status, the commonest reasons for SKIP and the slowest APIs, printed at the end.
struct ApiRows;

class RunSummary {
 public:
  void add(const ApiRows& rows, double seconds);
  void set_startup(double seconds) { startup_ = seconds; }
  void set_wall(double seconds, std::size_t workers) { wall_ = seconds; workers_ = workers; }
  void print(std::FILE* out, const std::string& result_csv, const std::string& details_csv) const;
  std::size_t count(const std::string& forward_status) const;

 private:
  std::map<std::string, std::size_t> forward_, backward_;
  SkipReasons skip_reasons_;
  std::vector<std::pair<double, std::string>> slowest_;
  double startup_ = 0, wall_ = 0, operator_seconds_ = 0, worker_seconds_ = 0;
  std::size_t workers_ = 1, replayed_ = 0;
};

}  // namespace acccheck::host
