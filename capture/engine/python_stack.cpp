#include "engine/python_stack.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "engine/interpreter_frames.hpp"
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
  // For keeping a code object's own strings (interpreter_frames.hpp): their types, to check them.
  const void* str_type = nullptr;
  const void* bytes_type = nullptr;
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
    str_type = sym("PyUnicode_Type");
    bytes_type = sym("PyBytes_Type");
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
  std::string table;
  if (void* v = attribute ? py.get_attr(code, attribute) : nullptr) {
    data = py.bytes_data(v);
    if (data) size = py.bytes_size(v);
    if (data && size >= 0) table.assign(data, static_cast<std::size_t>(size));
    py.decref(v);  // the code object holds the table: `data` was read while it lived
  }
  if (first_line < 0 || !data || size < 0) {
    py.err_clear();
    return false;
  }
  c.set_line_table(first_line, std::move(table));
  return true;
}

// The code object's own name, file and table objects kept in `c` (the interpreter-frame path,
// whose layout was checked, interpreter_frames_refusal): false where a name is not compact ASCII
// or a field not of its type — those are read through the C API.
bool keep_code_fields(const PythonApi& py, void* code, PythonCode& c) {
  const InterpreterCodeFields f = interpreter_code_fields(code);
  std::string_view text;
  if (!f.filename || !f.name || !f.line_table || f.first_line < 0 || !py.str_type || !py.bytes_type ||
      python_object_type(f.filename) != py.str_type || python_object_type(f.name) != py.str_type ||
      python_object_type(f.line_table) != py.bytes_type || !compact_ascii_text(f.filename, text) ||
      !compact_ascii_text(f.name, text))
    return false;
  for (const void* o : {f.filename, f.name, f.line_table}) py.incref(const_cast<void*>(o));  // never released
  c.keep(f.filename, f.name, f.line_table, f.first_line);
  return true;
}

// `keep`: the interpreter-frame path may keep the code's own objects (keep_code_fields).
const PythonCode* code_of(const PythonApi& py, void* code, bool keep = false) {
  auto [it, added] = codes().try_emplace(code);
  PythonCode& c = it->second;
  if (!added) return &c;
  py.incref(code);  // pinned: the pointer stays this code object's key
  if (keep && py.reads_line_tables && keep_code_fields(py, code, c)) return &c;
  const CodeAttributes& attr = code_attributes(py);
  // co_name, as the reference's traceback-based stacks print it.
  c.set_names(text_attr(py, code, attr.filename), text_attr(py, code, attr.name));
  if (py.reads_line_tables) read_line_table(py, code, attr.linetable, c);
  return &c;
}

// (code object, instruction offset) → names and line (kLineFromTable where the writer finds it in
// the code's table), open addressing. Every captured stack walks the same few call sites (the
// training loop, the module __call__ machinery, the model's forward), so a frame is a look at a few
// adjacent slots of this table: two hash maps per frame (names, then line) were ~1.6 % of a dumped
// vit step's training-thread CPU samples (bench/RESULTS.md). Open addressing (up to kProbes slots
// from the key's own): direct-mapped, two call sites that shared a slot evicted each other on every
// call — with gpt's ~85 call sites in 4,096 slots some pair shares one in most runs (birthday odds),
// and a run that had one missed ~350 times a dumped step. An entry is written once, with the GIL
// held, and published whole: the interpreter-frame walk reads the table without the GIL. A call
// site met when its neighbourhood is full is not cached (the table stays bounded). An entry's code
// object is pinned by code_of, so its pointer never names another code object. Without
// PyFrame_GetLasti (before 3.11) nothing is cached but the names.
struct FrameEntry {
  void* code;
  int lasti;
  int line;
  const PythonCode* names;
};
constexpr std::size_t kFrameSlots = 4096;  // a power of two
constexpr std::size_t kProbes = 8;

std::atomic<const FrameEntry*>* frame_slots() {
  static auto* slots = new std::atomic<const FrameEntry*>[kFrameSlots]();
  return slots;
}

