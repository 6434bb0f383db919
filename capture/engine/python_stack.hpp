// Python frames for stack.json when the program is a Python interpreter running PyTorch
// (`acccheck dump -- python3 train.py`). Nothing links libpython: the C API entry points are looked
// up with dlsym once, and everything is skipped when they are absent.
//
// The binding releases the GIL while an operator runs, so the frames are read after taking it back
// (PyGILState_Ensure) — only on threads Python knows (a thread state exists), never while the
// interpreter is finalizing, and only for forward calls (backward runs on autograd's threads).
#pragma once

#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "engine/python_line_table.hpp"

namespace acccheck::capture {

// One code object's names and line table, read once (the code object is kept alive, so the entry
// stays valid). The table is our own copy: the writer thread decodes it without the GIL.
struct PythonCode {
  std::string file, name;  // co_filename, co_name
  int first_line = 0;      // co_firstlineno
  std::string line_table;  // co_linetable, where python_line_table_readable; else empty
  bool has_line_table = false;

  // The line of the instruction at `offset`; the table is decoded on first use (any thread).
  int line_at(int offset) const;

 private:
  mutable std::once_flag decoded_;
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

// Frames of the calling thread's Python stack into `frames`, innermost first (at most `max_frames`);
// empty when this is not a Python process, the thread has no Python state, or the interpreter is
// going away. Into the caller's vector: a recycled record's keeps its memory.
constexpr std::size_t kPythonStackFrames = 32;
void capture_python_stack(PythonFrames& frames, std::size_t max_frames = kPythonStackFrames);
// Looks up Python's C API and makes the frame table now, when the process already has an interpreter
// (the engine's set-up), so the first dumped step does not.
void prepare_python_stack();

}  // namespace acccheck::capture
