// A small, correct metric plugin: the loader's "good plugin" case.
#include <acccheck/metric.hpp>

namespace {
class GoodMetric final : public acccheck::MetricPlugin {
 public:
  std::string_view standard_id() const override { return TEST_STANDARD_ID; }
  std::string_view algorithm_name() const override { return "test"; }
  std::vector<std::string> details_columns() const override { return {}; }
  std::vector<std::string> compare_columns() const override { return {}; }
  void configure(const acccheck::Settings&) override {}
  std::vector<acccheck::MetricValue> compute(const acccheck::OutputPair&) const override { return {}; }
  acccheck::Judgement judge(const acccheck::JudgeInput&) const override { return {}; }
};
}  // namespace

ACCCHECK_PLUGIN(metric, GoodMetric, TEST_PLUGIN_NAME, "0.1.0", "test plugin")
