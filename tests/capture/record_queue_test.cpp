// The writer's queue around fork(): lock_when_idle() returns only once the consumer has finished
// the item it holds and waits for more, and keeps producers out until unlock_after_fork().
#include "engine/record_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using acccheck::capture::RecordQueue;
using namespace std::chrono_literals;

TEST(RecordQueueFork, LockWhenIdleWaitsForTheItemInHandAndKeepsProducersOut) {
  RecordQueue<int> q(16, 1 << 20);
  std::atomic<int> written{0};
  std::atomic<bool> in_hand{false};
  std::thread consumer([&] {
    while (auto item = q.pop()) {
      in_hand = true;
      std::this_thread::sleep_for(200ms);  // a slow write
      written += *item;
      in_hand = false;
    }
  });
  q.push(1, 0);
  q.push(2, 0);
  while (!in_hand) std::this_thread::yield();
  EXPECT_TRUE(q.lock_when_idle(10s));
  EXPECT_EQ(written.load(), 3) << "both items written before the queue counts as idle";
  EXPECT_FALSE(in_hand.load());
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.push(4, 0);
    pushed = true;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(pushed.load()) << "a producer waits while the queue is held for fork";
  q.unlock_after_fork();
  producer.join();
  EXPECT_TRUE(pushed.load());
  q.close();
  consumer.join();
  EXPECT_EQ(written.load(), 7);
}

TEST(RecordQueueFork, LockWhenIdleGivesUpAfterTheTimeoutAndStillHoldsTheLock) {
  RecordQueue<int> q(16, 1 << 20);
  std::atomic<bool> release{false}, in_hand{false};
  std::thread consumer([&] {
    while (auto item = q.pop()) {
      in_hand = true;
      while (!release) std::this_thread::sleep_for(1ms);  // a writer stuck on its disk
    }
  });
  q.push(1, 0);
  while (!in_hand) std::this_thread::yield();
  EXPECT_FALSE(q.lock_when_idle(50ms));
  q.unlock_after_fork();
  release = true;
  q.close();
  consumer.join();
}

TEST(RecordQueueFork, AnEmptyQueueOrAFinishedConsumerIsIdleAtOnce) {
  RecordQueue<int> never_used(4, 1024);
  EXPECT_TRUE(never_used.lock_when_idle(0ms));
  never_used.unlock_after_fork();
  RecordQueue<int> q(4, 1024);
  std::thread consumer([&] {
    while (q.pop()) {
    }
  });
  q.push(1, 0);
  q.close();
  consumer.join();
  EXPECT_TRUE(q.lock_when_idle(0ms));
  q.unlock_after_fork();
}
