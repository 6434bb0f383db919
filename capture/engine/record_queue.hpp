// The bounded hand-over between the threads that run operators and the writer thread. A full queue
// blocks the producer (back-pressure): memory stays bounded by the capacity in records and in
// tensor bytes, whatever the length of a step.
//
// Waking the consumer costs the producer a system call and an inter-processor wake-up (measured on
// this project's VM: ~25 µs, more than capturing several small operators' records). So while
// records flow, the consumer never waits on the condition variable: having emptied the queue it
// naps (kNap) and looks again, and a producer finds nobody to wake. Only after kSleepAfter with
// nothing to do does it go to sleep for good, and then the next push wakes it (once per quiet
// spell). An item waits at most about kNap before the consumer takes it, so drain() (which polls)
// still sees everything within milliseconds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace acccheck::capture {

template <typename Item>
class RecordQueue {
 public:
  RecordQueue(std::size_t max_items, std::size_t max_bytes) : max_items_(max_items), max_bytes_(max_bytes) {}

  // Blocks while the queue is full; an item larger than max_bytes still goes in when it is alone.
  // The items the consumer retired since the last push go to `reuse` (for the producer to recycle)
  // or, without it, are destroyed outside the lock.
  void push(Item item, std::size_t bytes, std::vector<Item>* reuse = nullptr) {
    std::vector<Item> retired;
    std::unique_lock<std::mutex> lock(mutex_);
    retired.swap(retired_);
    if (reuse) {
      if (reuse->empty()) reuse->swap(retired);
      else for (auto& r : retired) reuse->push_back(std::move(r));
      // The emptied vector goes back with its memory: the consumer's next retire() hands it to the
      // consumer as its next batch, and pop_all() to the pushes as their queue. Destroyed here, it
      // left every vector in the cycle to start empty, and the pushes grew the queue anew each batch.
      retired.clear();
      retired_.swap(retired);
    }
    if (full(bytes)) {
      ++waits_;
      if (consumer_asleep_) wake_consumer();
      not_full_.wait(lock, [&] { return !full(bytes) || closed_; });
    }
    bytes_ += bytes;
    items_.push_back(std::move(item));
    high_water_ = std::max(high_water_, bytes_);
    if (consumer_asleep_) wake_consumer();
  }

  // Items the consumer is done with go back to be destroyed by the next push, on the producer's
  // thread: their memory came from the producer's malloc arena, and freeing it on the consumer's
  // thread takes that arena's lock against the producer's own allocations (measured: the training
  // thread spent 7 % of its time in futex calls of malloc's arena lock). Leaves `done` empty.
  void retire(std::vector<Item>& done) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (retired_.empty()) retired_.swap(done);
    for (auto& item : done) retired_.push_back(std::move(item));
    done.clear();
  }

  // Moves every queued item to `out` (one lock for a batch); false once the queue is closed and
  // drained. Blocks while it is empty.
  bool pop_all(std::vector<Item>& out) {
    out.clear();
    std::unique_lock<std::mutex> lock(mutex_);
    consumer_busy_ = false;  // the previous batch is written and retired
    auto ready = [&] { return !items_.empty() || closed_; };
    if (items_.empty()) {
      idle_.notify_all();
      const auto quiet_since = std::chrono::steady_clock::now();
      while (!ready()) {
        if (std::chrono::steady_clock::now() - quiet_since >= kSleepAfter) {
          consumer_asleep_ = true;
          not_empty_.wait(lock, ready);
          consumer_asleep_ = false;
          break;
        }
        lock.unlock();
        std::this_thread::sleep_for(kNap);
        lock.lock();
      }
    }
    if (items_.empty()) return false;
    consumer_busy_ = true;
    out.swap(items_);  // the emptied batch's memory serves the next pushes
    bytes_ = 0;
    not_full_.notify_all();
    return true;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  // Times a producer had to wake the consumer (it had gone to sleep after a quiet spell).
  std::size_t consumer_wakeups() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return wakeups_;
  }

  // Before fork(): waits (at most `timeout`) until the consumer has finished every item and waits
  // in pop_all(), then leaves the queue locked so nothing new reaches it. The consumer is then not
  // inside malloc or any other lock: a child must not inherit a lock held by a thread that does not
  // exist there (old sanitizer allocators have no fork handling of their own). False on timeout
  // (locked all the same). unlock_after_fork() in the parent.
  bool lock_when_idle(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (consumer_asleep_) wake_consumer();  // a napping one takes what is queued at its next look
    bool idle = idle_.wait_for(lock, timeout, [&] { return items_.empty() && !consumer_busy_; });
    lock.release();
    return idle;
  }
  void unlock_after_fork() { mutex_.unlock(); }

  std::size_t producer_waits() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return waits_;
  }
  std::size_t high_water_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return high_water_;
  }

 private:
  bool full(std::size_t bytes) const {
    if (items_.empty()) return false;
    return items_.size() >= max_items_ || bytes_ + bytes > max_bytes_;
  }
  void wake_consumer() {  // with the lock held
    ++wakeups_;
    not_empty_.notify_one();
  }
  static constexpr std::chrono::microseconds kNap{1000};
  static constexpr std::chrono::milliseconds kSleepAfter{20};
  const std::size_t max_items_, max_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable not_empty_, not_full_, idle_;
  // A vector, not a deque: the batch changes hands whole (pop_all swaps), so no memory goes from the
  // producer's thread to the consumer's per item (a deque allocated a node every two records on
  // the producer's thread and freed it on the consumer's).
  std::vector<Item> items_;
  std::vector<Item> retired_;
  std::size_t bytes_ = 0, high_water_ = 0, waits_ = 0, wakeups_ = 0;
  bool closed_ = false;
  bool consumer_busy_ = false;   // the consumer holds an item it took
  bool consumer_asleep_ = false;  // it waits on not_empty_ (after kSleepAfter of nothing), not napping
};

}  // namespace acccheck::capture
