// 绝对阈值法 (absolute threshold, precision-standards.md §5.1): judged on the NPU numbers alone —
// inf/nan agreement, relative error of normal values, absolute error of small values.
#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>

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

  void configure(const Settings& s) override { settings_ = s; }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    const std::string dtype(out.device_dtype);
    return ms::threshold_rates(out, ms::element_errors(out), settings_.number("small_value", dtype),
                               settings_.number("rtol", dtype), settings_.number("small_value_atol", dtype));
  }

  Judgement judge(const JudgeInput& in) const override {
    Judgement j;
    for (const auto& m : ms::judge_zero_rates(in.npu, kRates, j)) j.message += m;  // no separator, as the reference
    return j;
  }

 private:
  Settings settings_;
};

}  // namespace

ACCCHECK_PLUGIN(metric, AbsoluteThresholdStandard, "absolute_threshold", "1.0.0",
                "绝对阈值法: inf/nan, relative and small-value absolute error rates must all be 0 (NPU alone)")
