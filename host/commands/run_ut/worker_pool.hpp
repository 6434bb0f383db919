// Worker processes for run_ut: one per slot, started by exec (posix_spawn — never fork a process
// whose OpenMP pool has run, libtorch-notes.md), reused across APIs, replaced when one dies. A
// worker that crashes (signal) or exceeds the time-out costs exactly the API it was running (with
// overlap, found by running the two APIs it may have been running again, each alone).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace acccheck::host {

struct WorkerSpec {
  std::string executable;      // acccheck-replay
  // The JSON configuration sent first, per worker slot (device ids are spread over the slots).
  std::function<std::string(std::size_t slot)> config_line_for;
  std::chrono::seconds timeout{60};
  std::chrono::seconds startup_timeout{120};
  // Threads each worker's BLAS/OpenMP may use (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS), unless the
  // user set those variables: cores / workers, so -n N workers do not oversubscribe the machine
  // (OpenBLAS threads spin-wait; two workers with two threads each on two cores ran 1.4x, not 2x).
  unsigned threads_per_worker = 0;  // 0: leave the environment as it is
  // The workers compare an API while the next one's operators run (run_ut --overlap): a crash may
  // then belong to either of two APIs, and both are run again "alone" to tell which.
  bool overlap = false;
};

// What came back for one job: the reply line, or why there is none.
struct JobOutcome {
  std::size_t job = 0;
  std::optional<std::string> reply;  // the worker's JSON line
  std::string failure;               // "crashed (SIGSEGV)", "timed out after 60 s"
  double seconds = 0;
};

class WorkerPool {
 public:
  // Throws std::runtime_error when the first worker cannot start or reports a fatal configuration
  // error (its message).
  WorkerPool(WorkerSpec spec, std::size_t workers);
  ~WorkerPool();

  // Runs every job (`job_line(i)` gives the line for job i, in the given order) and calls
  // `on_done` as each finishes, from this thread.
  void run(const std::vector<std::size_t>& jobs, const std::function<std::string(std::size_t)>& job_line,
           const std::function<void(const JobOutcome&)>& on_done);

  // Path of acccheck-replay: $ACCCHECK_REPLAY_WORKER, else beside the acccheck executable
  // (build tree: libexec/acccheck/; installed: ../libexec/acccheck/).
  static std::string find_executable();

 private:
  struct Worker;
  void start(Worker& w, std::size_t slot);
  void stop(Worker& w, bool kill_it);
  WorkerSpec spec_;
  std::vector<Worker> workers_;
};

}  // namespace acccheck::host
