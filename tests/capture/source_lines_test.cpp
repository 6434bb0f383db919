// The source lines under stack.json's frames (capture/engine/source_lines.hpp): hand-made files with
// known lines, files that are not regular, the line limit, and every line of real source files
// against what reading them a line at a time with std::getline gives.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/source_lines.hpp"
#include "support/test_support.hpp"

using acccheck::capture::SourceLines;

namespace {

// Line n of `path` as std::getline reads it, its leading spaces and tabs left out.
std::vector<std::string> getline_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) {
    const auto b = l.find_first_not_of(" \t");
    lines.push_back(b == std::string::npos ? "" : l.substr(b));
  }
  return lines;
}

}  // namespace

TEST(SourceLines, LinesOfAFileWithoutTheirLeadingBlanks) {
  acccheck::test::TempDir dir;
  const std::string f = dir / "train.py";
  acccheck::test::write_file(f, "  a = 1\n\tb = model(x)  \n\n   \nlast");
  SourceLines s;
  EXPECT_EQ(s.line(f, 1), "a = 1");
  EXPECT_EQ(s.line(f, 2), "b = model(x)  ");  // trailing blanks stay, as msprobe shows them
  EXPECT_EQ(s.line(f, 3), "");
  EXPECT_EQ(s.line(f, 4), "");
  EXPECT_EQ(s.line(f, 5), "last");  // no newline at the end
  EXPECT_EQ(s.line(f, 6), "");
  EXPECT_EQ(s.line(f, 0), "");
}

TEST(SourceLines, ALastNewlineEndsTheLastLineAndCarriageReturnsStay) {
  acccheck::test::TempDir dir;
  acccheck::test::write_file(dir / "lf.py", "a\n");
  acccheck::test::write_file(dir / "crlf.py", "x = 1\r\n  y\r\n");
  acccheck::test::write_file(dir / "blank.py", "\n");
  acccheck::test::write_file(dir / "empty.py", "");
  SourceLines s;
  EXPECT_EQ(s.line(dir / "lf.py", 1), "a");
  EXPECT_EQ(s.line(dir / "lf.py", 2), "");
  EXPECT_EQ(s.line(dir / "crlf.py", 1), "x = 1\r");
  EXPECT_EQ(s.line(dir / "crlf.py", 2), "y\r");
  EXPECT_EQ(s.line(dir / "crlf.py", 3), "");
  EXPECT_EQ(s.line(dir / "blank.py", 1), "");
  EXPECT_EQ(s.line(dir / "empty.py", 1), "");
}

TEST(SourceLines, WhatIsNotARegularReadableFileHasNoLines) {
  acccheck::test::TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(dir / "folder");
  SourceLines s;
  EXPECT_EQ(s.line(dir / "missing.py", 1), "");
  EXPECT_EQ(s.line(dir / "folder", 1), "");
  EXPECT_EQ(s.line(dir / "fifo", 1), "");  // returns at once: a FIFO with no writer is not waited on
}

TEST(SourceLines, AFileIsReadOnce) {
  acccheck::test::TempDir dir;
  const std::string f = dir / "m.py";
  acccheck::test::write_file(f, "one\ntwo\n");
  SourceLines s;
  EXPECT_EQ(s.line(f, 2), "two");
  acccheck::test::write_file(f, "changed\n");  // a module edited while the program runs: the lines it was read with stay
  EXPECT_EQ(s.line(f, 1), "one");
  EXPECT_EQ(s.line(f, 2), "two");
}

TEST(SourceLines, LinesPastTheLimitAreNotShown) {
  acccheck::test::TempDir dir;
  const std::string f = dir / "long.py";
  std::string text;
  for (std::size_t n = 1; n <= SourceLines::kMaxLines + 3; ++n) text += "  line" + std::to_string(n) + "\n";
  acccheck::test::write_file(f, text);
  SourceLines s;
  EXPECT_EQ(s.line(f, 1), "line1");
  EXPECT_EQ(s.line(f, SourceLines::kMaxLines), "line" + std::to_string(SourceLines::kMaxLines));
  EXPECT_EQ(s.line(f, SourceLines::kMaxLines + 1), "");
}

TEST(SourceLines, EveryLineOfRealSourcesIsWhatGetlineReads) {
  // This project's own sources and, where Debian's python3-torch is installed, the largest module a
  // Python stack shows (torch/nn/functional.py, 5,000-odd lines).
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ACCCHECK_SOURCE_DIR) + "/capture/engine"))
    files.push_back(e.path().string());
  const std::string functional = "/usr/lib/python3/dist-packages/torch/nn/functional.py";
  if (std::filesystem::exists(functional)) files.push_back(functional);
  ASSERT_GT(files.size(), 10u);
  SourceLines s;
  std::size_t checked = 0;
  for (const auto& f : files) {
    const std::vector<std::string> expected = getline_lines(f);
    for (std::size_t n = 1; n <= expected.size() + 1; ++n) {
      ASSERT_EQ(s.line(f, n), n <= expected.size() ? expected[n - 1] : "") << f << " line " << n;
      ++checked;
    }
  }
  EXPECT_GT(checked, 3000u);
}
