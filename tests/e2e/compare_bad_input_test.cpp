// `acccheck compare` on bad input: one clear line (file, line, what was expected), a non-zero
// exit code, and no output file left behind — or the SKIP row the spec prescribes.
#include <sys/stat.h>

#include <chrono>

#include <filesystem>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::test::files_in;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

const char* kHeader =
    "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,最大绝对误差,双百指标,双千指标,双万指标,二进制一致错误率,"
    "误差均衡性,均方根误差,小值域错误占比,相对误差最大值,相对误差平均值,inf/nan错误率,相对误差错误率,绝对误差错误率,"
    "ULP误差最大值,ULP误差平均值,ULP误差大于阈值占比,Status,Message\r\n";

// A benchmark-standard row (softmax, fp16) with the given RMSE cell.
std::string softmax_row(const std::string& name, const std::string& rmse) {
  return name + ",torch.float32,torch.float16,\"(4, 4)\",0.99999,0.0001, , , , ,0.01," + rmse +
         ",0.0,0.01,0.001, , , , , , ,pass,\r\n";
}

struct Case {
  TempDir dir;
  std::string npu = dir / "npu.csv", gpu = dir / "gpu.csv", out = dir / "out";
  Case() {
    write_file(gpu, std::string("\xEF\xBB\xBF") + kHeader + softmax_row("Functional.softmax.0.forward.output.0", "0.001") +
                        softmax_row("Functional.softmax.1.forward.output.0", "0.001"));
  }
  acccheck::test::RunResult run(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"compare", "-npu", npu, "-gpu", gpu, "-o", out, "--timestamp", "20250101000000"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_acccheck(args);
  }
  std::string details() const { return read_file(out + "/api_precision_compare_details_20250101000000.csv"); }
  std::string result() const { return read_file(out + "/api_precision_compare_result_20250101000000.csv"); }
};

void expect_failure(const acccheck::test::RunResult& r, int code, const std::string& line, const Case& c) {
  EXPECT_EQ(r.exit_code, code);
  EXPECT_EQ(r.err, "acccheck compare: " + line + "\n");
  EXPECT_TRUE(files_in(c.out).empty()) << "no output may be left behind";
}

}  // namespace

TEST(CompareBadInput, MissingFile) {
  Case c;
  expect_failure(c.run(), 3, c.npu + ": cannot open: No such file or directory", c);
}

TEST(CompareBadInput, DirectoryInsteadOfFile) {
  Case c;
  fs::create_directory(c.npu);
  expect_failure(c.run(), 3, c.npu + ": is a directory, expected a CSV file", c);
}

TEST(CompareBadInput, EmptyFile) {
  Case c;
  write_file(c.npu, "");
  expect_failure(c.run(), 3, c.npu + ": empty file, expected the header line of an accuracy_checking_details CSV", c);
}

TEST(CompareBadInput, MissingRequiredColumn) {
  Case c;
  std::string header = kHeader;
  header.replace(header.find(",双千指标"), std::string(",双千指标").size(), "");
  write_file(c.npu, header);
  expect_failure(c.run(), 3,
                 c.npu + ": line 1: missing required column(s) '双千指标' (expected an accuracy_checking_details CSV "
                         "written by run_ut)",
                 c);
}

TEST(CompareBadInput, HeaderOnly) {
  Case c;
  write_file(c.npu, kHeader);
  expect_failure(c.run(), 3, c.npu + ": no data rows (only a header)", c);
}

TEST(CompareBadInput, TruncatedLastLine) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001") +
                        "Functional.softmax.1.forward.output.0,torch.float32,torch.fl");
  expect_failure(c.run(), 3, c.npu + ": line 3: expected 23 fields, found 3 (truncated or malformed row)", c);
}

TEST(CompareBadInput, TruncatedInsideAQuotedField) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001") +
                        "Functional.softmax.1.forward.output.0,torch.float32,torch.float16,\"(4, 4");
  expect_failure(c.run(), 3, c.npu + ": line 3: unterminated quoted field (file truncated?)", c);
}

TEST(CompareBadInput, InvalidUtf8) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.0\xff"));
  expect_failure(c.run(), 3, c.npu + ": line 2: invalid UTF-8 (byte offset 3 in a field)", c);
}