std::size_t home_slot(void* code, int lasti) {
  const auto key = reinterpret_cast<std::uintptr_t>(code) ^ (static_cast<std::uintptr_t>(lasti) << 20);
  return (key * 0x9E3779B97F4A7C15ull) >> 52;
}

// Lock-free: any thread, GIL or not.
const FrameEntry* cached_frame(void* code, int lasti) {
  std::atomic<const FrameEntry*>* slots = frame_slots();
  const std::size_t home = home_slot(code, lasti);
  for (std::size_t k = 0; k < kProbes; ++k) {
    const FrameEntry* e = slots[(home + k) & (kFrameSlots - 1)].load(std::memory_order_acquire);
    if (!e) return nullptr;
    if (e->code == code && e->lasti == lasti) return e;
  }
  return nullptr;
}

// With the GIL held (code_of, and one writer at a time). `line_of` gives the line where the code's
// table cannot be read later.
template <typename LineOf>
PythonFrame new_frame(const PythonApi& py, void* code, int lasti, bool keep, LineOf line_of) {
  const PythonCode* names = code_of(py, code, keep);
  // The line from the table on the writer thread; CPython's own walk of it only where we cannot
  // read the table.
  const int line = names->has_line_table() ? PythonFrame::kLineFromTable : line_of();
  std::atomic<const FrameEntry*>* slots = frame_slots();
  const std::size_t home = home_slot(code, lasti);
  for (std::size_t k = 0; k < kProbes; ++k) {
    std::atomic<const FrameEntry*>& slot = slots[(home + k) & (kFrameSlots - 1)];
    const FrameEntry* e = slot.load(std::memory_order_relaxed);
    if (e && e->code == code && e->lasti == lasti) break;  // cached by another thread meanwhile
    if (!e) {
      slot.store(new FrameEntry{code, lasti, line, names}, std::memory_order_release);
      break;
    }
  }
  return PythonFrame{names, lasti, line};
}

// The C API's walk (GIL held): PyThreadState_GetFrame, then PyFrame_GetBack, innermost first.
// `visit(frame, code)` (code may be null) says whether to go on; the references are dropped here.
template <typename Visit>
void for_each_api_frame(const PythonApi& py, void* thread, Visit visit) {
  void* frame = py.thread_frame(thread);
  bool more = true;
  while (frame && more) {
    void* code = py.frame_code(frame);
    more = visit(frame, code);
    if (code) py.decref(code);
    void* back = py.frame_back(frame);
    py.decref(frame);
    frame = back;
  }
  if (frame) py.decref(frame);
}

void read_api_frames(const PythonApi& py, void* thread, PythonFrames& frames) {
  for_each_api_frame(py, thread, [&](void* frame, void* code) {
    if (!code) return true;
    if (!py.frame_lasti) {
      frames.push_back(PythonFrame{code_of(py, code), -1, py.frame_line(frame)});
    } else {
      const int lasti = py.frame_lasti(frame);
      const FrameEntry* e = cached_frame(code, lasti);
      frames.push_back(e ? PythonFrame{e->names, lasti, e->line}
                         : new_frame(py, code, lasti, false, [&] { return py.frame_line(frame); }));
    }
    return frames.size() < kPythonStackFrames;
  });
}

// The GIL, taken when first needed (hold) and given back at the end of the scope.
class Gil {
 public:
  explicit Gil(const PythonApi& py) : py_(py) {}
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;
  ~Gil() {
    if (held_) py_.gil_release(state_);
  }
  void hold() {
    if (held_) return;
    state_ = py_.gil_ensure();
    held_ = true;
  }

 private:
  const PythonApi& py_;
  int state_ = 0;
  bool held_ = false;
};

