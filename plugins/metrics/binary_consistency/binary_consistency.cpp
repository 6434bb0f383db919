// 二进制一致法 (binary consistency, precision-standards.md §5.3): device and benchmark must agree
// exactly. Used for index/compare/copy-like APIs and for every non-float output.
#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>

namespace {

using namespace acccheck;
namespace ms = acccheck::metric_support;

constexpr const char* kColumn = "二进制一致错误率";
constexpr const char* kStatusColumn = "二进制一致错误率判定结果";

class BinaryConsistencyStandard final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "binary_consistency"; }
  std::string_view algorithm_name() const override { return "二进制一致法"; }
  std::vector<std::string> details_columns() const override { return {kColumn}; }
  std::vector<std::string> compare_columns() const override { return {kColumn, kStatusColumn}; }

  void configure(const Settings& s) override { max_error_rate_ = s.number("max_error_rate"); }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    std::size_t differ = 0;
    for (std::size_t i = 0; i < out.count; ++i) differ += !(out.bench[i] == out.device[i]);
    double rate = out.count == 0 ? 0.0 : static_cast<double>(differ) / static_cast<double>(out.count);
    return {{kColumn, rate, NumberStyle::fixed14}};
  }

  Judgement judge(const JudgeInput& in) const override {
    double rate = ms::parse_cell(in.npu, kColumn);
    Judgement j;
    j.verdict = rate <= max_error_rate_ ? Verdict::pass : Verdict::error;
    j.cells = {{kColumn, std::string(in.npu.cell(kColumn))}, {kStatusColumn, verdict_text(j.verdict)}};
    if (j.verdict == Verdict::error) {
      j.message = "ERROR: 二进制一致错误率超过阈值\n";
      j.deciding_metric = kColumn;
      j.severity = 1.0 + rate;
    }
    ms::apply_domain_checks({{kColumn, rate, ms::Domain::rate}}, {kStatusColumn}, j);
    return j;
  }

 private:
  double max_error_rate_ = 0.0;
};

}  // namespace

ACCCHECK_PLUGIN(metric, BinaryConsistencyStandard, "binary_consistency", "1.0.0",
                "二进制一致法: device output must equal the benchmark bit for bit (error rate 0)")
