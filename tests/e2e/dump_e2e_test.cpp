// `acccheck dump` end to end: the real launcher, the preload library inside an unmodified LibTorch
// training program (examples/train), the SDK build of the same program, the TorchScript runner,
// and the round trip through `acccheck run_ut`.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <acccheck/csv.hpp>
#include <acccheck/record.hpp>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace acccheck;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

const std::string kTrain = std::string(ACCCHECK_BUILD_DIR) + "/examples/acccheck-example-train";
const std::string kTrainSdk = std::string(ACCCHECK_BUILD_DIR) + "/examples/acccheck-example-train-sdk";

test::RunResult dump(const std::vector<std::string>& options, const std::vector<std::string>& program,
                     const std::string& env = "") {
  std::vector<std::string> args{"dump"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), program.begin(), program.end());
  return run_acccheck(args, env);
}

std::vector<ApiRecord> records_of(const std::string& dump_json) {
  std::vector<ApiRecord> out;
  read_dump_json(dump_json, [](const DumpHeader&) {}, [&](ApiRecord&& r) { out.push_back(std::move(r)); });
  return out;
}

std::vector<std::string> entry_names(const std::vector<ApiRecord>& rs) {
  std::vector<std::string> names;
  for (const auto& r : rs) names.push_back(r.entry_name());
  return names;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int count_lines(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

bool python_torch_available() {
  static int ok = std::system((std::string(ACCCHECK_TEST_PYTHON) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0 ? 1 : 0;
  return ok == 1;
}

class Dump : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no dump engine";
  }
};

}  // namespace

TEST_F(Dump, UnmodifiedProgramIsCapturedForwardAndBackward) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {kTrain, "--steps", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The program's own output passes through untouched.
  EXPECT_NE(r.out.find("step 2: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("median step: "), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "d/step0")) << "step 0 was not requested";
  EXPECT_FALSE(fs::exists(dir / "d/step2"));
  auto rs = records_of(dir / "d/step1/rank/dump.json");
  auto names = entry_names(rs);
  // Three Linear layers → three addmm calls, each with its backward; the loss and its backward;
  // the optimizer's in-place updates (momentum SGD: mul_ + add_ per parameter).
  for (const char* e : {"Aten.addmm.0.forward", "Aten.addmm.2.forward", "Aten.relu.0.forward", "Aten.tanh.0.forward",
                        "Aten.mse_loss.0.forward", "Aten.mse_loss.0.backward", "Aten.addmm.0.backward",
                        "Aten.addmm.2.backward", "Aten.relu.0.backward", "Aten.add_.0.forward"})
    EXPECT_TRUE(has(names, e)) << e << " missing";
  // The ops autograd runs (mm, mse_loss_backward, …) are not entries of their own.
  for (const auto& n : names) {
    EXPECT_EQ(n.find("Aten.mm."), std::string::npos) << n;
    EXPECT_EQ(n.find("_backward"), std::string::npos) << n;
  }
  const ApiRecord& addmm = rs[std::find(names.begin(), names.end(), "Aten.addmm.0.forward") - names.begin()];
  EXPECT_EQ(addmm.op_name, "aten::addmm");
  // self, mat1, mat2 positional; beta = 1 and alpha = 1 are keyword-only defaults: left out.
  ASSERT_EQ(addmm.args.size(), 3u);
  EXPECT_EQ(addmm.arg_names, (std::vector<std::string>{"self", "mat1", "mat2"}));
  EXPECT_TRUE(addmm.kwargs.empty());
  EXPECT_EQ(addmm.args[1].tensor.dtype, "torch.float32");
  EXPECT_EQ(addmm.args[1].tensor.shape, (std::vector<std::int64_t>{16, 32}));
  EXPECT_FALSE(addmm.args[1].tensor.requires_grad);
  EXPECT_TRUE(addmm.args[2].tensor.requires_grad);
  ASSERT_EQ(addmm.outputs.size(), 1u);
  EXPECT_TRUE(addmm.outputs[0].tensor.max.present());
  // A value that differs from the default is kept: SGD's p.add_(d_p, alpha=-lr).
  bool lr_seen = false;
  for (const auto& r : rs)
    if (r.op_name == "aten::add_" && r.kwargs.size() == 1 && r.kwargs[0].first == "alpha")
      lr_seen = lr_seen || r.kwargs[0].second.value.as_double() == -0.01;
  EXPECT_TRUE(lr_seen) << "no add_ with alpha = -lr";
  const ApiRecord& back = rs[std::find(names.begin(), names.end(), "Aten.addmm.0.backward") - names.begin()];
  ASSERT_EQ(back.grad_inputs.size(), 1u);
  EXPECT_EQ(back.grad_inputs[0].tensor.shape, (std::vector<std::int64_t>{16, 64}));
  EXPECT_NE(r.err.find("acccheck dump: " + std::to_string(rs.size()) + " entries in 1 step written to "), std::string::npos)
      << r.err;
  // stack.json: the training loop's own source line, grouped by identical stack.
  std::string stacks = read_file(dir / "d/step1/rank/stack.json");
  EXPECT_NE(stacks.find("train.cpp, line "), std::string::npos) << stacks.substr(0, 2000);
  EXPECT_NE(stacks.find("torch::Tensor out = forward(x);"), std::string::npos);
  // The writer lays stack.json out itself (each distinct stack's text made once): the same bytes
  // the SDK's stack.json writer makes of the same entries, grouped by identical lines.
  EXPECT_EQ(stacks, acccheck::stack_json_text(acccheck::read_stack_json(dir / "d/step1/rank/stack.json")));
  EXPECT_EQ(read_file(dir / "d/step1/rank/construct.json"), "{}");
}

TEST_F(Dump, DumpReplaysWithRunUtOnCpu) {
  TempDir dir;
  ASSERT_EQ(dump({"--dump-path", dir / "d", "--step", "1"}, {kTrain, "--model", "cnn", "--steps", "2"}).exit_code, 0);
  std::string json = dir / "d/step1/rank/dump.json";
  std::size_t forward = 0;
  for (const auto& r : records_of(json)) forward += r.direction == Direction::forward;
  auto r = run_acccheck({"run_ut", "-api_info", json, "--device", "cpu", "-o", dir / "out", "--timestamp",
                         "20260101000000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = read_csv_records(dir / "out/accuracy_checking_result_20260101000000.csv");
  ASSERT_EQ(rows.size(), forward + 1) << "one row per forward entry, plus the header";
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][1], "pass") << rows[i][0] << ": " << rows[i][3];
    EXPECT_NE(rows[i][2], "error") << rows[i][0];
  }
}

TEST_F(Dump, TensorModeFilesLoadInPythonAndReplayReproducesTheStatistics) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--task", "tensor", "--step", "1"}, {kTrain, "--model", "cnn", "--steps", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string rank = dir / "d/step1/rank";
  EXPECT_TRUE(fs::exists(rank + "/dump_tensor_data/Aten.convolution.0.forward.input.0.pt"));
  EXPECT_TRUE(fs::exists(rank + "/dump_tensor_data/Aten.convolution.0.backward.input.0.pt"));
  std::string text = read_file(rank + "/dump.json");
  EXPECT_NE(text.find("\"dump_data_dir\": \"" + fs::canonical(rank).string() + "/dump_tensor_data\""), std::string::npos);
  EXPECT_NE(text.find("\"data_name\": \"Aten.convolution.0.forward.input.0.pt\""), std::string::npos);
  // Real-data replay on the CPU: run_ut reads the .pt files (dump_data_dir is set).
  auto ut = run_acccheck({"run_ut", "-api_info", rank + "/dump.json", "--device", "cpu", "-o", dir / "out"});
  ASSERT_EQ(ut.exit_code, 0) << ut.err;
  if (!python_torch_available()) GTEST_SKIP() << ACCCHECK_TEST_PYTHON << " cannot import torch";
  std::string cmd = std::string(ACCCHECK_TEST_PYTHON) + " " + std::string(ACCCHECK_SOURCE_DIR) + "/tests/e2e/replay_dump_with_python.py " +
                    rank + " > " + (dir / "py.log") + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << read_file(dir / "py.log");
  EXPECT_NE(read_file(dir / "py.log").find("0 output mismatches"), std::string::npos) << read_file(dir / "py.log");
}

TEST_F(Dump, SdkBuildDumpsTheRequestedSteps) {
  TempDir dir;
  std::string cmd = kTrainSdk + " --steps 3 --dump-path " + (dir / "d") + " --dump-step 0,2 > " + (dir / "log") + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir / "log");
  EXPECT_TRUE(fs::exists(dir / "d/step0/rank/dump.json"));
  EXPECT_FALSE(fs::exists(dir / "d/step1"));
  auto names = entry_names(records_of(dir / "d/step2/rank/dump.json"));
  EXPECT_TRUE(has(names, "Aten.addmm.0.forward"));
  EXPECT_TRUE(has(names, "Aten.addmm.0.backward"));
  // The optimizer runs between dbg.stop() and dbg.step(): not recorded.
  EXPECT_FALSE(has(names, "Aten.add_.0.forward"));
  EXPECT_NE(read_file(dir / "log").find("entries in 2 steps written to"), std::string::npos) << read_file(dir / "log");
}

