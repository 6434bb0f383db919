// examples/vendor_device builds out of tree against the installed SDK, loads from a plugin
// folder, and perturbs exactly the operator it says it does.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <filesystem>

#include <acccheck/csv.hpp>

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

// examples/vendor_fused_op: an out-of-tree plugin brings a new fused operator and its reference; run_ut
// judges the operator's entries with that reference (healthy: pass; the kernel's planted 5 % defect:
// error, which it could not be if the benchmark ran the kernel itself).
TEST(VendorFusedOpExample, BuildsOutOfTreeAndItsReferenceJudgesTheOperator) {
  TempDir dir;
  std::string build = acccheck::test::build_example("vendor_fused_op", dir);
  TempDir plugins;
  fs::copy_file(build + "/acccheck_device_vendor_fused_cpu.so", plugins / "acccheck_device_vendor_fused_cpu.so");
  auto tensor = [](const char* shape, double lo, double hi, bool grad) {
    return std::string("{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float16\", \"shape\": ") + shape + ", \"Max\": " +
           std::to_string(hi) + ", \"Min\": " + std::to_string(lo) + ", \"Mean\": 0.0, \"Norm\": 1.0, \"requires_grad\": " +
           (grad ? "true" : "false") + "}";
  };
  acccheck::test::write_file(dir / "dump.json", std::string("{\"task\": \"statistics\", \"level\": \"L1\", \"dump_data_dir\": null, \"data\": {") +
      "\"NPU.fused_add_rms_norm.0.forward\": {\"acccheck_op\": \"vendor::fused_add_rms_norm\", \"input_args\": [" +
      tensor("[4, 32]", -2, 2, true) + ", " + tensor("[4, 32]", -1, 1, false) + ", " + tensor("[32]", 0.5, 1.5, true) +
      ", {\"type\": \"float\", \"value\": 1e-06}], \"input_kwargs\": {}, \"output\": [" + tensor("[4, 32]", -3, 3, true) + ", " +
      tensor("[4, 32]", -3, 3, true) + "]},"
      "\"NPU.fused_add_rms_norm.0.backward\": {\"input\": [" + tensor("[4, 32]", -0.1, 0.1, false) + ", null], \"output\": []}}}");
  auto run_ut = [&](const std::string& out, const std::string& config) {
    std::vector<std::string> args{"run_ut", "-api_info", dir / "dump.json", "--plugin-dir", plugins.path(), "--device", "vendor-fused-cpu",
                                  "-o", out, "--timestamp", "20260101000000"};
    if (!config.empty()) args.insert(args.end(), {"--device-config", config});
    auto r = acccheck::test::run_acccheck(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto rows = read_csv_records(out + "/accuracy_checking_result_20260101000000.csv");
    EXPECT_EQ(rows.size(), 2u);
    return rows.size() > 1 ? rows[1] : std::vector<std::string>{};
  };
  auto healthy = run_ut(dir / "healthy", "");
  ASSERT_GE(healthy.size(), 3u);
  EXPECT_EQ(healthy[0], "NPU.fused_add_rms_norm.0");
  EXPECT_EQ(healthy[1], "pass") << (healthy.size() > 3 ? healthy[3] : "");
  EXPECT_EQ(healthy[2], "pass") << (healthy.size() > 3 ? healthy[3] : "");
  acccheck::test::write_file(dir / "defect.yaml", "defect: 1.05\n");
  auto defect = run_ut(dir / "defect", dir / "defect.yaml");
  ASSERT_GE(defect.size(), 3u);
  EXPECT_EQ(defect[1], "error");
}
