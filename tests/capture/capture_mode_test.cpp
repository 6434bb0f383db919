// How calls reach the engine (capture/engine/capture_mode.hpp): a dispatcher fallback on a mode key
// sees the outermost calls of the threads it captures and runs each operator with the key excluded.
// So entries are the outermost calls; a program's own RecordFunction callback sees every call as it
// would without the tool, nested ones included, and none of the tool's own; a call that threw leaves
// the thread captured; threads started by a capturing thread are captured, threads started from
// inside a call or by the tool are not.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <chrono>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <acccheck/json.hpp>

#include "engine/capture_engine.hpp"
#include "engine/capture_mode.hpp"
#include "engine/dump_writer.hpp"
#include "support/test_support.hpp"

using acccheck::capture::CaptureEngine;

namespace {

thread_local std::set<std::string> t_seen;  // what the program's own callback saw on this thread

std::set<std::string> entry_names(const std::string& dump_json) {
  std::ifstream in(dump_json);
  std::stringstream text;
  text << in.rdbuf();
  acccheck::Json dump = acccheck::parse_json(text.str(), "dump.json");
  std::set<std::string> names;
  for (const auto& m : dump.find("data")->members()) names.insert(m.first);
  return names;
}

acccheck::core::DumpOptions options_in(const acccheck::test::TempDir& dir) {
  acccheck::core::DumpOptions o;
  o.dump_path = dir / "d";
  o.stack = acccheck::core::StackMode::off;
  o.plugin_dirs = {ACCCHECK_PLUGIN_DIR};
  return o;
}

// The writer thread's voluntary context switches so far (-1: no writer thread).
long writer_switches() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (!tasks) return -1;
  long found = -1;
  while (dirent* e = ::readdir(tasks)) {
    std::string task = std::string("/proc/self/task/") + e->d_name;
    std::ifstream comm(task + "/comm");
    std::string name;
    if (!std::getline(comm, name) || name != "acccheck-writer") continue;
    std::ifstream status(task + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) found = std::stol(line.substr(line.find(':') + 1));
  }
  ::closedir(tasks);
  return found;
}

}  // namespace

TEST(CaptureMode, EntriesAreOutermostAndTheProgramsCallbackSeesEveryCall) {
  acccheck::test::TempDir dir;
  auto& engine = CaptureEngine::instance();
  engine.configure(options_in(dir));
  auto own = at::addThreadLocalCallback(at::RecordFunctionCallback([](const at::RecordFunction& fn) {
    t_seen.insert(fn.name());
    return std::unique_ptr<at::ObserverContext>();
  }).scopes({at::RecordScope::FUNCTION}));
  // A composite call with several nested calls (batched matmul: views, a matrix product, a view
  // back), before the dump starts: what the program's callback sees of it without a dump.
  at::Tensor batch = at::ones({2, 4, 4});
  at::Tensor a = at::ones({4, 4}), x = at::ones({2, 3});
  t_seen.clear();
  (void)at::matmul(batch, a);
  const std::set<std::string> matmul_alone = t_seen;
  t_seen.clear();
  ASSERT_GT(matmul_alone.size(), 2u) << "the test needs a call with more than one nested call";
  engine.start();

  at::Tensor b = at::addmm(a, a, a);
  EXPECT_THROW((void)at::mm(x, x), c10::Error);
  EXPECT_TRUE(acccheck::capture::this_thread_captures()) << "still captured after a call that threw";
  at::Tensor c = at::relu(b);
  t_seen.clear();
  at::Tensor d = at::matmul(batch, a);
  const std::set<std::string> around_matmul = t_seen;
  t_seen.clear();
  // A bool result: its statistics are the tool's own any/all, which nobody else sees.
  at::Tensor e = at::eq(a, b);
  const std::set<std::string> around_eq = t_seen;
  at::removeCallback(own);
  engine.stop();
  std::string summary = engine.finish();
  ASSERT_NE(summary.find("written to"), std::string::npos) << summary;

  EXPECT_EQ(around_matmul, matmul_alone) << "the program's callback sees the nested calls as without a dump";
  EXPECT_EQ(around_eq, (std::set<std::string>{"aten::eq"})) << "the statistics' any/all are the tool's own";
  std::set<std::string> names = entry_names(dir / "d/step0/rank/dump.json");
  for (const char* kept : {"Aten.addmm.0.forward", "Aten.relu.0.forward", "Aten.matmul.0.forward", "Aten.eq.0.forward"})
    EXPECT_TRUE(names.count(kept)) << kept;
  EXPECT_FALSE(names.count("Aten.mm.0.forward")) << "neither the call that threw nor matmul's nested mm is an entry";
  EXPECT_FALSE(names.count("Aten.any.0.forward"));
  EXPECT_FALSE(names.count("Aten.all.0.forward"));
  EXPECT_EQ(names.size(), 4u) << "the four calls the test made, nothing else";
}

