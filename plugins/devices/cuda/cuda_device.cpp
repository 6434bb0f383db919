// The `cuda` device: LibTorch's own CUDA backend. Available only when this LibTorch was built with
// CUDA and a GPU is visible; elsewhere it says so. Uses only APIs present in LibTorch 1.13 and 2.x
// (at::hasCUDA, c10::DeviceType::CUDA, Tensor::to), so it builds against both.
#include <ATen/Context.h>
#include <ATen/core/Tensor.h>

#include <acccheck/device.hpp>

#include "fused_ops.hpp"

namespace {

using namespace acccheck;

class CudaDevice final : public DevicePlugin {
 public:
  std::string_view device_name() const override { return "cuda"; }
  void configure(const Settings&) override {}

  Availability available() const override {
    if (!at::hasCUDA()) return {false, "this LibTorch was built without CUDA (or no CUDA driver/GPU is visible)"};
    return {true, ""};
  }

  void initialize(const std::vector<int>& device_ids) override {
    auto a = available();
    if (!a.available) throw std::runtime_error("cuda device unavailable: " + a.reason);
    index_ = device_ids.empty() ? 0 : device_ids.front();
    // Touch the device once so a bad index fails here, with its id, not inside a test.
    at::empty({1}, at::TensorOptions().device(device()));
    fused::define_missing_operators();  // the vendor fused operators, run by their device formula on the GPU
  }

  c10::Device device() const override { return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index_)); }
  at::Tensor to_device(const at::Tensor& t) const override { return t.to(device(), t.scalar_type(), false, true); }
  at::Tensor to_cpu(const at::Tensor& t) const override { return t.to(c10::Device(c10::DeviceType::CPU)); }
  void synchronize() const override {
    // Copying a scalar to the host waits for all queued work on the current stream.
    if (at::hasCUDA()) at::empty({1}, at::TensorOptions().device(device())).cpu();
  }
  std::vector<c10::ScalarType> supported_dtypes() const override {
    using S = c10::ScalarType;
    return {S::Half, S::BFloat16, S::Float, S::Double, S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long};
  }

  // The vendor fused operators' references (plugins/devices/fused): run_ut's benchmark for NPU.* entries.
  std::map<std::string, BenchFunction> bench_functions() const override { return fused::reference_functions(); }

 private:
  int index_ = 0;
};

}  // namespace

ACCCHECK_PLUGIN(device, CudaDevice, "cuda", "1.0.0", "NVIDIA GPU through LibTorch's CUDA backend")
