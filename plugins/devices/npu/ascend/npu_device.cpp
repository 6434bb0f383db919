// The `npu` device: Ascend NPUs through torch_npu's C++ library, which registers itself as the
// PrivateUse1 backend. This plugin finds libtorch_npu.so, loads it globally, initialises the
// device and says precisely why when it cannot. It cannot run without Ascend hardware and a
// torch_npu built for this LibTorch; the paths below are where torch_npu's wheels install.
#include <dlfcn.h>
#include <glob.h>
#include <unistd.h>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstdlib>
#include <mutex>

#include <acccheck/device.hpp>

#include "fused_ops.hpp"

namespace {

using namespace acccheck;
constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;

std::vector<std::string> candidate_libraries(const Settings& s) {
  std::vector<std::string> out;
  if (auto lib = s.text("library")) out.push_back(*lib);
  if (const char* env = std::getenv("ASCEND_TORCH_NPU_LIB"); env && *env) out.push_back(env);
  const char* patterns[] = {"/usr/local/lib/python3*/dist-packages/torch_npu/lib/libtorch_npu.so",
                            "/usr/local/lib/python3*/site-packages/torch_npu/lib/libtorch_npu.so",
                            "/usr/lib/python3/dist-packages/torch_npu/lib/libtorch_npu.so",
                            "/usr/local/Ascend/torch_npu/lib/libtorch_npu.so"};
  for (const char* p : patterns) {
    glob_t g{};
    if (::glob(p, 0, nullptr, &g) == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
    ::globfree(&g);
  }
  return out;
}

class AscendNpuDevice final : public DevicePlugin {
 public:
  std::string_view device_name() const override { return "npu"; }
  void configure(const Settings& s) override { candidates_ = candidate_libraries(s); }

  Availability available() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!state_.reason.empty() || state_.available) return state_;
    state_ = probe();
    return state_;
  }

  void initialize(const std::vector<int>& device_ids) override {
    auto a = available();
    if (!a.available) throw std::runtime_error("npu device unavailable: " + a.reason);
    index_ = device_ids.empty() ? 0 : device_ids.front();
    // torch_npu::init_npu(c10::DeviceIndex) — DeviceIndex is int8_t in LibTorch 1.13..2.x.
    using InitByIndex = void (*)(signed char);
    auto init = reinterpret_cast<InitByIndex>(::dlsym(handle_, "_ZN9torch_npu8init_npuEa"));
    if (!init) throw std::runtime_error("npu: symbol missing: torch_npu::init_npu(DeviceIndex) not exported by " + library_);
    try {
      init(static_cast<signed char>(index_));
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("npu: init failed: ") + e.what());
    }
    fused::define_missing_operators();  // those torch_npu lacks (an older torch_npu)
  }

  c10::Device device() const override { return c10::Device(kDevice, static_cast<c10::DeviceIndex>(index_)); }
  at::Tensor to_device(const at::Tensor& t) const override { return t.to(device(), t.scalar_type(), false, true); }
  at::Tensor to_cpu(const at::Tensor& t) const override { return t.to(c10::Device(c10::DeviceType::CPU)); }
  void synchronize() const override {
    // Copying a scalar back waits for the device's queued work.
    at::empty({1}, at::TensorOptions().device(device())).cpu();
  }
  std::vector<c10::ScalarType> supported_dtypes() const override {
    using S = c10::ScalarType;
    return {S::Half, S::BFloat16, S::Float, S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long};
  }

  // The vendor fused operators' references (plugins/devices/fused): run_ut's benchmark for NPU.* entries.
  std::map<std::string, BenchFunction> bench_functions() const override { return fused::reference_functions(); }

 private:
  Availability probe() const {
    if (candidates_.empty())
      return {false, "library not found: libtorch_npu.so (set ASCEND_TORCH_NPU_LIB or 'library' in the device config)"};
    std::string tried;
    for (const auto& path : candidates_) {
      if (::access(path.c_str(), R_OK) != 0) {
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
      if (c10::impl::hasDeviceGuardImpl(kDevice))
        return {false, "PrivateUse1 is already registered by another backend in this process (npu-sim initialised?)"};
      void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (!h) return {false, std::string("cannot load ") + path + ": " + ::dlerror()};
      handle_ = h;
      library_ = path;
      if (!::dlsym(h, "_ZN9torch_npu8init_npuEa"))
        return {false, "symbol missing: torch_npu::init_npu(DeviceIndex) in " + path + " (torch_npu too old or too new?)"};
      if (!c10::impl::hasDeviceGuardImpl(kDevice) || c10::impl::getDeviceGuardImpl(kDevice)->deviceCount() <= 0)
        return {false, "init failed: " + path + " loaded but reports no NPU device (driver or CANN not installed?)"};
      return {true, ""};
    }
    return {false, "library not found: libtorch_npu.so (tried " + tried + ")"};
  }

  std::vector<std::string> candidates_;
  mutable std::mutex mutex_;
  mutable Availability state_;
  mutable void* handle_ = nullptr;
  mutable std::string library_;
  int index_ = 0;
};

}  // namespace

ACCCHECK_PLUGIN(device, AscendNpuDevice, "npu", "1.0.0", "Ascend NPU through torch_npu (PrivateUse1)")
