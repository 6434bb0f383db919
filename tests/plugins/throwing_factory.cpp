// A plugin whose factory throws: the host must refuse it with the message, not crash.
#include <acccheck/metric.hpp>

namespace {
class Throwing : public acccheck::MetricPlugin {
 public:
  Throwing() { throw std::runtime_error("cannot open licence file /opt/vendor/licence"); }
  std::string_view standard_id() const override { return "x"; }
  std::string_view algorithm_name() const override { return "x"; }
  std::vector<std::string> details_columns() const override { return {}; }
  std::vector<std::string> compare_columns() const override { return {}; }
  void configure(const acccheck::Settings&) override {}
  std::vector<acccheck::MetricValue> compute(const acccheck::OutputPair&) const override { return {}; }
  acccheck::Judgement judge(const acccheck::JudgeInput&) const override { return {}; }
};
}  // namespace

ACCCHECK_PLUGIN(metric, Throwing, "throwing_factory", "0.1.0", "factory throws")
