// `acccheck dump -- python3 script.py`: unmodified PyTorch scripts captured by the preloaded engine,
// with Python stacks; the ways a Python process ends; DataLoader worker processes; a foreign
// LibTorch. The Python is the build's own (ACCCHECK_TEST_PYTHON: the venv whose torch wheel acccheck
// was built against, or Debian's python3-torch for a build against libtorch-dev), so it uses the
// same libtorch_cpu as acccheck.
#include <filesystem>
#include <map>
#include <sstream>

#include <acccheck/csv.hpp>
#include <acccheck/record.hpp>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace acccheck;
using acccheck::test::fixture;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

const std::string kPython = ACCCHECK_TEST_PYTHON;
const std::string kMlp = fixture("python/train_mlp.py");
const std::string kTransformer = fixture("python/train_transformer.py");

test::RunResult dump(const std::vector<std::string>& options, const std::vector<std::string>& script_and_args) {
  std::vector<std::string> args{"dump"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.push_back(kPython);
  args.insert(args.end(), script_and_args.begin(), script_and_args.end());
  return run_acccheck(args);
}

std::vector<std::string> names_in(const std::string& dump_json) {
  std::vector<std::string> names;
  read_dump_json(dump_json, [](const DumpHeader&) {}, [&](ApiRecord&& r) { names.push_back(r.entry_name()); });
  return names;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

class PythonDump : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no dump engine";
    if (std::system((kPython + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
      GTEST_SKIP() << kPython << " cannot import torch (scripts/setup.sh installs the build's Python and torch)";
  }
};

}  // namespace

TEST_F(PythonDump, UnmodifiedScriptIsCapturedWithPythonStacksAndReplays) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {kMlp, "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step 2 loss "), std::string::npos) << r.out;
  std::string json = dir / "d/step1/rank/dump.json";
  auto names = names_in(json);
  for (const char* e : {"Aten.addmm.0.forward", "Aten.gelu.0.forward", "Aten.mse_loss.0.forward", "Aten.addmm.0.backward",
                        "Aten.gelu.0.backward", "Aten.mse_loss.0.backward"})
    EXPECT_TRUE(has(names, e)) << e << ": " << ::testing::PrintToString(names);
  // The Python frames, innermost first, ending in the script's own line with its source text.
  std::string stacks = read_file(dir / "d/step1/rank/stack.json");
  EXPECT_NE(stacks.find("torch/nn/modules/linear.py, line "), std::string::npos) << stacks.substr(0, 1500);
  EXPECT_NE(stacks.find("File " + kMlp + ", line 15, in <module>, \\n loss = F.mse_loss(model(x), y)"), std::string::npos)
      << stacks.substr(0, 3000);
  // Other lines of the same code object (<module>) are other call sites: each frame's line is looked
  // up by (code object, instruction), never reused from another call of the same code.
  for (const char* line : {"line 16, in <module>, \\n loss.backward()", "line 17, in <module>, \\n opt.step()"})
    EXPECT_NE(stacks.find("File " + kMlp + ", " + line), std::string::npos) << line << "\n" << stacks.substr(0, 3000);
  // Laid out by the writer itself: the bytes the SDK's stack.json writer makes of the same entries.
  EXPECT_EQ(stacks, acccheck::stack_json_text(acccheck::read_stack_json(dir / "d/step1/rank/stack.json")));
  for (const char* device : {"cpu", "npu-sim"}) {
    auto ut = run_acccheck({"run_ut", "-api_info", json, "--device", device, "-o", dir / device, "--timestamp",
                            "20260101000000"});
    ASSERT_EQ(ut.exit_code, 0) << device << ": " << ut.err;
    auto rows = read_csv_records(dir / device + "/accuracy_checking_result_20260101000000.csv");
    std::size_t forward = 0;
    for (const auto& n : names) forward += n.size() > 8 && n.compare(n.size() - 8, 8, ".forward") == 0;
    EXPECT_EQ(rows.size(), forward + 1) << device;
  }
}

TEST_F(PythonDump, PythonOnlyStacks) {
  TempDir dir;
  ASSERT_EQ(dump({"--dump-path", dir / "d", "--step", "0", "--stack", "python"}, {kMlp, "1"}).exit_code, 0);
  std::string stacks = read_file(dir / "d/step0/rank/stack.json");
  EXPECT_NE(stacks.find(kMlp + ", line "), std::string::npos);
  EXPECT_EQ(stacks.find("libtorch"), std::string::npos);
  EXPECT_EQ(stacks.find(kPython + ", line 0"), std::string::npos) << "no C++ frames in python mode";
}

