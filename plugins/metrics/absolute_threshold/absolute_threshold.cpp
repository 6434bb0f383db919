// 绝对阈值法 (absolute threshold, precision-standards.md §5.1): judged on the NPU numbers alone —
// inf/nan agreement, relative error of normal values, absolute error of small values.
#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>

namespace {

using namespace acccheck;
namespace ms = acccheck::metric_support;

struct Column {
  const char* value;
  const char* status;
  const char* error_message;
};
const Column kColumns[] = {
    {"inf/nan错误率", "inf/nan判定结果", "ERROR: inf/nan错误率超过阈值"},
    {"相对误差错误率", "相对误差判定结果", "ERROR: 相对误差错误率超过阈值"},
    {"绝对误差错误率", "绝对误差判定结果", "ERROR: 绝对误差错误率超过阈值"},
};

class AbsoluteThresholdStandard final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "absolute_threshold"; }
  std::string_view algorithm_name() const override { return "绝对阈值法"; }
  std::vector<std::string> details_columns() const override {
    return {kColumns[0].value, kColumns[1].value, kColumns[2].value};
  }
  std::vector<std::string> compare_columns() const override {
    std::vector<std::string> c;
    for (const auto& col : kColumns) {
      c.push_back(col.value);
      c.push_back(col.status);
    }
    return c;
  }

  void configure(const Settings& s) override { settings_ = s; }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    const std::string dtype(out.device_dtype);
    double sv = settings_.number("small_value", dtype);
    double atol = settings_.number("small_value_atol", dtype);
    double rtol = settings_.number("rtol", dtype);
    auto e = ms::element_errors(out);
    auto small = ms::small_mask(e, sv);
    auto normal = ms::normal_mask(e, sv);
    std::vector<char> rel_bad(out.count), abs_bad(out.count);
    std::size_t infnan = 0;
    for (std::size_t i = 0; i < out.count; ++i) {
      rel_bad[i] = e.rel_err[i] > rtol;
      abs_bad[i] = e.abs_err[i] > atol;
      infnan += !e.finite[i];
    }
    auto share = [](const std::vector<char>& bad, const std::vector<char>& within, const char* column) {
      bool empty = true;
      for (char w : within) empty = empty && !w;
      // An empty mask gives the integer 0 in the reference (a Python int, printed "0").
      return MetricValue{column, ms::ratio_within(bad, within), empty ? NumberStyle::integer : NumberStyle::fixed14};
    };
    return {
        {kColumns[0].value, ms::inf_nan_error_rate(out, e, rtol), infnan ? NumberStyle::fixed14 : NumberStyle::integer},
        share(rel_bad, normal, kColumns[1].value),
        share(abs_bad, small, kColumns[2].value),
    };
  }

  Judgement judge(const JudgeInput& in) const override {
    Judgement j;
    for (const auto& col : kColumns) {
      double v = ms::parse_cell(in.npu, col.value);
      bool ok = v == 0.0;
      j.cells.emplace_back(col.value, ms::fixed14(v));
      j.cells.emplace_back(col.status, ok ? "pass" : "error");
      if (!ok) {
        j.verdict = Verdict::error;
        j.message += col.error_message;  // the reference joins these without a separator
        if (j.deciding_metric.empty()) {
          j.deciding_metric = col.value;
          j.severity = 1.0 + v;  // pass/fail rule: any non-zero rate fails
        }
      }
    }
    return j;
  }

 private:
  Settings settings_;
};

}  // namespace

ACCCHECK_PLUGIN(metric, AbsoluteThresholdStandard, "absolute_threshold", "1.0.0",
                "绝对阈值法: inf/nan, relative and small-value absolute error rates must all be 0 (NPU alone)")
