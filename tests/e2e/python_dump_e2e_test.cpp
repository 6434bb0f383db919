// `acccheck dump -- python3 script.py`: unmodified PyTorch scripts (Debian's python3-torch, which
// uses the same libtorch_cpu.so as acccheck) captured by the preloaded engine, with Python stacks;
// the ways a Python process ends; DataLoader worker processes; a foreign LibTorch.
#include <filesystem>

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

const std::string kPython = "/usr/bin/python3";
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
      GTEST_SKIP() << "Debian's python3-torch is not installed (scripts/setup.sh installs it)";
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
  EXPECT_EQ(stacks.find("/usr/bin/python3, line 0"), std::string::npos) << "no C++ frames in python mode";
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

TEST_F(PythonDump, APythonImportingAnotherLibTorchIsRefusedInOneLine) {
  TempDir dir;
  // Another library named like a pip wheel's torch/lib/libtorch_cpu.so (with its version.py). A real
  // second LibTorch would bring its own libc10; a stand-in keeps its initialisers out of the way.
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
  EXPECT_NE(r.err.find("acccheck dump: the program uses LibTorch 2.1.0+cpu (" + (dir / "torch/lib/libtorch_cpu.so") +
                       "), acccheck was built against LibTorch 1.13"),
            std::string::npos)
      << r.err;
}
