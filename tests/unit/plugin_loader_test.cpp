// The plugin host: what loads, what is refused, and the exact one-line reason.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "plugin_host/plugin_loader.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace acccheck;
using namespace acccheck::core;
using acccheck::test::TempDir;

namespace {

std::string test_plugin(const std::string& file) { return std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/" + file; }

// Copies a built test plugin into a private folder (so permissions can be changed safely).
std::string staged(const TempDir& dir, const std::string& file) {
  std::string to = dir / file;
  fs::copy_file(test_plugin(file), to, fs::copy_options::overwrite_existing);
  ::chmod(to.c_str(), 0755);
  return to;
}

std::string refusal_of(const std::string& file, std::optional<PluginKind> kind = std::nullopt) {
  auto outcome = load_plugin_file(file, kind);
  auto* r = std::get_if<Refusal>(&outcome);
  return r ? r->line() : std::string("<loaded>");
}

}  // namespace

TEST(PluginLoader, LoadsAGoodPluginAndReadsItsDescriptor) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_test_good.so");
  auto outcome = load_plugin_file(file, PluginKind::metric);
  ASSERT_TRUE(std::holds_alternative<LoadedPlugin>(outcome)) << std::get<Refusal>(outcome).line();
  const auto& p = std::get<LoadedPlugin>(outcome);
  EXPECT_EQ(p.name, "test_good");
  EXPECT_EQ(p.version, "0.1.0");
  EXPECT_EQ(p.kind, PluginKind::metric);
  EXPECT_EQ(p.torch_version, "");  // a metric plugin does not use LibTorch
  auto* metric = dynamic_cast<MetricPlugin*>(p.instance.get());
  ASSERT_NE(metric, nullptr);
  EXPECT_EQ(metric->standard_id(), "test_good");
}

TEST(PluginLoader, RefusesASharedObjectWithoutTheEntrySymbol) {
  TempDir dir;
  std::string file = staged(dir, "libnot_a_plugin.so");
  EXPECT_EQ(refusal_of(file), file + ": not an acccheck plugin (no 'acccheck_plugin' entry symbol)");
}

TEST(PluginLoader, RefusesAnotherAbiMajorNamingBothVersions) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_wrong_abi.so");
  EXPECT_EQ(refusal_of(file),
            file + ": wrong plugin ABI: built for ABI 99.0, this acccheck supports ABI 1.x; rebuild the plugin "
                   "against this SDK");
}

TEST(PluginLoader, RefusesAPluginBuiltAgainstAnotherLibTorch) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_device_wrong_torch.so");
  HostBuild host = this_host_build();
  host.torch_version = "1.13";
  auto outcome = load_plugin_file(file, std::nullopt, host);
  ASSERT_TRUE(std::holds_alternative<Refusal>(outcome));
  EXPECT_EQ(std::get<Refusal>(outcome).line(),
            file + ": built against LibTorch 2.3, this acccheck uses LibTorch 1.13; rebuild the plugin against "
                   "LibTorch 1.13");
}

TEST(PluginLoader, RefusesAnotherCxxAbiFlag) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_wrong_cxx_abi.so");
  EXPECT_EQ(refusal_of(file), file + ": built with _GLIBCXX_USE_CXX11_ABI=0, this acccheck uses _GLIBCXX_USE_CXX11_ABI=1");
}

TEST(PluginLoader, RefusesAKindThatContradictsTheFileName) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_really_a_hook.so");
  EXPECT_EQ(refusal_of(file, PluginKind::metric),
            file + ": file name says kind 'metric' but the plugin declares 'hook'");
}

TEST(PluginLoader, RefusesAnUnknownKind) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_unknown_kind.so");
  EXPECT_EQ(refusal_of(file), file + ": unknown plugin kind 7 (expected hook, device or metric)");
}

TEST(PluginLoader, RefusesAFactoryThatThrowsWithItsMessage) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_throwing.so");
  EXPECT_EQ(refusal_of(file), file + ": plugin factory failed: cannot open licence file /opt/vendor/licence");
}

TEST(PluginLoader, RefusesAWorldWritableFileBeforeOpeningIt) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_test_good.so");
  ::chmod(file.c_str(), 0777);
  EXPECT_EQ(refusal_of(file), file + ": refused: file is world-writable (fix: chmod o-w)");
}

TEST(PluginLoader, RefusesAFileInAWorldWritableFolder) {
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_test_good.so");
  ::chmod(dir.path().c_str(), 0777);
  EXPECT_EQ(refusal_of(file), file + ": refused: folder " + dir.path() + ": folder is world-writable (fix: chmod o-w)");
  ::chmod(dir.path().c_str(), 0700);
}

TEST(PluginLoader, RefusesAFileOwnedBySomeoneElse) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  TempDir dir;
  std::string file = staged(dir, "acccheck_metric_test_good.so");
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  EXPECT_EQ(refusal_of(file), file + ": refused: file is owned by uid 65534, expected you (uid 0) or root");
}

// Decision (docs/plugins.md): a symlink is followed, and the checks apply to what it points to.
TEST(PluginLoader, FollowsASymlinkButChecksItsTarget) {
  TempDir dir, other;
  std::string real = staged(other, "acccheck_metric_test_good.so");
  std::string link = dir / "acccheck_metric_test_good.so";
  fs::create_symlink(real, link);
  auto outcome = load_plugin_file(link, PluginKind::metric);
  ASSERT_TRUE(std::holds_alternative<LoadedPlugin>(outcome));
  EXPECT_EQ(std::get<LoadedPlugin>(outcome).real_file, fs::canonical(real).string());

  ::chmod(real.c_str(), 0777);
  EXPECT_EQ(refusal_of(link), link + ": refused: link target is world-writable (fix: chmod o-w)");
}