// CPython 3.11's frames are read from the interpreter's own frame records (interpreter_frames.hpp)
// unless ACCCHECK_PYTHON_FRAMES=api: both walks give the same stack.json for every shape of stack
// (a generator, a closure, lambdas, a method, a name that is not ASCII, calls back from C, recursion
// past the 32 frames kept, a second thread). The script's loop runs twice (one step: no backward
// pass), so the frame records' walk meets each stack again and takes it from its thread's table of
// interned stacks (python_stack.hpp) — the same frames as the C API's walk of that second call.
TEST_F(PythonDump, InterpreterFramesAreTheFramesTheCApiGives) {
  const bool python311 = test::shell_output(kPython + " -c 'import sys; print(sys.version_info[:2] == (3, 11))'") == "True\n";
  TempDir dir;
  const std::string script = fixture("python/stack_shapes.py");
  std::map<std::string, std::string> stacks;
  for (const char* way : {"api", "interpreter"}) {
    auto r = run_acccheck({"dump", "--dump-path", dir / way, "--step", "0", "--", kPython, script, "2"},
                          std::string("ACCCHECK_PYTHON_FRAMES=") + way);
    ASSERT_EQ(r.exit_code, 0) << way << ": " << r.err;
    const bool refused = r.err.find("ACCCHECK_PYTHON_FRAMES=interpreter: the interpreter's frames are not read here: ") !=
                         std::string::npos;
    if (std::string(way) == "interpreter" && python311) {
      EXPECT_FALSE(refused) << r.err;
    } else if (std::string(way) == "interpreter") {
      EXPECT_TRUE(refused) << r.err;
      EXPECT_NE(r.err.find("(only 3.11's frame layout is known); Python frames are read through the C API"),
                std::string::npos) << r.err;
    } else {
      EXPECT_FALSE(refused) << r.err;
    }
    stacks[way] = read_file(dir / way + "/step0/rank/stack.json");
  }
  const std::string& s = stacks["api"];
  for (const char* site : {", in batches, \\n yield torch.mm(x, x) + i", ", in <genexpr>,", ", in inner, \\n return torch.mul(b, scale)",
                           ", in with_cells,", ", in <lambda>, \\n total = total + (lambda t: torch.sigmoid(t))",
                           ", in forward, \\n return torch.relu", ", in <lambda>, \\n total = total + sum(map(",
                           ", in <lambda>, \\n total = total + sorted(", ", in deep, \\n return torch.tanh(t)",
                           ", in \\u00e9chelle, \\n return torch.neg(t)", "threading.py, line ",
                           ", in <lambda>, \\n worker = threading.Thread("})
    EXPECT_NE(s.find(site), std::string::npos) << site << "\n" << s.substr(0, 3000);
  // The recursion: 32 frames kept, all but the innermost `return deep(n - 1, t)`.
  auto entries = acccheck::read_stack_json(dir / "api/step0/rank/stack.json");
  std::size_t deep_seen = 0;
  for (const auto& [entry, lines] : entries)
    if (!lines.empty() && lines.front().find("return torch.tanh(t)") != std::string::npos) {
      ++deep_seen;
      EXPECT_EQ(lines.size(), 32u) << entry;
      EXPECT_NE(lines.back().find("return deep(n - 1, t)"), std::string::npos) << lines.back();
    }
  EXPECT_EQ(deep_seen, 2u) << "one tanh a pass of the loop";
  EXPECT_EQ(stacks["interpreter"], s);
  // The loop's second pass met the first pass's stacks: the same frames, line for line.
  const auto interned = acccheck::read_stack_json(dir / "interpreter/step0/rank/stack.json");
  auto lines_of = [&](const std::string& entry) {
    for (const auto& [name, lines] : interned)
      if (name == entry) return lines;
    ADD_FAILURE() << entry << " not in stack.json";
    return std::vector<std::string>{};
  };
  for (const std::string op : {"Aten.tanh", "Aten.mm", "Aten.neg", "Aten.sigmoid", "Aten.relu"}) {
    const std::string again = op + (op == "Aten.mm" ? ".2.forward" : ".1.forward");  // two mm a pass
    const auto lines = lines_of(op + ".0.forward");
    EXPECT_FALSE(lines.empty()) << op;
    EXPECT_EQ(lines, lines_of(again)) << again;
  }
}

TEST_F(PythonDump, AnUnknownPythonFramesChoiceIsNamedAndTheDefaultUsed) {
  TempDir dir;
  auto r = run_acccheck({"dump", "--dump-path", dir / "d", "--step", "0", "--", kPython, kMlp, "1"},
                        "ACCCHECK_PYTHON_FRAMES=fast");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string line = "acccheck dump: ACCCHECK_PYTHON_FRAMES=fast: expected auto, interpreter or api; auto is used\n";
  const auto at = r.err.find(line);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << "said once\n" << r.err;
  EXPECT_NE(read_file(dir / "d/step0/rank/stack.json").find(kMlp + ", line 15, in <module>"), std::string::npos);
}

// The lines of `out` that start with `prefix`, the prefix cut off.
std::vector<std::string> lines_after(const std::string& out, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) found.push_back(line.substr(prefix.size()));
  return found;
}

const std::string kKeyHeld = "included True excluded False";      // calls reach the fallback
const std::string kKeyExcluded = "included True excluded True";   // they skip it

// Autograd's Engine::execute is interposed by the preload library (capture/preload/
// backward_pass_hook.cpp): a backward pass counts for the step rule where it begins, and its own
// calls skip the capture fallback — the key is excluded in the thread-local state autograd runs the
// pass with, from its first node on (before, each node's first call still went through the
// fallback). With --capture-backward-ops they reach it in the steps that are dumped. The steps and
// gradients are dumped as before.
TEST_F(PythonDump, ABackwardPassesOwnCallsSkipTheCapture) {
  const std::string script = fixture("python/backward_pass_key.py");
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_after(r.out, "loop top: "), std::vector<std::string>(3, kKeyHeld)) << r.out;
  EXPECT_EQ(lines_after(r.out, "backward: "), std::vector<std::string>(3, kKeyExcluded)) << r.out;
  const auto names = names_in(dir / "d/step1/rank/dump.json");
  for (const std::string name : {"Aten.mul.0.forward", "Aten.mul.1.forward", "Aten.sum.0.forward", "Aten.sum.0.backward",
                                 "Aten.mul.0.backward", "Aten.sub_.0.forward"})
    EXPECT_TRUE(has(names, name)) << name << " in " << ::testing::PrintToString(names);
  EXPECT_FALSE(fs::exists(dir / "d/step0")) << "only step 1 was requested";
  EXPECT_FALSE(fs::exists(dir / "d/step2"));

  r = dump({"--dump-path", dir / "e", "--step", "0-2", "--capture-backward-ops"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_after(r.out, "backward: "), std::vector<std::string>(3, kKeyHeld)) << r.out;
}