TEST_F(Dump, TorchScriptModelRunsForwardAndBackward) {
  if (!python_torch_available()) GTEST_SKIP() << ACCCHECK_TEST_PYTHON << " cannot import torch to write the TorchScript file";
  TempDir dir;
  std::string script = dir / "make.py";
  write_file(script,
             "import torch\n"
             "class M(torch.nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.fc = torch.nn.Linear(8, 4)\n"
             "    def forward(self, x):\n"
             "        return torch.softmax(self.fc(x), dim=-1)\n"
             "torch.jit.script(M()).save('" + (dir / "m.pt") + "')\n");
  ASSERT_EQ(std::system((std::string(ACCCHECK_TEST_PYTHON) + " " + script).c_str()), 0);
  auto r = run_acccheck({"dump", "--dump-path", dir / "d", "--model", dir / "m.pt", "--input-shape", "4,8",
                         "--model-steps", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("in 2 steps written to"), std::string::npos) << r.err;
  auto names = entry_names(records_of(dir / "d/step1/rank/dump.json"));
  // linear and softmax are not in msprobe's aten list: what they call is recorded.
  EXPECT_TRUE(has(names, "Aten.addmm.0.forward")) << ::testing::PrintToString(names);
  EXPECT_TRUE(has(names, "Aten.addmm.0.backward")) << ::testing::PrintToString(names);
  EXPECT_TRUE(has(names, "Aten._softmax.0.forward"));
  EXPECT_TRUE(has(names, "Aten._softmax.0.backward"));
  auto bad = run_acccheck({"dump", "--dump-path", dir / "e", "--model", script, "--input-shape", "4,8"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find(script + ": not a TorchScript model"), std::string::npos) << bad.err;
}

// The example TorchScript model the build writes with the build's Python (examples/train/make_torchscript.py).
TEST_F(Dump, TheBundledTorchScriptExampleDumpsAndReplays) {
  const std::string model = std::string(ACCCHECK_BUILD_DIR) + "/examples/example-model.pt";
  if (!fs::exists(model)) GTEST_SKIP() << "no " << model << ": the build's Python could not write it (no torch, or no torch.jit)";
  TempDir dir;
  auto r = run_acccheck({"dump", "--dump-path", dir / "d", "--model", model, "--input-shape", "4,16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto names = entry_names(records_of(dir / "d/step0/rank/dump.json"));
  for (const char* n : {"Aten.native_layer_norm.0.forward", "Aten.gelu.0.forward", "Aten._softmax.0.backward"})
    EXPECT_TRUE(has(names, n)) << n << " in " << ::testing::PrintToString(names);
  auto ut = run_acccheck({"run_ut", "-api_info", dir / "d/step0/rank/dump.json", "--device", "npu-sim", "-o", dir / "o"});
  EXPECT_EQ(ut.exit_code, 0) << ut.err;
}

TEST_F(Dump, CrashLeavesEveryEntryBeforeItReadable) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d"}, {kTrain, "--steps", "4", "--crash-at", "2"});
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
  EXPECT_NE(r.err.find("was killed by signal 11"), std::string::npos) << r.err;
  // Step 0 was finished by the engine when step 1 began; step 1 was open when the program died.
  EXPECT_NE(r.err.find("finished the file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the program ended without finishing the dump; 1 file finished"), std::string::npos) << r.err;
  auto step0 = records_of(dir / "d/step0/rank/dump.json");
  auto step1 = records_of(dir / "d/step1/rank/dump.json");
  EXPECT_GT(step1.size(), 20u);
  EXPECT_TRUE(has(entry_names(step1), "Aten.addmm.0.backward"));
  EXPECT_FALSE(fs::exists(dir / "d/step1/rank/stack.json")) << "written when a step ends";
}

TEST_F(Dump, UnderscoreExitKeepsItsCodeAndTheDumpIsRepaired) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d"}, {kTrain, "--steps", "4", "--exit-at", "1"});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_GT(records_of(dir / "d/step0/rank/dump.json").size(), 20u);
}

TEST_F(Dump, RepairFinishesATruncatedFileAndRefusesAForeignOne) {
  TempDir dir;
  ASSERT_EQ(dump({"--dump-path", dir / "d", "--step", "0"}, {kTrain, "--steps", "1"}).exit_code, 0);
  std::string json = dir / "d/step0/rank/dump.json";
  std::string full = read_file(json);
  std::size_t entries = records_of(json).size();
  // Cut in the middle of the third entry, as a crash would.
  std::size_t cut = 0;
  for (int i = 0; i < 3; ++i) cut = full.find("\n  \"Aten.", cut + 1);
  write_file(json, full.substr(0, cut + 40));
  auto r = run_acccheck({"dump", "--repair", dir / "d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(json + ": finished the file: 2 complete entries kept"), std::string::npos) << r.err;
  EXPECT_EQ(records_of(json).size(), 2u);
  EXPECT_GT(entries, 2u);
  // A second repair finds nothing to do.
  r = run_acccheck({"dump", "--repair", dir / "d"});
  EXPECT_NE(r.err.find(json + ": complete (2 entries)"), std::string::npos) << r.err;
  write_file(json, "[1, 2, 3]");
  r = run_acccheck({"dump", "--repair", dir / "d"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(json + ": not a dump.json written by acccheck"), std::string::npos) << r.err;
  r = run_acccheck({"dump", "--repair", dir / "nothing"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no dump.json under this folder"), std::string::npos);
}

TEST_F(Dump, UnwritableDumpPathIsOneErrorAndTheProgramRunsOn) {
  TempDir dir;
  write_file(dir / "file", "x");
  auto r = dump({"--dump-path", dir / "file/d"}, {kTrain, "--steps", "3"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("step 2: "), std::string::npos) << "the program must keep running";
  EXPECT_EQ(count_lines(r.err, "dumping is off, the program goes on"), 1) << r.err;
  EXPECT_NE(r.err.find(dir / "file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
}

// A write error partway (here a file-size limit: SIGXFSZ ignored, so write() fails with EFBIG)
// leaves the program running, marks the dump incomplete on disk, makes `dump` exit 4 and `run_ut`
// judge what was kept and end with 3; a later whole dump into the same folder is unmarked.
TEST_F(Dump, AWriteErrorPartwayMarksTheDumpIncomplete) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d"}, {kTrain, "--steps", "3"}, "trap '' XFSZ; ulimit -f 24;");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.out.find("step 2: "), std::string::npos) << "the program must keep running";
  EXPECT_NE(r.err.find("acccheck dump: the dump is incomplete: " + (dir / "d/acccheck_incomplete.txt") + ": "),
            std::string::npos)
      << r.err;
  EXPECT_NE(read_file(dir / "d/acccheck_incomplete.txt").find("File too large"), std::string::npos)
      << read_file(dir / "d/acccheck_incomplete.txt");
  // The step being written when it failed is marked beside its dump.json, and run_ut says so.
  std::string marked;
  for (const auto& e : fs::recursive_directory_iterator(dir / "d"))
    if (e.path().filename() == "acccheck_incomplete.txt" && e.path().parent_path() != fs::path(dir / "d"))
      marked = e.path().parent_path().string();
  ASSERT_FALSE(marked.empty()) << "no step folder marked";
  ASSERT_TRUE(fs::exists(marked + "/dump.json"));
  auto ut = run_acccheck({"run_ut", "-api_info", marked + "/dump.json", "--device", "cpu", "-o", dir / "out"});
  EXPECT_EQ(ut.exit_code, 3) << ut.err;
  EXPECT_NE(ut.err.find("the dump is incomplete (" + marked + "/acccheck_incomplete.txt: "), std::string::npos) << ut.err;
  EXPECT_NE(ut.err.find("judged an incomplete dump"), std::string::npos) << ut.err;
  // Dumping again, whole, into the same folder leaves no marker anywhere.
  r = dump({"--dump-path", dir / "d"}, {kTrain, "--steps", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const auto& e : fs::recursive_directory_iterator(dir / "d"))
    EXPECT_NE(e.path().filename(), "acccheck_incomplete.txt") << e.path();
}

// Dumping again into a folder replaces the steps it writes; the earlier dump's other steps stay,
// and the summary names them (a reader would take them for this run's).
TEST_F(Dump, ReDumpingIntoAFolderNamesTheEarlierDumpsSteps) {
  TempDir dir;
  ASSERT_EQ(dump({"--dump-path", dir / "d"}, {kTrain, "--steps", "3"}).exit_code, 0);
  auto r = dump({"--dump-path", dir / "d", "--step", "0"}, {kTrain, "--steps", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("; " + (dir / "d") + " also holds 2 steps of an earlier dump (step1, step2) that this run did not "
                       "write: remove them or dump into an empty folder"),
            std::string::npos)
      << r.err;
  r = dump({"--dump-path", dir / "e", "--step", "0"}, {kTrain, "--steps", "1"});
  EXPECT_EQ(r.err.find("of an earlier dump"), std::string::npos) << r.err;
}

TEST_F(Dump, SymlinkedDumpFolderIsRefused) {
  TempDir dir;
  fs::create_directories(dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", dir / "d");
  auto r = dump({"--dump-path", dir / "d"}, {kTrain, "--steps", "1"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("refusing to write through a symbolic link"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir / "elsewhere"));
}

TEST_F(Dump, WhenNothingIsWrittenItSaysWhy) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "a", "--step", "9"}, {kTrain, "--steps", "2"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("nothing was written to " + (dir / "a") +
                       ": no requested step was reached (steps 9 requested, the program ended in step 1)"),
            std::string::npos)
      << r.err;
  r = dump({"--dump-path", dir / "b", "--list", "no_such_op"}, {kTrain, "--steps", "1"});
  EXPECT_NE(r.err.find("but none matched list/black_list/scope"), std::string::npos) << r.err;
  r = dump({"--dump-path", dir / "c", "--rank", "1"}, {kTrain, "--steps", "1"}, "RANK=0");
  EXPECT_NE(r.err.find("this process is rank 0, not in the rank list 1"), std::string::npos) << r.err;
  r = dump({"--dump-path", dir / "e"}, {"/bin/true"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("no operator of the hook plugins' categories ran"), std::string::npos) << r.err;
}

TEST_F(Dump, ListBlackListAndScopeSelectEntries) {
  TempDir dir;
  ASSERT_EQ(dump({"--dump-path", dir / "a", "--step", "0", "--list", "addmm", "relu"}, {kTrain, "--steps", "1"}).exit_code, 0);
  auto names = entry_names(records_of(dir / "a/step0/rank/dump.json"));
  EXPECT_EQ(names, (std::vector<std::string>{"Aten.addmm.0.forward", "Aten.relu.0.forward", "Aten.addmm.1.forward",
                                             "Aten.addmm.2.forward", "Aten.addmm.2.backward", "Aten.addmm.1.backward",
                                             "Aten.relu.0.backward", "Aten.addmm.0.backward"}));
  ASSERT_EQ(dump({"--dump-path", dir / "b", "--step", "0", "--black-list", "Aten.t.", "add_", "mul_", "zero_"},
                 {kTrain, "--steps", "1"}).exit_code, 0);
  names = entry_names(records_of(dir / "b/step0/rank/dump.json"));
  EXPECT_TRUE(has(names, "Aten.addmm.0.forward"));
  for (const auto& n : names) EXPECT_TRUE(n.find("Aten.t.") == std::string::npos && n.find("add_") == std::string::npos) << n;
  ASSERT_EQ(dump({"--dump-path", dir / "c", "--step", "0", "--scope", "Aten.relu.0.forward", "Aten.tanh.0.forward"},
                 {kTrain, "--steps", "1"}).exit_code, 0);
  names = entry_names(records_of(dir / "c/step0/rank/dump.json"));
  EXPECT_EQ(names, (std::vector<std::string>{"Aten.relu.0.forward", "Aten.t.1.forward", "Aten.addmm.1.forward",
                                             "Aten.tanh.0.forward", "Aten.tanh.0.backward", "Aten.addmm.1.backward",
                                             "Aten.t.1.backward", "Aten.relu.0.backward"}));
}

TEST_F(Dump, YamlConfigAndItsErrors) {
  TempDir dir;
  write_file(dir / "c.yaml", "dump_path: " + (dir / "d") + "\ntask: statistics\nstep: [\"1-2\"]\nstack: off\n"
                             "statistics:\n  list: [relu]\n");
  auto r = dump({"--config", dir / "c.yaml"}, {kTrain, "--steps", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(entry_names(records_of(dir / "d/step2/rank/dump.json")),
            (std::vector<std::string>{"Aten.relu.0.forward", "Aten.relu.0.backward"}));
  EXPECT_FALSE(fs::exists(dir / "d/step2/rank/stack.json")) << "stack: off";
  write_file(dir / "bad.yaml", "dump_path: x\nsteps: [1]\n");
  r = dump({"--config", dir / "bad.yaml"}, {kTrain});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir / "bad.yaml" + ": line 2: 'steps': unknown dump option"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "the program must not start";
  r = dump({"--dump-path", dir / "x", "--step", "3-1"}, {kTrain});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--step: '3-1': the range ends before it starts"), std::string::npos) << r.err;
  r = dump({"--dump-path", dir / "x", "--task", "everything"}, {kTrain});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("task: expected statistics or tensor, found 'everything'"), std::string::npos) << r.err;
  r = run_acccheck({"dump", "--dump-path", dir / "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nothing to run: expected -- PROGRAM"), std::string::npos);
}

TEST_F(Dump, RankFolderComesFromTheEnvironment) {
  TempDir dir;
  ASSERT_EQ(dump({"--dump-path", dir / "d", "--step", "0"}, {kTrain, "--steps", "1"}, "RANK=3").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir / "d/step0/rank3/dump.json"));
  ASSERT_EQ(dump({"--dump-path", dir / "e", "--step", "0", "--rank", "0-1"}, {kTrain, "--steps", "1"},
                 "OMPI_COMM_WORLD_RANK=1").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir / "e/step0/rank1/dump.json"));
}

TEST_F(Dump, ChildrenAreLeftAloneUnlessFollowed) {
  TempDir dir;
  std::string child = kTrain + " --steps 1 >/dev/null; true";
  auto r = dump({"--dump-path", dir / "a"}, {"/bin/sh", "-c", child});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "a/step0")) << "the child must not be captured";
  r = dump({"--dump-path", dir / "b", "--follow-children"}, {"/bin/sh", "-c", child});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  bool found = false;
  for (const auto& e : fs::directory_iterator(dir / "b"))
    found = found || (e.path().filename().string().rfind("child-", 0) == 0 && fs::exists(e.path() / "step0/rank/dump.json"));
  EXPECT_TRUE(found) << "a followed child dumps into DIR/child-<pid>/";
}

TEST_F(Dump, BackwardOpsAndRawStacksOnRequest) {
  TempDir dir;
  ASSERT_EQ(dump({"--dump-path", dir / "d", "--step", "0", "--capture-backward-ops", "--stack", "raw"},
                 {kTrain, "--steps", "1"}).exit_code, 0);
  auto names = entry_names(records_of(dir / "d/step0/rank/dump.json"));
  EXPECT_TRUE(has(names, "Aten.mse_loss_backward.0.forward")) << ::testing::PrintToString(names);
  EXPECT_TRUE(has(names, "Aten.mm.0.forward"));
  std::string stacks = read_file(dir / "d/step0/rank/stack.json");
  EXPECT_TRUE(std::regex_search(stacks, std::regex("acccheck-example-train\\+0x[0-9a-f]+, line 0, in \\?\\?")))
      << stacks.substr(0, 1000);
}

TEST_F(Dump, ExitAfterLastStepEndsTheProgram) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "0", "--exit-after-last-step"}, {kTrain, "--steps", "50"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step 0: "), std::string::npos);
  EXPECT_EQ(r.out.find("step 2: "), std::string::npos) << "the program should have ended in step 1";
  EXPECT_NE(r.err.find("exit_after_last_step: the last requested step was dumped (step 0)"), std::string::npos) << r.err;
  EXPECT_GT(records_of(dir / "d/step0/rank/dump.json").size(), 20u);
}

// Children forked right after each backward pass, while the writer still writes the step: none
// hangs (the writer is idle across fork), the parent's files are whole, and only with
// --follow-children does each child dump, into child-<pid>/ in the step its parent was in.
TEST_F(Dump, ForkedChildrenNeitherHangNorTouchTheParentsDump) {
  TempDir dir;
  std::string program = std::string(ACCCHECK_BUILD_DIR) + "/tests/forking_training";
  auto r = dump({"--dump-path", dir / "a"}, {program, "3", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("children: 12 forked, 0 failed"), std::string::npos) << r.out << r.err;
  for (int step = 0; step < 3; ++step) {
    auto names = entry_names(records_of(dir / ("a/step" + std::to_string(step) + "/rank/dump.json")));
    EXPECT_TRUE(has(names, "Aten.mse_loss.0.backward")) << step;
    EXPECT_FALSE(has(names, "Aten.stack.0.forward")) << step << ": a child's operator in the parent's dump";
  }
  for (const auto& e : fs::directory_iterator(dir / "a"))
    EXPECT_EQ(e.path().filename().string().rfind("child-", 0), std::string::npos) << "children are not dumped by default";

  r = dump({"--dump-path", dir / "b", "--follow-children"}, {program, "3", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("children: 12 forked, 0 failed"), std::string::npos) << r.out << r.err;
  std::map<std::string, int> children_per_step;
  for (const auto& e : fs::directory_iterator(dir / "b")) {
    std::string name = e.path().filename().string();
    if (name.rfind("child-", 0) != 0) continue;
    std::vector<std::string> steps;
    for (const auto& s : fs::directory_iterator(e.path())) steps.push_back(s.path().filename().string());
    ASSERT_EQ(steps.size(), 1u) << name << ": a child runs in one step";
    ++children_per_step[steps[0]];
    auto names = entry_names(records_of(e.path() / steps[0] / "rank/dump.json"));
    for (const char* e : {"Aten.arange.0.forward", "Aten.select.0.forward", "Aten.select.3.forward", "Aten.stack.0.forward",
                          "Aten.sum.0.forward"})
      EXPECT_TRUE(has(names, e)) << name << ": " << e << " missing: " << ::testing::PrintToString(names);
    for (const char* e : {"Aten.mm.0.forward", "Aten.tanh.0.forward", "Aten.select.4.forward"})
      EXPECT_FALSE(has(names, e)) << name << ": " << e << " is not the child's";
  }
  EXPECT_EQ(children_per_step, (std::map<std::string, int>{{"step0", 4}, {"step1", 4}, {"step2", 4}}));
  EXPECT_TRUE(has(entry_names(records_of(dir / "b/step2/rank/dump.json")), "Aten.mse_loss.0.backward"));
}

TEST_F(Dump, DeviceTensorsAutogradThreadAndALoaderThread) {
  TempDir dir;
  std::string program = std::string(ACCCHECK_BUILD_DIR) + "/tests/threaded_device_training";
  auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {program, ACCCHECK_PLUGIN_DIR, "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("loader batches: some"), std::string::npos);
  auto rs = records_of(dir / "d/step1/rank/dump.json");
  auto names = entry_names(rs);
  // The device ops, forward and backward (the backward ran on the device's autograd thread).
  for (const char* e : {"Aten.mm.0.forward", "Aten.tanh.0.forward", "Aten.mse_loss.0.forward", "Aten.mm.0.backward",
                        "Aten.tanh.0.backward", "Aten.mse_loss.0.backward"})
    EXPECT_TRUE(has(names, e)) << e << " missing: " << ::testing::PrintToString(names);
  const ApiRecord& mm = rs[std::find(names.begin(), names.end(), "Aten.mm.0.forward") - names.begin()];
  // Device statistics were computed on the device and read back by the writer.
  const TensorSpec& out = mm.outputs.at(0).tensor;
  EXPECT_EQ(out.shape, (std::vector<std::int64_t>{32, 8}));
  ASSERT_TRUE(out.max.present() && out.min.present() && out.mean.present() && out.norm.present());
  EXPECT_GE(out.max.value, out.mean.value);
  EXPECT_LE(out.min.value, out.mean.value);
  EXPECT_GT(out.norm.value, 0.0);
  // The loader thread's operators are entries too (when the scheduler ran it during step 1), numbered
  // by the same counters as the training thread's.
  // Call numbers per name are shared by the threads: no number twice, and a gap only for a call
  // that was still running on the loader thread when the step ended (reported as dropped).
  std::map<std::string, std::set<std::int64_t>> numbers;
  std::size_t forward = 0;
  for (const auto& rec : rs)
    if (rec.direction == Direction::forward) {
      auto dot = rec.api.rfind('.');
      numbers[rec.api.substr(0, dot)].insert(std::stoll(rec.api.substr(dot + 1)));
      ++forward;
    }
  std::size_t distinct = 0, gaps = 0;
  for (const auto& [api, ns] : numbers) {
    distinct += ns.size();
    gaps += static_cast<std::size_t>(*ns.rbegin() + 1) - ns.size();
  }
  EXPECT_EQ(distinct, forward) << "a call number used twice";
  std::size_t dropped = 0;
  std::smatch m;
  if (std::regex_search(r.err, m, std::regex("; ([0-9]+) entr(y|ies) arrived after"))) dropped = std::stoul(m[1]);
  EXPECT_LE(gaps, dropped) << r.err;
}

TEST_F(Dump, AProgramOnAnotherLibTorchIsRefusedUpFront) {
  TempDir dir;
  // The program resolves LibTorch from elsewhere (LD_LIBRARY_PATH comes before its RUNPATH and the
  // system folders): a copy of the build's own libtorch_cpu, under its own name, is another file.
  // `acccheck dump` reads that from the program's ELF files and refuses before starting it.
  const fs::path ours = fs::canonical(ACCCHECK_TORCH_CPU_LIBRARY);
  fs::create_directories(dir / "lib");
  const std::string copy = dir / ("lib/" + ours.filename().string());
  fs::copy_file(ours, copy);
  // Under every name a program may ask for: libtorch_cpu.so (a wheel's soname), and Debian's
  // libtorch_cpu.so.1.13 for a file libtorch_cpu.so.1.13.0.
  std::string name = ours.filename().string();
  for (std::string alias : {std::string("libtorch_cpu.so"), name.substr(0, name.rfind('.'))})
    if (alias.rfind("libtorch_cpu.so", 0) == 0 && alias != name) fs::create_symlink(ours.filename(), dir / ("lib/" + alias));
  auto r = dump({"--dump-path", dir / "d"}, {kTrain, "--steps", "1"}, "LD_LIBRARY_PATH=" + (dir / "lib"));
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.out, "") << "the program must not run";
  // Debian's file name says its version (libtorch_cpu.so.1.13.0); a wheel's copy outside its package says none.
  std::string suffix = name.substr(std::string("libtorch_cpu.so").size());
  std::string theirs = suffix.empty() ? copy : suffix.substr(1) + " (" + copy + ")";
  EXPECT_NE(r.err.find("acccheck dump: the program uses LibTorch " + theirs + ", acccheck was built against LibTorch " +
                       ACCCHECK_TORCH_FULL_VERSION + " (" + ours.string() + "): not dumped"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  EXPECT_FALSE(fs::exists(dir / "d"));
}

TEST_F(Dump, ABackwardPassThatFailsDoesNotStopTheStepCount) {
  // In steps that are not dumped the tool waits for the engine to end the backward pass before it
  // looks for the next step; a pass that throws ends without the engine's final callbacks.
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "3"}, {kTrain, "--steps", "5", "--bad-backward-at", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("caught in backward: a backward hook failed"), std::string::npos) << r.out;
  for (const char* other : {"d/step0", "d/step1", "d/step2", "d/step4"}) EXPECT_FALSE(fs::exists(dir / other)) << other;
  auto names = entry_names(records_of(dir / "d/step3/rank/dump.json"));
  for (const char* e : {"Aten.addmm.0.forward", "Aten.addmm.2.backward", "Aten.mse_loss.0.backward", "Aten.add_.0.forward"})
    EXPECT_TRUE(has(names, e)) << e << " missing";
  // One step's operators, not two: each Linear layer's addmm once.
  EXPECT_FALSE(has(names, "Aten.addmm.3.forward"));
  // The failed step, dumped, ends where the next forward pass begins as any other.
  TempDir failed;
  r = dump({"--dump-path", failed / "d", "--step", "1-2"}, {kTrain, "--steps", "4", "--bad-backward-at", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto step1 = entry_names(records_of(failed / "d/step1/rank/dump.json"));
  EXPECT_TRUE(has(step1, "Aten.addmm.0.forward"));
  EXPECT_FALSE(has(step1, "Aten.addmm.3.forward"));
  EXPECT_TRUE(has(entry_names(records_of(failed / "d/step2/rank/dump.json")), "Aten.addmm.2.backward"));
}

TEST_F(Dump, TheProgramsOwnExceptionsPassThrough) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "0"}, {kTrain, "--steps", "2", "--bad-op-at", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Exactly what LibTorch says without acccheck.
  EXPECT_NE(r.out.find("caught: mat1 and mat2 shapes cannot be multiplied (16x32 and 16x32)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 1: "), std::string::npos);
  auto names = entry_names(records_of(dir / "d/step0/rank/dump.json"));
  EXPECT_FALSE(has(names, "Aten.mm.0.forward")) << "a call that threw produced nothing to record";
  EXPECT_TRUE(has(names, "Aten.addmm.0.forward"));
}
