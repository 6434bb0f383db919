#include "engine/python_stack.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <unordered_map>

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
  Obj (*get_attr)(Obj, const char*) = nullptr;
  const char* (*utf8)(Obj) = nullptr;
  void (*err_clear)() = nullptr;
  bool ok = false;

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
    get_attr = reinterpret_cast<Obj (*)(Obj, const char*)>(sym("PyObject_GetAttrString"));
    utf8 = reinterpret_cast<const char* (*)(Obj)>(sym("PyUnicode_AsUTF8"));
    err_clear = reinterpret_cast<void (*)()>(sym("PyErr_Clear"));
    ok = is_initialized && is_finalizing && this_thread_state && gil_ensure && gil_release && thread_frame &&
         frame_back && frame_code && frame_line && incref && decref && get_attr && utf8 && err_clear;
  }
};

// Looked up on first use, not at load: the preload library starts before the interpreter.
const PythonApi& api() {
  static const PythonApi* a = new PythonApi;
  return *a;
}

// Code object → names; accessed only with the GIL held. Never shrinks (code objects are pinned).
std::unordered_map<void*, PythonCode>& codes() {
  static auto* m = new std::unordered_map<void*, PythonCode>;
  return *m;
}

std::string text_attr(const PythonApi& py, void* obj, const char* name) {
  void* v = py.get_attr(obj, name);
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

const PythonCode* code_of(const PythonApi& py, void* code) {
  auto& m = codes();
  auto it = m.find(code);
  if (it != m.end()) return &it->second;
  py.incref(code);  // pinned: the pointer stays this code object's key
  // co_name, as the reference's traceback-based stacks print it.
  PythonCode c{text_attr(py, code, "co_filename"), text_attr(py, code, "co_name")};
  return &m.emplace(code, std::move(c)).first->second;
}

// (code object, instruction offset) → (names, line), open addressing; accessed only with the GIL
// held. Every captured stack walks the same few call sites (the training loop, the module __call__
// machinery, the model's forward), so a frame is a look at a few adjacent slots of this table:
// PyFrame_GetLineNumber walks the code's location table from its start on every call (2–3 µs for
// the module machinery's long functions), and two hash maps per frame (names, then line) were
// ~1.6 % of a dumped vit step's training-thread CPU samples (bench/RESULTS.md). Open addressing
// (up to kProbes slots from the key's own): direct-mapped, two call sites that shared a slot
// evicted each other on every call — with gpt's ~85 call sites in 4,096 slots some pair shares one
// in most runs (birthday odds), and a run that had one missed ~350 times a dumped step. A slot's
// code object is pinned by code_of, so its pointer never names another code object. Without
// PyFrame_GetLasti (before 3.11) the line is not cached, only the names.
struct FrameSlot {
  void* code = nullptr;
  int lasti = 0;
  int line = 0;
  const PythonCode* names = nullptr;
};
constexpr std::size_t kFrameSlots = 4096;  // a power of two
constexpr std::size_t kProbes = 8;

std::pair<const PythonCode*, int> frame_of(const PythonApi& py, void* frame, void* code) {
  static auto* slots = new FrameSlot[kFrameSlots];
  if (!py.frame_lasti) return {code_of(py, code), py.frame_line(frame)};
  const int lasti = py.frame_lasti(frame);
  const auto key = reinterpret_cast<std::uintptr_t>(code) ^ (static_cast<std::uintptr_t>(lasti) << 20);
  const std::size_t home = (key * 0x9E3779B97F4A7C15ull) >> 52;
  std::size_t at = home;
  for (std::size_t k = 0; k < kProbes; ++k) {
    const std::size_t i = (home + k) & (kFrameSlots - 1);
    if (slots[i].code == code && slots[i].lasti == lasti) return {slots[i].names, slots[i].line};
    if (!slots[i].code) {
      at = i;
      break;
    }
  }  // all taken by other call sites: the key's own slot is replaced
  FrameSlot& slot = slots[at];
  slot = FrameSlot{code, lasti, py.frame_line(frame), code_of(py, code)};
  return {slot.names, slot.line};
}

}  // namespace

bool python_present() { return api().ok && api().is_initialized(); }

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
