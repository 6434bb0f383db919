// C++ call stacks for stack.json. The hot path only stores raw return addresses (an unwind, no
// symbol lookup: libunwind's cached walk where the system has it, else Boost.Stacktrace's); each
// distinct stack is turned into msprobe-style lines once, on the writer thread, with
// Boost.Stacktrace (function, file:line where debug info exists).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/python_stack.hpp"

namespace acccheck::capture {

struct RawStack {
  const PythonFrames* interned_python = nullptr;  // instead of `python`: an interned stack's frames
  std::vector<void*> frames;  // innermost first
  PythonFrames python;        // innermost first; when present, these are the call's stack
  const PythonFrames& python_frames() const { return interned_python ? *interned_python : python; }
  std::uint64_t hash() const;
};

// Return addresses of the calling thread into `frames`, innermost first (at most `max_frames`). Into
// the caller's vector: a recycled record's keeps its memory (no allocation per call).
constexpr std::size_t kRawStackFrames = 48;
void capture_raw_stack(std::vector<void*>& frames, std::size_t max_frames = kRawStackFrames);
// Loads the unwinder capture_raw_stack uses, so the first capture does not (the engine's set-up).
void prepare_stack_capture();
// Which walk capture_raw_stack takes: "libunwind" or "boost".
const char* stack_walker();

// Lines in msprobe's form. Python frames when the call came from Python: "File /src/train.py,
// line 9, in train_step, \n loss = model(x)". Otherwise C++ frames, innermost user frame first, frames of LibTorch, acccheck and the C/C++
// runtime left out:  "File /src/train.cpp, line 42, in train_step(Net&), \n out = net(x);"
// `full`: symbolised; otherwise "File libfoo.so+0x1a2b, line 0, in ??, \n " (resolve later with
// addr2line -e libfoo.so 0x1a2b). An empty result becomes "The call stack retrieval failed.".
std::vector<std::string> describe_stack(const RawStack& stack, bool full);

}  // namespace acccheck::capture
