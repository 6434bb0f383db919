// Loads the shipped standards.yaml (merged with a user's --standards file) and configures the
// metric plugins with their sections. Shared by `compare` (stage 2) and the run_ut worker (stage 1),
// so both sides judge with the same lists and thresholds.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <acccheck/metric.hpp>
#include <acccheck/settings.hpp>

#include "plugin_host/plugin_registry.hpp"
#include "standards/standard_selector.hpp"

namespace acccheck::core {

// The standards file is missing or malformed (a usage error).
class StandardsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A metric plugin failed to configure, two claim one standard, or a standard has none (plugin error).
class MetricPluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Standards {
  Settings flat;                                  // the merged YAML, flattened
  std::unique_ptr<StandardSelector> selector;
  std::map<std::string, MetricPlugin*> by_standard;
};

// `registry` must have the metric plugins loaded.
Standards load_standards(const PluginRegistry& registry, const PluginSearch& search,
                         const std::optional<std::string>& user_file);

}  // namespace acccheck::core
