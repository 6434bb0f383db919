#include "engine/python_stack.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <unordered_map>

#include "engine/python_line_table.hpp"

namespace acccheck::capture {

namespace {

// The few C API functions used, as opaque pointers (CPython 3.9+ ABI, all exported by libpython or
// by a statically linked interpreter such as Debian's /usr/bin/python3).
struct PythonApi {
  using Obj = void*;
  int (*is_initialized)() = nullptr;
  int (*is_finalizing)() = nullptr;
  Obj (*this_thread_state)() = nullptr;
  int (*gil_ensure)() = nullptr;
  void (*gil_release)(int) = nullptr;
  Obj (*thread_frame)(Obj) = nullptr;
  Obj (*frame_back)(Obj) = nullptr;
  Obj (*frame_code)(Obj) = nullptr;
  int (*frame_line)(Obj) = nullptr;
  int (*frame_lasti)(Obj) = nullptr;  // 3.11+ (optional): the instruction offset, a cache key for the line
  void (*incref)(Obj) = nullptr;
  void (*decref)(Obj) = nullptr;
  Obj (*get_attr)(Obj, Obj) = nullptr;
  Obj (*intern)(const char*) = nullptr;
  const char* (*utf8)(Obj) = nullptr;
  void (*err_clear)() = nullptr;
  // For reading line tables ourselves (python_line_table.hpp): 3.11+ only (Py_Version is 3.11's).
  const unsigned long* version = nullptr;
  char* (*bytes_data)(Obj) = nullptr;
  long (*bytes_size)(Obj) = nullptr;  // Py_ssize_t
  int (*code_line)(Obj, int) = nullptr;  // PyCode_Addr2Line: at offset -1, co_firstlineno
  bool ok = false;
  bool reads_line_tables = false;

