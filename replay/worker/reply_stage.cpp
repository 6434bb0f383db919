#include "reply_stage.hpp"

#include <pthread.h>

namespace acccheck::replay {

ReplyStage::~ReplyStage() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wait_until_idle(lock);
    stop_ = true;
    work_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void ReplyStage::wait_until_idle(std::unique_lock<std::mutex>& lock) {
  while (slot_ || busy_) {
    waiting_ = true;
    done_.wait(lock);
  }
}

void ReplyStage::submit(MakeLine make, bool overlap) {
  std::unique_lock<std::mutex> lock(mutex_);
  wait_until_idle(lock);
  if (!overlap) {
    lock.unlock();
    write_(make());
    return;
  }
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { loop(); });
    pthread_setname_np(thread_.native_handle(), "acccheck-compare");
  }
  slot_ = std::move(make);
  if (asleep_) {
    ++wakeups_;
    work_.notify_one();
  }
}

void ReplyStage::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  wait_until_idle(lock);
}

std::size_t ReplyStage::wakeups() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return wakeups_;
}

void ReplyStage::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const auto quiet_since = std::chrono::steady_clock::now();
    while (!slot_ && !stop_) {
      if (std::chrono::steady_clock::now() - quiet_since >= kSleepAfter) {
        asleep_ = true;
        work_.wait(lock, [&] { return slot_ || stop_; });
        asleep_ = false;
        break;
      }
      lock.unlock();
      std::this_thread::sleep_for(kNap);
      lock.lock();
    }
    if (!slot_) return;  // stopped
    MakeLine make = std::move(slot_);
    slot_ = nullptr;
    busy_ = true;
    lock.unlock();
    write_(make());
    make = nullptr;  // the API's outputs are freed here, not on the job thread
    lock.lock();
    busy_ = false;
    if (waiting_) {
      waiting_ = false;
      done_.notify_all();
    }
  }
}

}  // namespace acccheck::replay
