// An out-of-tree hook plugin: an operator category of your own. It claims the activation
// functions listed in acccheck_hook_activations.yaml (beside the .so) and records them as
// `Act.<op>` — so a team that cares about its activations can dump exactly those, under its own
// names, and run_ut replays them like any other entry (the dump also records the operator).
#include <acccheck/hook.hpp>

#include <set>
#include <stdexcept>
#include <string>

namespace {

using namespace acccheck;

class ActivationHook final : public HookPlugin {
 public:
  std::string_view category() const override { return "activations"; }

  // Settings come from the YAML beside the .so: `operators: [gelu, silu, ...]` (aten names).
  void configure(const Settings& s) override {
    ops_.clear();
    for (auto& op : s.list("operators")) ops_.insert("aten::" + op);
    if (ops_.empty()) throw std::runtime_error("activations hook: the 'operators' list is empty");
  }

  // Called once per dispatcher operator (the engine caches the answer): keep it simple.
  std::optional<HookDecision> classify(const OperatorName& op) const override {
    std::string name(op.name);
    if (!ops_.count(name)) return std::nullopt;
    HookDecision d;
    d.api_name = "Act." + name.substr(6);  // "aten::gelu" → "Act.gelu"
    return d;
  }

  std::size_t operator_count() const override { return ops_.size(); }

 private:
  std::set<std::string> ops_;
};

}  // namespace

ACCCHECK_PLUGIN(hook, ActivationHook, "activations", "1.0.0",
                "activation functions (acccheck_hook_activations.yaml) recorded as Act.<op>")