  PythonApi() {
    auto sym = [](const char* name) { return ::dlsym(RTLD_DEFAULT, name); };
    is_initialized = reinterpret_cast<int (*)()>(sym("Py_IsInitialized"));
    is_finalizing = reinterpret_cast<int (*)()>(sym("Py_IsFinalizing"));
    if (!is_finalizing) is_finalizing = reinterpret_cast<int (*)()>(sym("_Py_IsFinalizing"));
    this_thread_state = reinterpret_cast<Obj (*)()>(sym("PyGILState_GetThisThreadState"));
    gil_ensure = reinterpret_cast<int (*)()>(sym("PyGILState_Ensure"));
    gil_release = reinterpret_cast<void (*)(int)>(sym("PyGILState_Release"));
    thread_frame = reinterpret_cast<Obj (*)(Obj)>(sym("PyThreadState_GetFrame"));
    frame_back = reinterpret_cast<Obj (*)(Obj)>(sym("PyFrame_GetBack"));
    frame_code = reinterpret_cast<Obj (*)(Obj)>(sym("PyFrame_GetCode"));
    frame_line = reinterpret_cast<int (*)(Obj)>(sym("PyFrame_GetLineNumber"));
    frame_lasti = reinterpret_cast<int (*)(Obj)>(sym("PyFrame_GetLasti"));
    incref = reinterpret_cast<void (*)(Obj)>(sym("Py_IncRef"));
    decref = reinterpret_cast<void (*)(Obj)>(sym("Py_DecRef"));
    get_attr = reinterpret_cast<Obj (*)(Obj, Obj)>(sym("PyObject_GetAttr"));
    intern = reinterpret_cast<Obj (*)(const char*)>(sym("PyUnicode_InternFromString"));
    utf8 = reinterpret_cast<const char* (*)(Obj)>(sym("PyUnicode_AsUTF8"));
    err_clear = reinterpret_cast<void (*)()>(sym("PyErr_Clear"));
    version = static_cast<const unsigned long*>(sym("Py_Version"));
    bytes_data = reinterpret_cast<char* (*)(Obj)>(sym("PyBytes_AsString"));
    bytes_size = reinterpret_cast<long (*)(Obj)>(sym("PyBytes_Size"));
    code_line = reinterpret_cast<int (*)(Obj, int)>(sym("PyCode_Addr2Line"));
    ok = is_initialized && is_finalizing && this_thread_state && gil_ensure && gil_release && thread_frame &&
         frame_back && frame_code && frame_line && incref && decref && get_attr && intern && utf8 && err_clear;
    reads_line_tables = ok && frame_lasti && version && python_line_table_readable(*version) && bytes_data &&
                        bytes_size && code_line;
  }
};

// Looked up once: at the engine's set-up where the process holds an interpreter's symbols already
// (prepare_python_stack; the preload library starts before the interpreter runs, not before it is
// loaded), else on the first captured call (a program that loads Python later).
const PythonApi& api() {
  static const PythonApi* a = new PythonApi;
  return *a;
}

// Code object → names and line table; accessed only with the GIL held. Never shrinks (code objects
// are pinned). A node map: the entries do not move, records point to them.
std::unordered_map<void*, PythonCode>& codes() {
  static auto* m = new std::unordered_map<void*, PythonCode>;
  return *m;
}

// The attribute names code_of reads, made once (with the GIL held) and kept: PyObject_GetAttrString
// would make and free a string per read.
struct CodeAttributes {
  void* filename;
  void* name;
  void* linetable;
};
const CodeAttributes& code_attributes(const PythonApi& py) {
  static const CodeAttributes a = [&py] {
    CodeAttributes made{py.intern("co_filename"), py.intern("co_name"), py.intern("co_linetable")};
    if (!made.filename || !made.name || !made.linetable) py.err_clear();  // those read as "?" / no table
    return made;
  }();
  return a;
}

std::string text_attr(const PythonApi& py, void* obj, void* name) {
  void* v = name ? py.get_attr(obj, name) : nullptr;
  if (!v) {
    py.err_clear();
    return "?";
  }
  const char* s = py.utf8(v);
  std::string out = s ? s : "?";
  if (!s) py.err_clear();
  py.decref(v);
  return out;
}

// co_firstlineno and a copy of co_linetable into `c`; false (and no Python error left) if either
// cannot be read.
bool read_line_table(const PythonApi& py, void* code, void* attribute, PythonCode& c) {
  const int first_line = py.code_line(code, -1);
  const char* data = nullptr;
  long size = -1;
  if (void* v = attribute ? py.get_attr(code, attribute) : nullptr) {
    data = py.bytes_data(v);
    if (data) size = py.bytes_size(v);
    if (data && size >= 0) c.line_table.assign(data, static_cast<std::size_t>(size));
    py.decref(v);  // the code object holds the table: `data` was read while it lived
  }
  if (first_line < 0 || !data || size < 0) {
    py.err_clear();
    c.line_table.clear();
    return false;
  }
  c.first_line = first_line;
  return true;
}

const PythonCode* code_of(const PythonApi& py, void* code) {
  auto [it, added] = codes().try_emplace(code);
  PythonCode& c = it->second;
  if (!added) return &c;
  py.incref(code);  // pinned: the pointer stays this code object's key
  const CodeAttributes& attr = code_attributes(py);
  // co_name, as the reference's traceback-based stacks print it.
  c.file = text_attr(py, code, attr.filename);
  c.name = text_attr(py, code, attr.name);
  c.has_line_table = py.reads_line_tables && read_line_table(py, code, attr.linetable, c);
  return &c;
}

// (code object, instruction offset) → names (and the line, where the code's table cannot be read
// later), open addressing; accessed only with the GIL held. Every captured stack walks the same few
// call sites (the training loop, the module __call__ machinery, the model's forward), so a frame is
// a look at a few adjacent slots of this table: two hash maps per frame (names, then line) were
// ~1.6 % of a dumped vit step's training-thread CPU samples (bench/RESULTS.md). Open addressing (up
// to kProbes slots from the key's own): direct-mapped, two call sites that shared a slot evicted
// each other on every call — with gpt's ~85 call sites in 4,096 slots some pair shares one in most
// runs (birthday odds), and a run that had one missed ~350 times a dumped step. A slot's code object
// is pinned by code_of, so its pointer never names another code object. Without PyFrame_GetLasti
// (before 3.11) nothing is cached but the names.
struct FrameSlot {
  void* code = nullptr;
  int lasti = 0;
  int line = 0;
  const PythonCode* names = nullptr;
};
constexpr std::size_t kFrameSlots = 4096;  // a power of two
constexpr std::size_t kProbes = 8;

FrameSlot* frame_slots() {
  static auto* slots = new FrameSlot[kFrameSlots];
  return slots;
}

PythonFrame frame_of(const PythonApi& py, void* frame, void* code) {
  if (!py.frame_lasti) return PythonFrame{code_of(py, code), -1, py.frame_line(frame)};
  FrameSlot* slots = frame_slots();
  const int lasti = py.frame_lasti(frame);
  const auto key = reinterpret_cast<std::uintptr_t>(code) ^ (static_cast<std::uintptr_t>(lasti) << 20);
  const std::size_t home = (key * 0x9E3779B97F4A7C15ull) >> 52;
  std::size_t at = home;
  for (std::size_t k = 0; k < kProbes; ++k) {
    const std::size_t i = (home + k) & (kFrameSlots - 1);
    if (slots[i].code == code && slots[i].lasti == lasti) return PythonFrame{slots[i].names, lasti, slots[i].line};
    if (!slots[i].code) {
      at = i;
      break;
    }
  }  // all taken by other call sites: the key's own slot is replaced
  const PythonCode* names = code_of(py, code);
  // The line from the table on the writer thread; CPython's own walk of it (PyFrame_GetLineNumber)
  // only where we cannot read the table.
  const int line = names->has_line_table ? PythonFrame::kLineFromTable : py.frame_line(frame);
  slots[at] = FrameSlot{code, lasti, line, names};
  return PythonFrame{names, lasti, line};
}

}  // namespace

int PythonCode::line_at(int offset) const {
  if (!has_line_table) return -1;
  std::call_once(decoded_, [this] { lines_ = PythonLineTable(line_table, first_line); });
  return lines_.line_at(offset);
}

void prepare_python_stack() {
  // Only a process that has an interpreter now: a program without one, or one that loads it later,
  // looks the API up on its first captured call, as before.
  if (!::dlsym(RTLD_DEFAULT, "Py_IsInitialized")) return;
  (void)api();
  (void)frame_slots();
}

void capture_python_stack(PythonFrames& frames, std::size_t max_frames) {
  frames.clear();
  const PythonApi& py = api();
  if (!py.ok || !py.is_initialized() || py.is_finalizing() || !py.this_thread_state()) return;
  int gil = py.gil_ensure();
  void* frame = py.thread_frame(py.this_thread_state());
  while (frame && frames.size() < max_frames) {
    void* code = py.frame_code(frame);
    if (code) {
      frames.push_back(frame_of(py, frame, code));
      py.decref(code);
    }
    void* back = py.frame_back(frame);
    py.decref(frame);
    frame = back;
  }
  if (frame) py.decref(frame);
  py.gil_release(gil);
}

}  // namespace acccheck::capture
