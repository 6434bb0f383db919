// The worker's last stage: each job's reply line is made (for a replayed API: its comparison) and
// written in job order, either on the job thread or on the comparison thread while the job thread
// goes on to the next API's operators (run_ut --overlap). At most one job waits in the stage: the
// job thread hands over the next only once the previous line is written, so the worker holds at
// most two APIs' outputs, and a reply never overtakes an earlier one.
//
// Handing over costs the job thread no wake-up while jobs flow: like the dump's writer
// (capture/engine/record_queue.hpp), the comparison thread naps between looks and sleeps on the
// condition variable only after a quiet spell. Torch-free.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace acccheck::replay {

class ReplyStage {
 public:
  using MakeLine = std::function<std::string()>;
  explicit ReplyStage(std::function<void(const std::string&)> write) : write_(std::move(write)) {}
  ~ReplyStage();  // drains, then ends the thread

  // Makes and writes the line after every earlier one: on the comparison thread when `overlap`
  // (this returns once the previous line is written), here otherwise. `make` runs on one thread
  // and is destroyed on it.
  void submit(MakeLine make, bool overlap);
  // Returns when every submitted line is written.
  void drain();

  // Times the job thread had to wake the comparison thread (it had gone to sleep).
  std::size_t wakeups() const;

 private:
  void loop();
  void wait_until_idle(std::unique_lock<std::mutex>& lock);

  static constexpr std::chrono::microseconds kNap{100};
  static constexpr std::chrono::milliseconds kSleepAfter{20};
  std::function<void(const std::string&)> write_;
  mutable std::mutex mutex_;
  std::condition_variable work_, done_;
  MakeLine slot_;            // handed over, not taken yet
  bool busy_ = false;        // the thread is making / writing a line
  bool asleep_ = false;      // it waits on work_ (after kSleepAfter of nothing), not napping
  bool waiting_ = false;     // the job thread waits on done_
  bool stop_ = false;
  std::size_t wakeups_ = 0;
  std::thread thread_;       // started by the first overlapped job
};

}  // namespace acccheck::replay
