// The dump engine: one per process. A dispatcher fallback on a mode key (capture_mode.hpp) sees the
// outermost calls of the threads it captures, keeps those of a hook plugin's category, records
// their arguments, outputs and (through a post hook on their autograd node) gradients, and hands
// the records to the writer thread. Reached through the SDK
// (acccheck::Debugger), the preload library (`acccheck dump -- PROG`) and the TorchScript runner.
#pragma once

#include <cstddef>
#include <string>

#include "config/dump_options.hpp"

namespace acccheck::capture {

class CaptureEngine {
 public:
  static CaptureEngine& instance();

  // Loads the hook plugins and opens the writer. Throws std::runtime_error with one clear line;
  // a second configure() without finish() is refused.
  void configure(core::DumpOptions options);
  bool configured() const;
  // Where a followed child process (exec'd or forked) dumps: <dump_path>/child-<its pid>.
  static std::string child_dump_path(const std::string& dump_path);
  void start();
  void stop();
  void step();  // the current step is over: its files are finished, counters restart
  // Ends the dump (idempotent): finishes the files and returns the summary line
  // ("N entries in M steps written to DIR" or why nothing was written).
  std::string finish();
  bool finished() const;
  // The process is about to die (crash signal, _exit): let the writer write what is queued (at
  // most `timeout_ms`), lock-free. Only in the process that configured the engine (not after fork).
  void drain_before_death(long timeout_ms);
  // Finishes the dump if this process configured it (false after a fork: the writer thread does
  // not exist in a child).
  bool owned_by_this_process() const;
  // Ends the dump and the program (exit_after_last_step).
  [[noreturn]] void finish_and_exit(const std::string& why);
};

// A backward pass begins on the calling thread (autograd's Engine::execute, interposed by the
// preload library: preload/backward_pass_hook.cpp). It counts for the step rule at once; the
// result says whether the pass's own calls are to skip the capture fallback — true unless
// --capture-backward-ops: they are looked at only for that rule, and each call through the
// fallback costs the boxing of its arguments and results (~0.4 µs; a third of a small step's
// calls are a backward pass's). Where nothing interposes it (the SDK, run-model), the pass's first
// calls still reach the fallback, and the rule sees the pass there.
bool backward_pass_starts();
// The pass begun by this thread's backward_pass_starts has ended (returned or thrown): the end of
// its outermost pass ends the thread's pause, if it was paused (a step that is not dumped:
// on_operator pauses the thread that runs the backward passes from the call after a step's start
// until then, capture_mode.hpp).
void backward_pass_ended();

// The blocks of post hooks (one per forward entry with gradients, destroyed with its autograd graph
// after the backward pass) freed on the calling thread and kept there for its next ones.
std::size_t free_post_hook_blocks();

}  // namespace acccheck::capture
