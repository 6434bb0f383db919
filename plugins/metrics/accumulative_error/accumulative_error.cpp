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

struct Rate {
  const char* value;
  const char* status;
  const char* error_message;
};
const Rate kRates[] = {
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
    const double sv = settings_.number("small_value", dtype);
    auto e = ms::element_errors(out);
    auto small = ms::small_mask(e, sv);
    auto normal = ms::normal_mask(e, sv);
    std::vector<char> rel_bad(out.count), abs_bad(out.count);
    for (std::size_t i = 0; i < out.count; ++i) {
      rel_bad[i] = e.rel_err[i] > bound;
      abs_bad[i] = e.abs_err[i] > bound;
    }
    return {{"inf/nan错误率", ms::inf_nan_error_rate(out, e, bound), NumberStyle::fixed14},
            {"相对误差错误率", ms::ratio_within(rel_bad, normal), NumberStyle::fixed14},
            {"绝对误差错误率", ms::ratio_within(abs_bad, small), NumberStyle::fixed14},
            {"误差均衡性", ms::error_balance(out, e), NumberStyle::fixed14}};
  }

  Judgement judge(const JudgeInput& in) const override {
    Judgement j;
    std::vector<std::string> messages;
    for (const auto& r : kRates) {
      double v = ms::parse_cell(in.npu, r.value);
      bool ok = v == 0.0;
      j.cells.emplace_back(r.value, ms::fixed14(v));
      j.cells.emplace_back(r.status, ok ? "pass" : "error");
      if (!ok) {
        j.verdict = Verdict::error;
        messages.push_back(r.error_message);
      }
    }
    double eb = ms::parse_cell(in.npu, "误差均衡性");
    bool eb_ok = eb <= settings_.number("eb_threshold", std::string(in.dtype));
    j.cells.emplace_back("误差均衡性比值", ms::fixed14(eb));
    j.cells.emplace_back("误差均衡性判定结果", eb_ok ? "pass" : "error");
    if (!eb_ok) {
      j.verdict = Verdict::error;
      messages.push_back("ERROR: 误差均衡性超过阈值\n");
    }
    if (j.verdict == Verdict::error) {
      j.deciding_metric = eb_ok ? "相对误差错误率" : "误差均衡性比值";
      j.severity = 1.0;
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
