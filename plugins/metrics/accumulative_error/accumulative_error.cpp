// 累积误差比对法 (accumulative error standard, precision-standards.md §5.6): absolute-threshold
// style rates with a per-dtype bound, plus error balance. In the reference its compare stage is
// unreachable (a filled 相对误差错误率 routes the row to the absolute threshold); implemented as
// specified so a user's standards file can route APIs to it.
#include <cmath>

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

class AccumulativeErrorStandard final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "accumulative_error_compare"; }
  std::string_view algorithm_name() const override { return "累积误差比对法"; }
  std::vector<std::string> details_columns() const override {
    return {"inf/nan错误率", "相对误差错误率", "绝对误差错误率", "误差均衡性"};
  }
  std::vector<std::string> compare_columns() const override {
    return {"inf/nan错误率", "inf/nan判定结果", "相对误差错误率", "相对误差判定结果", "绝对误差错误率",
            "绝对误差判定结果", "误差均衡性比值", "误差均衡性判定结果"};
  }
  void configure(const Settings& s) override { settings_ = s; }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    const std::string dtype(out.device_dtype);
    const double bound = settings_.number("bound", dtype);
    auto e = ms::element_errors(out);
    auto values = ms::threshold_rates(out, e, settings_.number("small_value", dtype), bound, bound);
    values.push_back({"误差均衡性", ms::error_balance(out, e), NumberStyle::fixed14});
    return values;
  }

  Judgement judge(const JudgeInput& in) const override {
    Judgement j;
    std::vector<std::string> messages = ms::judge_zero_rates(in.npu, kRates, j);
    double eb = ms::parse_cell(in.npu, "误差均衡性");
    bool eb_ok = eb <= settings_.number("eb_threshold", std::string(in.dtype));
    j.cells.emplace_back("误差均衡性比值", ms::fixed14(eb));
    j.cells.emplace_back("误差均衡性判定结果", eb_ok ? "pass" : "error");
    if (!eb_ok) {
      j.verdict = Verdict::error;
      messages.push_back("ERROR: 误差均衡性超过阈值\n");
      if (j.deciding_metric.empty()) {
        j.deciding_metric = "误差均衡性比值";
        j.severity = 1.0;
      }
    }
    for (std::size_t i = 0; i < messages.size(); ++i) j.message += (i ? "\n" : "") + messages[i];
    return j;
  }

 private:
  Settings settings_;
};

}  // namespace

ACCCHECK_PLUGIN(metric, AccumulativeErrorStandard, "accumulative_error_compare", "1.0.0",
                "累积误差比对法: inf/nan, relative and absolute error rates within a dtype bound, and error balance")
