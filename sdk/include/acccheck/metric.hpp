// Metric plugin contract: one comparison algorithm (a "precision standard") end to end.
//
// Stage 1 (run_ut): from one output of one API — the device values D and the CPU benchmark values
//   B, both widened to float64, plus the dtypes they had — compute named values. They become cells
//   of accuracy_checking_details_<ts>.csv, in the columns the plugin names.
// Stage 2 (compare): from the NPU and the GPU details rows of the same output, decide
//   pass / warning / error and say why. The plugin fills its own columns of
//   api_precision_compare_details_<ts>.csv.
//
// Deliberately free of LibTorch and yaml-cpp: a metric author needs only these SDK headers.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "acccheck/plugin.hpp"
#include "acccheck/settings.hpp"

namespace acccheck {

enum class Verdict { pass, warning, error, skip };

// The text msprobe writes for a verdict: pass / Warning / error / SKIP.
inline const char* verdict_text(Verdict v) noexcept {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::warning: return "Warning";
    case Verdict::error: return "error";
    case Verdict::skip: return "SKIP";
  }
  return "";
}

// How a stage-1 value is printed, mirroring the reference's Python/numpy types (run-ut.md §7.2).
enum class NumberStyle {
  fixed14,       // Python float / numpy float64: "{:.14f}"
  float32_repr,  // numpy float32 scalar: shortest repr that round-trips as float32
  integer,       // Python int (e.g. a ratio that is 0 because its mask was empty)
};

struct MetricValue {
  std::string column;
  double value = 0.0;
  NumberStyle style = NumberStyle::fixed14;
};

// One output tensor of one API, as stage 1 sees it.
struct OutputPair {
  const double* bench = nullptr;   // CPU benchmark values (raised precision), row-major
  const double* device = nullptr;  // device values, exactly representable in device_dtype
  std::size_t count = 0;
  std::string_view device_dtype;   // e.g. "torch.float16" (before any bf16 → fp32 conversion)
  std::string_view bench_dtype;    // e.g. "torch.float32"
  bool fp8_input = false;          // some input of the API was float8 / HiFloat8
};

// Read-only view of one row of a details CSV; cell() is empty when the column is absent.
class ACCCHECK_INTERFACE RowView {
 public:
  virtual ~RowView() = default;
  virtual std::string_view cell(std::string_view column) const = 0;
  virtual bool has_column(std::string_view column) const = 0;
};

struct JudgeInput {
  const RowView& npu;  // every column of the NPU details row
  // The GPU row exposes the columns compare requires plus those named by the loaded plugins'
  // details_columns() (kept compact for million-row files); other columns read as empty.
  const RowView& gpu;
  std::string_view dtype;  // the NPU row's DEVICE Dtype
};

struct Judgement {
  Verdict verdict = Verdict::pass;
  std::vector<std::pair<std::string, std::string>> cells;  // column → text, in the plugin's columns
  std::string message;
  // For the summary's "worst APIs": the metric that decided an error, and how far past its
  // threshold it is (value / threshold, or 1 when the rule is pass/fail only; larger is worse).
  std::string deciding_metric;
  double severity = 0.0;
};

// Thrown by judge() for a cell that cannot be judged (blank, not a number). The compare engine
// turns the row into a SKIP row carrying what(), as the reference does.
class ACCCHECK_INTERFACE UnjudgeableRow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ACCCHECK_INTERFACE MetricPlugin : public Plugin {
 public:
  // The standard id used in the standards YAML, e.g. "thousandth_threshold".
  virtual std::string_view standard_id() const = 0;
  // Written in the 比对算法 column, e.g. "双千指标法".
  virtual std::string_view algorithm_name() const = 0;
  // Columns stage 1 fills in accuracy_checking_details (the run_ut side).
  virtual std::vector<std::string> details_columns() const = 0;
  // Columns stage 2 fills in api_precision_compare_details.
  virtual std::vector<std::string> compare_columns() const = 0;
  // Thresholds from the standards YAML section of this plugin; called once before any work.
  virtual void configure(const Settings& settings) = 0;
  virtual std::vector<MetricValue> compute(const OutputPair& output) const = 0;
  virtual Judgement judge(const JudgeInput& input) const = 0;
};

}  // namespace acccheck