// Issue 11, 1a: a NUL inside a GPU cell used to shift that row's columns by one, and an error
// verdict (RMSE ratio 5000) became pass. Control bytes in any cell stop the run, naming the line.
TEST(CompareBadInput, ControlBytesInACellAreRefusedNotShifted) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "5.0"));
  write_file(c.gpu, std::string("\xEF\xBB\xBF") + kHeader +
                        softmax_row("Functional.softmax.0.forward.output.0", std::string("0.0", 3) + std::string(1, '\0') + "01"));
  expect_failure(c.run(), 3, c.gpu + ": line 2: control byte 0x00 in field 12 (byte offset 3); expected text", c);
  Case e;
  write_file(e.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001\x1b[31m"));
  expect_failure(e.run(), 3, e.npu + ": line 2: control byte 0x1B in field 12 (byte offset 5); expected text", e);
}

// Issue 11, 1d: a GPU file that matches no NPU row gave exit 0 and an all-SKIP result, silently.
TEST(CompareBadInput, NothingComparedIsSaidLoudlyAndFailsTheGate) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.7.forward.output.0", "5.0"));
  auto quiet = c.run();
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.err, "acccheck compare: nothing was compared: none of the 1 NPU rows of " + c.npu + " has a row in " +
                           c.gpu + " (another run's file?)\n");
  Case g;
  write_file(g.npu, std::string(kHeader) + softmax_row("Functional.softmax.7.forward.output.0", "5.0"));
  write_file(g.gpu, std::string(kHeader));  // header only
  auto gate = g.run({"--fail-on", "error"});
  EXPECT_EQ(gate.exit_code, 1);
  EXPECT_NE(gate.err.find("nothing was compared"), std::string::npos) << gate.err;
  EXPECT_NE(gate.err.find("; --fail-on error: failing"), std::string::npos) << gate.err;
}

TEST(CompareBadInput, DuplicateNpuRowNamesBothLines) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001") +
                        softmax_row("Functional.softmax.1.forward.output.0", "0.001") +
                        softmax_row("Functional.softmax.0.forward.output.0", "0.002"));
  expect_failure(c.run(), 3,
                 c.npu + ": line 4: API Name 'Functional.softmax.0.forward.output.0' already appears on line 2 "
                         "(each output row must be unique)",
                 c);
}

TEST(CompareBadInput, DuplicateGpuRowNamesBothLines) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  write_file(c.gpu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001") +
                        softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  expect_failure(c.run(), 3,
                 c.gpu + ": line 3: API Name 'Functional.softmax.0.forward.output.0' already appears on line 2 "
                         "(each output row must be unique)",
                 c);
}

TEST(CompareBadInput, FormulaInAnApiNameIsRefused) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("=cmd|calc.0.forward.output.0", "0.001"));
  expect_failure(c.run(), 3,
                 c.npu + ": line 2: API Name '=cmd|calc.0.forward.output.0' starts with a formula character "
                         "(+ - = % @); refusing it (CSV injection)",
                 c);
}

// Issue 11, item 4: white space before the formula character no longer slips through, a Message
// copied from the input gets the formula guard, and a name cannot forge a second log line.
TEST(CompareBadInput, FormulaGuardCoversLeadingWhiteSpaceCopiedMessagesAndLogLines) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("\t=cmd|calc.0.forward.output.0", "0.001"));
  expect_failure(c.run(), 3,
                 c.npu + ": line 2: API Name '\\t=cmd|calc.0.forward.output.0' starts with a formula character "
                         "(+ - = % @); refusing it (CSV injection)",
                 c);
  Case m;
  write_file(m.npu, std::string(kHeader) + "Torch.sum.0.forward.output.0,torch.float64,torch.float64,\"(4,)\",1.0,0.0, , , , , , , , , , , , , , , ,pass,\" =HYPERLINK(\"\"http://x\"\")\"\r\n");
  write_file(m.gpu, std::string(kHeader) + "Torch.sum.0.forward.output.0,torch.float64,torch.float64,\"(4,)\",1.0,0.0, , , , , , , , , , , , , , , ,pass,\r\n");
  auto r = m.run();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(m.details().find("\"' =HYPERLINK(\"\"http://x\"\")\""), std::string::npos) << m.details();
  Case d;
  std::string forged = "\"Torch.a.0.forward.output.0\nacccheck compare: all pass\"";
  write_file(d.npu, std::string(kHeader) + softmax_row(forged, "0.001") + softmax_row(forged, "0.001"));
  auto dup = d.run();
  EXPECT_EQ(dup.exit_code, 3);
  EXPECT_EQ(std::count(dup.err.begin(), dup.err.end(), '\n'), 1) << dup.err;
  EXPECT_NE(dup.err.find("Torch.a.0.forward.output.0\\nacccheck compare: all pass"), std::string::npos) << dup.err;
}

