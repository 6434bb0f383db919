// `acccheck run_ut` end to end: the real binary, the real acccheck-replay workers, real LibTorch,
// on dumps the reference tool wrote (spec/vectors/msprobe-dump-mlp*) and on dumps made here.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <acccheck/csv.hpp>
#include <acccheck/number_format.hpp>
#include <acccheck/record.hpp>

#include "support/test_support.hpp"

extern char** environ;

namespace fs = std::filesystem;
using namespace acccheck;
using acccheck::test::fixture;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

const std::string kStatsDump = fixture("vectors/msprobe-dump-mlp/dump.json");
const std::string kTensorDump = fixture("vectors/msprobe-dump-mlp-tensor/dump.json");

std::vector<std::vector<std::string>> records(const std::string& path) { return read_csv_records(path); }

std::string only_file(const std::string& dir, const std::string& prefix) {
  std::string found;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) {
      EXPECT_TRUE(found.empty()) << "two " << prefix << " files in " << dir;
      found = e.path().string();
    }
  EXPECT_FALSE(found.empty()) << "no " << prefix << " file in " << dir;
  return found;
}
std::string result_csv(const std::string& dir) { return only_file(dir, "accuracy_checking_result_"); }
std::string details_csv(const std::string& dir) { return only_file(dir, "accuracy_checking_details_"); }

test::RunResult run_ut(const std::vector<std::string>& extra, const std::string& env = "") {
  std::vector<std::string> args{"run_ut", "--timestamp", "20260101000000"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_acccheck(args, env);
}

std::vector<std::string> column(const std::vector<std::vector<std::string>>& rows, std::size_t c) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(c < r.size() ? r[c] : "<missing>");
  return out;
}

// run_ut needs the torch-linked worker: a build without LibTorch has none.
// run_ut of <dir>/dump.json on `device`, into <dir>/<device>: the result file's records (header
// first) and the details file's; an exit other than 0 fails the test.
struct RunOn {
  std::vector<std::vector<std::string>> results, details;
};
RunOn run_dump_on(const std::string& dir, const std::string& device) {
  auto r = run_ut({"-api_info", dir + "/dump.json", "--device", device, "-o", dir + "/" + device});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {};
  return {records(result_csv(dir + "/" + device)), records(details_csv(dir + "/" + device))};
}

class RunUt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no acccheck-replay worker";
  }
};

}  // namespace

TEST_F(RunUt, StatisticsDumpOfTheReferenceReplaysOnCpuWithTheReferencesStatuses) {
  TempDir out;
  auto r = run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", out.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ours = records(result_csv(out.path()));
  auto ref = records(fixture("vectors/msprobe-dump-mlp/run_ut_cpu/accuracy_checking_result_20261130023010.csv"));
  ASSERT_EQ(ours.size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i)
    for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(ours[i][c], ref[i][c]) << "result row " << i;
  auto od = records(details_csv(out.path()));
  auto rd = records(fixture("vectors/msprobe-dump-mlp/run_ut_cpu/accuracy_checking_details_20261130023010.csv"));
  EXPECT_EQ(column(od, 0), column(rd, 0));   // the same rows, in the same order
  EXPECT_EQ(column(od, 21), column(rd, 21));  // with the same statuses
  EXPECT_NE(r.out.find("forward    pass 14"), std::string::npos) << r.out;
}

TEST_F(RunUt, TensorDumpOnCpuReproducesTheReferencesNumbers) {
  // The device side's fp32 matmuls (linear) round as the BLAS kernel the CPU gets rounds: OpenBLAS
  // picks an FMA kernel on AVX2 machines, and those errors differ from the reference's (ULP max 52
  // vs 66 on linear.2's weight gradient). The reference's numbers are those of OpenBLAS's non-FMA
  // kernels: pin one that every x86-64 CPU runs. (Ignored where OpenBLAS is not the BLAS.)
  TempDir out;
  auto r = run_ut({"-api_info", kTensorDump, "--device", "cpu", "-o", out.path()}, "OPENBLAS_CORETYPE=Nehalem");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto od = records(details_csv(out.path()));
  auto rd = records(fixture("vectors/msprobe-dump-mlp-tensor/run_ut_cpu/accuracy_checking_details_20261130023018.csv"));
  ASSERT_EQ(od.size(), rd.size());
  int numbers = 0;
  // The reference ran on torch 1.13 with OpenBLAS. Other LibTorch builds bring other CPU kernels
  // for two of these APIs: the PyPI wheels' fp32 matmul is MKL's (linear), and 2.x's vectorised gelu
  // rounds differently. Their numbers are the kernels', not acccheck's: there the rows and statuses
  // must still match (below), the numbers of every other API too (docs/compat.md).
  const bool reference_kernels = std::string(ACCCHECK_TORCH_FULL_VERSION).rfind("1.13", 0) == 0;
  auto kernel_dependent = [&](const std::string& row) {
    return !reference_kernels && (row.rfind("Functional.linear.", 0) == 0 || row.rfind("Functional.gelu.", 0) == 0);
  };
  for (std::size_t i = 1; i < rd.size(); ++i)
    for (std::size_t c = 0; c < rd[i].size(); ++c) {
      if (od[i][c] == rd[i][c]) continue;
      if (kernel_dependent(rd[i][0]) && c != 21) continue;  // column 21: the status
      auto a = parse_python_float(od[i][c]), e = parse_python_float(rd[i][c]);
      ASSERT_TRUE(a && e) << rd[i][0] << " column " << rd[0][c] << ": '" << od[i][c] << "' vs '" << rd[i][c] << "'";
      EXPECT_NEAR(*a, *e, 1e-6 * std::fabs(*e)) << rd[i][0] << " column " << rd[0][c];
      ++numbers;
    }
  EXPECT_EQ(records(result_csv(out.path())),
            records(fixture("vectors/msprobe-dump-mlp-tensor/run_ut_cpu/accuracy_checking_result_20261130023018.csv")));
}

TEST_F(RunUt, InputsDoNotDependOnTheNumberOfWorkersOrTheProcess) {
  // Random inputs are seeded from the entry name: one worker or two, the npu-sim details are the
  // same bit for bit (every metric is a function of the inputs).
  TempDir one, two;
  auto a = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "-n", "1", "-o", one.path()});
  auto b = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "-n", "2", "-o", two.path()});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(read_file(details_csv(one.path())), read_file(details_csv(two.path())));
  EXPECT_EQ(read_file(result_csv(one.path())), read_file(result_csv(two.path())));
}

TEST_F(RunUt, TensorDumpReplaysOnNpuSimWithTwoWorkers) {
  TempDir out;
  auto r = run_ut({"-api_info", kTensorDump, "--device", "npu-sim", "-n", "2", "-o", out.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = records(result_csv(out.path()));
  ASSERT_EQ(rows.size(), 15u);
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i][1], "pass") << rows[i][0];
}

