// The `aten` operator category: dispatcher operators in the aten namespace that the YAML beside
// this plugin lists. Recorded as Aten.<name> — msprobe's Aten family without the overload, so the
// reference tool's run_ut replays acccheck's dumps (torch.ops.aten.<name> picks the overload from
// the arguments); the dump entry keeps the exact overload in its `acccheck_op` key. With
// `overload_in_name: true` the name is Aten.<name>.<overload> (msprobe's 5-segment form).
#include <unordered_map>
#include <unordered_set>

#include <acccheck/hook.hpp>

namespace {

using namespace acccheck;

class AtenHook final : public HookPlugin {
 public:
  std::string_view category() const override { return "aten"; }

  void configure(const Settings& s) override {
    ops_.clear();
    not_replayable_.clear();
    special_.clear();
    prefix_ = s.text("prefix").value_or("Aten");
    overload_in_name_ = s.text("overload_in_name").value_or("false") == "true";
    for (auto& op : s.list("ops")) ops_.insert(op);
    if (ops_.empty()) throw std::runtime_error("aten hook: the 'ops' list is empty or missing");
    for (auto& op : s.list("not_replayable")) not_replayable_.insert(op);
    const Settings special = s.section("special_arguments");  // keys "<op>/<index>"
    for (const auto& [key, value] : special.all()) special_[key.substr(0, key.find('/'))].push_back(value);
  }

  std::optional<HookDecision> classify(const OperatorName& op) const override {
    constexpr std::string_view ns = "aten::";
    if (op.name.substr(0, ns.size()) != ns) return std::nullopt;
    std::string name(op.name.substr(ns.size()));
    if (!ops_.count(name)) return std::nullopt;
    HookDecision d;
    d.api_name = prefix_ + "." + name + (overload_in_name_ && !op.overload.empty() ? "." + std::string(op.overload) : "");
    d.replayable = !not_replayable_.count(name);
    if (auto it = special_.find(name); it != special_.end()) d.special_arguments = it->second;
    return d;
  }

  std::size_t operator_count() const override { return ops_.size(); }

 private:
  std::string prefix_ = "Aten";
  bool overload_in_name_ = false;
  std::unordered_set<std::string> ops_, not_replayable_;
  std::unordered_map<std::string, std::vector<std::string>> special_;
};

}  // namespace

ACCCHECK_PLUGIN(hook, AtenHook, "aten", "1.0.0",
                "aten operators listed in acccheck_hook_aten.yaml, recorded as Aten.<op>")
