// The location-table decoder (capture/engine/python_line_table.hpp): hand-built tables with known
// lines, malformed ones, and every instruction of thousands of real code objects against the lines
// the running CPython itself gives (code.co_lines()).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/python_line_table.hpp"
#include "support/test_support.hpp"

using acccheck::capture::python_line_table_readable;
using acccheck::capture::PythonLineTable;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::string from_hex(const std::string& hex) {
  std::string s;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) s.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return s;
}

}  // namespace

TEST(PythonLineTable, VersionsWhoseFormatItReads) {
  EXPECT_FALSE(python_line_table_readable(0x030A0CF0));  // 3.10.12: the older format
  EXPECT_TRUE(python_line_table_readable(0x030B02F0));   // 3.11.2 (Debian 12)
  EXPECT_TRUE(python_line_table_readable(0x030D01F0));   // 3.13.1
  EXPECT_TRUE(python_line_table_readable(0x030E00F0));   // 3.14.0
  EXPECT_FALSE(python_line_table_readable(0x030F00A1));  // 3.15: not assumed
}

// Each entry's first byte: 1, kind (4 bits), code units − 1 (3 bits); a code unit is 2 bytes.
TEST(PythonLineTable, EachKindOfEntryGivesItsLine) {
  const std::string table = bytes({
      0x80 | (0 << 3) | 0, 0x12,                     // short form: line 10, offsets 0–1
      0x80 | (11 << 3) | 1, 0x04, 0x09,              // one-line form, +1: line 11, offsets 2–5
      0x80 | (13 << 3) | 0, 0x07,                    // no columns, signed varint 7 = −3: line 8, offsets 6–7
      0x80 | (14 << 3) | 2, 0x4C, 0x02, 0x00, 0x01, 0x05,  // long form, varint 12 + (2 << 6) = 140 = +70:
                                                     // line 78, offsets 8–13
      0x80 | (15 << 3) | 0,                          // no location: offsets 14–15, no line
      0x80 | (10 << 3) | 0, 0x00, 0x03,              // one-line form, +0: line 78 again, offsets 16–17
      0x80 | (12 << 3) | 7, 0x01, 0x02,              // one-line form, +2: line 80, offsets 18–33
  });
  const PythonLineTable t(table, 10);
  const std::vector<std::pair<int, int>> expected = {
      {0, 10}, {1, 10}, {2, 11}, {5, 11}, {6, 8}, {7, 8}, {8, 78}, {13, 78}, {14, -1}, {15, -1},
      {16, 78}, {17, 78}, {18, 80}, {33, 80}, {34, -1}, {1000, -1}, {-1, 10}};
  for (const auto& [offset, line] : expected) EXPECT_EQ(t.line_at(offset), line) << "offset " << offset;
}

TEST(PythonLineTable, MalformedTablesEndWhereTheyStopMakingSense) {
  // Not at an entry's first byte: nothing is read.
  EXPECT_EQ(PythonLineTable(bytes({0x12, 0x80}), 5).line_at(0), -1);
  // A varint cut off by the end of the table: the entry still counts, nothing is read past the end.
  const PythonLineTable cut(bytes({0x80 | (0 << 3) | 0, 0x00, 0x80 | (13 << 3) | 1, 0x44}), 5);
  EXPECT_EQ(cut.line_at(1), 5);
  EXPECT_EQ(cut.line_at(2), 5 + 2);  // varint 4 + (0 << 6) = 4 → +2
  EXPECT_EQ(cut.line_at(6), -1);
  EXPECT_EQ(PythonLineTable("", 7).line_at(0), -1);
  EXPECT_EQ(PythonLineTable("", 7).line_at(-1), 7);
  // Random bytes: no crash, no read past the table (the sanitizer builds run this too), lines
  // answered for every offset.
  std::mt19937 rng(42);
  for (int round = 0; round < 2000; ++round) {
    std::string junk(rng() % 64, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    const PythonLineTable t(junk, 1);
    for (int offset = -2; offset < 600; offset += 7) (void)t.line_at(offset);
  }
}

// The running CPython's own answer for every instruction of every code object of a few hundred
// standard-library modules (nested functions and classes included), and of made-up code with what
// the library seldom has: line jumps beyond one varint byte, lines that go back, long lines (the
// long form for columns past 127), code without location.
TEST(PythonLineTable, AgreesWithCPythonOnEveryInstructionOfRealCode) {
  const std::string python = ACCCHECK_TEST_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no Python configured for the tests";
  acccheck::test::TempDir dir;
  const std::string script = dir / "tables.py";
  acccheck::test::write_file(script, R"(import sys, importlib, pkgutil
if not ((3, 11) <= sys.version_info[:2] <= (3, 14)):
    print("version", sys.version_info[0], sys.version_info[1]); sys.exit(0)
sources = ["x = 1\n" + "\n" * 300 + "y = 2\nz = (1,\n  2)\n",
           "def f(a):\n    return (a +\n" + " " * 200 + "a)\n" + "\n" * 5000 + "g = f(1)\n",
           "try:\n    pass\nfinally:\n    q = 3\n",
           "class C:\n    def m(self):\n        return [i for i in range(3)\n" + "\n" * 70 + "                ]\n"]
codes = [compile(s, "<made%d>" % i, "exec") for i, s in enumerate(sources)]
for m in sorted(sys.stdlib_module_names):
    if m.startswith("_") or m in ("antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"): continue
    try: codes.append(importlib.import_module(m).__loader__.get_code(m))
    except Exception: pass
seen = 0
def walk(c):
    global seen
    seen += 1
    ranges = ",".join("%d:%d:%d" % (s, e, -1 if l is None else l) for s, e, l in c.co_lines())
    print("code", c.co_firstlineno, c.co_linetable.hex() or "-", ranges or "-")
    for k in c.co_consts:
        if hasattr(k, "co_linetable"): walk(k)
for c in codes:
    if c is not None: walk(c)
)");
  const std::string out = dir / "tables.txt";
  ASSERT_EQ(std::system((python + " " + script + " > " + out + " 2>/dev/null").c_str()), 0);
  std::istringstream in(acccheck::test::read_file(out));
  std::size_t code_objects = 0, instructions = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string kind, hex, ranges;
    int first = 0;
    fields >> kind;
    if (kind == "version") GTEST_SKIP() << python << " is Python " << line.substr(8) << ": not a format the decoder reads";
    fields >> first >> hex >> ranges;
    const PythonLineTable t(hex == "-" ? "" : from_hex(hex), first);
    ++code_objects;
    if (ranges == "-") continue;
    std::istringstream rs(ranges);
    for (std::string r; std::getline(rs, r, ',');) {
      int start = 0, end = 0, expected = 0;
      ASSERT_EQ(std::sscanf(r.c_str(), "%d:%d:%d", &start, &end, &expected), 3) << r;
      for (int offset = start; offset < end; offset += 2, ++instructions)
        ASSERT_EQ(t.line_at(offset), expected) << "code object " << code_objects << " (first line " << first
                                               << ", table " << hex << "), offset " << offset;
    }
  }
  EXPECT_GT(code_objects, 5000u);
  EXPECT_GT(instructions, 500000u);
  std::printf("%zu code objects, %zu instructions agree\n", code_objects, instructions);
}
