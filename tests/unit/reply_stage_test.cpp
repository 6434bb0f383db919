// The worker's reply stage (run_ut --overlap): lines in job order whatever thread makes them, the
// job thread free as soon as it has handed a job over, the API's memory freed on the thread that
// compared it, and no wake-up of the comparison thread while jobs flow.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "reply_stage.hpp"

using acccheck::replay::ReplyStage;

namespace {

struct Written {
  std::mutex m;
  std::vector<std::string> lines;
  std::vector<std::thread::id> threads;
  void operator()(const std::string& line) {
    std::lock_guard<std::mutex> lock(m);
    lines.push_back(line);
    threads.push_back(std::this_thread::get_id());
  }
  std::size_t size() {
    std::lock_guard<std::mutex> lock(m);
    return lines.size();
  }
};

}  // namespace

TEST(ReplyStage, LinesLeaveInJobOrderWhicheverThreadMakesThem) {
  Written w;
  {
    ReplyStage stage([&](const std::string& l) { w(l); });
    for (int i = 0; i < 40; ++i) {
      // Overlapped jobs are slow, inline ones fast: an inline line must still wait for the one before.
      bool overlap = i % 3 != 2;
      stage.submit(
          [i, overlap] {
            if (overlap) std::this_thread::sleep_for(std::chrono::microseconds(300));
            return std::to_string(i);
          },
          overlap);
    }
    stage.drain();
    ASSERT_EQ(w.size(), 40u);
  }
  for (int i = 0; i < 40; ++i) EXPECT_EQ(w.lines[static_cast<std::size_t>(i)], std::to_string(i));
  EXPECT_NE(w.threads[0], std::this_thread::get_id());   // overlapped: the comparison thread wrote it
  EXPECT_EQ(w.threads[2], std::this_thread::get_id());   // inline: the job thread
}

TEST(ReplyStage, AnOverlappedJobLeavesTheJobThreadFreeAndIsFreedWhereItRan) {
  Written w;
  ReplyStage stage([&](const std::string& l) { w(l); });
  std::atomic<bool> release{false};
  std::atomic<bool> destroyed_here{false};
  struct Outputs {  // stands for the API's outputs the closure owns
    std::atomic<bool>* destroyed_here;
    std::thread::id job_thread;
    ~Outputs() { destroyed_here->store(std::this_thread::get_id() == job_thread); }
  };
  auto outputs = std::make_shared<Outputs>(Outputs{&destroyed_here, std::this_thread::get_id()});
  stage.submit(
      [&release, outputs = std::move(outputs)] {
        while (!release.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
        return std::string("late");
      },
      true);
  // submit() returned while the line is still being made.
  EXPECT_EQ(w.size(), 0u);
  release = true;
  stage.drain();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w.lines[0], "late");
  EXPECT_FALSE(destroyed_here.load());  // destroyed on the comparison thread
}

TEST(ReplyStage, JobsThatKeepComingNeverWakeTheComparisonThread) {
  Written w;
  ReplyStage stage([&](const std::string& l) { w(l); });
  for (int i = 0; i < 300; ++i) {
    stage.submit([i] { return std::to_string(i); }, true);
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // the next API's operators
  }
  stage.drain();
  EXPECT_EQ(w.size(), 300u);
  EXPECT_EQ(stage.wakeups(), 0u);
  // After a quiet spell it sleeps, and the next job wakes it once.
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  stage.submit([] { return std::string("after"); }, true);
  stage.drain();
  EXPECT_EQ(stage.wakeups(), 1u);
  EXPECT_EQ(w.lines.back(), "after");
}