TEST(PluginRegistry, KeepsTheFirstOfTwoPluginsWithTheSameName) {
  TempDir dir;
  staged(dir, "acccheck_metric_test_good.so");
  staged(dir, "acccheck_metric_test_duplicate.so");
  PluginRegistry registry;
  registry.load({{dir.path()}, {}}, {PluginKind::metric});
  ASSERT_EQ(registry.loaded().size(), 1u);
  EXPECT_EQ(registry.loaded()[0].file, dir / "acccheck_metric_test_duplicate.so");  // sorted: duplicate < good
  ASSERT_EQ(registry.refused().size(), 1u);
  EXPECT_EQ(registry.refused()[0].line(), dir / "acccheck_metric_test_good.so" +
                                              ": duplicate metric plugin name 'test_good' (already loaded from " +
                                              dir / "acccheck_metric_test_duplicate.so" + ")");
}

TEST(PluginRegistry, ARefusedPluginDoesNotStopTheOthers) {
  TempDir dir;
  staged(dir, "acccheck_metric_test_good.so");
  staged(dir, "acccheck_metric_throwing.so");
  staged(dir, "acccheck_metric_wrong_abi.so");
  PluginRegistry registry;
  registry.load({{dir.path()}, {}}, {PluginKind::metric});
  ASSERT_EQ(registry.loaded().size(), 1u);
  EXPECT_EQ(registry.loaded()[0].name, "test_good");
  EXPECT_EQ(registry.refused().size(), 2u);
}

TEST(PluginRegistry, OnlyOpensFilesOfTheRequestedKinds) {
  TempDir dir;
  staged(dir, "acccheck_metric_test_good.so");
  staged(dir, "acccheck_device_wrong_torch.so");
  staged(dir, "libnot_a_plugin.so");
  PluginRegistry registry;
  registry.load({{dir.path()}, {}}, {PluginKind::metric});
  EXPECT_EQ(registry.loaded().size(), 1u);
  EXPECT_TRUE(registry.refused().empty());  // the device and the non-plugin were never opened
}

TEST(PluginRegistry, RefusesAWorldWritableFolderWhole) {
  TempDir dir;
  staged(dir, "acccheck_metric_test_good.so");
  ::chmod(dir.path().c_str(), 0777);
  PluginRegistry registry;
  registry.load({{dir.path()}, {}}, {PluginKind::metric});
  EXPECT_TRUE(registry.loaded().empty());
  ASSERT_EQ(registry.refused().size(), 1u);
  EXPECT_EQ(registry.refused()[0].line(), dir.path() + ": refused plugin folder: folder is world-writable (fix: chmod o-w)");
  ::chmod(dir.path().c_str(), 0700);
}

TEST(PluginRegistry, ReadsTheYamlBesideAPlugin) {
  TempDir dir;
  staged(dir, "acccheck_metric_test_good.so");
  acccheck::test::write_file(dir / "acccheck_metric_test_good.yaml", "threshold: 0.5\nlist: [a, b]\n");
  PluginRegistry registry;
  registry.load({{dir.path()}, {}}, {PluginKind::metric});
  ASSERT_EQ(registry.loaded().size(), 1u);
  Settings s = PluginRegistry::sidecar_settings(registry.loaded()[0]);
  EXPECT_EQ(s.number("threshold"), 0.5);
  EXPECT_EQ(s.list("list"), (std::vector<std::string>{"a", "b"}));
}

// The dump's operator categories, as shipped (their YAML beside them).
TEST(HookPlugins, ShippedCategoriesNameAndMarkTheirOperators) {
  PluginRegistry registry;
  registry.load({{ACCCHECK_PLUGIN_DIR}, {}}, {PluginKind::hook});
  std::map<std::string, HookPlugin*> hooks;
  for (const auto& [info, hook] : registry.hooks()) {
    hook->configure(PluginRegistry::sidecar_settings(*info));
    hooks[std::string(hook->category())] = hook;
  }
  ASSERT_TRUE(hooks.count("aten") && hooks.count("vendor") && hooks.count("c10d"));
  auto add = hooks["aten"]->classify({"aten::add_", "Tensor"});
  ASSERT_TRUE(add);
  EXPECT_EQ(add->api_name, "Aten.add_") << "msprobe's Aten family without the overload";
  EXPECT_TRUE(add->replayable);
  EXPECT_FALSE(hooks["aten"]->classify({"aten::no_such_op", ""}));
  EXPECT_FALSE(hooks["aten"]->classify({"npu::npu_rms_norm", ""}));
  auto empty = hooks["aten"]->classify({"aten::empty_like", ""});
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->replayable) << "uninitialised memory: listed under not_replayable";
  auto rms = hooks["vendor"]->classify({"npu::npu_rms_norm", ""});
  ASSERT_TRUE(rms);
  EXPECT_EQ(rms->api_name, "NPU.npu_rms_norm");
  EXPECT_TRUE(rms->replayable);
  auto allreduce = hooks["c10d"]->classify({"c10d::allreduce_", ""});
  ASSERT_TRUE(allreduce);
  EXPECT_EQ(allreduce->api_name, "Distributed.allreduce_");
  EXPECT_FALSE(allreduce->replayable) << "a collective cannot run as a single-operator test";
  EXPECT_FALSE(hooks["c10d"]->classify({"aten::add", "Tensor"}));
}
