// The writer's queue: around fork(), lock_when_idle() returns only once the consumer has finished
// the items it holds and waits for more, and keeps producers out until unlock_after_fork(); items
// reach a consumer that is not woken for each of them; retired items die on the producer's thread.
// And the records a thread is given before the writer hands any back.
#include "engine/record_queue.hpp"

#include "engine/dump_writer.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

using acccheck::capture::RecordQueue;
using namespace std::chrono_literals;

TEST(RecordQueueFork, LockWhenIdleWaitsForTheItemInHandAndKeepsProducersOut) {
  RecordQueue<int> q(16, 1 << 20);
  std::atomic<int> written{0};
  std::atomic<bool> in_hand{false};
  std::thread consumer([&] {
    std::vector<int> batch;
    while (q.pop_all(batch)) {
      in_hand = true;
      std::this_thread::sleep_for(200ms);  // a slow write
      for (int item : batch) written += item;
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
    std::vector<int> batch;
    while (q.pop_all(batch)) {
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
    std::vector<int> batch;
    while (q.pop_all(batch)) {
    }
  });
  q.push(1, 0);
  q.close();
  consumer.join();
  EXPECT_TRUE(q.lock_when_idle(0ms));
  q.unlock_after_fork();
}

// The producer does not wake the consumer per item, yet an item never waits long: a lone item is
// taken at the napping consumer's next look, and a later one (after the consumer went to sleep at
// the end of a quiet spell) wakes it.
TEST(RecordQueueBatching, ALoneItemIsDeliveredWithoutABatchAndALaterOneWakesASleepingConsumer) {
  RecordQueue<int> q(256, 1 << 20);
  std::atomic<int> got{0};
  std::thread consumer([&] {
    std::vector<int> batch;
    while (q.pop_all(batch))
      for (int item : batch) got += item;
  });
  q.push(1, 0);
  auto t0 = std::chrono::steady_clock::now();
  while (got.load() != 1 && std::chrono::steady_clock::now() - t0 < 10s) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(got.load(), 1);
  std::this_thread::sleep_for(100ms);  // well past the quiet spell: the consumer sleeps until woken
  const std::size_t wakeups_before = q.consumer_wakeups();
  q.push(2, 0);
  EXPECT_EQ(q.consumer_wakeups(), wakeups_before + 1);
  t0 = std::chrono::steady_clock::now();
  while (got.load() != 3 && std::chrono::steady_clock::now() - t0 < 10s) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(got.load(), 3);
  q.close();
  consumer.join();
}

// A steady stream of items (one every 20 µs for 0.1 s, faster than the consumer's quiet spell)
// costs the producer no wake-up once the consumer is awake: it naps and looks.
TEST(RecordQueueBatching, AProducerThatKeepsPushingNeverWakesTheConsumer) {
  RecordQueue<int> q(1 << 16, 1 << 20);
  std::atomic<long> got{0};
  std::thread consumer([&] {
    std::vector<int> batch;
    while (q.pop_all(batch))
      for (int item : batch) got += item;
  });
  q.push(1, 0);  // may wake the consumer, which may be asleep already
  const std::size_t first = q.consumer_wakeups();
  EXPECT_LE(first, 1u);
  for (int i = 0; i < 5000; ++i) {
    q.push(1, 0);
    std::this_thread::sleep_for(20us);
  }
  // Zero here; a few allowed for a machine that stalls the producer past the quiet spell (the old
  // wake-per-32-items rule made 156).
  EXPECT_LE(q.consumer_wakeups(), first + 5);
  auto t0 = std::chrono::steady_clock::now();
  while (got.load() != 5001 && std::chrono::steady_clock::now() - t0 < 10s) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(got.load(), 5001);
  q.close();
  consumer.join();
}

// Items pushed faster than the consumer takes them arrive together: one pop_all for many pushes.
TEST(RecordQueueBatching, ItemsQueuedMeanwhileArriveInOneBatch) {
  RecordQueue<int> q(256, 1 << 20);
  std::atomic<bool> first_in_hand{false}, release{false};
  std::vector<std::size_t> sizes;
  std::thread consumer([&] {
    std::vector<int> batch;
    while (q.pop_all(batch)) {
      sizes.push_back(batch.size());
      first_in_hand = true;
      while (!release) std::this_thread::sleep_for(1ms);
    }
  });
  q.push(0, 0);
  while (!first_in_hand) std::this_thread::yield();
  for (int i = 1; i <= 100; ++i) q.push(i, 0);
  release = true;
  q.close();
  consumer.join();
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0], 1u);
  EXPECT_EQ(sizes[1], 100u);
}

