// examples/vendor_device builds out of tree against the installed SDK, loads from a plugin
// folder, and perturbs exactly the operator it says it does.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <filesystem>

#include "device/device_fixture.hpp"

namespace fs = std::filesystem;
using namespace acccheck;
using acccheck::test::TempDir;

TEST(VendorDeviceExample, BuildsOutOfTreeAndPerturbsOneOperator) {
  TempDir dir;
  std::string build = acccheck::test::build_example("vendor_device", dir);
  TempDir plugins;
  fs::copy_file(build + "/acccheck_device_perturbed_cpu.so", plugins / "acccheck_device_perturbed_cpu.so");

  auto listing = acccheck::test::run_acccheck({"plugins", "--plugin-dir", plugins.path()});
  EXPECT_EQ(listing.exit_code, 0);
  EXPECT_NE(listing.out.find("device  perturbed-cpu"), std::string::npos) << listing.out;

  core::PluginRegistry registry;
  registry.load({{plugins.path()}, {}}, {PluginKind::device});
  ASSERT_EQ(registry.devices().size(), 1u) << (registry.refused().empty() ? "" : registry.refused()[0].line());
  auto& device = dynamic_cast<DevicePlugin&>(*registry.devices()[0].second);
  device.configure({});
  ASSERT_TRUE(device.available().available);

  at::Tensor x = at::linspace(-2, 2, 16);
  auto call = [&](const char* op) {
    const auto& handle = c10::Dispatcher::singleton().findSchemaOrThrow(op, "");
    torch::jit::Stack stack;
    stack.emplace_back(device.to_device(x));
    if (std::string(op) == "aten::gelu") stack.emplace_back(std::string("none"));
    device.call_operator(handle, stack);
    return device.to_cpu(stack.back().toTensor());
  };
  EXPECT_TRUE(at::allclose(call("aten::gelu"), at::gelu(x) * 1.01));
  EXPECT_TRUE(at::equal(call("aten::relu"), at::relu(x)));
}