// The tensor dump on npu-sim with gelu crashing and mse_loss hanging (3 s time-out) plus `faults`:
// the result rows by API name, and run_ut's stderr.
struct FaultyRun {
  std::map<std::string, std::vector<std::string>> by_api;
  std::string err;
};
FaultyRun run_with_crash_and_hang(const TempDir& dir, const std::string& faults, std::vector<std::string> extra,
                                  const std::string& env = "") {
  write_file(dir / "faults.yaml",
             "faults:\n  - {op: \"aten::gelu\", kind: crash}\n  - {op: \"aten::mse_loss\", kind: hang}\n" + faults);
  std::vector<std::string> args{"-api_info", kTensorDump, "--device", "npu-sim", "--device-config", dir / "faults.yaml",
                                "--timeout", "3", "-o", dir / "o"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_ut(args, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  FaultyRun out;
  out.err = r.err;
  for (const auto& row : records(result_csv(dir / "o"))) out.by_api[row[0]] = row;
  EXPECT_EQ(out.by_api.size(), 15u);
  EXPECT_EQ(out.by_api["Functional.gelu.0"],
            (std::vector<std::string>{"Functional.gelu.0", "error", "error", "crashed (SIGSEGV)"}));
  EXPECT_EQ(out.by_api["Functional.mse_loss.0"],
            (std::vector<std::string>{"Functional.mse_loss.0", "error", "error", "timed out after 3 s"}));
  EXPECT_NE(r.err.find("Functional.gelu.0: crashed (SIGSEGV); worker replaced"), std::string::npos) << r.err;
  return out;
}

TEST_F(RunUt, ACrashOrAHangCostsOneApiAndTheRunGoesOn) {
  TempDir dir;
  auto run = run_with_crash_and_hang(dir, "  - {op: \"aten::relu\", direction: forward, kind: bias, magnitude: 0.01}\n",
                                     {"-n", "2"});
  EXPECT_EQ(run.by_api["Functional.relu.0"][1], "error");  // the planted forward bias is found
  EXPECT_EQ(run.by_api["Functional.relu.0"][2], "pass");   // and backward is healthy
  EXPECT_EQ(run.by_api["Functional.linear.2"][1], "pass");  // APIs after the crash still ran
}

// --overlap: each API's comparison on the worker's second thread while the next API's operators
// run. The rows are those of a run without it, byte for byte.
TEST_F(RunUt, OverlappedComparisonsGiveTheRowsOfInlineOnes) {
  TempDir dir;
  write_file(dir / "faults.yaml", "faults:\n  - {op: \"aten::relu\", direction: forward, kind: bias, magnitude: 0.01}\n");
  for (const std::string& dump : {kTensorDump, kStatsDump}) {
    std::map<std::string, std::string> details, results;
    for (const char* mode : {"off", "on"}) {
      fs::path out = dir / (std::string(mode) + fs::path(dump).parent_path().filename().string());
      auto r = run_ut({"-api_info", dump, "--device", "npu-sim", "--device-config", dir / "faults.yaml", "-n", "1",
                       "--overlap", mode, "-o", out});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      details[mode] = read_file(details_csv(out));
      results[mode] = read_file(result_csv(out));
    }
    EXPECT_EQ(details["on"], details["off"]) << dump;
    EXPECT_EQ(results["on"], results["off"]) << dump;
    EXPECT_NE(results["on"].find("error"), std::string::npos) << dump;  // the planted bias is in both
  }
}

// With overlap a worker may die while one API is compared and the next one's operators run: the
// host runs both again alone, so the crash is still charged to the API that crashed, and only it.
// Each comparison is made to take 300 ms, so gelu's operators crash while the API before it is
// still being compared.
TEST_F(RunUt, WithOverlapACrashIsStillChargedToTheApiThatCrashed) {
  TempDir dir;
  auto run = run_with_crash_and_hang(dir, "", {"-n", "1", "--overlap", "on"}, "ACCCHECK_REPLAY_COMPARE_DELAY_MS=300");
  for (const auto& [api, row] : run.by_api)
    if (api != "API name" && api != "Functional.gelu.0" && api != "Functional.mse_loss.0") {
      EXPECT_EQ(row[1], "pass") << api;  // the API compared while gelu's operators crashed included
    }
  EXPECT_EQ(run.err.find("crashed (SIGSEGV)"), run.err.rfind("crashed (SIGSEGV)")) << run.err;  // reported once
}

TEST_F(RunUt, KilledMidwayThenResumedEqualsAnUninterruptedRun) {
  TempDir dir;
  auto clean = run_ut({"-api_info", kTensorDump, "--device", "npu-sim", "-o", dir / "clean"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  // A run that hangs on the 5th API, killed -9 (host and workers) once it has written four.
  write_file(dir / "hang.yaml", "faults:\n  - {op: \"aten::gelu\", kind: hang}\n");
  std::vector<std::string> argv_s{ACCCHECK_BINARY, "run_ut", "--timestamp", "20260101000000", "-api_info", kTensorDump,
                                  "--device", "npu-sim", "-n", "2", "--device-config", dir / "hang.yaml", "-o", dir / "killed"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own process group: kill host and workers at once
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ), 0);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  std::string result = dir / "killed/accuracy_checking_result_20260101000000.csv";
  auto rows_so_far = [&] { return fs::exists(result) ? records(result).size() : 0; };
  for (int i = 0; i < 600 && rows_so_far() < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(::kill(-pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto partial = records(result);
  ASSERT_GE(partial.size(), 5u);
  ASSERT_LT(partial.size(), 15u);
  // A kill can also cut a line: simulate the worst case on top.
  { std::FILE* f = std::fopen(result.c_str(), "ab"); std::fputs("Functional.gelu.0,pa", f); std::fclose(f); }
  auto resumed = run_ut({"-api_info", kTensorDump, "--device", "npu-sim", "-csv_path", result});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(read_file(result), read_file(result_csv(dir / "clean")));
  EXPECT_EQ(read_file(dir / "killed/accuracy_checking_details_20260101000000.csv"), read_file(details_csv(dir / "clean")));
}

TEST_F(RunUt, ResumeDropsDetailsRowsOfAnApiWhoseResultRowNeverCame) {
  TempDir dir;
  ASSERT_EQ(run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", dir / "clean"}).exit_code, 0);
  ASSERT_EQ(run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", dir / "cut"}).exit_code, 0);
  std::string result = result_csv(dir / "cut"), details = details_csv(dir / "cut");
  // Keep the first 3 APIs' rows, plus a details row of the 4th (its result row was never written).
  auto keep_lines = [](const std::string& text, std::size_t n) {
    std::size_t pos = 0;
    for (std::size_t i = 0; i < n; ++i) pos = text.find("\r\n", pos) + 2;
    return text.substr(0, pos);
  };
  write_file(result, keep_lines(read_file(result), 4));
  std::string d = read_file(details);
  auto cut = d.find("Functional.linear.1.forward.output.0");
  write_file(details, d.substr(0, d.find("\r\n", cut) + 2) + "Functional.linear.1.backward.out");
  auto r = run_ut({"-api_info", kStatsDump, "--device", "cpu", "-csv_path", result});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(result), read_file(result_csv(dir / "clean")));
  EXPECT_EQ(read_file(details), read_file(details_csv(dir / "clean")));
}

TEST_F(RunUt, ResumeRefusesARenamedResultFile) {
  TempDir dir;
  write_file(dir / "results.csv", "x\r\n");
  auto r = run_ut({"-api_info", kStatsDump, "--device", "cpu", "-csv_path", dir / "results.csv"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("When continue run ut, please do not modify the result csv name."), std::string::npos) << r.err;
}

TEST_F(RunUt, BadEntriesAreSkippedWithOneLineEachAndTheRestRuns) {
  TempDir dir;
  std::string t = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4], \"Max\": 1.0, \"Min\": -1.0, "
                  "\"Mean\": 0.0, \"Norm\": 1.0, \"requires_grad\": false";
  write_file(dir / "dump.json",
             "{\"task\": \"statistics\", \"level\": \"L1\", \"dump_data_dir\": null, \"data\": {\n"
             "\"Torch.relu.0.forward\": {\"input_args\": [" + t + "}], \"input_kwargs\": {}},\n"
             "\"Torch.abs.0.forward\": {\"input_args\": 5, \"input_kwargs\": {}},\n"
             "\"Torch.neg.0.forward\": {\"input_args\": [{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float13\", \"shape\": [4], \"Max\": 1, \"Min\": 0, \"requires_grad\": false}], \"input_kwargs\": {}},\n"
             "\"Torch.no_such_op.0.forward\": {\"input_args\": [" + t + "}], \"input_kwargs\": {}},\n"
             "\"Torch.sin.0.forward\": {\"input_args\": [" + t + ", \"data_name\": \"missing.pt\"}], \"input_kwargs\": {}},\n"
             "\"Distributed.all_reduce.0.forward\": {\"input_args\": [" + t + "}], \"input_kwargs\": {}},\n"
             "\"Torch.empty_like.0.forward\": {\"input_args\": [" + t + "}], \"input_kwargs\": {}},\n"
             "\"Torch.exp.0.forward\": {\"input_args\": [{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4], \"Max\": 1.0, \"Min\": 3.0, \"requires_grad\": false}], \"input_kwargs\": {}},\n"
             "\"Torch.tanh.0.forward\": {\"input_args\": [{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [-4], \"Max\": 1.0, \"Min\": 0.0, \"requires_grad\": false}], \"input_kwargs\": {}},\n"
             "\"Torch.cos.0.forward\": {\"input_args\": [" + t + "}], \"input_kwargs\": {}}\n}}\n");
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-o", dir / "o"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(dir / "dump.json" + ": entry 'Torch.abs.0.forward': field 'input_args': expected"), std::string::npos) << r.err;
  std::map<std::string, std::vector<std::string>> by_api;
  for (const auto& row : records(result_csv(dir / "o"))) by_api[row[0]] = row;
  EXPECT_EQ(by_api["Torch.relu.0"][1], "pass");
  EXPECT_EQ(by_api["Torch.cos.0"][1], "pass");
  EXPECT_EQ(by_api["Torch.abs.0"][1], "SKIP");
  EXPECT_NE(by_api["Torch.abs.0"][3].find("field 'input_args'"), std::string::npos);
  EXPECT_EQ(by_api["Torch.neg.0"][1], "SKIP");
  EXPECT_NE(by_api["Torch.neg.0"][3].find("torch.float13"), std::string::npos) << by_api["Torch.neg.0"][3];
  EXPECT_EQ(by_api["Torch.no_such_op.0"][1], "SKIP");
  EXPECT_NE(by_api["Torch.no_such_op.0"][3].find("no operator aten::no_such_op"), std::string::npos) << by_api["Torch.no_such_op.0"][3];
  EXPECT_EQ(by_api["Torch.sin.0"][1], "SKIP");
  EXPECT_EQ(by_api["Distributed.all_reduce.0"][3], "API Distributed.all_reduce.0 not support for run ut. SKIP.");
  EXPECT_EQ(by_api["Torch.empty_like.0"][3], "API empty_like in black list or not in white list. SKIP.");
  EXPECT_EQ(by_api["Torch.exp.0"][1], "SKIP");
  EXPECT_EQ(by_api["Torch.exp.0"][3], "fields 'Min'/'Max': Min 3.0 is larger than Max 1.0");
  EXPECT_EQ(by_api["Torch.tanh.0"][3], dir / "dump.json" +
                                           ": entry 'Torch.tanh.0.forward': field 'input_args[0].shape': expected a list of non-negative integers");
}

TEST_F(RunUt, MissingOrCorruptTensorFilesSkipThatApiOnly) {
  TempDir dir;
  fs::create_directories(dir / "dump_tensor_data");
  write_file(dir / "dump_tensor_data/Torch.cos.0.forward.input.0.pt", "this is not a zip file");
  fs::copy_file(fixture("vectors/msprobe-dump-mlp-tensor/dump_tensor_data/Functional.relu.0.forward.input.0.pt"),
                dir / "dump_tensor_data/Torch.relu.0.forward.input.0.pt");
  auto t = [](const std::string& name) {
    return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4, 32], \"Max\": 1.0, \"Min\": -1.0, "
           "\"requires_grad\": false, \"data_name\": \"" + name + "\"}";
  };
  write_file(dir / "dump.json", "{\"task\": \"tensor\", \"dump_data_dir\": \"/elsewhere/dump_tensor_data\", \"data\": {"
                                "\"Torch.relu.0.forward\": {\"input_args\": [" + t("Torch.relu.0.forward.input.0.pt") + "], \"input_kwargs\": {}},"
                                "\"Torch.cos.0.forward\": {\"input_args\": [" + t("Torch.cos.0.forward.input.0.pt") + "], \"input_kwargs\": {}},"
                                "\"Torch.sin.0.forward\": {\"input_args\": [" + t("Torch.sin.0.forward.input.0.pt") + "], \"input_kwargs\": {}}}}");
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-o", dir / "o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = records(result_csv(dir / "o"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1][1], "pass");
  EXPECT_EQ(rows[2][1], "SKIP");
  EXPECT_EQ(rows[2][3].rfind(dir / "dump_tensor_data/Torch.cos.0.forward.input.0.pt: not a tensor file written by torch.save", 0), 0u) << rows[2][3];
  EXPECT_EQ(rows[3][3], dir / "dump_tensor_data/Torch.sin.0.forward.input.0.pt: tensor file missing (named by field 'data_name')");
}

TEST_F(RunUt, ADumpThatIsNotJsonOrHasNoDataIsOneErrorLine) {
  TempDir dir;
  write_file(dir / "broken.json", "{\"task\": \"statistics\", \"data\": {\"Torch.relu.0.forward\": {\"input_args\": [");
  auto r = run_ut({"-api_info", dir / "broken.json", "--device", "cpu", "-o", dir / "o"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("acccheck run_ut: " + dir / "broken.json", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  write_file(dir / "nodata.json", "{\"task\": \"statistics\"}");
  auto n = run_ut({"-api_info", dir / "nodata.json", "--device", "cpu", "-o", dir / "o"});
  EXPECT_EQ(n.exit_code, 3);
  EXPECT_EQ(n.err, "acccheck run_ut: " + dir / "nodata.json" +
                       ": entry '<top>': field 'data': expected an object of API entries (key missing or null)\n");
  EXPECT_FALSE(fs::exists(dir / "o"));
}

TEST_F(RunUt, ListUnsupportedNamesEachEntryAndItsReasonAndRunsNothing) {
  TempDir dir;
  std::string t = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4], \"Max\": 1.0, \"Min\": -1.0, \"requires_grad\": false}";
  write_file(dir / "dump.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {"
                                "\"Torch.relu.0.forward\": {\"input_args\": [" + t + "], \"input_kwargs\": {}},"
                                "\"Tensor.__getitem__.0.forward\": {\"input_args\": [" + t + "], \"input_kwargs\": {}},"
                                "\"Torch.empty_like.0.forward\": {\"input_args\": [" + t + "], \"input_kwargs\": {}}}}");
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "--list-unsupported", "-o", dir / "o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tensor.__getitem__.0: indexing with Python objects is not an operator call\n"
                   "Torch.empty_like.0: API empty_like in black list or not in white list. SKIP.\n");
  EXPECT_FALSE(fs::exists(dir / "o"));
}

TEST_F(RunUt, UnknownDeviceListsTheDevices) {
  TempDir dir;
  auto r = run_ut({"-api_info", kStatsDump, "--device", "tpu", "-o", dir / "o"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.err.find("unknown device 'tpu'; available devices: cpu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("npu-sim"), std::string::npos) << r.err;
  EXPECT_TRUE(!fs::exists(dir / "o") || fs::is_empty(dir / "o"));  // nothing half-written
}

TEST_F(RunUt, ShardsMergedEqualOneRun) {
  TempDir dir;
  ASSERT_EQ(run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", dir / "single"}).exit_code, 0);
  for (const char* k : {"0/3", "1/3", "2/3"})
    ASSERT_EQ(run_ut({"-api_info", kStatsDump, "--device", "cpu", "--shard", k, "-o", dir / "sharded"}).exit_code, 0);
  auto m = run_acccheck({"merge", "--api-info", kStatsDump, "--from", dir / "sharded", "-o", dir / "merged",
                         "--timestamp", "20260101000000"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(read_file(result_csv(dir / "merged")), read_file(result_csv(dir / "single")));
  EXPECT_EQ(read_file(details_csv(dir / "merged")), read_file(details_csv(dir / "single")));
}

TEST_F(RunUt, ShardFromTheLaunchersVariables) {
  TempDir dir;
  auto r = run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", dir.path()}, "SLURM_PROCID=1 SLURM_NTASKS=2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("shard 1 of 2 (Slurm)"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_directory(dir / "shard1of2"));
  auto bad = run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", dir.path()}, "JOB_COMPLETION_INDEX=1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("give --shard-count N"), std::string::npos) << bad.err;
}

TEST_F(RunUt, OpenMpiSpreadsOneDumpOverRanks) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun (Debian openmpi-bin) is not installed";
  TempDir dir;
  ASSERT_EQ(run_ut({"-api_info", kTensorDump, "--device", "cpu", "-o", dir / "single"}).exit_code, 0);
  std::string cmd = "OMPI_MCA_plm_rsh_agent= mpirun -np 2 --oversubscribe --allow-run-as-root " + std::string(ACCCHECK_BINARY) +
                    " run_ut --timestamp 20260101000000 -api_info " + kTensorDump + " --device cpu -o " + dir / "mpi" +
                    " > " + dir / "mpi.log" + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir / "mpi.log");
  EXPECT_TRUE(fs::is_directory(dir / "mpi/shard0of2")) << read_file(dir / "mpi.log");
  EXPECT_TRUE(fs::is_directory(dir / "mpi/shard1of2"));
  auto m = run_acccheck({"merge", "--api-info", kTensorDump, "--from", dir / "mpi", "-o", dir / "merged", "--timestamp",
                         "20260101000000"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(read_file(result_csv(dir / "merged")), read_file(result_csv(dir / "single")));
  EXPECT_EQ(read_file(details_csv(dir / "merged")), read_file(details_csv(dir / "single")));
}

TEST_F(RunUt, SaveErrorDataWritesTensorsPythonReads) {
  TempDir dir;
  write_file(dir / "faults.yaml", "faults:\n  - {op: \"aten::relu\", kind: scale, magnitude: 2.0}\n");
  write_file(dir / "config.json", "{\"run_ut\": {\"error_data_path\": \"" + dir / "err" + "\"}}");
  fs::create_directories(dir / "err");
  auto r = run_ut({"-api_info", kTensorDump, "--device", "npu-sim", "--device-config", dir / "faults.yaml",
                   "-save_error_data", "-config", dir / "config.json", "-o", dir / "o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string folder = dir / "err/ut_error_data20260101000000";
  ASSERT_TRUE(fs::exists(folder + "/Functional.relu.0.forward.input.0.pt")) << r.err;
  ASSERT_TRUE(fs::exists(folder + "/Functional.relu.0.forward.output.device.0.pt"));
  ASSERT_TRUE(fs::exists(folder + "/Functional.relu.0.forward.output.bench.0.pt"));
  EXPECT_FALSE(fs::exists(folder + "/Functional.linear.0.forward.input.0.pt"));  // passing APIs are not saved
  if (std::system((std::string(ACCCHECK_TEST_PYTHON) + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << ACCCHECK_TEST_PYTHON << " cannot import torch: the .pt files were not read back by Python";
  std::string py = std::string(ACCCHECK_TEST_PYTHON) + " -c \"import torch; d = torch.load('" + folder +
                   "/Functional.relu.0.forward.output.device.0.pt'); b = torch.load('" + folder +
                   "/Functional.relu.0.forward.output.bench.0.pt'); x = torch.load('" + folder +
                   "/Functional.relu.0.forward.input.0.pt'); "
                   "assert torch.equal(d.double(), 2 * torch.relu(x).double()), 'device'; "
                   "assert b.dtype == torch.float64 and torch.allclose(b, torch.relu(x.double())), 'bench'\"";
  EXPECT_EQ(std::system(py.c_str()), 0);
}

TEST_F(RunUt, LegacyForwardAndBackwardInfoReplay) {
  TempDir dir;
  std::string t = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4, 8], \"Max\": 2.0, "
                  "\"Max_origin\": 2.0, \"Min\": -2.0, \"Min_origin\": -2.0, \"requires_grad\": true}";
  write_file(dir / "forward_info_1.json", "{\"Functional.gelu.0\": {\"args\": [" + t + "], \"kwargs\": {}}, "
                                          "\"Torch.matmul.0\": {\"args\": [" + t + ", {\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [8, 3], \"Max\": 1.0, \"Max_origin\": 1.0, \"Min\": 0.0, \"Min_origin\": 0.0, \"requires_grad\": false}], \"kwargs\": {}}}");
  write_file(dir / "backward_info_1.json", "{\"Functional.gelu.0\": [" + t + "]}");
  auto r = run_ut({"-forward", dir / "forward_info_1.json", "-backward", dir / "backward_info_1.json", "--device", "cpu",
                   "-o", dir / "o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = records(result_csv(dir / "o"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"Functional.gelu.0", "pass", "pass"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"Torch.matmul.0", "pass", " "}));
}

// Issue goal: >= 95 % of the functional/tensor/torch forward APIs of a typical transformer/CNN
// dump replay (not SKIP). The dumps are made by tests/fixtures/model-dumps/make_model_dumps.py.
TEST_F(RunUt, TypicalTransformerAndCnnDumpsReplayAtLeast95Percent) {
  for (const char* model : {"transformer", "cnn"}) {
    TempDir out;
    auto r = run_ut({"-api_info", fixture(std::string("model-dumps/") + model + "/dump.json"), "--device", "npu-sim",
                     "-n", "2", "-o", out.path()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rows = records(result_csv(out.path()));
    std::size_t total = 0, skipped = 0;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      ++total;
      if (rows[i][1] == "SKIP") {
        ++skipped;
        ADD_FAILURE() << model << ": " << rows[i][0] << " SKIP: " << (rows[i].size() > 3 ? rows[i][3] : "");
      }
    }
    EXPECT_GE(total, 30u) << model;
    EXPECT_LE(skipped * 100, total * 5) << model << ": " << skipped << " of " << total << " skipped";
  }
}

TEST_F(RunUt, VendorOperatorsRunOnTheDeviceAndTheirBenchFunctionOnTheCpu) {
  TempDir dir;
  std::string x = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float16\", \"shape\": [4, 64], \"Max\": 2.0, \"Min\": -2.0, \"requires_grad\": false}";
  std::string g = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float16\", \"shape\": [64], \"Max\": 1.5, \"Min\": 0.5, \"requires_grad\": false}";
  write_file(dir / "dump.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {"
                                "\"NPU.npu_rms_norm.0.forward\": {\"input_args\": [" + x + ", " + g +
                                "], \"input_kwargs\": {\"epsilon\": {\"type\": \"float\", \"value\": 1e-06}}},"
                                "\"NPU.npu_swiglu.0.forward\": {\"input_args\": [" + x + "], \"input_kwargs\": {}}}}");
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "vendor-sim", "--plugin",
                   std::string(ACCCHECK_TEST_PLUGIN_DIR) + "/vendor/acccheck_device_vendor_op.so", "-o", dir / "o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = records(result_csv(dir / "o"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[1][1], "SKIP") << (rows[1].size() > 3 ? rows[1][3] : "");
  EXPECT_EQ(rows[2], (std::vector<std::string>{"NPU.npu_swiglu.0", "SKIP", "SKIP", "There is not bench function npu_swiglu"}));
  auto details = records(details_csv(dir / "o"));
  ASSERT_EQ(details.size(), 4u);  // header, output.0 (normalised x), output.1 (rstd), swiglu's SKIP row
  EXPECT_EQ(details[1][0], "NPU.npu_rms_norm.0.forward.output.0");
  EXPECT_EQ(details[1][1], "torch.float32");  // the bench function ran on the raised inputs
  EXPECT_EQ(details[1][2], "torch.float16");
  EXPECT_EQ(details[2][0], "NPU.npu_rms_norm.0.forward.output.1");
}

// The argument adapters (F.batch_norm's order, cross_entropy's reduction string, dropout's
// training, softmax's dtype, embedding's padding_idx, reflected operators, masked_fill with a
// Scalar or a Tensor, Tensor varargs, ones_like's memory_format, ...): every API of the adapters
// dump replays, and the replayed output has the shape the dump recorded — a wrong argument order
// or reduction would change it.
TEST_F(RunUt, ArgumentAdaptersReplayWithTheRecordedOutputShapes) {
  TempDir out;
  const std::string dump = fixture("model-dumps/adapters/dump.json");
  auto r = run_ut({"-api_info", dump, "--device", "cpu", "-o", out.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> recorded_shape;
  read_dump_json(dump, [](const DumpHeader&) {}, [&](ApiRecord&& rec) {
    if (rec.direction != Direction::forward || rec.outputs.empty() || rec.outputs[0].kind != Argument::Kind::tensor) return;
    std::string s = "(";
    for (std::size_t i = 0; i < rec.outputs[0].tensor.shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(rec.outputs[0].tensor.shape[i]);
    recorded_shape[rec.api + ".forward.output.0"] = s + (rec.outputs[0].tensor.shape.size() == 1 ? ",)" : ")");
  });
  auto results = records(result_csv(out.path()));
  EXPECT_GE(results.size(), 40u);
  for (std::size_t i = 1; i < results.size(); ++i)
    EXPECT_NE(results[i][1], "SKIP") << results[i][0] << ": " << (results[i].size() > 3 ? results[i][3] : "");
  std::size_t checked = 0;
  for (const auto& row : records(details_csv(out.path()))) {
    auto it = recorded_shape.find(row[0]);
    if (it == recorded_shape.end()) continue;
    EXPECT_EQ(row[3], it->second) << row[0];
    ++checked;
  }
  EXPECT_GE(checked, 35u);
}

TEST_F(RunUt, BenchFloat64RaisesEveryFloatInputToFloat64) {
  TempDir dir;
  std::string h = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float16\", \"shape\": [8], \"Max\": 1.0, \"Min\": -1.0, \"requires_grad\": false}";
  write_file(dir / "dump.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {"
                                "\"Torch.mul.0.forward\": {\"input_args\": [" + h + ", {\"type\": \"float\", \"value\": 3.0}], \"input_kwargs\": {}}}}");
  auto raised = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-o", dir / "raised"});
  auto f64 = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "--bench", "float64", "-o", dir / "f64"});
  ASSERT_EQ(raised.exit_code, 0) << raised.err;
  ASSERT_EQ(f64.exit_code, 0) << f64.err;
  EXPECT_EQ(records(details_csv(dir / "raised"))[1][1], "torch.float32");
  EXPECT_EQ(records(details_csv(dir / "f64"))[1][1], "torch.float64");
  EXPECT_EQ(records(details_csv(dir / "f64"))[1][2], "torch.float16");
  auto bad = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "--bench", "float128", "-o", dir / "x"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "acccheck run_ut: --bench: expected raised or float64, found 'float128'\n");
}

TEST_F(RunUt, KubernetesIndexedJobPicksItsShard) {
  TempDir dir;
  auto r = run_ut({"-api_info", kStatsDump, "--device", "cpu", "--shard-count", "3", "-o", dir.path()}, "JOB_COMPLETION_INDEX=2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("shard 2 of 3 (Kubernetes Indexed Job)"), std::string::npos) << r.err;
  auto rows = records(result_csv(dir / "shard2of3"));
  EXPECT_GT(rows.size(), 1u);
  EXPECT_LT(rows.size(), 15u);  // a part of the 14 APIs, not all
}

TEST_F(RunUt, FilterApiDropsRepeatedCallsAndTheListsOfTheMsprobeConfigApply) {
  TempDir dir;
  auto t = [](const char* max) {
    return std::string("{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4], \"Max\": ") + max +
           ", \"Min\": -1.0, \"Mean\": 0.5, \"Norm\": 1.0, \"requires_grad\": false}";
  };
  // relu.1 repeats relu.0 except for Max (ignored by -f); relu.2 differs in Mean.
  write_file(dir / "dump.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {"
                                "\"Torch.relu.0.forward\": {\"input_args\": [" + t("1.0") + "], \"input_kwargs\": {}},"
                                "\"Torch.relu.1.forward\": {\"input_args\": [" + t("2.0") + "], \"input_kwargs\": {}},"
                                "\"Torch.relu.2.forward\": {\"input_args\": [" + std::string("{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4], \"Max\": 1.0, \"Min\": -1.0, \"Mean\": 0.25, \"Norm\": 1.0, \"requires_grad\": false}") + "], \"input_kwargs\": {}},"
                                "\"Torch.sigmoid.0.forward\": {\"input_args\": [" + t("1.0") + "], \"input_kwargs\": {}}}}");
  auto f = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-f", "-o", dir / "f"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(column(records(result_csv(dir / "f")), 0),
            (std::vector<std::string>{"API name", "Torch.relu.0", "Torch.relu.2", "Torch.sigmoid.0"}));
  EXPECT_NE(f.out.find("-f: 1 repeated calls not replayed"), std::string::npos) << f.out;

  write_file(dir / "config.json", "{\"task\": \"run_ut\", \"run_ut\": {\"white_list\": [\"relu\"], \"black_list\": []}}");
  auto w = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-config", dir / "config.json", "-o", dir / "w"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  auto rows = records(result_csv(dir / "w"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[4], (std::vector<std::string>{"Torch.sigmoid.0", "SKIP", "SKIP",
                                               "API sigmoid in black list or not in white list. SKIP."}));
  write_file(dir / "bad.json", "{\"run_ut\": {\"white_list\": \"relu\"}}");
  auto b = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-config", dir / "bad.json", "-o", dir / "b"});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_EQ(b.err, "acccheck run_ut: " + dir / "bad.json" + ": field 'run_ut.white_list': expected a list of API names\n");
}

TEST_F(RunUt, ProgressIsPlainLinesWithoutATerminalAndTheSummaryCountsStatuses) {
  TempDir out;
  auto r = run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", out.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("run_ut: 14/14 APIs done"), std::string::npos) << r.err;  // not a terminal: plain lines
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  EXPECT_NE(r.out.find("run_ut summary:\n  forward    pass 14\n  backward   pass 6  none 8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  result:  " + result_csv(out.path())), std::string::npos) << r.out;
}

TEST_F(RunUt, AFaultFileWithARepeatedKeyIsRefusedNamingTheFile) {
  TempDir dir;
  write_file(dir / "faults.yaml", "faults:\n  - op: \"aten::gelu\"\n    kind: crash\n    kind: bias\n");
  auto r = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "--device-config", dir / "faults.yaml", "-o", dir / "o"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.err, "acccheck run_ut: " + dir / "faults.yaml" + ": line 4: duplicate key 'kind' (each key may appear once)\n");
  EXPECT_FALSE(fs::exists(dir / "o/accuracy_checking_result_20260101000000.csv"));
}

// acccheck's own dumps name the dispatcher operator and overload (key "acccheck_op"): replayed
// as exactly that operator, whatever the entry's name says.
TEST_F(RunUt, EntriesNamingTheirDispatcherOperatorCallItDirectly) {
  TempDir dir;
  auto t = [](const char* shape) {
    return std::string("{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": ") + shape +
           ", \"Max\": 1.0, \"Min\": -1.0, \"requires_grad\": false}";
  };
  write_file(dir / "dump.json",
             "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {"
             "\"Aten.addmm.0.forward\": {\"input_args\": [" + t("[4]") + ", " + t("[3, 5]") + ", " + t("[5, 4]") +
             "], \"input_kwargs\": {\"beta\": {\"type\": \"float\", \"value\": 0.5}}, "
             "\"acccheck_op\": {\"name\": \"aten::addmm\", \"overload\": \"\"}},"
             "\"Aten.add.0.forward\": {\"input_args\": [" + t("[3]") + ", {\"type\": \"float\", \"value\": 2.0}], "
             "\"input_kwargs\": {}, \"acccheck_op\": {\"name\": \"aten::add\", \"overload\": \"Scalar\"}}}}");
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "npu-sim", "-o", dir / "o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = records(result_csv(dir / "o"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"Aten.addmm.0", "pass", " "}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"Aten.add.0", "pass", " "}));
  auto details = records(details_csv(dir / "o"));
  EXPECT_EQ(details[1][3], "(3, 4)");  // addmm's output shape: the operator really ran
}

// reshape's view of a strided input (torchvision's maxvit_t: a [2, 16, 4, 16] slice of a tensor
// with 3072 elements per batch, split into [2, 16, 4, 2, 8]) records the caller's strides. The
// replayed input is dense: those strides reach past it (npu-sim: "setStorage: ... out of bounds",
// SKIP; the CPU read past the allocation). The view is replayed with the strides reshape would give
// the replayed input, and both devices judge it.
TEST_F(RunUt, ReshapesViewOfAStridedInputIsReplayedOnTheDrawnInput) {
  TempDir dir;
  auto ints = [](std::initializer_list<int> v) {
    std::string s = "[";
    for (int x : v) s += std::string(s.size() > 1 ? ", " : "") + "{\"type\": \"int\", \"value\": " + std::to_string(x) + "}";
    return s + "]";
  };
  write_file(dir / "dump.json",
             "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {\"Aten._reshape_alias.0.forward\": "
             "{\"input_args\": [{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [2, 16, 4, 16], "
             "\"Max\": 0.28, \"Min\": -0.25, \"requires_grad\": true}, " + ints({2, 16, 4, 2, 8}) + ", " +
             ints({3072, 192, 48, 8, 1}) + "], \"input_kwargs\": {}, \"output\": [{\"type\": \"torch.Tensor\", "
             "\"dtype\": \"torch.float32\", \"shape\": [2, 16, 4, 2, 8], \"Max\": 0.28, \"Min\": -0.25, "
             "\"requires_grad\": true}], \"acccheck_op\": \"aten::_reshape_alias(self, size, stride)\"}}}");
  for (const char* device : {"npu-sim", "cpu"}) {
    auto [rows, details] = run_dump_on(dir.path(), device);
    ASSERT_EQ(rows.size(), 2u) << device;
    EXPECT_EQ(rows[1][0], "Aten._reshape_alias.0") << device;
    EXPECT_EQ(rows[1][1], "pass") << device << ": " << (rows[1].size() > 3 ? rows[1][3] : "");
    ASSERT_GE(details.size(), 2u);
    EXPECT_EQ(details[1][3], "(2, 16, 4, 2, 8)") << device;
  }
}

// A foreach call over hundreds of tensors (an optimizer step of a large model: convnext_tiny's 344
// parameters) makes a job line longer than a pipe holds, and a reply of as many details rows. The
// host wrote job lines blocking: it waited for the worker to read the next job while the worker
// waited for the host to read its reply, and run_ut hung for ever. Both directions now flow.
TEST_F(RunUt, JobsAndRepliesLongerThanAPipeDoNotHang) {
  TempDir dir;
  std::string list = "[";
  for (int i = 0; i < 600; ++i)
    list += std::string(i ? ", " : "") +
            "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [2], \"Max\": 1.0, \"Min\": -1.0, "
            "\"requires_grad\": false}";
  list += "]";
  std::string data;
  for (int k = 0; k < 4; ++k)
    data += std::string(k ? ", " : "") + "\"Aten._foreach_add_." + std::to_string(k) + ".forward\": {\"input_args\": [" + list +
            ", " + list + "], \"input_kwargs\": {}, \"output\": [], \"acccheck_op\": \"aten::_foreach_add_.List(self, other)\"}";
  write_file(dir / "dump.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {" + data + "}}");
  ASSERT_GT(list.size() * 2, 65536u) << "a job line longer than a pipe's buffer";
  // Killed after 120 s if it hangs (it finishes in a few seconds).
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-n", "1", "-o", dir / "o"}, "timeout -s KILL 120");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = records(result_csv(dir / "o"));
  ASSERT_EQ(rows.size(), 5u);
  for (std::size_t k = 1; k < rows.size(); ++k) EXPECT_EQ(rows[k][1], "pass") << rows[k][0];
  EXPECT_EQ(records(details_csv(dir / "o")).size(), 1u + 4 * 600);
}

// The multi-tensor ("foreach") calls of optimizers and gradient clipping — the default form on CUDA
// and NPU — return nothing and write their first argument: judged on what they wrote, one row per
// tensor. `Scalar[]` arguments (Adam's per-parameter step sizes) bind. A call with nothing to compare
// (`_assert_async` returns nothing and writes nothing) is SKIP with its reason, not a pass of nothing.
TEST_F(RunUt, InPlaceForeachCallsAreJudgedOnWhatTheyWrite) {
  TempDir dir;
  auto tensor = [](const std::string& shape) {
    return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": " + shape +
           ", \"Max\": 1.0, \"Min\": -1.0, \"requires_grad\": false}";
  };
  const std::string list = "[" + tensor("[4, 3]") + ", " + tensor("[5]") + "]";
  auto entry = [](const std::string& name, const std::string& args, const std::string& op) {
    return "\"" + name + "\": {\"input_args\": " + args + ", \"input_kwargs\": {}, \"output\": [], \"acccheck_op\": \"" +
           op + "\"}";
  };
  const std::string scalars = "[{\"type\": \"float\", \"value\": 0.5}, {\"type\": \"float\", \"value\": 0.25}]";
  write_file(dir / "dump.json",
             "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {" +
                 entry("Aten._foreach_mul_.0.forward", "[" + list + ", {\"type\": \"float\", \"value\": 0.9}]",
                       "aten::_foreach_mul_.Scalar(self, scalar)") + ", " +
                 entry("Aten._foreach_addcdiv_.0.forward", "[" + list + ", " + list + ", " + list + ", " + scalars + "]",
                       "aten::_foreach_addcdiv_.ScalarList(self, tensor1, tensor2, scalars)") + ", " +
                 entry("Aten._assert_async.0.forward",
                       "[{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [], \"Max\": 1.0, "
                       "\"Min\": 1.0, \"requires_grad\": false}]",
                       "aten::_assert_async(self)") + "}}");
  for (const char* device : {"npu-sim", "cpu"}) {
    auto [rows, details] = run_dump_on(dir.path(), device);
    ASSERT_EQ(rows.size(), 4u) << device;
    EXPECT_EQ(rows[1][0], "Aten._foreach_mul_.0");
    EXPECT_EQ(rows[1][1], "pass") << device << ": " << (rows[1].size() > 3 ? rows[1][3] : "");
    EXPECT_EQ(rows[2][0], "Aten._foreach_addcdiv_.0");
    EXPECT_EQ(rows[2][1], "pass") << device << ": " << (rows[2].size() > 3 ? rows[2][3] : "");
    EXPECT_EQ(rows[3][0], "Aten._assert_async.0");
    EXPECT_EQ(rows[3][1], "SKIP") << device;
    ASSERT_GE(rows[3].size(), 4u);
    EXPECT_EQ(rows[3][3], "nothing to compare: the call returned no output and wrote none of its arguments");
    std::vector<std::string> names, shapes;
    for (const auto& d : details) {
      names.push_back(d[0]);
      shapes.push_back(d.size() > 3 ? d[3] : "");
    }
    EXPECT_EQ(names, (std::vector<std::string>{"API Name", "Aten._foreach_mul_.0.forward.output.0",
                                                "Aten._foreach_mul_.0.forward.output.1",
                                                "Aten._foreach_addcdiv_.0.forward.output.0",
                                                "Aten._foreach_addcdiv_.0.forward.output.1",
                                                "Aten._assert_async.0.forward.output.0"}))
        << device;
    EXPECT_EQ(shapes[1], "(4, 3)");
    EXPECT_EQ(shapes[2], "(5,)");
  }
}

// torch.amp.GradScaler's unscaling step (`_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[]
// self, Tensor(b!) found_inf, Tensor inv_scale) -> ()`, every step of fp16 training): the kernel
// refuses a raised inv_scale ("inv_scale must be a float tensor"), so the benchmark keeps the scale
// and the flag float32; the unscaled gradients and the flag are its outputs, one row each.
TEST_F(RunUt, TheLossScalersUnscalingIsJudgedWithItsBookkeepingInFloat32) {
  if (std::string(ACCCHECK_TORCH_FULL_VERSION).rfind("1.", 0) == 0)
    GTEST_SKIP() << "LibTorch " << ACCCHECK_TORCH_FULL_VERSION << " has no CPU kernel for the loss scaler's operators";
  TempDir dir;
  auto tensor = [](const std::string& shape, const std::string& max, const std::string& min) {
    return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": " + shape + ", \"Max\": " + max +
           ", \"Min\": " + min + ", \"requires_grad\": false}";
  };
  write_file(dir / "dump.json",
             "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {\"Aten._amp_foreach_non_finite_check_and_unscale_.0.forward\": "
             "{\"input_args\": [[" + tensor("[4, 3]", "900.0", "-900.0") + ", " + tensor("[5]", "700.0", "-800.0") + "], " +
             tensor("[1]", "0.0", "0.0") + ", " + tensor("[1]", "0.0001220703125", "0.0001220703125") +
             "], \"input_kwargs\": {}, \"output\": [], \"acccheck_op\": "
             "\"aten::_amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale)\"}}}");
  for (const char* device : {"npu-sim", "cpu"}) {
    auto [rows, details] = run_dump_on(dir.path(), device);
    ASSERT_EQ(rows.size(), 2u) << device;
    EXPECT_EQ(rows[1][1], "pass") << device << ": " << (rows[1].size() > 3 ? rows[1][3] : "");
    ASSERT_EQ(details.size(), 4u) << device;
    EXPECT_EQ(details[1][0], "Aten._amp_foreach_non_finite_check_and_unscale_.0.forward.output.0");
    EXPECT_EQ(details[2][3], "(5,)");
    EXPECT_EQ(details[3][0], "Aten._amp_foreach_non_finite_check_and_unscale_.0.forward.output.2");
    EXPECT_EQ(details[3][1], "torch.float32") << device << ": the flag stays float32 on the benchmark";
  }
}

namespace {

// run_ut over one Torch.relu entry whose input is the tensor file `pt`: its result row (header +
// one row expected) — for the tests of tensor files LibTorch must never read.
std::vector<std::string> result_row_for_relu_input(const TempDir& dir, const std::string& pt) {
  fs::create_directories(dir / "dump_tensor_data");
  write_file(dir / "dump_tensor_data/Torch.relu.0.forward.input.0.pt", pt);
  write_file(dir / "dump.json",
             "{\"task\": \"tensor\", \"dump_data_dir\": \"x\", \"data\": {\"Torch.relu.0.forward\": {\"input_args\": "
             "[{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4, 32], \"Max\": 1.0, \"Min\": -1.0, "
             "\"requires_grad\": false, \"data_name\": \"Torch.relu.0.forward.input.0.pt\"}], \"input_kwargs\": {}}}}");
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "cpu", "-o", dir / "o"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto rows = records(result_csv(dir / "o"));
  EXPECT_EQ(rows.size(), 2u);
  return rows.size() == 2 ? rows[1] : std::vector<std::string>{};
}

std::string relu_fixture_pt() {
  return read_file(fixture("vectors/msprobe-dump-mlp-tensor/dump_tensor_data/Functional.relu.0.forward.input.0.pt"));
}

}  // namespace

// A .pt whose pickle declares a 2 GB string (LibTorch 1.13 would try to allocate it): refused by
// acccheck's pickle walk before LibTorch reads the bytes, a SKIP naming the reason.
TEST_F(RunUt, ATensorFileDeclaringMoreThanItHoldsIsRefusedBeforeLibTorchReadsIt) {
  TempDir dir;
  std::string pt = relu_fixture_pt();
  std::size_t at = pt.find(std::string("X\x07\0\0\0storage", 12));
  ASSERT_NE(at, std::string::npos);
  pt.replace(at + 1, 4, std::string("\xff\xff\xff\x7f", 4));  // the string's length: 2^31 - 1, in place
  auto row = result_row_for_relu_input(dir, pt);
  ASSERT_EQ(row.size(), 4u);
  EXPECT_EQ(row[1], "SKIP");
  EXPECT_NE(row[3].find("Torch.relu.0.forward.input.0.pt: not a tensor file written by torch.save (a string of 2147483647 bytes in a "),
            std::string::npos)
      << row[3];
}

// A .pt whose zip directory declares a record of 4 GB (fuzz_tensor_pt's finding: LibTorch 1.13
// allocates a record by its declared uncompressed size, then reads past it): refused by acccheck's
// zip check before LibTorch reads the bytes, a SKIP naming the reason.
TEST_F(RunUt, ATensorFileWhoseZipDirectoryOverstatesARecordIsRefusedBeforeLibTorchReadsIt) {
  TempDir dir;
  std::string pt = relu_fixture_pt();
  std::size_t at = pt.find(std::string("PK\x01\x02", 4));  // the first central directory entry
  ASSERT_NE(at, std::string::npos);
  pt.replace(at + 24, 4, std::string("\xff\xff\xff\xff", 4));  // its uncompressed size, in place
  auto row = result_row_for_relu_input(dir, pt);
  ASSERT_EQ(row.size(), 4u);
  EXPECT_EQ(row[1], "SKIP");
  EXPECT_NE(row[3].find("Torch.relu.0.forward.input.0.pt: not a tensor file written by torch.save (entry 0 declares 4294967295 bytes but stores "),
            std::string::npos)
      << row[3];
}

// A planted fault that matches no operator call planted nothing: run_ut names it (over all its
// workers), and says nothing of the faults that matched (issue 24).
TEST_F(RunUt, AFaultThatMatchesNoCallIsNamed) {
  TempDir dir;
  write_file(dir / "faults.yaml",
             "seed: 1\nfaults:\n"
             "  - {op: \"aten::gelu\", direction: forward, kind: rel_noise, magnitude: 1.0e-3}\n"
             "  - {op: \"aten::native_layer_norm\", direction: backward, kind: bias, magnitude: 1.0e-2}\n");
  for (const char* workers : {"1", "2"}) {
    auto r = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "--device-config", dir / "faults.yaml", "-n", workers,
                     "-o", dir / (std::string("o") + workers)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("acccheck run_ut: warning: npu-sim fault 1 (aten::native_layer_norm, backward, bias) matched no "
                         "operator call in this run: it planted nothing\n"),
              std::string::npos)
        << "-n " << workers << ": " << r.err;
    EXPECT_EQ(r.err.find("fault 0"), std::string::npos) << "the gelu fault matched: " << r.err;
  }
}

// Issue 25, item 1: a failure to save the error data (here a folder where a file must go; a full
// disk alike) leaves the computed verdicts as they are, says so in one line naming the path and the
// reason, and ends the run with exit code 4; nothing half-written stays.
TEST_F(RunUt, AFailureToSaveTheErrorDataKeepsTheVerdictsAndExitsNonZero) {
  TempDir dir;
  write_file(dir / "faults.yaml", "faults:\n  - {op: \"aten::relu\", kind: scale, magnitude: 2.0}\n");
  write_file(dir / "config.json", "{\"run_ut\": {\"error_data_path\": \"" + dir / "err" + "\"}}");
  const std::string folder = dir / "err/ut_error_data20260101000000";
  const std::string blocker = folder + "/Functional.relu.0.forward.output.device.0.pt";
  fs::create_directories(blocker + "/inside");
  auto r = run_ut({"-api_info", kTensorDump, "--device", "npu-sim", "--device-config", dir / "faults.yaml",
                   "-save_error_data", "-config", dir / "config.json", "-o", dir / "o"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("acccheck run_ut: Functional.relu.0: error data not saved: " + blocker + ": Is a directory (its verdicts stand)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the error data of 1 API could not be saved (see above); the result files are complete"), std::string::npos);
  auto rows = records(result_csv(dir / "o"));
  bool relu = false;
  for (const auto& row : rows)
    if (row[0] == "Functional.relu.0") {
      relu = true;
      EXPECT_EQ(row[1], "error") << "the verdict, not SKIP";
    }
  EXPECT_TRUE(relu);
  EXPECT_TRUE(fs::exists(folder + "/Functional.relu.0.forward.input.0.pt")) << "written before the failure";
  for (const auto& e : fs::directory_iterator(folder))
    if (e.is_regular_file()) {
      EXPECT_GT(fs::file_size(e.path()), 0u) << e.path();
    }
}

// Issue 25, items 4 and 11: error data lands flat in its folder whatever the entry's name (a '/',
// "..", a NUL), never through a symbolic link — a planted ut_error_data<ts> link is refused, a link
// planted inside the folder is replaced, not followed — and an error_data_path that cannot be made
// leaves no header-only result pair behind.
TEST_F(RunUt, ErrorDataIsWrittenFlatAndNeverThroughALink) {
  TempDir dir;
  const std::string t = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [8], \"Max\": 1.0, \"Min\": -1.0, "
                        "\"requires_grad\": false}";
  auto entry = [&](const std::string& name) {
    return "\"" + name + ".forward\": {\"input_args\": [" + t + "], \"input_kwargs\": {}, \"output\": [], \"acccheck_op\": \"aten::relu(self)\"}";
  };
  write_file(dir / "dump.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {" + entry("../evil.0") +
                                    ", " + entry("Aten.relu\\u0000x.0") + ", " + entry("Aten.relu.0") + "}}");
  write_file(dir / "faults.yaml", "faults:\n  - {op: \"aten::relu\", kind: scale, magnitude: 2.0}\n");
  write_file(dir / "config.json", "{\"run_ut\": {\"error_data_path\": \"" + dir / "err" + "\"}}");
  const std::string folder = dir / "err/ut_error_data20260101000000";
  fs::create_directories(folder);
  write_file(dir / "victim", "keep me");
  fs::create_symlink(dir / "victim", folder + "/Aten.relu.0.forward.input.0.pt");
  auto r = run_ut({"-api_info", dir / "dump.json", "--device", "npu-sim", "--device-config", dir / "faults.yaml",
                   "-save_error_data", "-config", dir / "config.json", "-o", dir / "o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir / "victim"), "keep me") << "written through the planted link";
  EXPECT_FALSE(fs::is_symlink(folder + "/Aten.relu.0.forward.input.0.pt"));
  EXPECT_TRUE(fs::exists(folder + "/Aten.relu.0.forward.output.device.0.pt"));
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "err")) {
    if (e.path() == fs::path(folder)) continue;
    ++files;
    EXPECT_EQ(e.path().parent_path(), fs::path(folder)) << e.path() << ": not flat in the error folder";
    EXPECT_EQ(e.path().filename().string().find('\0'), std::string::npos);
  }
  EXPECT_GE(files, 9u) << "three failing APIs, three files each";
  EXPECT_FALSE(fs::exists(dir / "evil.0.forward.input.0.pt"));
  EXPECT_FALSE(fs::exists(dir / "err/evil.0.forward.input.0.pt"));

  // A planted ut_error_data<ts> link: refused, nothing written anywhere.
  TempDir other;
  fs::create_directories(other / "err");
  fs::create_directories(other / "elsewhere");
  fs::create_directory_symlink(other / "elsewhere", other / "err/ut_error_data20260101000000");
  write_file(other / "config.json", "{\"run_ut\": {\"error_data_path\": \"" + other / "err" + "\"}}");
  auto linked = run_ut({"-api_info", dir / "dump.json", "--device", "npu-sim", "--device-config", dir / "faults.yaml",
                        "-save_error_data", "-config", other / "config.json", "-o", other / "o"});
  EXPECT_EQ(linked.exit_code, 4);
  EXPECT_EQ(linked.err, "acccheck run_ut: " + other / "err/ut_error_data20260101000000" +
                            ": is a symbolic link; refusing to write the error data through it\n");
  EXPECT_TRUE(fs::is_empty(other / "elsewhere"));
  EXPECT_FALSE(fs::exists(other / "o")) << "no header-only result pair";

  // An error_data_path that cannot be made (a file is in the way): no header-only result pair.
  write_file(other / "file", "x");
  write_file(other / "config2.json", "{\"run_ut\": {\"error_data_path\": \"" + other / "file/sub" + "\"}}");
  auto blocked = run_ut({"-api_info", dir / "dump.json", "--device", "npu-sim", "-save_error_data", "-config",
                         other / "config2.json", "-o", other / "o2"});
  EXPECT_EQ(blocked.exit_code, 4);
  EXPECT_EQ(blocked.err.rfind("acccheck run_ut: " + other / "file/sub" + ": cannot create: ", 0), 0u) << blocked.err;
  EXPECT_FALSE(fs::exists(other / "o2"));
}

// Issue 25, item 11: "-o linkdir/" names the link's target to the kernel; it is refused like "-o linkdir".
TEST_F(RunUt, AnOutputFolderLinkIsRefusedWithATrailingSlashToo) {
  TempDir dir;
  fs::create_directories(dir / "real");
  fs::create_directory_symlink(dir / "real", dir / "link");
  for (const std::string& out : {dir / "link", dir / "link/", dir / "link//"}) {
    auto r = run_ut({"-api_info", kStatsDump, "--device", "cpu", "-o", out});
    EXPECT_EQ(r.exit_code, 4) << out;
    EXPECT_NE(r.err.find(": refusing to write into a symlinked folder"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_empty(dir / "real"));
  auto c = run_acccheck({"compare", "-npu", fixture("vectors/npu/accuracy_checking_details_20250101000000.csv"), "-gpu",
                         fixture("vectors/gpu/accuracy_checking_details_20250101000000.csv"), "-o", dir / "link/"});
  EXPECT_EQ(c.exit_code, 4) << c.err;
  EXPECT_TRUE(fs::is_empty(dir / "real"));
}

// Issue 25, item 10: entry names with control characters are escaped in every message and in the
// CSV cells — the summary cannot clear the screen, compare reads what run_ut wrote — and a key
// that appears twice in dump.json is one error naming both lines (it had been replayed twice).
TEST_F(RunUt, ControlCharactersInNamesAreEscapedAndARepeatedEntryIsRefused) {
  TempDir dir;
  const std::string t = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [8], \"Max\": 1.0, \"Min\": -1.0, "
                        "\"requires_grad\": false}";
  auto entry = [&](const std::string& name) {
    return "\"" + name + ".forward\": {\"input_args\": [" + t + "], \"input_kwargs\": {}, \"output\": [], \"acccheck_op\": \"aten::relu(self)\"}";
  };
  write_file(dir / "dump.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {" +
                                    entry("Aten.relu\\u001b[2J\\u001b[HALL 300 APIs pass.0") + ",\n" + entry("Aten.relu\\nfake,pass,pass.1") +
                                    ",\n" + entry("Aten.relu.2") + "}}");
  for (const char* device : {"cpu", "npu-sim"}) {
    auto r = run_ut({"-api_info", dir / "dump.json", "--device", device, "-o", dir / device});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& text : {r.out, r.err}) {
      EXPECT_EQ(text.find('\x1b'), std::string::npos) << "a raw ESC reached the terminal";
      EXPECT_EQ(text.find("\nfake,pass"), std::string::npos);
    }
    const std::string result = read_file(result_csv(dir / device));
    EXPECT_EQ(result.find('\x1b'), std::string::npos);
    EXPECT_NE(result.find("Aten.relu\\x1b[2J\\x1b[HALL 300 APIs pass.0,pass,"), std::string::npos) << result;
    EXPECT_NE(result.find("\"Aten.relu\\nfake,pass,pass.1\",pass,"), std::string::npos) << result;
  }
  auto c = run_acccheck({"compare", "-npu", details_csv(dir / "npu-sim"), "-gpu", details_csv(dir / "cpu"), "-o", dir / "cmp"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("compare: 3 API result rows; 0 with an error"), std::string::npos) << c.out;

  write_file(dir / "twice.json", "{\"task\": \"statistics\", \"dump_data_dir\": null, \"data\": {\n" + entry("Aten.relu.0") + ",\n" +
                                     entry("Aten.relu.1") + ",\n" + entry("Aten.relu.0") + "\n}}");
  auto twice = run_ut({"-api_info", dir / "twice.json", "--device", "cpu", "-o", dir / "o2"});
  EXPECT_EQ(twice.exit_code, 3);
  EXPECT_EQ(twice.err, "acccheck run_ut: " + dir / "twice.json" +
                           ": entry 'Aten.relu.0.forward' appears twice in 'data', on lines 2 and 4 (each entry once)\n");
  EXPECT_FALSE(fs::exists(dir / "o2"));
}

// Issue 25, item 6: merge joins the shards of one dump only. A shard of another dump (even one whose
// API names are the same), a repeated or missing shard, a cut last line: refused in one line, and
// nothing is written; blank lines are no APIs.
TEST_F(RunUt, MergeRefusesForeignMissingAndCutShardsWritingNothing) {
  TempDir dir;
  for (const char* k : {"0/2", "1/2"})
    ASSERT_EQ(run_ut({"-api_info", kStatsDump, "--device", "cpu", "--shard", k, "-o", dir / "a"}).exit_code, 0);
  // Another dump with the same API names: the same file with one statistic changed.
  std::string other = read_file(kStatsDump);
  other.replace(other.find("\"Max\""), 5, "\"Max\" ");
  write_file(dir / "other.json", other);
  for (const char* k : {"0/2", "1/2"})
    ASSERT_EQ(run_ut({"-api_info", dir / "other.json", "--device", "cpu", "--shard", k, "-o", dir / "c"}).exit_code, 0);
  auto merge = [&](std::vector<std::string> from, const std::string& out) {
    std::vector<std::string> args{"merge", "--api-info", kStatsDump};
    for (const auto& f : from) args.insert(args.end(), {"--from", f});
    args.insert(args.end(), {"-o", out, "--timestamp", "20260101000000"});
    return run_acccheck(args);
  };
  auto foreign = merge({dir / "a/shard0of2", dir / "c/shard1of2"}, dir / "m1");
  EXPECT_EQ(foreign.exit_code, 3);
  EXPECT_NE(foreign.err.find("/c/shard1of2/accuracy_checking_result_20260101000000.csv: a shard of another dump (its dump's digest fnv1a64:"),
            std::string::npos)
      << foreign.err;
  EXPECT_FALSE(fs::exists(dir / "m1"));
  auto missing = merge({dir / "a/shard0of2"}, dir / "m2");
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_EQ(missing.err, "acccheck merge: shard 1 of 2 missing: nothing written\n");
  EXPECT_FALSE(fs::exists(dir / "m2"));
  auto twice = merge({dir / "a/shard0of2", dir / "a/shard0of2", dir / "a/shard1of2"}, dir / "m3");
  EXPECT_EQ(twice.exit_code, 3);
  EXPECT_NE(twice.err.find(": shard 0 of 2 is also "), std::string::npos) << twice.err;
  EXPECT_FALSE(fs::exists(dir / "m3"));
  // A blank line is no API; a cut last line is refused.
  const std::string shard1 = dir / "a/shard1of2/accuracy_checking_result_20260101000000.csv";
  std::string text = read_file(shard1);
  write_file(shard1, text + "\r\n");
  auto blank = merge({dir / "a"}, dir / "m4");
  ASSERT_EQ(blank.exit_code, 0) << blank.err;
  EXPECT_NE(blank.out.find(" APIs from 2 shards"), std::string::npos) << blank.out;
  write_file(shard1, text.substr(0, text.size() - 5));
  auto cut = merge({dir / "a"}, dir / "m5");
  EXPECT_EQ(cut.exit_code, 3);
  EXPECT_EQ(cut.err, "acccheck merge: " + shard1 + ": its last line is cut (the shard's run was killed): resume it with run_ut -csv_path " +
                         shard1 + "\n");
  EXPECT_FALSE(fs::exists(dir / "m5"));
}

// Real data is read only from dump_tensor_data/ beside dump.json, only regular files, sizes checked
// first (issue 25, item 7): each hostile data_name makes its API a SKIP saying why, at once (no
// timeout, nothing read), the other APIs replay; --allow-outside-dump reads an outside file.
TEST_F(RunUt, RealDataOutsideTheDumpFifosNulNamesAndHugeFilesAreRefusedBeforeReading) {
  TempDir t;
  fs::copy(fs::path(kTensorDump).parent_path(), t / "d", fs::copy_options::recursive);
  fs::copy_file(t / "d/dump_tensor_data/Functional.relu.0.forward.input.0.pt", t / "outside.pt");
  ASSERT_EQ(::mkfifo((t / "d/dump_tensor_data/fifo.pt").c_str(), 0600), 0);
  { std::ofstream(t / "d/dump_tensor_data/huge.pt"); }
  ASSERT_EQ(::truncate((t / "d/dump_tensor_data/huge.pt").c_str(), 20'000'000'000LL), 0);
  std::string json = read_file(t / "d/dump.json");
  auto rename = [&](const std::string& from, const std::string& to) {
    const std::string key = "\"data_name\": \"" + from + "\"";
    ASSERT_NE(json.find(key), std::string::npos) << from;
    json.replace(json.find(key), key.size(), "\"data_name\": \"" + to + "\"");
  };
  rename("Functional.relu.0.forward.input.0.pt", "../../outside.pt");
  rename("Functional.linear.0.forward.input.0.pt", "fifo.pt");
  rename("Functional.linear.1.forward.input.0.pt", "huge.pt");
  rename("Functional.dropout.0.forward.input.0.pt", "../../../../../../dev/zero\\u0000.pt");
  write_file(t / "d/dump.json", json);
  auto r = run_ut({"-api_info", t / "d/dump.json", "--device", "cpu", "-o", t / "o"}, "timeout 120");
  ASSERT_NE(r.exit_code, 124) << "a refused file was read until the timeout";
  std::map<std::string, std::string> message;
  for (const auto& row : records(result_csv(t / "o"))) message[row[0]] = row.size() > 3 ? row[3] : "";
  const std::string data = t / "d/dump_tensor_data";
  EXPECT_NE(message["Functional.relu.0"].find(data + "/../../outside.pt: outside the dump's folder " + data), std::string::npos)
      << message["Functional.relu.0"];
  EXPECT_NE(message["Functional.linear.0"].find(data + "/fifo.pt: not a regular file"), std::string::npos) << message["Functional.linear.0"];
  EXPECT_NE(message["Functional.linear.1"].find(data + "/huge.pt: 20000000000 bytes for a tensor of"), std::string::npos)
      << message["Functional.linear.1"];
  EXPECT_NE(message["Functional.dropout.0"].find("field 'data_name' holds a NUL byte"), std::string::npos) << message["Functional.dropout.0"];
  EXPECT_EQ(message["Functional.linear.2"].find("SKIP"), std::string::npos) << "an untouched API still replays";
  // The user who keeps real data elsewhere on purpose.
  auto allowed = run_ut({"-api_info", t / "d/dump.json", "--device", "cpu", "-o", t / "o2", "--allow-outside-dump"}, "timeout 120");
  ASSERT_NE(allowed.exit_code, 124);
  bool found = false;
  for (const auto& row : records(result_csv(t / "o2")))
    if (row[0] == "Functional.relu.0") {
      found = true;
      EXPECT_EQ(row[1], "pass") << (row.size() > 3 ? row[3] : "");
    }
  EXPECT_TRUE(found);
}

// npu-sim's planted noise is drawn per API (DevicePlugin::begin_api, ABI 1.3): one worker or two,
// or the API alone, the numbers are the same bit for bit (issue 25, item 11).
TEST_F(RunUt, PlantedNoiseIsTheSameWhateverTheWorkersOrTheSubset) {
  TempDir t;
  write_file(t / "faults.yaml", "seed: 5\nfaults:\n  - op: aten::addmm\n    kind: rel_noise\n    magnitude: 0.01\n"
                                "  - op: aten::relu\n    kind: rel_noise\n    magnitude: 0.01\n");
  const std::string env = "ACCCHECK_NPUSIM_FAULTS=" + t / "faults.yaml";
  auto a = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "-n", "1", "-o", t / "one"}, env);
  auto b = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "-n", "2", "-o", t / "two"}, env);
  auto c = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "-o", t / "part", "--shard", "1/2"}, env);
  ASSERT_NE(a.exit_code, 2) << a.err;
  const std::string one = read_file(details_csv(t / "one")), two = read_file(details_csv(t / "two"));
  EXPECT_EQ(one, two);
  // A shard (other APIs before each, in another process) gives its APIs' rows of the whole run.
  const auto whole = records(details_csv(t / "one"));
  const auto part = records(details_csv(t / "part/shard1of2"));
  ASSERT_GT(part.size(), 2u);
  std::size_t matched = 0;
  for (std::size_t i = 1; i < part.size(); ++i)
    for (const auto& w : whole)
      if (w[0] == part[i][0]) {
        EXPECT_EQ(w, part[i]) << part[i][0];
        ++matched;
      }
  EXPECT_EQ(matched, part.size() - 1);
  // And the noise is there: a healthy run's numbers differ.
  auto healthy = run_ut({"-api_info", kStatsDump, "--device", "npu-sim", "-o", t / "healthy"});
  EXPECT_NE(read_file(details_csv(t / "healthy")), one);
}
