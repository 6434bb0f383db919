// -save_error_data's file names and writes (replay/worker/error_data_files): hostile entry names
// stay flat in the error folder, files are created new, never through a link, and a failed write
// leaves nothing.
#include "error_data_files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <set>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::replay::error_data_stem;
using acccheck::replay::write_error_data_file;
using acccheck::test::read_file;
using acccheck::test::TempDir;
using acccheck::test::write_file;

TEST(ErrorDataFiles, APlainEntryNameIsItsOwnStem) {
  EXPECT_EQ(error_data_stem("Functional.linear.0"), "Functional.linear.0");
  EXPECT_EQ(error_data_stem("Aten.add_-Tensor.12"), "Aten.add_-Tensor.12");
}

TEST(ErrorDataFiles, HostileNamesGetAFlatHashedStem) {
  const std::string hostile[] = {"../evil.0", std::string("../Makefile\0.0", 14), "a/b", "..", ".", "",
                                 "x\ny", "\x1b[2J", std::string(400, 'a')};
  std::set<std::string> stems;
  for (const auto& name : hostile) {
    const std::string s = error_data_stem(name);
    SCOPED_TRACE(s);
    EXPECT_EQ(s.rfind("entry_", 0), 0u);
    EXPECT_EQ(s.find('/'), std::string::npos);
    EXPECT_EQ(s.find('\0'), std::string::npos);
    for (unsigned char c : s) EXPECT_GE(c, 0x20);
    EXPECT_LE(s.size(), 6u + 160u + 1u + 16u);
    stems.insert(s);
  }
  EXPECT_EQ(stems.size(), std::size(hostile)) << "two names share a stem";
  // "../evil.0": its plain characters, then FNV-1a 64 of the name (hand-checked with Python).
  EXPECT_EQ(error_data_stem("../evil.0"), "entry_.._evil.0-1b84a8e587ca501c");
  // Names that differ only in a replaced character or beyond the cut still differ.
  EXPECT_NE(error_data_stem("a/b"), error_data_stem("a\\b"));
  EXPECT_NE(error_data_stem(std::string(400, 'a')), error_data_stem(std::string(401, 'a')));
}

TEST(ErrorDataFiles, WritesANewFileAndReplacesWhatAnInterruptedRunLeft) {
  TempDir dir;
  EXPECT_EQ(write_error_data_file(dir / "x.pt", {'a', 'b'}), "");
  EXPECT_EQ(read_file(dir / "x.pt"), "ab");
  EXPECT_EQ(write_error_data_file(dir / "x.pt", {'c'}), "");
  EXPECT_EQ(read_file(dir / "x.pt"), "c");
}

TEST(ErrorDataFiles, ALinkIsRemovedNotFollowed) {
  TempDir dir;
  write_file(dir / "victim", "keep");
  fs::create_symlink(dir / "victim", dir / "x.pt");
  EXPECT_EQ(write_error_data_file(dir / "x.pt", {'e'}), "");
  EXPECT_EQ(read_file(dir / "victim"), "keep");
  EXPECT_FALSE(fs::is_symlink(dir / "x.pt"));
}

TEST(ErrorDataFiles, AFailedWriteNamesThePathAndLeavesNothing) {
  TempDir dir;
  EXPECT_EQ(write_error_data_file(dir / "no/such/x.pt", {'a'}), dir / "no/such/x.pt" + ": No such file or directory");
  // A file-size limit below the data: write() fails with EFBIG (SIGXFSZ ignored), the file is removed.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &old);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit small = saved;
  small.rlim_cur = 10;
  setrlimit(RLIMIT_FSIZE, &small);
  const std::string r = write_error_data_file(dir / "big.pt", std::vector<char>(100, 'x'));
  setrlimit(RLIMIT_FSIZE, &saved);
  sigaction(SIGXFSZ, &old, nullptr);
  EXPECT_EQ(r, dir / "big.pt" + ": File too large");
  EXPECT_FALSE(fs::exists(dir / "big.pt"));
}
