// The examples/ are the template for plugin authors: install the SDK to a temporary prefix, build
// each example with find_package(acccheck) only, and use the plugin it makes.
#include <cstdlib>
#include <filesystem>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::test::files_in;
using acccheck::test::fixture;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;

TEST(OutOfTreeExamples, CustomMetricPluginBuildsAndJudges) {
  TempDir dir;
  std::string build = acccheck::test::build_example("custom_metric", dir);
  std::string plugin = build + "/acccheck_metric_max_relative_error.so";
  ASSERT_TRUE(fs::exists(plugin));

  TempDir out;
  auto r = run_acccheck({"compare", "-npu", fixture("vectors/handmade/accuracy_checking_details_npu_20250101000000.csv"),
                         "-gpu", fixture("vectors/handmade/accuracy_checking_details_gpu_20250101000000.csv"), "-o",
                         out.path(), "--timestamp", "20250101000000", "--plugin", plugin, "--standards",
                         std::string(ACCCHECK_SOURCE_DIR) + "/examples/custom_metric/my_standards.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string details = read_file(out / "api_precision_compare_details_20250101000000.csv");
  std::string result = read_file(out / "api_precision_compare_result_20250101000000.csv");
  // The plugin's own column is appended after Message.
  EXPECT_NE(details.find(",比对结果,比对算法,Message,最大相对误差判定结果\r\n"), std::string::npos);
  // softmax.0: NPU 相对误差最大值 = inf > 0.2 → error; softmax.1: 0.1 ≤ 0.2 → pass.
  EXPECT_NE(details.find("Functional.softmax.0.forward.output.0, , , , , , , , , , , , , , , , , , , , , , , , ,error,"
                         "最大相对误差法,\"ERROR: 相对误差最大值 inf 超过阈值 0.2\n\",error\r\n"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("Functional.softmax.1.forward.output.0, , , , , , , , , , , , , , , , , , , , , , , , ,pass,"
                         "最大相对误差法,,pass\r\n"),
            std::string::npos)
      << details;
  EXPECT_NE(result.find("Functional.softmax.0,error, ,\r\nFunctional.softmax.1,pass, ,\r\n"), std::string::npos) << result;
  // APIs it does not claim keep their built-in standard.
  EXPECT_NE(details.find("Torch.matmul.0.forward.output.0, , , , , , , , , , , , , , , , , , ,70.00000000000000"),
            std::string::npos);
}

TEST(OutOfTreeExamples, CustomHookPluginRenamesItsOperatorsInADump) {
  TempDir dir;
  std::string build = acccheck::test::build_example("custom_hook", dir);
  ASSERT_TRUE(fs::exists(build + "/acccheck_hook_activations.so"));
  auto listed = run_acccheck({"plugins", "--plugin-dir", build});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("activations"), std::string::npos) << listed.out;
  if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no dump engine";
  auto d = run_acccheck({"dump", "--plugin-dir", build, "--dump-path", dir / "d", "--step", "1", "--",
                         std::string(ACCCHECK_BUILD_DIR) + "/examples/acccheck-example-train", "--steps", "2"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  std::string json = read_file(dir / "d/step1/rank/dump.json");
  // The MLP's relu and tanh are claimed by the plugin; its addmm stays with the aten category.
  for (const char* e : {"\"Act.relu.0.forward\"", "\"Act.tanh.0.forward\"", "\"Act.tanh.0.backward\"", "\"Aten.addmm.0.forward\""})
    EXPECT_NE(json.find(e), std::string::npos) << e;
  EXPECT_EQ(json.find("\"Aten.relu."), std::string::npos);
  auto ut = run_acccheck({"run_ut", "-api_info", dir / "d/step1/rank/dump.json", "--device", "cpu", "-o", dir / "o",
                          "--timestamp", "20260101000000"});
  ASSERT_EQ(ut.exit_code, 0) << ut.err;
  std::string result = read_file(dir / "o/accuracy_checking_result_20260101000000.csv");
  EXPECT_NE(result.find("Act.tanh.0,pass,pass"), std::string::npos) << result;
}

TEST(OutOfTreeExamples, SdkTrainingDumpsAndReplays) {
  if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no dump SDK";
  TempDir dir;
  std::string build = acccheck::test::build_example("sdk_training", dir);
  std::string cmd = acccheck::test::shell_quote(build + "/train_with_sdk") + " " + acccheck::test::shell_quote(dir / "dump") +
                    " > " + acccheck::test::shell_quote(dir / "log") + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir / "log");
  EXPECT_NE(read_file(dir / "log").find("acccheck dump: 14 entries in 2 steps written to"), std::string::npos)
      << read_file(dir / "log");
  // Per step: matmul, sigmoid, mse_loss, the ones_like that seeds backward, and three backward entries.
  EXPECT_FALSE(fs::exists(dir / "dump/step0"));
  std::string json = dir / "dump/step1/rank/dump.json";
  std::string text = read_file(json);
  for (const char* e : {"Aten.matmul.0.forward", "Aten.sigmoid.0.forward", "Aten.mse_loss.0.forward",
                        "Aten.sigmoid.0.backward", "Aten.matmul.0.backward"})
    EXPECT_NE(text.find(std::string("\"") + e + "\""), std::string::npos) << e << "\n" << text.substr(0, 3000);
  auto r = run_acccheck({"run_ut", "-api_info", json, "--device", "cpu", "-o", dir / "out"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// `cmake --install` gives what it installs an RPATH to the LibTorch acccheck was built against (a
// wheel's torch/lib is on no system path): the installed acccheck dumps a program and replays the
// dump on npu-sim with no LD_LIBRARY_PATH, and says which LibTorch it was built against.
TEST(OutOfTreeExamples, TheInstalledCopyFindsItsLibTorch) {
  if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch";
  TempDir dir;
  const std::string prefix = acccheck::test::installed_sdk_prefix();
  const std::string acc = acccheck::test::shell_quote(prefix + "/bin/acccheck");
  const std::string train = acccheck::test::shell_quote(prefix + "/libexec/acccheck/acccheck-example-train");
  auto sh = [&](const std::string& cmd) {
    return std::system(("env -u LD_LIBRARY_PATH " + cmd + " >> " + acccheck::test::shell_quote(dir / "log") + " 2>&1").c_str());
  };
  ASSERT_EQ(sh(acc + " --version"), 0) << read_file(dir / "log");
  EXPECT_NE(read_file(dir / "log").find(std::string("built against: ")), std::string::npos) << read_file(dir / "log");
  ASSERT_EQ(sh(acc + " dump --dump-path " + acccheck::test::shell_quote(dir / "d") + " --step 1 -- " + train + " --steps 2"), 0)
      << read_file(dir / "log");
  ASSERT_EQ(sh(acc + " run_ut -api_info " + acccheck::test::shell_quote(dir / "d/step1/rank/dump.json") +
               " --device npu-sim -o " + acccheck::test::shell_quote(dir / "o") + " --timestamp 20260101000000"),
            0)
      << read_file(dir / "log");
  std::string result = read_file(dir / "o/accuracy_checking_result_20260101000000.csv");
  EXPECT_NE(result.find("Aten.addmm.0,pass,pass"), std::string::npos) << result;
}
