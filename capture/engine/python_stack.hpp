// Python frames for stack.json when the program is a Python interpreter running PyTorch
// (`acccheck dump -- python3 train.py`). Nothing links libpython: the C API entry points are looked
// up with dlsym once, and everything is skipped when they are absent.
//
// Frames are read only on threads Python knows (a thread state exists), never while the interpreter
// is finalizing, and only for forward calls (backward runs on autograd's threads). On CPython 3.11
// they are read from the interpreter's frame records (interpreter_frames.hpp) without the GIL once
// the first stack has checked out against the C API's walk; otherwise through the C API, with the
// GIL taken back (PyGILState_Ensure: the binding releases it while an operator runs).
// ACCCHECK_PYTHON_FRAMES=auto|interpreter|api chooses (docs/dump.md).
#pragma once

#include <atomic>
#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "engine/python_line_table.hpp"

namespace acccheck::capture {

// One code object's names and line table, taken once (the code object is kept alive, so the entry
// stays valid). Either read at once through the C API (copies: the writer thread reads them without
// the GIL), or — where the interpreter's frame records are read (CPython 3.11) — kept as the code's
// own immutable objects, pinned, and read on first use, on the writer thread: the training thread
// then meets a new code object for a few loads, not three attribute look-ups and copies (~1.7 µs).
class PythonCode {
 public:
  // Read now.
  void set_names(std::string file, std::string name);
  void set_line_table(int first_line, std::string table);
  // Kept: str, str and bytes objects that stay alive and unchanged (compact ASCII strs).
  void keep(const void* file, const void* name, const void* line_table, int first_line);

  bool has_line_table() const { return has_line_table_; }
  // Any thread, once the entry is shared.
  const std::string& file() const;  // co_filename
  const std::string& name() const;  // co_name
  // The line of the instruction at `offset` (-1 without a table); the table is decoded on first use.
  int line_at(int offset) const;

 private:
  void complete() const;  // once: kept objects → text, the table decoded

  mutable std::string file_, name_;
  int first_line_ = 0;            // co_firstlineno
  std::string line_table_;        // a copy of co_linetable, where read now and readable
  bool has_line_table_ = false;
  const void* kept_[3] = {nullptr, nullptr, nullptr};  // file, name, line table objects, where kept
  mutable std::once_flag completed_;
  mutable PythonLineTable lines_;
};

// A frame of a captured stack. Where the code's line table can be read, only the instruction offset
// is taken on the training thread and the line is found later, on the writer thread; otherwise the
// line is taken with the frame (PyFrame_GetLineNumber).
struct PythonFrame {
  static constexpr int kLineFromTable = INT_MIN;
  const PythonCode* code = nullptr;
  int offset = -1;                 // PyFrame_GetLasti: bytes into the code
  int line = kLineFromTable;       // known already, or kLineFromTable
  int line_number() const { return line != kLineFromTable ? line : code->line_at(offset); }
};

using PythonFrames = std::vector<PythonFrame>;  // innermost first

// The calling thread's Python stack, innermost first (at most kPythonStackFrames frames); none when
// this is not a Python process, the thread has no Python state, or the interpreter is going away.
// Where frames are read from the interpreter's records, the stack comes interned: the same stack
// (the same code objects at the same instructions) gives the same frames, made on the first meeting
// and kept, unchanged, for the process's life — returned, for a record to hold the pointer (any
// thread reads the frames once it has been handed it), with `frames` left empty. Otherwise (the C
// API's walk, or no room for the stack) null, and the frames are in `frames`: into the caller's
// vector, so that a recycled record's keeps its memory.
constexpr std::size_t kPythonStackFrames = 32;
const PythonFrames* capture_python_stack(PythonFrames& frames);
// Reads the calling thread's Python frames and drops them: the frame table learns the call sites
// (code object, instruction offset → names and line: a code object's names and line table are read
// with the GIL held the first time), and the table of stacks its stacks, outside a dumped step.
// Any thread.
void learn_python_call_sites();
// Looks up Python's C API and makes the frame table now, when the process already has an interpreter
// (the engine's set-up), so the first dumped step does not.
void prepare_python_stack();
namespace detail {
// True until the frame source is decided, or no longer tried here: tested inline by the caller, so
// an undumped step's calls make no function call once it is settled.
inline std::atomic<bool> frame_source_open{true};
void choose_python_frame_source_now();
}  // namespace detail
// Decides, once, how this process's frames are read (the interpreter's records or the C API), from
// a forward call of a step that is not dumped: the check against the C API's walk is then not in
// the first dumped step. Any thread; one relaxed load once settled.
inline void choose_python_frame_source() {
  if (detail::frame_source_open.load(std::memory_order_relaxed)) detail::choose_python_frame_source_now();
}

}  // namespace acccheck::capture
