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
#include "acccheck/settings.hpp"

namespace acccheck {

struct OperatorName {
  std::string_view name;      // "aten::conv2d"
  std::string_view overload;  // "" or "Tensor", "out", ...
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
};

}  // namespace acccheck