// A step that is not dumped: once its first call is behind it, the thread that runs the backward
// passes pauses — its calls skip the fallback (no boxing) until its backward pass ends, where the
// next step's first call must be seen. Not in step 0 (no backward pass has told the engine yet which
// thread runs them), not in a dumped step; a thread started during the pause starts paused. The
// steps still fall where they did: the dumped step after an undumped one has the same entries.
TEST_F(PythonDump, AStepThatIsNotDumpedSkipsTheFallbackAfterItsStart) {
  const std::string script = fixture("python/backward_pass_key.py");
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> paused_in_step_2{kKeyHeld, kKeyHeld, kKeyExcluded};
  EXPECT_EQ(lines_after(r.out, "function forward: "), paused_in_step_2) << r.out;
  EXPECT_EQ(lines_after(r.out, "thread started in forward: "), paused_in_step_2) << r.out;

  r = dump({"--dump-path", dir / "e", "--step", "1-2"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_after(r.out, "function forward: "), std::vector<std::string>(3, kKeyHeld)) << r.out;
  EXPECT_EQ(read_file(dir / "d/step1/rank/dump.json"), read_file(dir / "e/step1/rank/dump.json"));
  const auto names = names_in(dir / "e/step2/rank/dump.json");
  EXPECT_TRUE(has(names, "Aten.mul.1.forward")) << ::testing::PrintToString(names);

  // The same dump of step 3 of the MLP whether steps 0-2 pass paused or not (step 2 dumped too).
  r = dump({"--dump-path", dir / "f", "--step", "3"}, {kMlp, "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = dump({"--dump-path", dir / "g", "--step", "2", "3"}, {kMlp, "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir / "f/step3/rank/dump.json"), read_file(dir / "g/step3/rank/dump.json"));
}

// The first dumped step finds the program's Python call sites known: the calls of the process's
// first step up to its first backward pass have their frames read and dropped (each call site's code
// object names and line table, with the GIL: a few microseconds each, ~0.04-0.07 ms of the first
// dumped gpt step). The engine keeps a reference to every code object it has learnt, which the
// fixture counts. A call site met only after the first backward pass is learnt where it is dumped.
TEST_F(PythonDump, ThePythonCallSitesOfTheFirstStepAreLearntBeforeADumpedStep) {
  const std::string script = fixture("python/call_site_learning.py");
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "2"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_after(r.out, "step 0 forward: "), std::vector<std::string>{"first_step_call 1 later_call 0"}) << r.out;
  EXPECT_EQ(lines_after(r.out, "step 1 forward: "), std::vector<std::string>{"first_step_call 1 later_call 0"}) << r.out;
  EXPECT_EQ(lines_after(r.out, "step 2 forward: "), std::vector<std::string>{"first_step_call 1 later_call 1"}) << r.out;
  const std::string stacks = read_file(dir / "d/step2/rank/stack.json");
  for (const std::string site : {"in first_step_call", "in later_call"})
    EXPECT_NE(stacks.find(site), std::string::npos) << site << " in " << stacks;

  // Without Python frames (--stack raw) nothing is learnt.
  r = dump({"--dump-path", dir / "e", "--step", "2", "--stack", "raw"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_after(r.out, "step 2 forward: "), std::vector<std::string>{"first_step_call 0 later_call 0"}) << r.out;
}

TEST_F(PythonDump, BatchNormsRunningStatisticsAreReadAfreshInEveryDumpedStep) {
  // Batch norm writes running_mean / running_var in its kernel and leaves their versions: the
  // statistics of a dumped step are those of its own elements, not of the first dumped step that
  // met them (the reuse of unchanged statistics went by version, and repeated step 1's values).
  const std::string script = fixture("python/batch_norm_running_stats.py");
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "1", "3"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int step : {1, 3}) {
    // "step N running means: <wide max> <wide min> <narrow max> <narrow min>"
    const auto printed = lines_after(r.out, "step " + std::to_string(step) + " running means: ");
    ASSERT_EQ(printed.size(), 1u) << r.out;
    std::istringstream values(printed[0]);
    double wide_max, wide_min, narrow_max, narrow_min;
    ASSERT_TRUE(values >> wide_max >> wide_min >> narrow_max >> narrow_min) << printed[0];
    std::map<std::string, std::pair<double, double>> running_mean;  // entry → (Max, Min)
    read_dump_json(dir / ("d/step" + std::to_string(step) + "/rank/dump.json"), [](const DumpHeader&) {},
                   [&](ApiRecord&& rec) {
                     if (rec.op_name != "aten::native_batch_norm" || rec.direction != Direction::forward) return;
                     ASSERT_GE(rec.args.size(), 4u) << rec.entry_name();
                     const TensorSpec& t = rec.args[3].tensor;
                     running_mean[rec.entry_name()] = {t.max.value, t.min.value};
                   });
    ASSERT_EQ(running_mean.size(), 2u) << "step " << step;
    // float32 values: the dump's shortest digits and Python's repr name the same float.
    auto f32 = [](double v) { return static_cast<float>(v); };
    EXPECT_EQ(f32(running_mean["Aten.native_batch_norm.0.forward"].first), f32(wide_max)) << "step " << step;
    EXPECT_EQ(f32(running_mean["Aten.native_batch_norm.0.forward"].second), f32(wide_min)) << "step " << step;
    EXPECT_EQ(f32(running_mean["Aten.native_batch_norm.1.forward"].first), f32(narrow_max)) << "step " << step;
    EXPECT_EQ(f32(running_mean["Aten.native_batch_norm.1.forward"].second), f32(narrow_min)) << "step " << step;
  }
}