// What the consumer retires is destroyed by the producer's next push, on the producer's thread.
namespace {
std::atomic<int> g_destroyed_elsewhere{0}, g_destroyed_here{0};
std::thread::id g_producer;
struct Tracked {
  bool live = true;
  Tracked() = default;
  Tracked(Tracked&& o) noexcept : live(o.live) { o.live = false; }
  Tracked& operator=(Tracked&& o) noexcept {
    live = o.live;
    o.live = false;
    return *this;
  }
  ~Tracked() {
    if (!live) return;
    if (std::this_thread::get_id() == g_producer) ++g_destroyed_here;
    else ++g_destroyed_elsewhere;
  }
};
}  // namespace

TEST(RecordQueueBatching, RetiredItemsAreDestroyedOnTheProducersThread) {
  g_producer = std::this_thread::get_id();
  RecordQueue<Tracked> q(256, 1 << 20);
  std::atomic<int> retired{0};
  std::thread consumer([&] {
    std::vector<Tracked> batch;
    while (q.pop_all(batch)) {
      int n = static_cast<int>(batch.size());
      q.retire(batch);
      EXPECT_TRUE(batch.empty());
      retired += n;
    }
  });
  for (int i = 0; i < 10; ++i) q.push(Tracked{}, 0);
  auto t0 = std::chrono::steady_clock::now();
  while (retired.load() != 10 && std::chrono::steady_clock::now() - t0 < 10s) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(retired.load(), 10);
  EXPECT_EQ(g_destroyed_here.load() + g_destroyed_elsewhere.load(), 0) << "retired, not yet destroyed";
  q.push(Tracked{}, 0);  // destroys the ten retired ones
  EXPECT_EQ(g_destroyed_here.load(), 10);
  EXPECT_EQ(g_destroyed_elsewhere.load(), 0);
  q.close();
  consumer.join();
}

TEST(RecordQueueBatching, RetiredItemsCanComeBackToTheProducerForReuse) {
  RecordQueue<std::vector<int>> q(256, 1 << 20);
  std::atomic<int> retired{0};
  std::thread consumer([&] {
    std::vector<std::vector<int>> batch;
    while (q.pop_all(batch)) {
      int n = static_cast<int>(batch.size());
      q.retire(batch);
      retired += n;
    }
  });
  std::vector<std::vector<int>> reuse;
  for (int i = 0; i < 3; ++i) q.push(std::vector<int>(100, i), 0, &reuse);
  auto t0 = std::chrono::steady_clock::now();
  while (retired.load() != 3 && std::chrono::steady_clock::now() - t0 < 10s) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(retired.load(), 3);
  q.push(std::vector<int>{}, 0, &reuse);  // hands the three back, in queue order, their memory intact
  ASSERT_EQ(reuse.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(reuse[i].size(), 100u);
    EXPECT_EQ(reuse[i].front(), i);
  }
  q.close();
  consumer.join();
}

