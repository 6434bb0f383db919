// Helpers shared by the test suites: temporary folders, running the real binary, reading files,
// loading the real metric plugins.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <acccheck/metric.hpp>

#include "support/build_config.hpp"

namespace acccheck::test {

// A fresh private (0700) folder, removed with its contents at destruction. It lies in the build
// tree's test-tmp/ (ACCCHECK_TEST_TMP_DIR), not in /tmp: a sanitized build's installed prefix and
// example builds are hundreds of MB, and a machine's /tmp may be a small RAM disk.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs the real `acccheck` with these arguments (no shell quoting problems: args are quoted).
RunResult run_acccheck(const std::vector<std::string>& args, const std::string& env = "");

std::string read_file(const std::string& path);
std::string shell_quote(const std::string& s);  // 'text' for /bin/sh
std::string shell_output(const std::string& command);  // what /bin/sh -c COMMAND prints on stdout
void write_file(const std::string& path, const std::string& content);
std::vector<std::string> files_in(const std::string& dir);
std::string fixture(const std::string& relative);  // tests/fixtures/<relative>

// Installs the SDK of this build into a temporary prefix (once per test binary) and builds
// examples/<name> against it with find_package(acccheck); returns the example's build folder.
const std::string& installed_sdk_prefix();
std::string build_example(const std::string& name, const TempDir& dir);
// The same for any CMake project folder (an `acccheck repro` output).
std::string build_cmake_project(const std::string& src, const TempDir& dir);

// Loads a metric plugin of the build (by standard id) and configures it from the shipped
// standards.yaml; the plugin stays loaded for the test binary's life.
MetricPlugin& metric_plugin(const std::string& standard_id);
// The same plugin configured with the shipped settings but `overrides` (keys of its section, e.g.
// {"max_rel_abs_excuse", "0"}); the next metric_plugin(id) call configures it as shipped again.
MetricPlugin& metric_plugin(const std::string& standard_id, const std::map<std::string, std::string>& overrides);

// RowView over a column → text map.
class MapRow final : public RowView {
 public:
  MapRow(std::initializer_list<std::pair<const std::string, std::string>> cells) : cells_(cells) {}
  std::string_view cell(std::string_view column) const override;
  bool has_column(std::string_view column) const override;
  std::map<std::string, std::string, std::less<>> cells_;
};

// A double's bit pattern: equal patterns mean the same value, NaN payload and the sign of zero
// included (for tests that require bit-for-bit results).
inline std::uint64_t double_bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace acccheck::test