TEST(CaptureMode, ThreadsStartedByACapturingThreadAreCaptured) {
  acccheck::test::TempDir dir;
  auto& engine = CaptureEngine::instance();
  engine.configure(options_in(dir));
  engine.start();
  bool loader_captures = false, tool_thread_captures = true;
  std::thread loader([&] {
    loader_captures = acccheck::capture::this_thread_captures();
    (void)at::tanh(at::ones({3}));  // a data loader's operator: an entry
  });
  loader.join();
  {
    acccheck::capture::ToolCalls tool;  // a thread started from inside a call, or by the tool itself
    std::thread helper([&] {
      tool_thread_captures = acccheck::capture::this_thread_captures();
      (void)at::sigmoid(at::ones({3}));
    });
    helper.join();
  }
  engine.stop();
  std::string summary = engine.finish();
  EXPECT_FALSE(acccheck::capture::this_thread_captures()) << "finish() ends the capture of its thread";
  ASSERT_NE(summary.find("written to"), std::string::npos) << summary;
  EXPECT_TRUE(loader_captures);
  EXPECT_FALSE(tool_thread_captures);
  std::set<std::string> names = entry_names(dir / "d/step0/rank/dump.json");
  EXPECT_TRUE(names.count("Aten.tanh.0.forward"));
  EXPECT_FALSE(names.count("Aten.sigmoid.0.forward"));
}

