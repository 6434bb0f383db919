// Loads the device plugins of the build once per test binary, as the host does.
#pragma once

#include <ATen/ATen.h>

#include <acccheck/device.hpp>

#include "plugin_host/plugin_registry.hpp"
#include "support/test_support.hpp"

namespace acccheck::test {

inline DevicePlugin& device_plugin(const std::string& name) {
  static auto* registry = [] {
    auto* r = new core::PluginRegistry();
    core::PluginSearch search;
    search.dirs = {ACCCHECK_PLUGIN_DIR};
    r->load(search, {PluginKind::device});
    return r;
  }();
  for (const auto& [info, probe] : registry->devices())
    if (probe->device_name() == name) return dynamic_cast<DevicePlugin&>(*probe);
  throw std::runtime_error("device plugin not built: " + name);
}

// npu-sim, initialised, with the given fault settings (empty: healthy).
inline DevicePlugin& npu_sim(const Settings& faults = {}) {
  DevicePlugin& d = device_plugin("npu-sim");
  d.configure(faults);
  d.initialize({0});
  return d;
}

}  // namespace acccheck::test
