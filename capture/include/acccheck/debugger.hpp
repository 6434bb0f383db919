// The dump SDK for LibTorch programs, shaped like msprobe's PrecisionDebugger:
//
//   acccheck::Debugger dbg("dump.yaml");  // or Debugger(DebuggerConfig{"", "dump", "statistics", "0-2"})
//   for (...) { dbg.start(); <forward, backward>; dbg.stop(); optimizer.step(); dbg.step(); }
//
// Link acccheck::capture (find_package(acccheck)). One Debugger per process; the dump is finished
// when the Debugger is destroyed (or by finish()), which prints "N entries in M steps written to …".
// This header does not include LibTorch.
#pragma once

#include <memory>
#include <string>

namespace acccheck {

struct DebuggerConfig {
  std::string config_file;  // YAML (keys as in docs/dump.md); the fields below override it
  std::string dump_path;
  std::string task;         // "statistics" (default) or "tensor"
  std::string step;         // "0,2-4"; empty: every step
};

class __attribute__((visibility("default"))) Debugger {
 public:
  explicit Debugger(const DebuggerConfig& config);
  explicit Debugger(const std::string& config_file);
  ~Debugger();
  Debugger(const Debugger&) = delete;
  Debugger& operator=(const Debugger&) = delete;

  void start();  // begin recording operator calls
  void stop();   // stop recording (gradients of recorded calls still arrive)
  void step();   // the training step is over: its files are finished, call numbers restart
  // Ends the dump and returns the summary line (also printed to stderr). Idempotent.
  std::string finish();
};

}  // namespace acccheck
