// The bounded hand-over between the threads that run operators and the writer thread. A full queue
// blocks the producer (back-pressure): memory stays bounded by the capacity in records and in
// tensor bytes, whatever the length of a step.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace acccheck::capture {

template <typename Item>
class RecordQueue {
 public:
  RecordQueue(std::size_t max_items, std::size_t max_bytes) : max_items_(max_items), max_bytes_(max_bytes) {}

  // Blocks while the queue is full; an item larger than max_bytes still goes in when it is alone.
  void push(Item item, std::size_t bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (full(bytes)) {
      ++waits_;
      not_full_.wait(lock, [&] { return !full(bytes) || closed_; });
    }
    bytes_ += bytes;
    items_.emplace_back(std::move(item), bytes);
    high_water_ = std::max(high_water_, bytes_);
    not_empty_.notify_one();
  }

  // nullopt once the queue is closed and drained.
  std::optional<Item> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    consumer_busy_ = false;  // the previous item is written and destroyed
    if (items_.empty()) idle_.notify_all();
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    consumer_busy_ = true;
    auto [item, bytes] = std::move(items_.front());
    items_.pop_front();
    bytes_ -= bytes;
    not_full_.notify_all();
    return std::move(item);
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  // Before fork(): waits (at most `timeout`) until the consumer has finished every item and waits
  // in pop(), then leaves the queue locked so nothing new reaches it. The consumer is then not
  // inside malloc or any other lock: a child must not inherit a lock held by a thread that does not
  // exist there (old sanitizer allocators have no fork handling of their own). False on timeout
  // (locked all the same). unlock_after_fork() in the parent.
  bool lock_when_idle(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
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
  const std::size_t max_items_, max_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable not_empty_, not_full_, idle_;
  std::deque<std::pair<Item, std::size_t>> items_;
  std::size_t bytes_ = 0, high_water_ = 0, waits_ = 0;
  bool closed_ = false;
  bool consumer_busy_ = false;  // the consumer holds an item it took
};

}  // namespace acccheck::capture
