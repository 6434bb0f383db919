// A CPython 3.11 thread's frames read straight from the interpreter's own frame records
// (_PyInterpreterFrame), as profilers such as py-spy do. Why: the C API (PyThreadState_GetFrame,
// PyFrame_GetBack) makes a frame object for every frame it hands out — for the short-lived frames
// of the module machinery, a frame object made, tracked and freed on every captured call — and
// needs the GIL, which the binding released while the operator runs. Here a frame is three loads,
// and the walk of the calling thread's own stack needs no lock (only that thread changes it, and it
// is inside the call being captured). The layout is CPython's internal one: only 3.11 (the same in
// every 3.11 release), and python_stack checks it against the C API's walk before it trusts it.
// Pure C++: no Python headers, no torch.
#pragma once

#include <string_view>

namespace acccheck::capture {

// Whether `py_version_hex` (Py_Version) is a CPython whose layout this file describes: 3.11.x.
bool interpreter_frames_readable(unsigned long py_version_hex);

// The thread's innermost frame that has started (PyThreadState_GetFrame's choice: a frame still in
// its prologue is skipped), or nullptr; `thread_state` is a PyThreadState*.
const void* innermost_interpreter_frame(const void* thread_state);
// The next started frame out from `frame` (PyFrame_GetBack's choice), or nullptr.
const void* outer_interpreter_frame(const void* frame);
// The frame's code object (a PyCodeObject*, held by the frame).
void* interpreter_frame_code(const void* frame);
// Bytes into the code of the instruction being run: PyFrame_GetLasti's answer (-1 before the first).
int interpreter_frame_offset(const void* frame);

// A code object's own fields (borrowed references): what python_stack keeps of a code object met on
// this path, read on the writer thread later (code objects and their strings are immutable).
struct InterpreterCodeFields {
  const void* filename = nullptr;    // co_filename (str)
  const void* name = nullptr;        // co_name (str)
  const void* line_table = nullptr;  // co_linetable (bytes)
  int first_line = 0;                // co_firstlineno
};
InterpreterCodeFields interpreter_code_fields(const void* code);
// Any object's type (ob_type), to check a field holds the type it should.
const void* python_object_type(const void* object);
// The text of a str that keeps its characters as ASCII inline (compact, ready — nearly every file
// and function name), or false: its UTF-8 is only to be had from the C API.
bool compact_ascii_text(const void* str, std::string_view& text);
// The contents of a bytes object.
std::string_view bytes_contents(const void* bytes);

// The offsets used, named for the tests, which build frames of this shape by hand.
namespace cpython311 {
constexpr unsigned kThreadStateCFrame = 56;   // PyThreadState.cframe (a _PyCFrame*)
constexpr unsigned kCFrameCurrent = 8;        // _PyCFrame.current_frame
constexpr unsigned kFrameCode = 32;           // _PyInterpreterFrame.f_code
constexpr unsigned kFramePrevious = 48;       // _PyInterpreterFrame.previous
constexpr unsigned kFramePrevInstr = 56;      // _PyInterpreterFrame.prev_instr (a _Py_CODEUNIT*)
constexpr unsigned kFrameOwner = 69;          // _PyInterpreterFrame.owner (char)
constexpr char kOwnedByGenerator = 1;         // FRAME_OWNED_BY_GENERATOR
constexpr unsigned kObjectType = 8;           // PyObject.ob_type
constexpr unsigned kCodeFirstLine = 72;       // PyCodeObject.co_firstlineno (int)
constexpr unsigned kCodeFilename = 112;       // PyCodeObject.co_filename
constexpr unsigned kCodeName = 120;           // PyCodeObject.co_name
constexpr unsigned kCodeLineTable = 136;      // PyCodeObject.co_linetable
constexpr unsigned kCodeFirstTraceable = 168; // PyCodeObject._co_firsttraceable (int, code units)
constexpr unsigned kCodeAdaptive = 184;       // PyCodeObject.co_code_adaptive (the instructions)
constexpr unsigned kCodeUnit = 2;             // sizeof(_Py_CODEUNIT)
constexpr unsigned kStrLength = 16;           // PyASCIIObject.length
constexpr unsigned kStrState = 32;            // PyASCIIObject.state: interned:2 kind:3 compact:1 ascii:1 ready:1
constexpr unsigned char kStrStateMask = 0xFC; // all but `interned`
constexpr unsigned char kStrCompactAscii = 0xE4;  // kind 1 (one byte a character), compact, ascii, ready
constexpr unsigned kStrAsciiData = 48;        // sizeof(PyASCIIObject): a compact ASCII str's characters
constexpr unsigned kBytesSize = 16;           // PyVarObject.ob_size
constexpr unsigned kBytesData = 32;           // PyBytesObject.ob_sval
}  // namespace cpython311

}  // namespace acccheck::capture
