// api_precision_compare: streams the NPU details file past an index of the GPU details file,
// judges each output row with the metric plugin of its standard, and writes the details and
// per-API result CSVs (precision-standards.md §6, with the fixes listed in docs/compat.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <acccheck/metric.hpp>

#include "commands/compare/compare_summary.hpp"
#include "standards/standard_selector.hpp"

namespace acccheck::host {

struct CompareInputs {
  std::string npu_details;
  std::string gpu_details;
  std::string out_dir;
  std::string timestamp;  // "%Y%m%d%H%M%S"
};

struct CompareOutputs {
  std::string details_path;
  std::string result_path;
};

class CompareEngine {
 public:
  CompareEngine(const core::StandardSelector& selector, std::map<std::string, MetricPlugin*> plugins_by_standard);
  // Throws InputError (exit 3) or std::runtime_error from output files (exit 4, OutputError).
  CompareOutputs run(const CompareInputs& in, CompareSummary& summary);

 private:
  const core::StandardSelector& selector_;
  std::map<std::string, MetricPlugin*> plugins_;
};

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A metric plugin threw something other than UnjudgeableRow: nothing is written (exit 5).
class PluginFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The 28 columns of api_precision_compare_details (precision-standards.md §6.6).
const std::vector<std::string>& compare_details_columns();

}  // namespace acccheck::host