// The interpreter's own frame records (interpreter_frames.hpp), without the GIL while every call
// site is in the table. Only the calling thread changes its own frames, and it is here.
void read_interpreter_frames(const PythonApi& py, const void* thread, PythonFrames& frames) {
  Gil gil(py);  // only if a frame needs it: a call site met for the first time
  for (const void* f = innermost_interpreter_frame(thread); f && frames.size() < kPythonStackFrames;
       f = outer_interpreter_frame(f)) {
    void* code = interpreter_frame_code(f);
    const int lasti = interpreter_frame_offset(f);
    if (const FrameEntry* e = cached_frame(code, lasti)) {
      frames.push_back(PythonFrame{e->names, lasti, e->line});
      continue;
    }
    gil.hold();
    frames.push_back(new_frame(py, code, lasti, true, [&] { return py.code_line(code, lasti); }));
  }
}

// Whether the code object's fields read by offset are the objects its attributes give (GIL held),
// and its file name's text is what PyUnicode_AsUTF8 gives, where compact_ascii_text reads it.
bool code_fields_agree(const PythonApi& py, void* code) {
  const InterpreterCodeFields fields = interpreter_code_fields(code);
  const CodeAttributes& attr = code_attributes(py);
  bool agree = fields.first_line == py.code_line(code, -1);
  const std::pair<void*, const void*> pairs[] = {
      {attr.filename, fields.filename}, {attr.name, fields.name}, {attr.linetable, fields.line_table}};
  for (const auto& [name, field] : pairs) {
    void* v = name ? py.get_attr(code, name) : nullptr;
    if (!v) {
      py.err_clear();
      return false;
    }
    agree = agree && v == field;
    if (agree && name == attr.filename) {
      std::string_view text;
      const char* utf8 = py.utf8(v);
      if (!utf8) py.err_clear();
      if (compact_ascii_text(field, text)) agree = utf8 && text == utf8;
    }
    py.decref(v);
  }
  return agree;
}

// How frames are read: decided on the first captured call that has Python frames.
enum class FrameSource { undecided, interpreter, api };
std::atomic<FrameSource> g_frame_source{FrameSource::undecided};

// Why the interpreter's frame records cannot be read here, or "" if they can: they are trusted only
// where the C API's walk of the same stack finds the same code objects and instruction offsets
// (GIL held). An empty stack decides nothing yet (`undecided` stays).
std::string interpreter_frames_refusal(const PythonApi& py, void* thread, bool& undecided) {
  undecided = false;
  if (!py.reads_line_tables) return "a Python without Py_Version or PyFrame_GetLasti (before 3.11)";
  if (!interpreter_frames_readable(*py.version)) {
    char version[32];
    std::snprintf(version, sizeof version, "%lu.%lu", *py.version >> 24, (*py.version >> 16) & 0xFF);
    return std::string("CPython ") + version + " (only 3.11's frame layout is known)";
  }
  const void* f = innermost_interpreter_frame(thread);
  std::size_t compared = 0;
  std::string why;
  for_each_api_frame(py, thread, [&](void* frame, void* code) {
    if (!f) {
      why = "the interpreter's frames end before the C API's";
    } else if (code != interpreter_frame_code(f) || py.frame_lasti(frame) != interpreter_frame_offset(f)) {
      why = "frame " + std::to_string(compared) + " differs from the C API's";
    } else if (!code_fields_agree(py, code)) {
      why = "the code object of frame " + std::to_string(compared) + " differs from the C API's";
    } else {
      ++compared;
      f = outer_interpreter_frame(f);
    }
    return why.empty();
  });
  if (why.empty() && f) why = "the interpreter's frames go on past the C API's";
  undecided = why.empty() && compared == 0;
  return why;
}

void settle_frame_source(FrameSource source) {
  g_frame_source.store(source);
  detail::frame_source_open.store(false, std::memory_order_relaxed);
}

