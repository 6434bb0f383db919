// 双千指标法 (thousandth standard, precision-standards.md §5.5): the share of elements whose
// relative error is below 0.001 must reach 0.999. Used for conv1d/conv2d.
#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>

namespace {

using namespace acccheck;
namespace ms = acccheck::metric_support;

constexpr const char* kColumn = "双千指标";
constexpr const char* kStatusColumn = "双千指标判定结果";

class ThousandthStandard final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "thousandth_threshold"; }
  std::string_view algorithm_name() const override { return "双千指标法"; }
  std::vector<std::string> details_columns() const override { return {kColumn}; }
  std::vector<std::string> compare_columns() const override { return {kColumn, kStatusColumn}; }

  void configure(const Settings& s) override {
    relative_error_ = s.number("relative_error");
    pass_value_ = s.number("pass_value");
  }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    if (out.count == 0) return {{kColumn, 1.0, NumberStyle::integer}};
    auto e = ms::element_errors(out);
    std::size_t below = 0;
    for (double re : e.rel_err) below += re < relative_error_;
    return {{kColumn, static_cast<double>(below) / static_cast<double>(out.count), NumberStyle::fixed14}};
  }

  Judgement judge(const JudgeInput& in) const override {
    double v = ms::parse_cell(in.npu, kColumn);
    Judgement j;
    j.verdict = v >= pass_value_ ? Verdict::pass : Verdict::error;
    // The reference copies the NPU cell as written.
    j.cells = {{kColumn, std::string(in.npu.cell(kColumn))}, {kStatusColumn, verdict_text(j.verdict)}};
    if (j.verdict == Verdict::error) {
      j.message = "ERROR: 双千指标不达标\n";
      j.deciding_metric = kColumn;
      j.severity = (1.0 - v) / (1.0 - pass_value_);  // share of bad elements over the share allowed
    }
    ms::apply_domain_checks({{kColumn, v, ms::Domain::rate}}, {kStatusColumn}, j);
    return j;
  }

 private:
  double relative_error_ = 0.001;
  double pass_value_ = 0.999;
};

}  // namespace

ACCCHECK_PLUGIN(metric, ThousandthStandard, "thousandth_threshold", "1.0.0",
                "双千指标法: share of elements with relative error < 0.001 must be >= 0.999 (conv1d, conv2d)")
