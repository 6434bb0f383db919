// Devices say precisely why they are unavailable.
#include "device/device_fixture.hpp"

using namespace acccheck;
using acccheck::test::device_plugin;
using acccheck::test::TempDir;
using acccheck::test::write_file;

TEST(DeviceAvailability, CpuIsAlwaysAvailable) {
  DevicePlugin& cpu = device_plugin("cpu");
  EXPECT_TRUE(cpu.available().available);
  EXPECT_EQ(cpu.device().type(), c10::DeviceType::CPU);
  at::Tensor x = at::ones({3});
  at::Tensor y = cpu.to_device(x);
  y.add_(1);
  EXPECT_EQ(x[0].item<float>(), 1.0f);  // to_device copies: replays never touch the caller's tensor
}

TEST(DeviceAvailability, CudaSaysThisLibTorchHasNoCuda) {
  if (at::hasCUDA()) GTEST_SKIP() << "this LibTorch has CUDA";
  DevicePlugin& cuda = device_plugin("cuda");
  auto a = cuda.available();
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason, "this LibTorch was built without CUDA (or no CUDA driver/GPU is visible)");
  try {
    cuda.initialize({0});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cuda device unavailable: " + a.reason);
  }
}

TEST(DeviceAvailability, NpuSaysTheLibraryIsMissing) {
  DevicePlugin& npu = device_plugin("npu");
  Settings s;
  s.set("library", "/nonexistent/libtorch_npu.so");
  ::unsetenv("ASCEND_TORCH_NPU_LIB");
  npu.configure(s);
  auto a = npu.available();
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason.rfind("library not found: libtorch_npu.so (tried /nonexistent/libtorch_npu.so", 0), 0u) << a.reason;
}
