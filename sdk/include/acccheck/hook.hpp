// Hook plugin contract: an operator category. The dump engine asks, once per dispatcher operator
// (the answer is cached, so a dump's hot path is one hash lookup), whether the operator belongs to
// this category and under which API name it is recorded. Torch-free: operators are named by the
// dispatcher's qualified name and overload strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acccheck/plugin.hpp"
#include "acccheck/record.hpp"
#include "acccheck/settings.hpp"

namespace acccheck {

struct OperatorName {
  std::string_view name;      // "aten::conv2d"
  std::string_view overload;  // "" or "Tensor", "out", ...
};

// How run_ut replays an API recorded under a framework name (msprobe's Functional./Tensor./Torch.
// entries): the dispatcher operator to call (the overload is chosen by schema matching against the
// arguments) and the arguments rewritten into the operator's terms — reordered, renamed, values
// mapped (a Python `reduction='mean'` becomes the aten enum 1), Python-only arguments dropped.
struct ReplayPlan {
  std::string op;                                        // "aten::cross_entropy_loss"
  std::vector<Argument> args;                            // bound by position
  std::vector<std::pair<std::string, Argument>> kwargs;  // bound by the schema's argument names
};

struct HookDecision {
  std::string api_name;       // entry prefix + name, e.g. "Aten.conv2d" or "Functional.conv2d"
  bool replayable = true;     // run_ut can replay it (false: recorded, reported as SKIP)
  std::vector<std::string> special_arguments;  // argument names that need special handling
};

class ACCCHECK_INTERFACE HookPlugin : public Plugin {
 public:
  // Category name shown in `acccheck plugins`, e.g. "aten".
  virtual std::string_view category() const = 0;
  // Settings from the plugin's YAML (plus the user's override); called once before classify().
  virtual void configure(const Settings& settings) = 0;
  // nullopt: not this category's operator.
  virtual std::optional<HookDecision> classify(const OperatorName& op) const = 0;
  // How many operators the category lists (for `acccheck plugins -v`).
  virtual std::size_t operator_count() const = 0;
  // Since ABI 1.1. For a forward record named the framework's way, the operator call that replays
  // it; nullopt when this category does not know the API (`why_not` may say why, e.g. "random by
  // design"). Callers check the plugin's abi_minor before calling.
  virtual std::optional<ReplayPlan> plan_replay(const ApiRecord& forward, std::string& why_not) const {
    return std::nullopt;
  }
};

}  // namespace acccheck
