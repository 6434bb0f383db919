// A user-defined precision standard: "the NPU's maximum relative error must stay at or below X"
// for the APIs my_standards.yaml routes to it. Stage 1 computes the maximum relative error; stage 2
// judges the NPU's value alone against the threshold for the output dtype.
#include <cmath>
#include <cstdio>

#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>

namespace {

using namespace acccheck;
namespace ms = acccheck::metric_support;

constexpr const char* kValue = "相对误差最大值";              // a run_ut details column
constexpr const char* kStatus = "最大相对误差判定结果";        // our own compare column

class MaxRelativeError final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "max_relative_error"; }
  std::string_view algorithm_name() const override { return "最大相对误差法"; }
  std::vector<std::string> details_columns() const override { return {kValue}; }
  std::vector<std::string> compare_columns() const override { return {kStatus}; }
  void configure(const Settings& s) override { settings_ = s; }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    auto e = ms::element_errors(out);
    double worst = 0.0;
    for (std::size_t i = 0; i < out.count; ++i)
      if (e.finite[i] && e.rel_err[i] > worst) worst = e.rel_err[i];
    return {{kValue, worst, NumberStyle::fixed14}};
  }

  Judgement judge(const JudgeInput& in) const override {
    double value = ms::parse_cell(in.npu, kValue);
    double limit = settings_.number("max_relative_error", std::string(in.dtype));
    Judgement j;
    j.verdict = value <= limit ? Verdict::pass : Verdict::error;  // NaN fails
    j.cells = {{kStatus, verdict_text(j.verdict)}};
    if (j.verdict == Verdict::error) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "ERROR: 相对误差最大值 %g 超过阈值 %g\n", value, limit);
      j.message = buf;
      j.deciding_metric = kValue;
      j.severity = std::isfinite(value) ? value / limit : INFINITY;
    }
    return j;
  }

 private:
  Settings settings_;
};

}  // namespace

ACCCHECK_PLUGIN(metric, MaxRelativeError, "max_relative_error", "1.0.0",
                "max relative error of the NPU output must stay at or below a per-dtype limit")
