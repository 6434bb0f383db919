// Raw C++ stacks (capture/engine/call_stack.hpp): libunwind's cached walk, where the system has it,
// gives the addresses Boost.Stacktrace's walk gives, and a stack described in full names the
// calling function.
#include <gtest/gtest.h>

#include <boost/stacktrace.hpp>

#include <string>
#include <vector>

#include "engine/call_stack.hpp"

using acccheck::capture::RawStack;

namespace {

// Both walks from one function: their first address differs (two call sites in here), the callers'
// must not.
__attribute__((noinline)) void walk_both(RawStack& ours, std::vector<void*>& boost_frames) {
  acccheck::capture::capture_raw_stack(ours.frames);
  boost_frames.resize(48);
  std::size_t n = boost::stacktrace::safe_dump_to(0, boost_frames.data(), boost_frames.size() * sizeof(void*));
  boost_frames.resize(n);
  asm volatile("");  // keeps the calls above from being tail calls
}

__attribute__((noinline)) void a_caller_of_the_walks(RawStack& ours, std::vector<void*>& boost_frames, int depth) {
  if (depth > 0) return a_caller_of_the_walks(ours, boost_frames, depth - 1);
  walk_both(ours, boost_frames);
  asm volatile("");
}

}  // namespace

TEST(CallStack, TheCachedWalkGivesBoostsAddresses) {
  acccheck::capture::prepare_stack_capture();
  if (std::string(acccheck::capture::stack_walker()) != "libunwind")
    GTEST_SKIP() << "no libunwind.so.8 here: the engine walks with Boost alone";
  for (int round = 0; round < 3; ++round) {  // the first walk fills libunwind's cache, the others read it
    RawStack ours;
    std::vector<void*> boost_frames;
    a_caller_of_the_walks(ours, boost_frames, 4);
    ASSERT_GT(ours.frames.size(), 6u);
    // safe_dump_to(0, ...) starts in walk_both, as capture_raw_stack's frames do (its own left out).
    std::vector<void*> ours_callers(ours.frames.begin() + 1, ours.frames.end());
    std::vector<void*> boost_callers(boost_frames.begin() + 1, boost_frames.end());
    while (!boost_callers.empty() && !boost_callers.back()) boost_callers.pop_back();  // Boost's end mark
    EXPECT_EQ(ours_callers, boost_callers) << "round " << round;
  }
}

TEST(CallStack, AFullDescriptionNamesTheCaller) {
  RawStack ours;
  std::vector<void*> unused;
  a_caller_of_the_walks(ours, unused, 0);
  std::vector<std::string> lines = acccheck::capture::describe_stack(ours, true);
  bool named = false;
  for (const auto& l : lines) named = named || l.find("a_caller_of_the_walks") != std::string::npos;
  EXPECT_TRUE(named) << (lines.empty() ? "" : lines.front());
}
