// The layout shows the architecture (issue 26): host/ is the CLI alone — nothing outside it
// (but the tests and fuzz harnesses of its code) includes a file of it — and the host and core/'s torch-free libraries never link LibTorch
// (CMakeLists.txt checks the link lines at configure time; this checks the built executable).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "support/build_config.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSource = ACCCHECK_SOURCE_DIR;

bool is_source(const fs::path& p) {
  const auto e = p.extension().string();
  return e == ".cpp" || e == ".hpp" || e == ".h" || e == ".in";
}

}  // namespace

TEST(TorchFreeLayout, NothingOutsideHostIncludesFromHost) {
  const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> violations;
  std::size_t files = 0;
  // The tests and the fuzz harnesses include what they check, host/ included.
  for (const char* top : {"core", "capture", "replay", "plugins", "sdk", "bench", "examples"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSource / top)) {
      if (!e.is_regular_file() || !is_source(e.path())) continue;
      ++files;
      std::ifstream in(e.path());
      std::size_t n = 0;
      for (std::string line; std::getline(in, line);) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        const std::string included = m[1];
        // Included relative to host/ (its include root) or through a path into it; a file of the
        // same name beside the includer or in its own folder's tree is that folder's.
        const bool beside = fs::exists(e.path().parent_path() / included);
        if (included.rfind("host/", 0) == 0 || (!beside && fs::exists(kSource / "host" / included)))
          violations.push_back(fs::relative(e.path(), kSource).string() + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  EXPECT_GT(files, 100u);
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
}

TEST(TorchFreeLayout, TheHostExecutableDoesNotLinkLibTorch) {
  FILE* p = ::popen(("readelf -d '" + std::string(ACCCHECK_BINARY) + "' 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t k; (k = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, k);
  ::pclose(p);
  ASSERT_NE(out.find("(NEEDED)"), std::string::npos) << out;
  for (const char* lib : {"libtorch", "libc10"}) EXPECT_EQ(out.find(lib), std::string::npos) << lib << " in\n" << out;
}
