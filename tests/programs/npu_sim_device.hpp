// What the test programs that train on the simulated NPU share: loading the npu-sim device plugin
// from the folder the test passes and starting device 0, which registers the PrivateUse1 backend
// (and its npu:: fused operators) before the program's first operator.
#pragma once

#include <iostream>
#include <string>

#include <acccheck/device.hpp>

#include "plugin_host/plugin_registry.hpp"

namespace acccheck::test_programs {

// The started npu-sim device, or nullptr after a line on stderr. The registry lives as long as the
// program: the plugin's library must stay loaded while its backend is in use.
inline acccheck::DevicePlugin* start_npu_sim(const std::string& plugin_dir) {
  static acccheck::core::PluginRegistry registry;
  acccheck::core::PluginSearch search;
  search.dirs = {plugin_dir};
  registry.load(search, {acccheck::PluginKind::device});
  acccheck::DevicePlugin* npu = nullptr;
  for (const auto& [info, probe] : registry.devices())
    if (probe->device_name() == "npu-sim") npu = dynamic_cast<acccheck::DevicePlugin*>(probe);
  if (!npu) {
    std::cerr << "npu-sim plugin not found in " << plugin_dir << "\n";
    return nullptr;
  }
  npu->configure({});
  npu->initialize({0});
  return npu;
}

}  // namespace acccheck::test_programs
