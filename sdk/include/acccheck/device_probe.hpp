// The torch-free half of the device contract: what the host needs to list and choose a device
// without loading LibTorch itself. DevicePlugin (device.hpp) adds the tensor operations.
#pragma once

#include <string>
#include <string_view>

#include "acccheck/plugin.hpp"
#include "acccheck/settings.hpp"

namespace acccheck {

struct Availability {
  bool available = false;
  std::string reason;  // why not (library not found, no driver, built without CUDA, ...)
};

class ACCCHECK_INTERFACE DeviceProbe : public Plugin {
 public:
  // "cpu", "npu-sim", "cuda", "npu".
  virtual std::string_view device_name() const = 0;
  // Settings from the plugin's YAML and --device-config; called before available()/initialize().
  virtual void configure(const Settings& settings) = 0;
  // Cheap and side-effect free: `acccheck plugins` shows it.
  virtual Availability available() const = 0;
};

}  // namespace acccheck
