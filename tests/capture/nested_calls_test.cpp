// While a dump records, an entry's nested calls skip RecordFunction from the first of them on
// (capture_engine.cpp, nested_calls_off): the entries are still the outermost calls, RecordFunction
// is on again after every call — one that threw included — and a program's own RecordFunction
// callback still sees the outermost calls (and the first call nested in each, which finds the
// switch still on).
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <acccheck/json.hpp>

#include "engine/capture_engine.hpp"
#include "support/test_support.hpp"

using acccheck::capture::CaptureEngine;

namespace {
thread_local std::set<std::string> t_seen;  // what the program's own callback saw on this thread
}

TEST(NestedCalls, EntriesStayOutermostAndRecordFunctionIsOnAgainAfterEachCall) {
  acccheck::test::TempDir dir;
  acccheck::host::DumpOptions o;
  o.dump_path = dir / "d";
  o.stack = acccheck::host::StackMode::off;
  o.plugin_dirs = {ACCCHECK_PLUGIN_DIR};
  auto& engine = CaptureEngine::instance();
  engine.configure(o);
  auto own = at::addThreadLocalCallback(at::RecordFunctionCallback([](const at::RecordFunction& fn) {
    t_seen.insert(fn.name());
    return std::unique_ptr<at::ObserverContext>();
  }).scopes({at::RecordScope::FUNCTION}));
  // A composite call with several nested calls (batched matmul: views, a matrix product, a view
  // back), before the dump starts: the program's callback sees them all.
  at::Tensor batch = at::ones({2, 4, 4});
  (void)at::matmul(batch, at::ones({4, 4}));
  std::set<std::string> matmul_alone = t_seen;
  t_seen.clear();
  ASSERT_GT(matmul_alone.size(), 2u) << "the test needs a call with more than one nested call";
  engine.start();

  at::Tensor a = at::ones({4, 4});
  at::Tensor b = at::addmm(a, a, a);  // nested: mm-like kernels, resize, empty
  EXPECT_TRUE(at::isRecordFunctionEnabled()) << "on again after an entry's call";
  at::Tensor c = at::relu(b);
  EXPECT_TRUE(at::isRecordFunctionEnabled());
  EXPECT_THROW((void)at::mm(at::ones({2, 3}), at::ones({2, 3})), c10::Error);
  EXPECT_TRUE(at::isRecordFunctionEnabled()) << "on again after a call that threw";
  std::set<std::string> before = t_seen;
  t_seen.clear();
  at::Tensor d = at::matmul(batch, a);  // composite: its nested calls as above
  std::set<std::string> around_matmul = t_seen;
  t_seen.insert(before.begin(), before.end());
  EXPECT_TRUE(at::isRecordFunctionEnabled());
  at::removeCallback(own);
  engine.stop();
  std::string summary = engine.finish();
  ASSERT_NE(summary.find("written to"), std::string::npos) << summary;

  EXPECT_TRUE(t_seen.count("aten::addmm"));
  EXPECT_TRUE(t_seen.count("aten::relu"));
  EXPECT_EQ(around_matmul.size(), 2u) << "the entry and its first nested call only: the rest skip RecordFunction";
  EXPECT_TRUE(around_matmul.count("aten::matmul"));
  for (const auto& name : around_matmul) EXPECT_TRUE(matmul_alone.count(name)) << name;

  std::ifstream in(dir / "d/step0/rank/dump.json");
  std::stringstream text;
  text << in.rdbuf();
  acccheck::Json dump = acccheck::parse_json(text.str(), "dump.json");
  std::set<std::string> names;
  for (const auto& m : dump.find("data")->members()) names.insert(m.first);
  EXPECT_TRUE(names.count("Aten.addmm.0.forward"));
  EXPECT_TRUE(names.count("Aten.relu.0.forward"));
  EXPECT_TRUE(names.count("Aten.matmul.0.forward"));
  EXPECT_FALSE(names.count("Aten.mm.0.forward")) << "neither the call that threw nor matmul's nested mm is an entry";
}
