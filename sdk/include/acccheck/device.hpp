// Device plugin contract: a device under test (an accelerator, or the CPU as a reference).
// This header includes LibTorch pieces (never <torch/torch.h>); only device plugins and the
// run_ut engine include it.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "acccheck/device_probe.hpp"

namespace acccheck {

// A replacement for a vendor operator that has no CPU kernel: run_ut's benchmark calls it with
// the raised-precision CPU arguments instead of the dispatcher op. Same boxed calling convention
// as the dispatcher: arguments in, results out.
using BenchFunction = std::function<std::vector<c10::IValue>(const std::vector<c10::IValue>&)>;

class ACCCHECK_INTERFACE DevicePlugin : public DeviceProbe {
 public:
  // Runtime initialisation (load the vendor library, set the device); throws with a one-line reason.
  virtual void initialize(const std::vector<int>& device_ids) = 0;
  virtual c10::Device device() const = 0;
  // A copy on the device that never aliases the argument (run_ut replays in-place operators on it).
  virtual at::Tensor to_device(const at::Tensor& cpu_tensor) const = 0;
  virtual at::Tensor to_cpu(const at::Tensor& device_tensor) const = 0;
  virtual void synchronize() const = 0;
  virtual std::vector<c10::ScalarType> supported_dtypes() const = 0;
  // Vendor operators without a CPU kernel, keyed by qualified name ("npu::npu_rms_norm").
  virtual std::map<std::string, BenchFunction> bench_functions() const { return {}; }
  // Runs one dispatcher operator on this device: the stack holds every argument (inputs already on
  // device()) and receives the results. The default just calls the operator; a device may wrap the
  // call (set a stream or context, or — in test devices — perturb a result).
  virtual void call_operator(const c10::OperatorHandle& op, torch::jit::Stack& stack) const { op.callBoxed(&stack); }
  // Since ABI 1.2 (callers check the plugin's abi_minor). The entries of the device's configuration
  // that select operator calls (npu-sim's planted faults), each with how many calls it has matched
  // so far in this process. run_ut adds them up over its workers and names every entry that matched
  // none: a planted fault that changed nothing must not pass for a device that was checked.
  struct ConfigurationUse {
    std::string entry;  // "fault 0 (aten::gelu, forward, rel_noise)"
    std::uint64_t matched = 0;
  };
  virtual std::vector<ConfigurationUse> configuration_use() const { return {}; }
  // Since ABI 1.3 (callers check the plugin's abi_minor). run_ut's worker calls it before it
  // replays each API (the entry name without its direction, "Functional.gelu.0"): a device whose
  // behaviour draws random numbers (npu-sim's planted noise) seeds them per API, so that a run
  // gives the same numbers however its APIs are spread over workers, resumed or filtered.
  virtual void begin_api(const std::string& api) { (void)api; }
};

}  // namespace acccheck
