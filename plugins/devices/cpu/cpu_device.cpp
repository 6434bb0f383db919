// The `cpu` device: runs each operator on the CPU in the operator's own dtype. It exists on every
// machine, so it plays the reference device's (GPU's) role where there is no GPU.
#include <ATen/ops/empty.h>
#include <ATen/Parallel.h>

#include <acccheck/device.hpp>

#include "fused_ops.hpp"

namespace {

using namespace acccheck;

class CpuDevice final : public DevicePlugin {
 public:
  std::string_view device_name() const override { return "cpu"; }

  void configure(const Settings& s) override {
    if (auto threads = s.text("threads")) threads_ = std::stoi(*threads);
  }

  Availability available() const override { return {true, ""}; }

  void initialize(const std::vector<int>& device_ids) override {
    for (int id : device_ids)
      if (id != 0) throw std::runtime_error("cpu device: device id " + std::to_string(id) + " does not exist (only 0)");
    if (threads_ > 0) at::set_num_threads(threads_);
    fused::define_missing_operators();  // the vendor fused operators this process lacks (plugins/devices/fused)
  }

  c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }

  // A copy, so an in-place replay on the "device" never touches the caller's tensor.
  at::Tensor to_device(const at::Tensor& t) const override { return t.clone(); }
  at::Tensor to_cpu(const at::Tensor& t) const override { return t; }
  void synchronize() const override {}

  std::vector<c10::ScalarType> supported_dtypes() const override {
    using S = c10::ScalarType;
    return {S::Half, S::BFloat16, S::Float, S::Double, S::ComplexFloat, S::ComplexDouble, S::Bool,
            S::Byte, S::Char, S::Short, S::Int, S::Long};
  }

  // The vendor fused operators' references (plugins/devices/fused): run_ut's benchmark for NPU.* entries.
  std::map<std::string, BenchFunction> bench_functions() const override { return fused::reference_functions(); }

 private:
  int threads_ = 0;
};

}  // namespace

ACCCHECK_PLUGIN(device, CpuDevice, "cpu", "1.0.0", "CPU in the operator's own dtype (reference device everywhere)")
