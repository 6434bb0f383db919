// The real binary: plugin listing, refusals printed as one line, commands not yet available.
#include <sys/stat.h>

#include <filesystem>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

TEST(CliE2E, PluginsListsEveryKind) {
  auto r = run_acccheck({"plugins", "-v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("hook    aten"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metric  benchmark"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metric  thousandth_threshold"), std::string::npos) << r.out;
  if (!ACCCHECK_TORCH_BUILD) return;  // device plugins need LibTorch
  EXPECT_NE(r.out.find("device  cpu                         1.0.0    available"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device  npu-sim                     1.0.0    available"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device  npu                         1.0.0    unavailable: library not found"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("unavailable: this LibTorch was built without CUDA"), std::string::npos) << r.out;
}

TEST(CliE2E, ANonPluginSharedObjectPrintsOneLineNamingIt) {
  TempDir dir;
  std::string so = dir / "libnot_a_plugin.so";
  fs::copy_file(std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/libnot_a_plugin.so", so);
  auto r = run_acccheck({"plugins", "--plugin", so});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "acccheck: warning: " + so + ": not an acccheck plugin (no 'acccheck_plugin' entry symbol)\n");
}

TEST(CliE2E, AWorldWritablePluginPrintsOneLineNamingIt) {
  TempDir dir;
  std::string so = dir / "acccheck_metric_test_good.so";
  fs::copy_file(std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/acccheck_metric_test_good.so", so);
  ::chmod(so.c_str(), 0777);
  auto r = run_acccheck({"plugins", "--plugin-dir", dir.path()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "acccheck: warning: " + so + ": refused: file is world-writable (fix: chmod o-w)\n");
}

// Device plugins are opened in a child process: one that crashes or hangs while loading is
// reported as one line, and the listing goes on.
TEST(CliE2E, ACrashingOrHangingDevicePluginDoesNotTakeTheListingDown) {
  TempDir dir;
  for (const char* f : {"acccheck_device_crashing.so", "acccheck_device_hanging.so", "acccheck_metric_test_good.so"})
    fs::copy_file(std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/" + f, dir / f);
  auto r = run_acccheck({"plugins", "--plugin-dir", dir.path(), "--probe-timeout", "3"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("acccheck: warning: " + (dir / "acccheck_device_crashing.so") +
                       ": crashed while loading or probing (signal 11: Segmentation fault)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("acccheck: warning: " + (dir / "acccheck_device_hanging.so") +
                       ": no answer within 3 s (hung while loading or probing)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("metric  test_good"), std::string::npos) << r.out;
  if (ACCCHECK_TORCH_BUILD) {
    EXPECT_NE(r.out.find("device  npu-sim"), std::string::npos) << r.out;  // probed after them
  }
}

TEST(CliE2E, PluginPathEnvironmentIsSearched) {
  TempDir dir;
  fs::copy_file(std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/acccheck_metric_test_good.so", dir / "acccheck_metric_test_good.so");
  auto r = run_acccheck({"plugins"}, "ACCCHECK_PLUGIN_PATH=" + dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("metric  test_good"), std::string::npos) << r.out;
}

TEST(CliE2E, EveryCommandIsAvailable) {
  auto r = run_acccheck({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("[not available yet]"), std::string::npos) << r.out;
  for (const char* cmd : {"dump", "run_ut", "merge", "compare", "report", "demo", "plugins"})
    EXPECT_NE(r.out.find(std::string("  ") + cmd + " "), std::string::npos) << cmd;
}

TEST(CliE2E, RunUtWithoutADumpSaysWhatIsMissing) {
  auto r = run_acccheck({"run_ut", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "acccheck run_ut: -api_info DUMP.json (or the legacy --forward FILE) is required\n");
}

TEST(CliE2E, HelpAndVersion) {
  auto h = run_acccheck({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("Exit codes:"), std::string::npos);
  auto c = run_acccheck({"compare", "--help"});
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_NE(c.out.find("--fail-on"), std::string::npos);
  auto v = run_acccheck({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("acccheck 0.1.0 (plugin ABI 1.3", 0), 0u) << v.out;
  // Which LibTorch it was built against, and where that came from (a wheel's torch of a Python, or
  // a system LibTorch's folder).
  if (ACCCHECK_TORCH_BUILD) {
    const std::string version = ACCCHECK_TORCH_FULL_VERSION;
    const std::string lib_dir = std::filesystem::path(ACCCHECK_TORCH_CPU_LIBRARY).parent_path().string();
    const std::string origin = lib_dir.find("/torch/lib") != std::string::npos
                                   ? "torch " + version + " of "
                                   : "LibTorch " + version + " installed in " + lib_dir;
    EXPECT_NE(v.out.find("\nbuilt against: " + origin), std::string::npos) << v.out;
  }
  auto bad = run_acccheck({"compare", "--frobnicate"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "acccheck compare: unrecognised option '--frobnicate'\n");
}

// Issue 11, item 5: the plugin host under hostile folders and files.
TEST(PluginHostHardening, ASymlinkLoopFolderIsRefusedInOneLineAndTheCommandGoesOn) {
  TempDir dir;
  fs::create_directory_symlink(dir / "loop", dir / "loop");
  auto r = run_acccheck({"plugins", "--plugin-dir", dir / "loop"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(dir / "loop: cannot read plugin folder: Too many levels of symbolic links"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("ulp_compare"), std::string::npos);  // the built-in plugins still listed
}

TEST(PluginHostHardening, AFileTheLoaderCannotOpenGivesDlerrorsReason) {
  TempDir dir;
  std::string so = dir / "acccheck_metric_short.so";
  write_file(so, "abc");
  ::chmod(so.c_str(), 0644);
  auto r = run_acccheck({"plugins", "--plugin-dir", dir.path()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find(so + ": cannot load: " + so + ": file too short"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Bad file descriptor"), std::string::npos) << r.err;
}

TEST(PluginHostHardening, APluginNamedWithPluginThatFailsIsFatal) {
  TempDir dir;
  std::string so = dir / "acccheck_metric_short.so";
  write_file(so, "abc");
  ::chmod(so.c_str(), 0644);
  write_file(dir / "n.csv", "x\r\n");
  auto r = run_acccheck({"compare", "-npu", dir / "n.csv", "-gpu", dir / "n.csv", "--plugin", so, "-o", dir / "o"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.err.find("acccheck compare: --plugin " + so + ": cannot load: "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "o"));
}

TEST(PluginHostHardening, ThousandsOfDevicePluginsDoNotOverflowTheProbersArguments) {
  TempDir dir;
  // 40,000 names of ~70 bytes: 2.8 MB, more than an argument list may hold (ARG_MAX, E2BIG).
  const std::string pad(40, 'x');
  for (int i = 0; i < 40000; ++i) {
    std::string so = dir / ("acccheck_device_" + pad + std::to_string(i) + ".so");
    write_file(so, "abc");
    ::chmod(so.c_str(), 0644);
  }
  auto r = run_acccheck({"plugins", "--plugin-dir", dir.path()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 40000) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("acccheck_device_" + pad + "39999.so: cannot load: "), std::string::npos);
  EXPECT_EQ(r.err.find("cannot start the probe process"), std::string::npos);
}