// Issue 11, item 3: inputs that are not regular files. A pipe given as /dev/stdin missed duplicate
// names (the file is read again from a line), a FIFO hung, /dev/zero grew to gigabytes.
TEST(CompareBadInput, PipesFifosAndDevicesAreRefusedInOneLine) {
  Case c;
  ASSERT_EQ(::mkfifo((c.dir / "fifo").c_str(), 0600), 0);
  auto fifo = run_acccheck({"compare", "-npu", c.dir / "fifo", "-gpu", c.gpu, "-o", c.out}, "timeout 20");
  expect_failure(fifo, 3, c.dir / "fifo" +
                              ": not a regular file (a pipe, FIFO or device), expected a CSV file; save it to a file first",
                 c);
  auto zero = run_acccheck({"compare", "-npu", "/dev/zero", "-gpu", c.gpu, "-o", c.out}, "timeout 20");
  EXPECT_EQ(zero.exit_code, 3);
  EXPECT_EQ(zero.err, "acccheck compare: /dev/zero: not a regular file (a pipe, FIFO or device), expected a CSV file; "
                      "save it to a file first\n");
  auto piped = run_acccheck({"compare", "-npu", "/dev/stdin", "-gpu", c.gpu, "-o", c.out}, "cat " + c.gpu + " |");
  EXPECT_EQ(piped.exit_code, 3);
  EXPECT_NE(piped.err.find("/dev/stdin: not a regular file"), std::string::npos) << piped.err;
}

TEST(CompareBadInput, ARecordWithoutEndIsCappedNamingTheFile) {
  Case c;
  write_file(c.npu, std::string(kHeader) + std::string(70u << 20, 'a'));
  expect_failure(c.run(), 3, c.npu + ": line 2: a record longer than 64 MiB (a missing line break or an unterminated quote?)",
                 c);
}

TEST(CompareBadInput, NonNumericMetricBecomesASkipRow) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "abc") +
                        softmax_row("Functional.softmax.1.forward.output.0", "0.001"));
  auto r = c.run();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(c.details().find("Functional.softmax.0.forward.output.0, , , , , , , , , , , , , , , , , , , , , , , , ,SKIP, ,"
                             "\"ERROR: column 均方根误差: expected a number, found 'abc'\"\r\n"),
            std::string::npos)
      << c.details();
  EXPECT_NE(c.result().find("Functional.softmax.0.forward.output.0,SKIP,SKIP,\"ERROR: column 均方根误差: expected a number, "
                            "found 'abc'\"\r\nFunctional.softmax.1,pass, ,\r\n"),
            std::string::npos)
      << c.result();
}

TEST(CompareBadInput, BlankRequiredCellBecomesASkipRow) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", " "));
  auto r = c.run();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(c.result().find("Functional.softmax.0.forward.output.0,SKIP,SKIP,ERROR: Input data is an empty string"),
            std::string::npos);
}

TEST(CompareBadInput, OutputFolderThatIsAFile) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  write_file(c.out, "I am a file");
  auto r = c.run();
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err, "acccheck compare: " + c.out + ": exists and is not a folder\n");
  EXPECT_EQ(read_file(c.out), "I am a file");
}

TEST(CompareBadInput, SymlinkedOutputFileIsNeverFollowed) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  fs::create_directory(c.out);
  std::string victim = c.dir / "victim.txt";
  write_file(victim, "precious");
  std::string link = c.out + "/api_precision_compare_details_20250101000000.csv";
  fs::create_symlink(victim, link);
  auto r = c.run();
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err, "acccheck compare: " + link + ": refusing to write through a symbolic link\n");
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_EQ(files_in(c.out), (std::vector<std::string>{"api_precision_compare_details_20250101000000.csv"}));
}

TEST(CompareBadInput, SymlinkedOutputFolderIsNeverFollowed) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  std::string elsewhere = c.dir / "elsewhere";
  fs::create_directory(elsewhere);
  fs::create_directory_symlink(elsewhere, c.out);
  auto r = c.run();
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err, "acccheck compare: " + c.out + ": output folder is a symbolic link; refusing to write through it\n");
  EXPECT_TRUE(files_in(elsewhere).empty());
}

TEST(CompareBadInput, AFailedRunLeavesEarlierOutputsUntouched) {
  Case c;
  fs::create_directory(c.out);
  write_file(c.out + "/api_precision_compare_result_20250101000000.csv", "earlier run");
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001") +
                        softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  auto r = c.run();
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(c.result(), "earlier run");
  EXPECT_EQ(files_in(c.out).size(), 1u);
}

TEST(CompareBadInput, AMetricPluginThatThrowsStopsTheRunWithItsName) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  write_file(c.dir / "my.yaml", "standards:\n  throws_in_judge:\n    apis: [softmax]\n");
  auto r = c.run({"--plugin", std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/acccheck_metric_throws_in_judge.so",
                  "--standards", c.dir / "my.yaml"});
  expect_failure(r, 5, "metric plugin 'throws_in_judge' failed on " + c.npu +
                           " line 2 (Functional.softmax.0.forward.output.0): boom: internal state corrupted", c);
}