TEST_F(PythonDump, DataLoaderWorkersNeitherHangNorTouchTheDump) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "a", "--step", "1"}, {kTransformer, "--workers", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("median step: "), std::string::npos);
  auto names = names_in(dir / "a/step1/rank/dump.json");
  for (const char* e : {"Aten.embedding.0.forward", "Aten.native_layer_norm.0.forward", "Aten._softmax.0.forward",
                        "Aten.masked_fill.0.forward", "Aten.nll_loss.0.backward", "Aten.embedding.0.backward"})
    EXPECT_TRUE(has(names, e)) << e;
  for (const auto& e : fs::directory_iterator(dir / "a"))
    EXPECT_EQ(e.path().filename().string().rfind("child-", 0), std::string::npos) << "workers are not dumped by default";
  // --follow-children: each forked worker dumps its own operators (the collate function's stack,
  // the dataset's indexing) into child-<pid>/, in the step the parent was in when it forked.
  r = dump({"--dump-path", dir / "b", "--step", "0", "--follow-children"}, {kTransformer, "--workers", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto parent = names_in(dir / "b/step0/rank/dump.json");
  EXPECT_TRUE(has(parent, "Aten.embedding.0.forward"));
  EXPECT_TRUE(has(parent, "Aten.nll_loss.0.backward"));
  std::size_t workers = 0;
  for (const auto& e : fs::directory_iterator(dir / "b")) {
    std::string name = e.path().filename().string();
    if (name.rfind("child-", 0) != 0) continue;
    ++workers;
    EXPECT_NE(r.err.find("written to " + (dir / "b/" + name)), std::string::npos) << r.err;
    auto worker = names_in(e.path().string() + "/step0/rank/dump.json");
    EXPECT_TRUE(has(worker, "Aten.stack.0.forward")) << name << ": " << ::testing::PrintToString(worker);
    EXPECT_TRUE(has(worker, "Aten.select.0.forward")) << name;
    EXPECT_FALSE(has(worker, "Aten.embedding.0.forward")) << name << ": the parent's operators stay the parent's";
    std::string stacks = read_file(e.path().string() + "/step0/rank/stack.json");
    EXPECT_NE(stacks.find("torch/utils/data/"), std::string::npos) << stacks.substr(0, 800);
  }
  EXPECT_EQ(workers, 2u) << "one folder per worker (--workers 2)";
}

TEST_F(PythonDump, EveryWayOfEndingLeavesAReadableDump) {
  struct Case {
    const char* end;
    int exit_code;
    bool stack_json;  // the last step's stack.json: written when the engine could finish
  };
  for (const Case& c : {Case{"normal", 0, true}, Case{"sys_exit", 3, true}, Case{"raise", 1, true},
                        Case{"os_exit", 5, true}, Case{"sigterm", 128 + 15, true}}) {
    TempDir dir;
    auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {kTransformer, "--workers", "0", "--steps", "2", "--end", c.end});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.end << ": " << r.err;
    if (std::string(c.end) == "raise") {
      EXPECT_NE(r.err.find("RuntimeError: the script failed on purpose"), std::string::npos);
    }
    std::string json = dir / "d/step1/rank/dump.json";
    std::vector<std::string> names;
    EXPECT_NO_THROW(names = names_in(json)) << c.end;
    EXPECT_TRUE(has(names, "Aten.nll_loss.0.backward")) << c.end;
    EXPECT_EQ(fs::exists(dir / "d/step1/rank/stack.json"), c.stack_json) << c.end;
  }
}

