// Python frames for stack.json when the program is a Python interpreter running PyTorch
// (`acccheck dump -- python3 train.py`). Nothing links libpython: the C API entry points are looked
// up with dlsym once, and everything is skipped when they are absent.
//
// The binding releases the GIL while an operator runs, so the frames are read after taking it back
// (PyGILState_Ensure) — only on threads Python knows (a thread state exists), never while the
// interpreter is finalizing, and only for forward calls (backward runs on autograd's threads).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace acccheck::capture {

// One code object's names, read once (the code object is kept alive, so the entry stays valid).
struct PythonCode {
  std::string file, name;  // co_filename, co_name
};

using PythonFrames = std::vector<std::pair<const PythonCode*, int>>;  // innermost first, with line

// Frames of the calling thread's Python stack into `frames`, innermost first (at most `max_frames`);
// empty when this is not a Python process, the thread has no Python state, or the interpreter is
// going away. Into the caller's vector: a recycled record's keeps its memory.
constexpr std::size_t kPythonStackFrames = 32;
void capture_python_stack(PythonFrames& frames, std::size_t max_frames = kPythonStackFrames);
bool python_present();

}  // namespace acccheck::capture
