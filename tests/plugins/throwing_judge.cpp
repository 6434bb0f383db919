// A metric plugin that loads fine but throws from judge(): compare must stop, name it, write nothing.
#include <acccheck/metric.hpp>

namespace {
class ThrowsInJudge final : public acccheck::MetricPlugin {
 public:
  std::string_view standard_id() const override { return "throws_in_judge"; }
  std::string_view algorithm_name() const override { return "throws"; }
  std::vector<std::string> details_columns() const override { return {}; }
  std::vector<std::string> compare_columns() const override { return {}; }
  void configure(const acccheck::Settings&) override {}
  std::vector<acccheck::MetricValue> compute(const acccheck::OutputPair&) const override { return {}; }
  acccheck::Judgement judge(const acccheck::JudgeInput&) const override {
    throw std::logic_error("boom: internal state corrupted");
  }
};
}  // namespace

ACCCHECK_PLUGIN(metric, ThrowsInJudge, "throws_in_judge", "0.1.0", "throws from judge()")