// What real library models call and acccheck once could not judge (issue 24): a bias-less
// convolution (npu-sim took an undefined bias for one), a slice to the end (INT64_MAX was read as
// a double and became LibTorch's symbolic-integer marker), ones_like's layout string, aten::index
// with a list of index tensors (npu-sim's fallback left them on the device), backward of operators
// with several outputs (layer norm, max pooling, lstm), an LSTM whose weights come in a tensor list
// (the step rule missed them: its forward fell into the previous step), random draws (not judged),
// dropout (its zero-count rule). Replayed on npu-sim and cpu, compared; a planted convolution fault
// is flagged there and nowhere else.
TEST_F(PythonDump, TheCallsOfRealModelsAreJudgedOnBothDevices) {
  TempDir dir;
  auto r = dump({"--dump-path", dir / "d", "--step", "0", "1"}, {fixture("python/real_model_ops.py")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("dropped"), std::string::npos) << r.err;
  auto step1 = names_in(dir / "d/step1/rank/dump.json");
  for (const char* e : {"Aten.lstm.0.forward", "Aten.lstm.0.backward", "Aten.convolution.0.forward", "Aten.slice.0.forward",
                        "Aten.index.0.forward", "Aten.ones_like.0.forward"})
    EXPECT_TRUE(has(step1, e)) << e << " in step 1: " << ::testing::PrintToString(step1);
  auto results = [&](const std::string& json, const std::string& device, const std::string& out, const std::string& faults) {
    std::vector<std::string> args{"run_ut", "-api_info", json, "--device", device, "-o", out, "--timestamp", "20260101000000"};
    if (!faults.empty()) args.insert(args.end(), {"--device-config", faults});
    auto ut = run_acccheck(args);
    EXPECT_EQ(ut.exit_code, 0) << ut.err;
    EXPECT_EQ(ut.err.find("Warning"), std::string::npos) << ut.err;
    std::map<std::string, std::vector<std::string>> rows;
    for (const auto& row : read_csv_records(out + "/accuracy_checking_result_20260101000000.csv")) rows[row[0]] = row;
    return rows;
  };
  const std::string json1 = dir / "d/step1/rank/dump.json";
  for (const char* device : {"npu-sim", "cpu"}) {
    auto rows = results(json1, device, dir / device, "");
    for (const auto& [api, row] : rows) {
      if (api == "API name") continue;
      EXPECT_EQ(row[1], "pass") << device << " " << api << ": " << row[3];
      EXPECT_TRUE(row[2] == "pass" || row[2] == " ") << device << " " << api << " backward " << row[2] << ": " << row[3];
    }
    for (const char* api : {"Aten.convolution.0", "Aten.max_pool2d_with_indices.0", "Aten.native_layer_norm.0", "Aten.lstm.0",
                            "Aten.index.0", "Aten.slice.0"})
      EXPECT_EQ(rows[api][2], "pass") << device << " " << api << " backward";
    EXPECT_EQ(rows["Aten.ones_like.0"][1], "pass");
  }
  // The random draws of step 1's data are the last calls of step 0 (they take no parameter).
  auto step0 = results(dir / "d/step0/rank/dump.json", "cpu", dir / "cpu0", "");
  std::size_t random = 0;
  for (const auto& [api, row] : step0)
    if (api.rfind("Aten.randn.", 0) == 0 || api.rfind("Aten.rand.", 0) == 0 || api.rfind("Aten.uniform_.", 0) == 0) {
      ++random;
      EXPECT_EQ(row[1], "SKIP") << api;
      EXPECT_NE(row[3].find(" draws random numbers: its outputs differ from run to run, so it is not judged"), std::string::npos)
          << api << ": " << row[3];
    }
  EXPECT_GE(random, 4u) << "randn and rand in both steps, the modules' initialisation";
  // compare: nothing flagged on the healthy device, every API listed; then a planted fault.
  auto cmp = run_acccheck({"compare", "-npu", dir / "npu-sim/accuracy_checking_details_20260101000000.csv", "-gpu",
                           dir / "cpu/accuracy_checking_details_20260101000000.csv", "-o", dir / "cmp"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find(" 0 with an error"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("compare: " + std::to_string(step1.size() - std::count_if(step1.begin(), step1.end(), [](const std::string& n) {
                                                      return n.find(".backward") != std::string::npos;
                                                    })) +
                         " API result rows"),
            std::string::npos)
      << cmp.out;
  write_file(dir / "faults.yaml", "seed: 3\nfaults:\n  - {op: \"aten::convolution_overrideable\", direction: forward, kind: rel_noise, magnitude: 1.0e-2}\n");
  results(json1, "npu-sim", dir / "faulty", dir / "faults.yaml");
  auto bad = run_acccheck({"compare", "-npu", dir / "faulty/accuracy_checking_details_20260101000000.csv", "-gpu",
                           dir / "cpu/accuracy_checking_details_20260101000000.csv", "-o", dir / "cmp2", "--timestamp",
                           "20260101000002"});
  ASSERT_EQ(bad.exit_code, 0) << bad.err;
  std::map<std::string, std::vector<std::string>> judged;
  for (const auto& row : read_csv_records(dir / "cmp2/api_precision_compare_result_20260101000002.csv")) judged[row[0]] = row;
  EXPECT_EQ(judged["Aten.convolution.0"][1], "error") << ::testing::PrintToString(judged["Aten.convolution.0"]);
  for (const auto& [api, row] : judged)
    if (api != "Aten.convolution.0" && api != "API Name") {
      EXPECT_NE(row[1], "error") << api << " flagged by a fault elsewhere";
    }
}

// A Python number passed for a tensor (`loss * 0.5 + 1e-6`: aten::mul.Tensor / add.Tensor) reaches
// the dispatcher as a 0-d float64 "wrapped number", which takes no part in type promotion. The dump
// writes it as the number, as msprobe's dumps do; run_ut binds it back as a wrapped number, so the
// 0-d float32 result stays float32 and is judged (replayed as a float64 tensor it came out float64:
// SKIP, "This data type does not support benchmark compare.").
TEST_F(PythonDump, APythonNumberPassedForATensorIsWrittenAsTheNumberAndJudged) {
  TempDir dir;
  write_file(dir / "scaled.py",
             "import torch\n"
             "torch.manual_seed(0)\n"
             "w = torch.nn.Parameter(torch.randn(4, 3))\n"
             "for step in range(2):\n"
             "    loss = (torch.randn(2, 4) @ w).pow(2).mean()\n"
             "    scaled = loss * 0.5 + 1e-6\n"
             "    scaled.backward()\n"
             "    with torch.no_grad():\n"
             "        w -= w.grad\n"
             "    w.grad = None\n");
  auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {dir / "scaled.py"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, ApiRecord> records;
  read_dump_json(dir / "d/step1/rank/dump.json", [](const DumpHeader&) {},
                 [&](ApiRecord&& rec) { records.emplace(rec.entry_name(), std::move(rec)); });
  for (const auto& [entry, number] : std::map<std::string, double>{{"Aten.mul.0.forward", 0.5}, {"Aten.add.0.forward", 1e-6}}) {
    ASSERT_TRUE(records.count(entry)) << entry;
    const auto& args = records.at(entry).args;
    ASSERT_EQ(args.size(), 2u) << entry;
    EXPECT_EQ(args[0].kind, Argument::Kind::tensor) << entry;
    EXPECT_EQ(args[1].kind, Argument::Kind::scalar) << entry;
    EXPECT_EQ(args[1].type_name, "float") << entry;
    EXPECT_EQ(args[1].value.as_double(), number) << entry;
  }
  for (const char* device : {"npu-sim", "cpu"}) {
    auto ut = run_acccheck({"run_ut", "-api_info", dir / "d/step1/rank/dump.json", "--device", device, "-o", dir / device,
                            "--timestamp", "20260101000000"});
    ASSERT_EQ(ut.exit_code, 0) << ut.err;
    std::map<std::string, std::vector<std::string>> rows, details;
    for (const auto& row : read_csv_records(dir / device + "/accuracy_checking_result_20260101000000.csv")) rows[row[0]] = row;
    for (const auto& row : read_csv_records(dir / device + "/accuracy_checking_details_20260101000000.csv")) details[row[0]] = row;
    for (const char* api : {"Aten.mul.0", "Aten.add.0"}) {
      EXPECT_EQ(rows[api][1], "pass") << device << " " << api << ": " << (rows[api].size() > 3 ? rows[api][3] : "");
      const auto& d = details[std::string(api) + ".forward.output.0"];
      ASSERT_GE(d.size(), 3u) << device << " " << api;
      EXPECT_EQ(d[2], "torch.float32") << device << " " << api << ": the device output's dtype";
    }
  }
}

// What LibTorch 2.x's training calls that msprobe's aten list lacks (docs/compat.md, dump bi): the
// per-tensor norms of clip_grad_norm_ (`_foreach_norm`), clip_grad_value_ (`_foreach_clamp_min_` /
// `_foreach_clamp_max_`), AdamW(fused=True) (`_fused_adamw_`), SGD(fused=True) (`_fused_sgd_`),
// Adamax(foreach=True) (`_foreach_abs`), F.scaled_dot_product_attention (one fused kernel on CPU,
// CUDA and NPU alike, but a different one on each: the entry is the call itself, so runs on two
// devices pair, dump bj) and nn.RMSNorm's `_fused_rms_norm` (one kernel on CUDA). Such a step's
// calls went undumped where the device runs them as one kernel. Each is now dumped and judged on
// both devices, and a fault planted in one is flagged there alone. The attention's dropout (and a
// GRU's between its layers) draws random numbers: replayed switched off, so a healthy device is not
// flagged for it (it was, on cpu against cpu) and the operator's arithmetic is still judged.
TEST_F(PythonDump, TheOptimizerClippingAndAttentionCallsOfLibTorch2AreDumpedAndJudged) {
  if (std::string(ACCCHECK_TORCH_FULL_VERSION).rfind("1.", 0) == 0)
    GTEST_SKIP() << "LibTorch " << ACCCHECK_TORCH_FULL_VERSION << " has no fused CPU optimizers, foreach clipping or SDPA";
  TempDir dir;
  write_file(dir / "optimizers.py",
             "import torch, torch.nn as nn, torch.nn.functional as F\n"
             "torch.manual_seed(0)\n"
             "class Attention(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.norm, self.qkv, self.out = nn.RMSNorm(8), nn.Linear(8, 24), nn.Linear(8, 4)\n"
             "        self.gru = nn.GRU(4, 4, num_layers=2, dropout=0.5, batch_first=True)\n"
             "    def forward(self, x):\n"
             "        q, k, v = self.qkv(self.norm(x)).view(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)\n"
             "        a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25, is_causal=True)\n"
             "        return self.gru(self.out(a.transpose(1, 2).reshape(2, 5, 8)))[0]\n"
             "m = Attention()\n"
             "opts = [torch.optim.AdamW(m.parameters(), lr=1e-3, fused=True),\n"
             "        torch.optim.SGD(m.parameters(), lr=1e-2, momentum=0.9, fused=True),\n"
             "        torch.optim.Adamax(m.parameters(), lr=1e-3, foreach=True)]\n"
             "for step in range(2):\n"
             "    loss = m(torch.randn(2, 5, 8)).pow(2).mean()\n"
             "    loss.backward()\n"
             "    nn.utils.clip_grad_norm_(m.parameters(), 1.0, foreach=True)\n"
             "    nn.utils.clip_grad_value_(m.parameters(), 0.5, foreach=True)\n"
             "    for opt in opts:\n"
             "        opt.step()\n"
             "    opts[0].zero_grad()\n");
  auto r = dump({"--dump-path", dir / "d", "--step", "1"}, {dir / "optimizers.py"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string json = dir / "d/step1/rank/dump.json";
  auto names = names_in(json);
  const std::string attention = "Aten.scaled_dot_product_attention.0", rms = "Aten._fused_rms_norm.0", gru = "Aten.gru.0";
  const std::vector<std::string> apis{"Aten._foreach_norm.0", "Aten._foreach_clamp_min_.0", "Aten._foreach_clamp_max_.0",
                                      "Aten._fused_adamw_.0", "Aten._fused_sgd_.0",         "Aten._foreach_abs.0",
                                      attention,              rms,                          gru};
  for (const auto& api : {attention, rms, gru}) EXPECT_TRUE(has(names, api + ".backward")) << api << ": " << ::testing::PrintToString(names);
  // The call itself, not the kernel it picked on this device.
  for (const auto& name : names) EXPECT_EQ(name.find("_scaled_dot_product_"), std::string::npos) << name;
  for (const auto& api : apis) EXPECT_TRUE(has(names, api + ".forward")) << api << ": " << ::testing::PrintToString(names);
  auto run = [&](const std::string& device, const std::string& out, const std::string& faults) {
    std::vector<std::string> args{"run_ut", "-api_info", json, "--device", device, "-o", out, "--timestamp", "20260101000000"};
    if (!faults.empty()) args.insert(args.end(), {"--device-config", faults});
    auto ut = run_acccheck(args);
    EXPECT_EQ(ut.exit_code, 0) << ut.err;
    std::map<std::string, std::vector<std::string>> rows;
    for (const auto& row : read_csv_records(out + "/accuracy_checking_result_20260101000000.csv")) rows[row[0]] = row;
    std::map<std::string, int> details;
    for (const auto& row : read_csv_records(out + "/accuracy_checking_details_20260101000000.csv"))
      ++details[row[0].substr(0, row[0].find(".forward."))];
    return std::make_pair(rows, details);
  };
  for (const char* device : {"npu-sim", "cpu"}) {
    auto [rows, details] = run(device, dir / device, "");
    for (const auto& api : apis) {
      ASSERT_TRUE(rows.count(api)) << device << " " << api;
      EXPECT_EQ(rows[api][1], "pass") << device << " " << api << ": " << (rows[api].size() > 3 ? rows[api][3] : "");
      // One row per tensor of the model's parameters (per state tensor written, for the fused
      // steps); the attention's output; the norm's and its reciprocal RMS; the GRU's output and state.
      EXPECT_GE(details[api], api == attention ? 1 : api == rms || api == gru ? 2 : 5) << device << " " << api;
    }
    for (const auto& api : {attention, rms, gru}) EXPECT_EQ(rows[api][2], "pass") << device << " " << api << "'s backward";
  }
  auto compare = [&](const std::string& npu, const std::string& out) {
    auto cmp = run_acccheck({"compare", "-npu", npu + "/accuracy_checking_details_20260101000000.csv", "-gpu",
                             dir / "cpu/accuracy_checking_details_20260101000000.csv", "-o", out, "--timestamp",
                             "20260101000002"});
    EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
    std::map<std::string, std::string> judged;
    for (const auto& row : read_csv_records(out + "/api_precision_compare_result_20260101000002.csv")) judged[row[0]] = row[1];
    return judged;
  };
  for (const auto& [api, status] : compare(dir / "npu-sim", dir / "cmp"))
    EXPECT_NE(status, "error") << api << " flagged on a healthy device";
  write_file(dir / "faults.yaml",
             "seed: 3\nfaults:\n"
             "  - {op: \"aten::_foreach_norm\", direction: forward, kind: rel_noise, magnitude: 1.0e-2}\n"
             "  - {op: \"aten::_fused_adamw_\", direction: forward, kind: rel_noise, magnitude: 1.0e-2}\n"
             // npu-sim's attention is the math decomposition (it has no fused kernel): its softmax.
             "  - {op: \"aten::_softmax\", direction: forward, kind: rel_noise, magnitude: 1.0e-2}\n"
             // _fused_rms_norm is composite below CUDA: on npu-sim it arrives as what it decomposes
             // into (docs/npu-sim.md), the reciprocal square root among them.
             "  - {op: \"aten::rsqrt\", direction: forward, kind: rel_noise, magnitude: 1.0e-2}\n");
  run("npu-sim", dir / "faulty", dir / "faults.yaml");
  for (const auto& [api, status] : compare(dir / "faulty", dir / "cmp2")) {
    if (api == "API Name") continue;
    const bool planted = api == "Aten._foreach_norm.0" || api == "Aten._fused_adamw_.0" || api == attention || api == rms;
    EXPECT_EQ(status == "error", planted) << api << ": " << status;
  }
}

// The dtypes LibTorch 2.x added: named as Python names them in the dump, their .pt files readable by
// Python's torch.load (torch.save's _rebuild_tensor_v3 layout, which LibTorch's pickle_save does not
// write), and replayed by run_ut from acccheck's files and from Python's own, on cpu and npu-sim.
TEST_F(PythonDump, TheDtypesOfLibTorch2AreNamedSavedAndReplayed) {
  if (std::string(ACCCHECK_TORCH_FULL_VERSION).rfind("1.", 0) == 0)
    GTEST_SKIP() << "LibTorch " << ACCCHECK_TORCH_FULL_VERSION << " has no float8 or uint16/32/64 dtypes";
  TempDir dir;
  const std::string script = fixture("python/new_dtypes.py");
  auto r = dump({"--dump-path", dir / "d", "--task", "tensor"}, {script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string rank = dir / "d/step0/rank";
  std::string json = read_file(rank + "/dump.json");
  for (const char* dtype : {"torch.float8_e4m3fn", "torch.float8_e5m2", "torch.uint16", "torch.uint32", "torch.uint64"})
    EXPECT_NE(json.find(std::string("\"dtype\": \"") + dtype + "\""), std::string::npos) << dtype;
  EXPECT_EQ(json.find("Float8"), std::string::npos) << "no C++ dtype names";
  EXPECT_EQ(json.find("UInt"), std::string::npos) << "no C++ dtype names";
  // Python reads every file the dump wrote, with the dtype the dump names.
  write_file(dir / "read.py",
             "import json, sys, torch\n"
             "rank = sys.argv[1]\n"
             "data = json.load(open(rank + '/dump.json'))['data']\n"
             "n = 0\n"
             "def walk(v):\n"
             "    global n\n"
             "    if isinstance(v, dict) and 'data_name' in v:\n"
             "        t = torch.load(rank + '/dump_tensor_data/' + v['data_name'])\n"
             "        assert str(t.dtype) == v['dtype'], (v['data_name'], t.dtype, v['dtype'])\n"
             "        assert list(t.shape) == v['shape'], v['data_name']\n"
             "        n += 1\n"
             "    elif isinstance(v, dict): [walk(x) for x in v.values()]\n"
             "    elif isinstance(v, list): [walk(x) for x in v]\n"
             "walk(data)\n"
             "print('read', n)\n");
  std::string read = test::shell_output(test::shell_quote(kPython) + " -W ignore " + test::shell_quote(dir / "read.py") + " " +
                                        test::shell_quote(rank) + " 2>&1");
  // 38 files: `torch.rand(4, 8) * 8 - 4`'s 8 and 4 are Python numbers, written as numbers (no file).
  EXPECT_NE(read.find("read 38"), std::string::npos) << read;
  auto replay = [&](const std::string& device, const std::string& out) {
    auto ut = run_acccheck({"run_ut", "-api_info", rank + "/dump.json", "--device", device, "-o", out, "--timestamp",
                            "20260101000000"});
    EXPECT_EQ(ut.exit_code, 0) << ut.err;
    std::map<std::string, std::string> status;
    for (const auto& row : read_csv_records(out + "/accuracy_checking_result_20260101000000.csv")) status[row[0]] = row[1];
    return status;
  };
  for (int pass = 0; pass < 2; ++pass) {
    // Second pass: the inputs replaced by the files Python's torch.save writes for the same tensors.
    if (pass == 1) {
      ASSERT_EQ(std::system((kPython + " -W ignore " + script + " " + rank + "/dump_tensor_data >/dev/null").c_str()), 0);
    }
    for (const char* device : {"cpu", "npu-sim"}) {
      auto status = replay(device, dir / (std::string(device) + std::to_string(pass)));
      for (const char* api : {"Aten.mul.2", "Aten.mul.3", "Aten.mul.4", "Aten.cat.0", "Aten.mul.5"})
        EXPECT_EQ(status[api], "pass") << api << " on " << device << (pass ? " (Python's files)" : " (acccheck's files)");
    }
  }
}

TEST_F(PythonDump, APythonImportingAnotherLibTorchIsRefusedInOneLine) {
  // A real second LibTorch: the other configuration's Python (Debian's python3-torch 1.13 for a
  // build against the 2.13 wheel, the wheel's venv for a build against Debian's). The refusal comes
  // from the preloaded engine's dlopen, before the real dlopen maps that torch's libraries: none of
  // its static initialisers runs, so the process ends with the one line and exit code 5, no crash.
  const std::string foreign = ACCCHECK_FOREIGN_TORCH_PYTHON;
  TempDir dir;
  // Where that Python's torch is, asked of it without acccheck.
  write_file(dir / "where.py",
             "import torch\nprint(torch.__version__)\n"
             "print([l.split()[-1] for l in open('/proc/self/maps') if 'libtorch_cpu' in l][0])\n");
  std::string where = test::shell_output(test::shell_quote(foreign) + " " + test::shell_quote(dir / "where.py") + " 2>/dev/null");
  auto nl = where.find('\n');
  if (foreign.empty() || nl == std::string::npos || where.size() <= nl + 1)
    GTEST_SKIP() << "no Python with another LibTorch (" << foreign << "): the other configuration is not installed";
  const std::string their_version = where.substr(0, nl);
  const std::string their_lib = fs::canonical(where.substr(nl + 1, where.find('\n', nl + 1) - nl - 1)).string();
  if (their_lib == fs::canonical(ACCCHECK_TORCH_CPU_LIBRARY).string()) GTEST_SKIP() << foreign << " uses this build's LibTorch";

  write_file(dir / "s.py", "import torch\nprint('still here', torch.ones(2).sum())\n");
  std::vector<std::string> args{"dump", "--dump-path", dir / "d", "--", foreign, dir / "s.py"};
  auto r = run_acccheck(args);
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(r.out.find("still here"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "acccheck dump: the program uses LibTorch " + their_version + " (" + their_lib +
                       "), acccheck was built against LibTorch " + ACCCHECK_TORCH_FULL_VERSION + " (" +
                       fs::canonical(ACCCHECK_TORCH_CPU_LIBRARY).string() +
                       "): not dumped (rebuild acccheck against the program's LibTorch)\n");
  EXPECT_FALSE(fs::exists(dir / "d/step0"));
}

TEST_F(PythonDump, ALibraryNamedLikeAnotherLibTorchIsRefusedBeforeItLoads) {
  // ctypes loading a file named like a wheel's torch/lib/libtorch_cpu.so (with its version.py) that
  // is not acccheck's: refused before the real dlopen runs.
  TempDir dir;
  fs::create_directories(dir / "torch/lib");
  std::string stand_in;
  for (const char* candidate : {"/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1"})
    if (fs::exists(candidate)) stand_in = candidate;
  if (stand_in.empty()) GTEST_SKIP() << "no libz.so.1 to stand in";
  fs::copy_file(stand_in, dir / "torch/lib/libtorch_cpu.so");
  write_file(dir / "torch/version.py", "__version__ = '2.1.0+cpu'\n");
  write_file(dir / "s.py", "import ctypes\nctypes.CDLL('" + (dir / "torch/lib/libtorch_cpu.so") + "')\nprint('still here')\n");
  auto r = dump({"--dump-path", dir / "d"}, {dir / "s.py"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(r.out.find("still here"), std::string::npos);
  EXPECT_NE(r.err.find("acccheck dump: the program uses LibTorch 2.1.0+cpu (" +
                       fs::canonical(dir / "torch/lib/libtorch_cpu.so").string() + "), acccheck was built against LibTorch " +
                       ACCCHECK_TORCH_FULL_VERSION),
            std::string::npos)
      << r.err;
}

// A PyPI extension of torch (torchvision's _C.so) needs libtorch_cpu by name and has an RPATH of its
// build machine's folders: the dynamic linker gives it the libtorch_cpu already loaded under that
// name. A libtorch_cpu in the system folders (Debian's libtorch-dev) is not what it gets, and the
// program is dumped (it was refused as "the program uses LibTorch <torchvision's version>").
TEST_F(PythonDump, AnExtensionRelyingOnTheLoadedLibTorchIsDumped) {
  TempDir dir;
  const std::string extension = std::string(ACCCHECK_BUILD_DIR) + "/tests/libtorch_extension.so";
  ASSERT_TRUE(fs::exists(extension)) << extension;
  fs::create_directories(dir / "torchvision");
  write_file(dir / "torchvision/version.py", "__version__ = '0.28.0+cu130'\n");
  fs::copy_file(extension, dir / "torchvision/_C.so");
  write_file(dir / "s.py",
             "import ctypes, torch\n"
             "print('answer', ctypes.CDLL('" + (dir / "torchvision/_C.so") + "').acccheck_test_extension_answer())\n"
             "print('sum', torch.ones(2).sum().item())\n");
  auto r = dump({"--dump-path", dir / "d", "--step", "0"}, {dir / "s.py"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("answer 42"), std::string::npos) << r.out;
  EXPECT_TRUE(has(names_in(dir / "d/step0/rank/dump.json"), "Aten.sum.0.forward"));
}