// Once (GIL held): a no-op when decided already, by this thread or another before it took the GIL.
void decide_frame_source(const PythonApi& py, void* thread) {
  if (g_frame_source.load(std::memory_order_relaxed) != FrameSource::undecided) return;
  // ACCCHECK_PYTHON_FRAMES: auto (the default: the interpreter's records where they check out),
  // interpreter (the same, and say so if they cannot be read), api (the C API's walk only).
  const char* env = std::getenv("ACCCHECK_PYTHON_FRAMES");
  const std::string wanted = env ? env : "auto";
  if (wanted == "api") {
    settle_frame_source(FrameSource::api);
    return;
  }
  bool undecided = false;
  const std::string why = interpreter_frames_refusal(py, thread, undecided);
  if (undecided) return;
  if (wanted != "auto" && wanted != "interpreter")  // said once: this is the one decision
    std::cerr << "acccheck dump: ACCCHECK_PYTHON_FRAMES=" << wanted << ": expected auto, interpreter or api; auto is used\n";
  if (why.empty()) {
    settle_frame_source(FrameSource::interpreter);
    return;
  }
  if (wanted == "interpreter")
    std::cerr << "acccheck dump: ACCCHECK_PYTHON_FRAMES=interpreter: the interpreter's frames are not read here: "
              << why << "; Python frames are read through the C API\n";
  settle_frame_source(FrameSource::api);
}

}  // namespace

void PythonCode::set_names(std::string file, std::string name) {
  file_ = std::move(file);
  name_ = std::move(name);
}

void PythonCode::set_line_table(int first_line, std::string table) {
  first_line_ = first_line;
  line_table_ = std::move(table);
  has_line_table_ = true;
}

void PythonCode::keep(const void* file, const void* name, const void* line_table, int first_line) {
  kept_[0] = file;
  kept_[1] = name;
  kept_[2] = line_table;
  first_line_ = first_line;
  has_line_table_ = true;
}

void PythonCode::complete() const {
  std::call_once(completed_, [this] {
    if (kept_[0]) {  // kept objects are compact ASCII strs and a bytes object, checked when kept
      std::string_view text;
      if (compact_ascii_text(kept_[0], text)) file_.assign(text);
      if (compact_ascii_text(kept_[1], text)) name_.assign(text);
      lines_ = PythonLineTable(bytes_contents(kept_[2]), first_line_);  // decoded in place: no copy
    } else if (has_line_table_) {
      lines_ = PythonLineTable(line_table_, first_line_);
    }
  });
}

const std::string& PythonCode::file() const {
  complete();
  return file_;
}

const std::string& PythonCode::name() const {
  complete();
  return name_;
}

int PythonCode::line_at(int offset) const {
  if (!has_line_table_) return -1;
  complete();
  return lines_.line_at(offset);
}

namespace {
// Set by prepare_python_stack: the process had an interpreter's symbols at the engine's set-up.
std::atomic<bool> g_python_at_setup{false};
}  // namespace

void prepare_python_stack() {
  // Only a process that has an interpreter now: a program without one, or one that loads it later,
  // looks the API up on its first captured call, as before.
  if (!::dlsym(RTLD_DEFAULT, "Py_IsInitialized")) return;
  (void)api();
  (void)frame_slots();
  g_python_at_setup.store(true);
}

namespace detail {
void choose_python_frame_source_now() {
  // Not a Python process at set-up: the API is not looked up here, where a program that loads
  // Python later would be left with a look-up made before it did (its first dumped call decides).
  // A few tries only: calls from a thread without Python frames decide nothing, and a step that is
  // not dumped should not take the GIL on every call (the first dumped call decides then).
  if (!g_python_at_setup.load(std::memory_order_relaxed)) {
    frame_source_open.store(false, std::memory_order_relaxed);
    return;
  }
  const PythonApi& py = api();
  if (!py.ok || !py.is_initialized() || py.is_finalizing()) return;
  void* thread = py.this_thread_state();
  if (!thread) return;
  static std::atomic<int> tries{0};
  if (tries.fetch_add(1, std::memory_order_relaxed) >= 16) {
    frame_source_open.store(false, std::memory_order_relaxed);
    return;
  }
  Gil gil(py);
  gil.hold();
  decide_frame_source(py, thread);
}
}  // namespace detail

