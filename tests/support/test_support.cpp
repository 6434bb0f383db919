#include "support/test_support.hpp"

#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "config/yaml_settings.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace fs = std::filesystem;

namespace acccheck::test {

TempDir::TempDir() {
  std::error_code ec;
  fs::create_directories(ACCCHECK_TEST_TMP_DIR, ec);
  std::string tmpl = std::string(ACCCHECK_TEST_TMP_DIR) + "/acccheck-test-XXXXXX";
  char* p = ::mkdtemp(tmpl.data());
  if (!p) throw std::runtime_error("mkdtemp failed in " + std::string(ACCCHECK_TEST_TMP_DIR) + ": " + std::string(std::strerror(errno)));
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q.push_back(c);
  }
  return q + "'";
}

std::string shell_output(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

namespace {
std::string quote(const std::string& s) { return shell_quote(s); }

}  // namespace

RunResult run_acccheck(const std::vector<std::string>& args, const std::string& env) {
  TempDir t;
  std::string cmd = env + (env.empty() ? "" : " ") + quote(ACCCHECK_BINARY);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " >" + quote(t / "out") + " 2>" + quote(t / "err") + " </dev/null";
  int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(t / "out");
  r.err = read_file(t / "err");
  return r;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::is_directory(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
int run_shell(const std::string& cmd, const std::string& log) {
  int status = std::system((cmd + " >" + quote(log) + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

namespace {
// The installed prefix lives as long as the test process and is removed when it exits (each test
// process installs its own: ctest runs every test in a process of its own). A forked child that
// calls exit() must not remove its parent's prefix, hence the pid.
class ProcessTempDir {
 public:
  ProcessTempDir() : owner_(::getpid()) {}
  ~ProcessTempDir() {
    if (::getpid() != owner_) (void)dir_.release();
  }
  const TempDir& dir() const { return *dir_; }

 private:
  pid_t owner_;
  std::unique_ptr<TempDir> dir_ = std::make_unique<TempDir>();
};
}  // namespace

const std::string& installed_sdk_prefix() {
  static ProcessTempDir owner;
  static const TempDir* dir = &owner.dir();
  static const std::string prefix = [] {
    std::string p = dir->path() + "/prefix";
    // --strip: a sanitized build's binaries carry hundreds of MB of debug information the
    // out-of-tree builds never read.
    int rc = run_shell(quote(ACCCHECK_CMAKE) + " --install " + quote(ACCCHECK_BUILD_DIR) + " --strip --prefix " + quote(p),
                       dir->path() + "/install.log");
    if (rc != 0) ADD_FAILURE() << "install failed:\n" << read_file(dir->path() + "/install.log");
    return p;
  }();
  return prefix;
}

std::string build_example(const std::string& name, const TempDir& dir) {
  return build_cmake_project(std::string(ACCCHECK_SOURCE_DIR) + "/examples/" + name, dir);
}

std::string build_cmake_project(const std::string& src, const TempDir& dir) {
  std::string build = dir / "build";
  std::string configure = quote(ACCCHECK_CMAKE) + " -S " + quote(src) + " -B " + quote(build) +
                          " -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH=" + quote(installed_sdk_prefix());
  if (std::string(ACCCHECK_EXAMPLE_FLAGS).size())
    for (const char* var : {"CMAKE_CXX_FLAGS", "CMAKE_EXE_LINKER_FLAGS", "CMAKE_SHARED_LINKER_FLAGS", "CMAKE_MODULE_LINKER_FLAGS"})
      configure += std::string(" -D") + var + "=" + quote(ACCCHECK_EXAMPLE_FLAGS);
  EXPECT_EQ(run_shell(configure, dir / "configure.log"), 0) << read_file(dir / "configure.log");
  EXPECT_EQ(run_shell(quote(ACCCHECK_CMAKE) + " --build " + quote(build), dir / "build.log"), 0)
      << read_file(dir / "build.log");
  return build;
}

std::string fixture(const std::string& relative) { return std::string(ACCCHECK_FIXTURES) + "/" + relative; }

MetricPlugin& metric_plugin(const std::string& standard_id) { return metric_plugin(standard_id, {}); }

MetricPlugin& metric_plugin(const std::string& standard_id, const std::map<std::string, std::string>& overrides) {
  static auto* registry = [] {
    auto* r = new core::PluginRegistry();
    core::PluginSearch search;
    search.dirs = {ACCCHECK_PLUGIN_DIR};
    r->load(search, {PluginKind::metric});
    return r;
  }();
  static Settings flat = [] {
    Settings s;
    core::flatten_yaml(core::load_yaml_file(std::string(ACCCHECK_PLUGIN_DIR) + "/standards.yaml"), "", s);
    return s;
  }();
  for (const auto& [info, metric] : registry->metrics()) {
    if (metric->standard_id() != standard_id) continue;
    Settings section = flat.section("standards/" + standard_id);
    for (const auto& [key, value] : overrides) section.set(key, value);
    metric->configure(section);
    return *metric;
  }
  throw std::runtime_error("metric plugin not built: " + standard_id);
}

std::string_view MapRow::cell(std::string_view column) const {
  auto it = cells_.find(column);
  return it == cells_.end() ? std::string_view() : std::string_view(it->second);
}

bool MapRow::has_column(std::string_view column) const { return cells_.find(column) != cells_.end(); }

}  // namespace acccheck::test