TEST(CaptureMode, StepsThatAreNotDumpedLeaveTheWriterAsleep) {
  acccheck::test::TempDir dir;
  auto o = options_in(dir);
  o.steps = acccheck::core::parse_index_selection({"1000"}, "step");
  auto& engine = CaptureEngine::instance();
  engine.configure(o);
  engine.start();
  at::Tensor x = at::ones({8});
  // The writer goes to sleep after 20 ms with nothing to do.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const long before = writer_switches();
  ASSERT_GE(before, 0) << "no acccheck-writer thread found";
  for (int i = 0; i < 100; ++i) {
    (void)at::relu(x);
    engine.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const long after = writer_switches();
  std::string summary = engine.finish();
  // Told of each step's end, it woke at once and looked at its queue every millisecond after: one
  // switch per millisecond, over a hundred here.
  EXPECT_LT(after - before, 10) << "the writer was woken for steps that are not dumped";
  EXPECT_NE(summary.find("no requested step was reached"), std::string::npos) << summary;
}

TEST(CaptureMode, TheConfiguringThreadHasARecordForEveryPlaceInTheDefaultQueue) {
  // A writer that falls steps behind (every step dumped, a slow file system) holds that many steps'
  // records: with records for only a part of the queue, the training thread made hundreds of new
  // ones a step (malloc, page faults, cold lines) and those steps took 1.2-1.8x as long
  // (bench/RESULTS.md, tenth session). They are made at set-up, on the thread that configures.
  acccheck::test::TempDir dir;
  auto o = options_in(dir);
  ASSERT_EQ(o.queue_size, 4096u) << "the default queue this test is about";
  auto& engine = CaptureEngine::instance();
  engine.configure(o);
  EXPECT_GE(acccheck::capture::DumpWriter::spare_records_ready(), o.queue_size);
  engine.finish();
}

TEST(CaptureMode, ABackwardPassLeavesTheThreadCaptured) {
  // The calls of an autograd node skip the fallback from the first on (capture_engine.cpp): the
  // engine's per-node thread-local state brings the key back for the next node and the program.
  acccheck::test::TempDir dir;
  auto& engine = CaptureEngine::instance();
  engine.configure(options_in(dir));
  engine.start();
  at::Tensor w = at::ones({4, 4}).requires_grad_();
  at::Tensor loss = at::tanh(at::mm(w, w)).sum();
  torch::autograd::backward({loss});
  EXPECT_TRUE(acccheck::capture::this_thread_captures()) << "after the backward pass";
  at::Tensor after = at::sigmoid(w.grad());
  engine.stop();
  std::string summary = engine.finish();
  ASSERT_NE(summary.find("written to"), std::string::npos) << summary;
  std::set<std::string> names = entry_names(dir / "d/step0/rank/dump.json");
  EXPECT_TRUE(names.count("Aten.mm.0.backward")) << "the gradients of a call before the pass";
  EXPECT_TRUE(names.count("Aten.sigmoid.0.forward")) << "a call after the pass";
  for (const auto& n : names) EXPECT_EQ(n.find("Aten.tanh_backward"), std::string::npos) << n;
}

TEST(CaptureMode, OperatorsOutsideEveryCategorySkipTheKeyAndTheirNestedCallsStillReachIt) {
  // aten::linear is in no category (the aten list has its t and addmm): its calls skip the key — a
  // fallthrough kernel there, so no boxing and no fallback call — while the calls it makes are
  // entries as before. A category's operator keeps reaching the fallback.
  acccheck::test::TempDir dir;
  auto& engine = CaptureEngine::instance();
  auto& dispatcher = c10::Dispatcher::singleton();
  const c10::OperatorHandle linear = dispatcher.findSchemaOrThrow("aten::linear", "");
  const c10::OperatorHandle addmm = dispatcher.findSchemaOrThrow("aten::addmm", "");
  for (int configuration = 0; configuration < 2; ++configuration) {  // a second one replaces the first's set
    engine.configure(options_in(dir));
    EXPECT_TRUE(linear.hasKernelForDispatchKey(acccheck::capture::kCaptureKey)) << "configuration " << configuration;
    EXPECT_FALSE(addmm.hasKernelForDispatchKey(acccheck::capture::kCaptureKey)) << "configuration " << configuration;
    const at::Tensor x = at::ones({2, 3}), w = at::ones({4, 3}), b = at::ones({4});
    engine.start();
    (void)at::linear(x, w, b);
    engine.stop();
    std::string summary = engine.finish();
    ASSERT_NE(summary.find("written to"), std::string::npos) << summary;
    EXPECT_EQ(entry_names(dir / "d/step0/rank/dump.json"),
              (std::set<std::string>{"Aten.t.0.forward", "Aten.addmm.0.forward"}));
    std::filesystem::remove_all(dir / "d");
  }
}

TEST(CaptureMode, PostHooksReuseTheBlocksOfTheLastBackwardPass) {
  // A post hook per forward entry with gradients, destroyed with the graph after the backward
  // pass: the next step's hooks take the freed blocks (malloc's per-thread cache holds 7 of a size;
  // a step makes hundreds).
  acccheck::test::TempDir dir;
  auto& engine = CaptureEngine::instance();
  engine.configure(options_in(dir));
  engine.start();
  at::Tensor w = at::ones({4, 4}).requires_grad_();
  auto step = [&] {
    at::Tensor h = w;
    for (int i = 0; i < 12; ++i) h = at::tanh(at::mm(h, w));
    torch::autograd::backward({h.sum()});
  };
  step();
  const std::size_t after_first = acccheck::capture::free_post_hook_blocks();
  EXPECT_GE(after_first, 25u) << "the step's 25 hooks (12 mm, 12 tanh, the sum) freed into the thread's list";
  {
    at::Tensor h = at::tanh(at::mm(w, w));  // two hooks made: two blocks taken
    EXPECT_EQ(acccheck::capture::free_post_hook_blocks(), after_first - 2);
  }
  step();
  EXPECT_EQ(acccheck::capture::free_post_hook_blocks(), after_first) << "as many kept as a step makes and frees";
  engine.stop();
  std::string summary = engine.finish();
  ASSERT_NE(summary.find("written to"), std::string::npos) << summary;
  std::set<std::string> names = entry_names(dir / "d/step0/rank/dump.json");
  EXPECT_TRUE(names.count("Aten.mm.11.backward")) << "the hooks still record the gradients";
  EXPECT_TRUE(names.count("Aten.tanh.24.backward"));
}