namespace {

// Where the interpreter's records are read, a stack is looked up whole before its frames are: a
// dumped step meets the same few stacks over and over (gpt: ~165 forward entries a step from ~85
// call sites; an optimizer calls add_ from one line for every parameter), and resolving each frame
// (a probe of the call-site table) and copying it into the record (16 bytes a frame, into memory
// the writer thread last held) is then done once per stack, not once per call. The walk takes each
// frame's code object and instruction offset and hashes them; a stack met before is found by the
// hash, and the record holds a pointer to its frames. The frames are a function of that sequence (a
// call site's names and line never change: its code object is pinned, its entry written once).
// Identified by the 64-bit hash alone, as the writer groups stacks by theirs: two different stacks
// among the few thousand a process meets share one with odds below 10^-12. Like the call sites'
// table: open addressing, lock-free, an entry written once and published whole, never freed (a
// record in the writer's queue may point to it), at most kStackSlots of them; a stack met when its
// neighbourhood is full is copied into the record as before.
struct InternedStack {
  std::uint64_t hash;
  PythonFrames frames;
};
constexpr std::size_t kStackSlots = 8192;  // a power of two
constexpr std::size_t kStackProbes = 8;

std::atomic<const InternedStack*>* stack_slots() {
  static auto* slots = new std::atomic<const InternedStack*>[kStackSlots]();
  return slots;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

// The hash of the calling thread's stack as read_interpreter_frames walks it, and its depth.
std::uint64_t walk_hash(const void* thread, std::size_t& depth) {
  std::uint64_t h = 0x243F6A8885A308D3ull;
  depth = 0;
  for (const void* f = innermost_interpreter_frame(thread); f && depth < kPythonStackFrames; f = outer_interpreter_frame(f)) {
    h = mix(h, reinterpret_cast<std::uintptr_t>(interpreter_frame_code(f)));
    h = mix(h, static_cast<std::uint64_t>(static_cast<std::uint32_t>(interpreter_frame_offset(f))));
    ++depth;
  }
  return mix(h, depth);
}

// The stack interned (null: not — no frames, a full neighbourhood —, `frames` then holds it).
const PythonFrames* interned_interpreter_frames(const PythonApi& py, const void* thread, PythonFrames& frames) {
  std::size_t depth = 0;
  const std::uint64_t h = walk_hash(thread, depth);
  if (depth == 0) return nullptr;
  std::atomic<const InternedStack*>* slots = stack_slots();
  std::size_t k = 0;
  for (; k < kStackProbes; ++k) {
    const InternedStack* e = slots[(h + k) & (kStackSlots - 1)].load(std::memory_order_acquire);
    if (!e) break;
    if (e->hash == h) return &e->frames;
  }
  read_interpreter_frames(py, thread, frames);
  if (k == kStackProbes || frames.size() != depth) return nullptr;
  auto* made = new InternedStack{h, frames};
  for (; k < kStackProbes; ++k) {
    const InternedStack* expected = nullptr;
    std::atomic<const InternedStack*>& slot = slots[(h + k) & (kStackSlots - 1)];
    if (slot.compare_exchange_strong(expected, made, std::memory_order_acq_rel)) break;
    if (expected->hash == h) {  // interned by another thread meanwhile
      delete made;
      frames.clear();
      return &expected->frames;
    }
  }
  if (k == kStackProbes) {
    delete made;
    return nullptr;
  }
  frames.clear();
  return &made->frames;
}

}  // namespace

const PythonFrames* capture_python_stack(PythonFrames& frames) {
  frames.clear();
  const PythonApi& py = api();
  if (!py.ok || !py.is_initialized() || py.is_finalizing()) return nullptr;
  void* thread = py.this_thread_state();
  if (!thread) return nullptr;
  if (g_frame_source.load(std::memory_order_acquire) == FrameSource::interpreter)
    return interned_interpreter_frames(py, thread, frames);
  Gil gil(py);
  gil.hold();
  decide_frame_source(py, thread);
  read_api_frames(py, thread, frames);
  return nullptr;
}

void learn_python_call_sites() {
  // Only where the process had an interpreter at set-up: as for the frame source, the API is not
  // looked up (once, for good) before a program that loads Python later has done so.
  if (!g_python_at_setup.load(std::memory_order_relaxed)) return;
  thread_local PythonFrames scratch;
  capture_python_stack(scratch);  // and the stack interned: the first dumped step finds it
}

}  // namespace acccheck::capture
