// Operator categories defined by a dispatcher namespace rather than a list: vendor operators
// (`npu::npu_rms_norm` → NPU.npu_rms_norm) and distributed collectives (`c10d::allreduce_` →
// Distributed.allreduce_, recorded but not replayable: a collective cannot run as a single-operator
// test). One source, two plugins: the YAML beside each names its namespaces, prefix and whether
// its operators replay.
#include <unordered_set>

#include <acccheck/hook.hpp>

#ifndef ACCCHECK_NAMESPACE_HOOK_NAME
#error "define ACCCHECK_NAMESPACE_HOOK_NAME (the plugin's category name)"
#endif

namespace {

using namespace acccheck;

class NamespaceHook final : public HookPlugin {
 public:
  std::string_view category() const override { return ACCCHECK_NAMESPACE_HOOK_NAME; }

  void configure(const Settings& s) override {
    namespaces_.clear();
    skip_.clear();
    prefix_ = s.text("prefix").value_or("");
    if (prefix_.empty()) throw std::runtime_error(std::string(category()) + " hook: 'prefix' is missing");
    for (auto& ns : s.list("namespaces")) namespaces_.push_back(ns + "::");
    if (namespaces_.empty()) throw std::runtime_error(std::string(category()) + " hook: the 'namespaces' list is empty");
    for (auto& op : s.list("skip")) skip_.insert(op);
    replayable_ = s.text("replayable").value_or("true") == "true";
  }

  std::optional<HookDecision> classify(const OperatorName& op) const override {
    for (const auto& ns : namespaces_) {
      if (op.name.substr(0, ns.size()) != ns) continue;
      std::string name(op.name.substr(ns.size()));
      if (skip_.count(name)) return std::nullopt;
      HookDecision d;
      d.api_name = prefix_ + "." + name;
      d.replayable = replayable_;
      return d;
    }
    return std::nullopt;
  }

  std::size_t operator_count() const override { return namespaces_.size(); }

 private:
  std::string prefix_;
  std::vector<std::string> namespaces_;
  std::unordered_set<std::string> skip_;
  bool replayable_ = true;
};

}  // namespace

ACCCHECK_PLUGIN(hook, NamespaceHook, ACCCHECK_NAMESPACE_HOOK_NAME, "1.0.0",
                "every operator of the namespaces listed in acccheck_hook_" ACCCHECK_NAMESPACE_HOOK_NAME ".yaml")