TEST(CompareBadInput, TwoPluginsForOneStandardIsAPluginError) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "0.001"));
  auto r = c.run({"--plugin", std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/acccheck_metric_shadow.so"});
  expect_failure(r, 5, "two metric plugins implement standard 'benchmark'; remove one (see acccheck plugins)", c);
}

TEST(CompareBadInput, MissingNpuOrGpuOptionIsAUsageError) {
  auto r = run_acccheck({"compare", "-npu", "x.csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "acccheck compare: both -npu FILE and -gpu FILE are required (see acccheck compare --help)\n");
}

// Issue 11, 1c: standards and config files that used to flip verdicts or be ignored silently.
TEST(CompareBadSettings, StandardsFieldsAreTypedAndRanged) {
  Case base;
  write_file(base.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "5.0"));
  struct Bad {
    std::string yaml, expected;
  };
  const std::vector<Bad> cases = {
      {"standards:\n  benchmark:\n    ratio_thresholds: {rmse: .nan}\n",
       "line 3: key 'standards/benchmark/ratio_thresholds/rmse': expected a finite number, found '.nan'"},
      {"standards:\n  benchmark:\n    ratio_thresholds: {rmse: inf}\n",
       "line 3: key 'standards/benchmark/ratio_thresholds/rmse': expected a finite number, found 'inf'"},
      {"selection:\n  order: benchmark\n", "line 2: key 'selection/order': expected a list of names, found 'benchmark'"},
      {"standards:\n  benchmark:\n    small_value: 1\n    small_value: 2\n", "line 4: duplicate key 'small_value' (each key may appear once)"},
      {"standard:\n  benchmark: {}\n", "line 1: key 'standard': expected selection, notes or standards, found 'standard'"},
  };
  for (const auto& b : cases) {
    Case c;
    write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "5.0"));
    write_file(c.dir / "s.yaml", b.yaml);
    auto r = c.run({"--standards", c.dir / "s.yaml"});
    EXPECT_EQ(r.exit_code, 2) << b.yaml;
    EXPECT_EQ(r.err, "acccheck compare: " + c.dir / "s.yaml" + ": " + b.expected + "\n") << b.yaml;
    EXPECT_TRUE(files_in(c.out).empty());
  }
}

TEST(CompareBadSettings, ConfigSectionsAndTypesAreChecked) {
  Case c;
  write_file(c.npu, std::string(kHeader) + softmax_row("Functional.softmax.0.forward.output.0", "5.0"));
  write_file(c.dir / "typo.yaml", "comapre:\n  fail-on: error\n");
  auto typo = c.run({"--config", c.dir / "typo.yaml"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find(c.dir / "typo.yaml" + ": unknown section 'comapre' (expected an option of 'acccheck compare' "
                                               "or a command's section: dump, run_ut, merge, compare"),
            std::string::npos)
      << typo.err;
  write_file(c.dir / "map.yaml", "fail-on: {a: b}\n");
  auto map = c.run({"--config", c.dir / "map.yaml"});
  EXPECT_EQ(map.exit_code, 2);
  EXPECT_EQ(map.err, "acccheck compare: " + c.dir / "map.yaml" + ": option 'fail-on' must be a value or a list, found a mapping\n");
  write_file(c.dir / "worst.yaml", "worst: -1\n");
  auto worst = c.run({"--config", c.dir / "worst.yaml"});
  EXPECT_EQ(worst.exit_code, 2);
  EXPECT_EQ(worst.err, "acccheck compare: --worst: expected a whole number >= 0, found -1\n");
  write_file(c.dir / "other.yaml", "run_ut:\n  timeout: 5\nworst: 3\n");  // another command's section is fine
  EXPECT_EQ(c.run({"--config", c.dir / "other.yaml"}).exit_code, 0);
}

TEST(CompareBadSettings, AliasBombsAndDeepDocumentsAreRefusedQuickly) {
  Case c;
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char n = 'b'; n <= 'j'; ++n) {
    std::string prev(1, static_cast<char>(n - 1));
    bomb += std::string(1, n) + ": &" + n + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  }
  write_file(c.dir / "bomb.yaml", "notes:\n  x: y\n" + bomb);
  auto r = c.run({"--standards", c.dir / "bomb.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("values once aliases are expanded (an alias bomb?)"), std::string::npos) << r.err;
  write_file(c.dir / "deep.yaml", "notes: " + std::string(100000, '[') + std::string(100000, ']') + "\n");
  auto d = c.run({"--standards", c.dir / "deep.yaml"});
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_EQ(d.err, "acccheck compare: " + c.dir / "deep.yaml" + ": line 1: nested deeper than 200 levels; expected a settings file\n");
  write_file(c.dir / "dashes.yaml", "notes:\n" + [] { std::string s; for (int i = 0; i < 100000; ++i) s += "- "; return s; }() + "x\n");
  auto dash = c.run({"--standards", c.dir / "dashes.yaml"});
  EXPECT_EQ(dash.exit_code, 2);
  EXPECT_NE(dash.err.find("nested deeper than 200 levels"), std::string::npos) << dash.err;
}