// Records prepared at set-up (DumpWriter::prepare_spare_records) are what the thread's first calls
// get: empty, with room for a typical call's values, dimensions and both kinds of stack — the values
// and dimensions inside the record itself, which starts a cache line (captured_record.hpp).
TEST(SpareRecords, PreparedRecordsServeTheFirstCallsOfTheirThread) {
  using acccheck::capture::DumpWriter;
  std::thread fresh([] {  // a thread with no spare records yet
    EXPECT_EQ(DumpWriter::spare_records_ready(), 0u);
    DumpWriter::prepare_spare_records(3);
    DumpWriter::prepare_spare_records(2);  // tops up: still 3
    EXPECT_EQ(DumpWriter::spare_records_ready(), 3u);
    for (int k = 0; k < 3; ++k) {
      std::unique_ptr<acccheck::capture::CapturedRecord> owned = DumpWriter::spare_record();
      const acccheck::capture::CapturedRecord& r = *owned;
      EXPECT_TRUE(r.values.empty() && r.dims.empty() && r.stack.frames.empty() && r.stack.python.empty());
      EXPECT_EQ(r.values.capacity(), acccheck::capture::kInlineValues);
      EXPECT_EQ(r.dims.capacity(), acccheck::capture::kInlineDims);
      auto inside = [&r](const void* p) {
        auto* b = reinterpret_cast<const char*>(&r);
        return p >= b && p < b + sizeof r;
      };
      EXPECT_TRUE(inside(r.values.data()) && inside(r.dims.data()));
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&r) % 64, 0u);
      EXPECT_GE(r.stack.python.capacity(), acccheck::capture::kPythonStackFrames);
      EXPECT_GE(r.stack.frames.capacity(), acccheck::capture::kRawStackFrames + 1);
    }
    EXPECT_EQ(DumpWriter::spare_records_ready(), 0u);
  });
  fresh.join();
}

// A record the writer hands back is emptied when it is taken again (not when it comes back: a
// batch of cold records cleared at once): whatever the call before left in it — values, dimensions,
// an interned stack, its call — the record a call gets is empty, and it is one the writer had.
TEST(SpareRecords, ARecordTheWriterHandsBackIsEmptyWhenTakenAgain) {
  namespace cap = acccheck::capture;
  acccheck::test::TempDir dir;
  std::thread fresh([&] {  // a thread with no spare records yet: each push below makes a new one
    acccheck::core::DumpOptions options;
    options.dump_path = dir / "d";
    options.stack = acccheck::core::StackMode::off;
    cap::DumpWriter writer(options, "rank", [](const std::string& what) { ADD_FAILURE() << what; });
    cap::OpInfo op;
    op.op_name = "aten::relu";
    op.api_name = "Aten.relu";
    op.kept = true;
    const cap::PythonFrames interned;  // stands for an interned stack's frames
    std::set<const cap::CapturedRecord*> pushed;
    // Records retired by the writer come back at a later push.
    for (int call = 0; call < 200 && cap::DumpWriter::spare_records_ready() == 0; ++call) {
      std::unique_ptr<cap::CapturedRecord> r = cap::DumpWriter::spare_record();
      pushed.insert(r.get());
      r->op = &op;
      r->call = call + 1;
      r->stack.interned_python = &interned;
      cap::FlatValue& v = r->values.emplace_back();
      v.kind = cap::FlatValue::Kind::tensor;
      v.section = cap::Section::outputs;
      v.count = 2;
      r->dims.append({3, 4});
      writer.push(std::move(r));
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_GE(cap::DumpWriter::spare_records_ready(), 1u) << "the writer handed a record back";
    std::unique_ptr<cap::CapturedRecord> again = cap::DumpWriter::spare_record();
    EXPECT_EQ(pushed.count(again.get()), 1u) << "a record the writer had";
    EXPECT_TRUE(again->values.empty() && again->dims.empty());
    EXPECT_EQ(again->stack.interned_python, nullptr);
    EXPECT_EQ(again->op, nullptr);
    EXPECT_EQ(again->call, 0);
    EXPECT_FALSE(again->side_used);
    writer.end_step(0);
    writer.finish();
  });
  fresh.join();
}
