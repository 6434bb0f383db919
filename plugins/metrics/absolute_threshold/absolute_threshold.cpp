// 绝对阈值法 (absolute threshold, precision-standards.md §5.1): inf/nan agreement, relative error of
// normal values, absolute error of small values, each rate required to be 0.
//
// The reference tool judges the NPU numbers alone. With `reference_shared: pass` (the shipped
// default, docs/compat.md) a non-zero rate the GPU run reaches too is not the NPU's fault: the
// float32 bias gradient of a broadcasting add, a sum over the batch, misses rtol 2^-20 against the
// float64 benchmark on any device — a healthy GPU fails it as often as the NPU. Such a rate passes
// (with a note in Message); a rate above the GPU's, or with no GPU value, is judged as before.
// `reference_shared: error` restores the reference tool's verdicts.
#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>

#include <string>

namespace {

using namespace acccheck;
namespace ms = acccheck::metric_support;

const std::vector<ms::ZeroRate> kRates = {
    {"inf/nan错误率", "inf/nan判定结果", "ERROR: inf/nan错误率超过阈值"},
    {"相对误差错误率", "相对误差判定结果", "ERROR: 相对误差错误率超过阈值"},
    {"绝对误差错误率", "绝对误差判定结果", "ERROR: 绝对误差错误率超过阈值"},
};

class AbsoluteThresholdStandard final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "absolute_threshold"; }
  std::string_view algorithm_name() const override { return "绝对阈值法"; }
  std::vector<std::string> details_columns() const override {
    return {kRates[0].value_column, kRates[1].value_column, kRates[2].value_column};
  }
  std::vector<std::string> compare_columns() const override {
    std::vector<std::string> c;
    for (const auto& r : kRates) {
      c.push_back(r.value_column);
      c.push_back(r.status_column);
    }
    return c;
  }

  void configure(const Settings& s) override {
    settings_ = s;
    shared_passes_ = ms::pass_or_error_switch(s, "absolute_threshold", "reference_shared", "error");
  }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    const std::string dtype(out.device_dtype);
    return ms::threshold_rates(out, ms::element_errors(out), settings_.number("small_value", dtype),
                               settings_.number("rtol", dtype), settings_.number("small_value_atol", dtype));
  }

  Judgement judge(const JudgeInput& in) const override {
    Judgement j;
    if (!shared_passes_) {
      for (const auto& m : ms::judge_zero_rates(in.npu, kRates, j)) j.message += m;  // no separator, as the reference
      return j;
    }
    std::string notes;
    for (const auto& r : kRates) {
      const double v = ms::parse_cell(in.npu, r.value_column);
      const bool shared = v != 0.0 && gpu_reaches(in.gpu, r.value_column, v);
      const bool ok = v == 0.0 || shared;
      j.cells.emplace_back(r.value_column, ms::fixed14(v));
      j.cells.emplace_back(r.status_column, ok ? "pass" : "error");
      if (shared) notes += std::string("NOTE: ") + r.value_column + " not above the GPU's (" + ms::fixed14(v) + ")";
      if (ok) continue;
      j.verdict = Verdict::error;
      j.message += r.error_message;
      if (j.deciding_metric.empty()) {
        j.deciding_metric = r.value_column;
        j.severity = 1.0 + v;
      }
    }
    j.message += notes;
    return j;
  }

 private:
  static bool gpu_reaches(const RowView& gpu, std::string_view column, double npu_value) {
    try {
      return ms::parse_cell(gpu, column) >= npu_value;
    } catch (const UnjudgeableRow&) {
      return false;  // no GPU number: nothing shows the error is shared
    }
  }

  Settings settings_;
  bool shared_passes_ = false;
};

}  // namespace

ACCCHECK_PLUGIN(metric, AbsoluteThresholdStandard, "absolute_threshold", "1.0.0",
                "绝对阈值法: inf/nan, relative and small-value absolute error rates must all be 0 (NPU alone)")
