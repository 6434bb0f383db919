// The summary compare prints on stdout: verdict counts per direction and per standard, and the
// worst APIs with the metric that decided them.
#pragma once

#include <array>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <acccheck/metric.hpp>

#include "cli/skip_reasons.hpp"

namespace acccheck::host {

class CompareSummary {
 public:
  explicit CompareSummary(std::size_t worst_limit = 10) : worst_limit_(worst_limit) {}
  void add_api(const std::string& api, const std::string& forward, const std::string& backward,
               const std::string& message = "");
  void add_row(const std::string& row, const std::string& standard, Verdict verdict,
               const std::string& deciding_metric, double severity);
  void print(std::ostream& os) const;

  void count_unmatched_row() { ++unmatched_rows_; }  // an NPU row with no GPU row
  std::size_t apis() const { return apis_; }
  std::size_t rows() const;  // NPU rows seen
  std::size_t unmatched_rows() const { return unmatched_rows_; }
  // Nothing was compared: there were NPU rows and none had a GPU row (another run's file, a
  // header-only file). compare says so loudly and --fail-on treats it as a failure.
  bool nothing_compared() const { return rows() > 0 && unmatched_rows_ == rows(); }
  std::size_t apis_with(const std::string& verdict) const;  // forward or backward equals verdict

 private:
  struct Worst {
    std::string row, standard, metric;
    double severity;
  };
  std::size_t worst_limit_;
  std::size_t apis_ = 0;
  std::map<std::string, std::size_t> forward_, backward_;
  // verdict counts per standard, indexed by Verdict (pass, warning, error, skip)
  std::map<std::string, std::array<std::size_t, 4>> by_standard_;
  std::size_t apis_error_ = 0, apis_warning_ = 0, apis_skip_ = 0;
  std::vector<Worst> worst_;  // kept sorted, at most worst_limit_
  std::size_t error_rows_ = 0;
  std::size_t unmatched_rows_ = 0;
  SkipReasons skip_reasons_;
};

}  // namespace acccheck::host
