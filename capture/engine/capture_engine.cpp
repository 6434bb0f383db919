#include "engine/capture_engine.hpp"

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
#include <ATen/record_function.h>
#include <dlfcn.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "engine/argument_capture.hpp"
#include "engine/dump_writer.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace acccheck::capture {

namespace fs = std::filesystem;

namespace {

// ---- operator classification, cached per dispatcher operator -----------------------------------

struct State {
  explicit State(host::DumpOptions o) : options(std::move(o)), tensor_mode(options.tensor_mode()) {}
  host::DumpOptions options;
  const bool tensor_mode;  // options.tensor_mode(), read on every call (not a string compare each)
  std::string rank_dir;
  std::optional<std::int64_t> rank;
  host::PluginRegistry registry;
  std::vector<HookPlugin*> hooks;
  std::unique_ptr<DumpWriter> writer;
  // Three callbacks, one enabled at a time. `callback` records (inputs and outputs). In a step
  // that is not dumped only the next step's beginning is looked for: until its backward pass
  // ends, by `watch_backward`, on autograd nodes alone (BACKWARD_FUNCTION scope: with no
  // FUNCTION-scope callback enabled the dispatcher skips RecordFunction altogether, so the forward
  // pass and the backward pass's operators cost nothing); then by `watch` (inputs, no outputs),
  // for the operator that begins the next forward pass.
  struct Switch {
    at::CallbackHandle handle = at::INVALID_CALLBACK_HANDLE;
    bool on = true;  // a callback is enabled when added
  };
  Switch callback, watch, watch_backward;

  pid_t pid = ::getpid();  // the process that owns the writer thread
  std::mutex mutex;  // guards everything below
  bool started = false;
  std::int64_t step = 0;
  std::vector<std::int64_t> counters;  // OpInfo::api_id → next call number
  enum class Scope { before, inside, after } scope = Scope::before;
  std::size_t category_calls = 0;     // category calls seen while started, in selected steps
  std::size_t filtered = 0;           // of those, left out by list / black_list / scope
  std::int64_t last_step_seen = -1;
  bool finished = false;
  std::string summary;
};

State* g_state = nullptr;
std::atomic<bool> g_dumping{false};       // started, step and rank selected, writer healthy
std::atomic<bool> g_backward_seen{false}; // a backward pass ran in this step (auto steps)
std::atomic<bool> g_backward_ending{false}; // ...and the autograd engine will say when it ends
std::atomic<std::uint64_t> g_epoch{1};    // bumped on start(): stale thread depths reset
std::atomic<std::size_t> g_ops_seen{0};

// No global with a constructor in this library: the preload library's initialiser may run before
// the dynamic initialisers of this file (their order between files is unspecified).
std::mutex g_ops_mutex;  // constant-initialised
std::unordered_map<std::string, std::unique_ptr<OpInfo>>& ops_table() {
  static auto* t = new std::unordered_map<std::string, std::unique_ptr<OpInfo>>;
  return *t;
}
// API name → OpInfo::api_id (the index of its call counter): overloads share their API's counter.
std::unordered_map<std::string, std::size_t>& api_ids() {
  static auto* ids = new std::unordered_map<std::string, std::size_t>;
  return *ids;
}

struct ThreadState {
  std::uint64_t epoch = 0;
  int depth = 0;           // nesting of category operators
  int backward_depth = 0;  // nesting of autograd nodes (ops the engine runs)
  // RecordFunction is off on this thread since a call nested in the outermost category call came
  // (nested_calls_off); on again when that call ends. Kept across a new epoch: only the end of the
  // call may switch it on again.
  bool nested_off = false;
  const OpInfo* outermost = nullptr;  // the outermost category call's operator (while depth > 0)
  std::unordered_map<const char*, const OpInfo*> ops;  // name pointer → classification
};
thread_local ThreadState tl;

ThreadState& thread_state() {
  std::uint64_t e = g_epoch.load(std::memory_order_relaxed);
  if (tl.epoch != e) {  // a new configure()/start(): forget what this thread had cached
    tl.epoch = e;
    tl.depth = tl.backward_depth = 0;
    tl.ops.clear();
  }
  return tl;
}

// ---- nested calls -------------------------------------------------------------------------------
// Only the outermost category call is of use to the tool (an entry, or the call the step rule looks
// at); what it calls in turn skips RecordFunction: the thread's RecordFunction switch goes off until
// the outermost call ends (the dispatcher then takes its fast path, with no boxing of arguments and
// results). A switch is not free (LibTorch 1.13 rebuilds the thread's active callbacks on each:
// ~0.4 µs and several allocations) and most calls of a training step nest none (an optimizer's
// add_/mul_, tanh), so it is made only for operators seen to nest calls: up front once one of their
// calls did, else at the first nested call (which RecordFunction has seen by then). The tool's own
// operators (statistics of non-dense, complex, bool or device tensors, tensor-mode copies) run while
// the call is still counted, so they are nested calls too. Other RecordFunction users (a profiler)
// see no nested calls while a dump runs, except the first one of an operator's first nesting call.
void nested_calls_off(ThreadState& ts) {
  if (ts.nested_off || !at::isRecordFunctionEnabled()) return;
  at::enableRecordFunction(false);
  ts.nested_off = true;
}

// Any call while a category call runs (depth > 0): its operator nests calls.
void nested_call(ThreadState& ts) {
  if (ts.outermost && !ts.outermost->nests.load(std::memory_order_relaxed))
    ts.outermost->nests.store(true, std::memory_order_relaxed);
  nested_calls_off(ts);
}

// The outermost category call begins (depth 0 → 1).
void enter_outermost(ThreadState& ts, const OpInfo* info) {
  ts.outermost = info;
  if (info->nests.load(std::memory_order_relaxed)) nested_calls_off(ts);
}

// A category call ends: the outermost one switches RecordFunction on again if its nested calls
// switched it off.
void leave_category_call(ThreadState& ts) {
  if (ts.depth > 0) --ts.depth;
  if (ts.depth > 0) return;
  ts.outermost = nullptr;
  if (ts.nested_off) {
    ts.nested_off = false;
    at::enableRecordFunction(true);
  }
}

ArgSlot::Meaning meaning_of(const c10::TypePtr& real) {
  c10::TypePtr t = real;
  if (auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::ScalarTypeType: return ArgSlot::Meaning::dtype;
    case c10::TypeKind::LayoutType: return ArgSlot::Meaning::layout;
    case c10::TypeKind::MemoryFormatType: return ArgSlot::Meaning::memory_format;
    default: return ArgSlot::Meaning::plain;
  }
}

std::unique_ptr<OpInfo> classify(const at::RecordFunction& fn, const c10::OperatorName& name) {
  auto info = std::make_unique<OpInfo>();
  info->op_name = name.name;
  info->overload = name.overload_name;
  for (HookPlugin* h : g_state->hooks) {
    auto d = h->classify(OperatorName{info->op_name, info->overload});
    if (!d) continue;
    info->kept = true;
    info->api_name = d->api_name;
    info->replayable = d->replayable;
    info->api_id = api_ids().emplace(info->api_name, api_ids().size()).first->second;
    break;
  }
  if (info->kept) {
    if (auto schema = fn.operator_schema())
      for (const auto& a : schema->arguments())
        info->args.push_back({a.name(), a.kwarg_only(), meaning_of(a.real_type()), a.default_value()});
  }
  return info;
}

// nullptr: not a dispatcher operator (autograd node, user scope).
const OpInfo* lookup(const at::RecordFunction& fn, ThreadState& ts) {
  const char* key = fn.name();
  auto it = ts.ops.find(key);
  if (it != ts.ops.end()) return it->second;
  auto name = fn.operator_name();
  if (!name) return nullptr;
  const OpInfo* info;
  {
    std::lock_guard<std::mutex> lock(g_ops_mutex);
    auto& slot = ops_table()[name->name + "." + name->overload_name];
    if (!slot) slot = classify(fn, *name);
    info = slot.get();
  }
  ts.ops.emplace(key, info);
  return info;
}

bool matches(const std::string& entry, const std::vector<std::string>& items) {
  for (const auto& i : items)
    if (entry == i || entry.find(i) != std::string::npos) return true;
  return false;
}

bool rank_selected(const State& s) { return s.options.ranks.all() || (s.rank && s.options.ranks.contains(*s.rank)); }

void set_enabled(State::Switch& sw, bool on) {
  if (on == sw.on) return;
  if (on) at::reenableCallback(sw.handle);
  else at::disableCallback(sw.handle);
  sw.on = on;
}

// Which callback runs. The recording one is switched on already during the backward pass of the
// step before a dumped step, so the operator that begins the dumped step is seen by it. Caller
// holds the mutex.
void apply_callbacks(State& s) {
  // After a backward pass began, and — where the engine reports it — ended.
  bool after_backward = g_backward_seen.load() && !g_backward_ending.load();
  bool armed = s.options.auto_step && s.started && !s.finished && rank_selected(s) && !s.writer->failed() &&
               after_backward && s.options.steps.contains(s.step + 1);
  bool record = g_dumping.load() || armed;
  set_enabled(s.callback, record);
  bool watching = s.options.auto_step && !record && !s.finished;
  set_enabled(s.watch, watching && after_backward);
  set_enabled(s.watch_backward, watching && !after_backward);
}

void update_dumping(State& s) {
  bool on = s.started && !s.finished && s.options.steps.contains(s.step) && rank_selected(s) && !s.writer->failed();
  g_dumping.store(on);
  apply_callbacks(s);
}

// The current step is over. Caller holds the mutex.
void advance_step_locked(State& s) {
  s.writer->end_step(s.step);
  ++s.step;
  std::fill(s.counters.begin(), s.counters.end(), 0);
  s.scope = State::Scope::before;
  g_backward_seen.store(false);
  update_dumping(s);
}

std::int64_t first_requested(const host::IndexSelection& steps) {
  std::int64_t first = steps.ranges.front().first;
  for (const auto& r : steps.ranges) first = std::min(first, r.first);
  return first;
}

bool exit_due(const State& s) {
  auto last = s.options.steps.last();
  return s.options.exit_after_last_step && last && s.step > *last;
}

// ---- the backward half of an entry -----------------------------------------------------------------

class BackwardCapture final : public torch::autograd::FunctionPostHook {
 public:
  BackwardCapture(const OpInfo* op, std::int64_t call, std::int64_t step) : op_(op), call_(call), step_(step) {}

  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grad_inputs,
                                            const torch::autograd::variable_list& grad_outputs) override {
    if (!g_state || g_state->finished || g_state->writer->failed()) return grad_inputs;
    at::RecordFunctionGuard off(false);  // what the tool runs is not recorded
    CapturedRecord c = DumpWriter::spare_record();
    c.step = step_;
    c.op = op_;
    c.call = call_;
    c.direction = Direction::backward;  // no acccheck_op: replay takes it from the forward
    try {
      FlatEncoder enc(c, g_state->tensor_mode);
      for (const auto& g : grad_outputs) enc.tensor(g, Section::grad_inputs);
      for (const auto& g : grad_inputs) enc.tensor(g, Section::grad_outputs);
      g_state->writer->push(std::move(c));
    } catch (const std::exception& e) {
      std::cerr << "acccheck dump: " << c.entry_name() << " not recorded: " << e.what() << "\n";
    }
    return grad_inputs;
  }

 private:
  const OpInfo* op_;
  std::int64_t call_;
  std::int64_t step_;
};

// ---- the callbacks ---------------------------------------------------------------------------------

// An autograd node whose operators are not recorded (no --capture-backward-ops): its nested calls
// skip RecordFunction from its start (the thread's switch is off until the node ends; every node
// calls operators, so there is nothing to gain by waiting for the first). The node's own end still
// reaches its callbacks: RecordFunction ends the callbacks a call began with. Other RecordFunction
// users (a profiler) see no operators of such a node while a dump records.
struct NestedCallsOff : at::ObserverContext {
  bool nested_off = false;
};

// A node's context, its nested calls switched off (if RecordFunction is on for this thread at all).
std::unique_ptr<at::ObserverContext> node_with_nested_calls_off() {
  auto ctx = std::make_unique<NestedCallsOff>();
  if (at::isRecordFunctionEnabled()) {
    at::enableRecordFunction(false);
    ctx->nested_off = true;
  }
  return ctx;
}

// At the end of a call the tool switched nested calls off for: on again.
void end_nested_calls_off(at::ObserverContext* raw) {
  if (raw && static_cast<NestedCallsOff*>(raw)->nested_off) at::enableRecordFunction(true);
}

struct CallContext : NestedCallsOff {  // nested_off stays false: entries switch lazily (ThreadState)
  CapturedRecord captured;
};

// The autograd engine's own records: its nodes (BACKWARD_FUNCTION scope) and the FUNCTION-scope
// "autograd::engine::evaluate_function: XBackward0" around each, which also covers the shape fix-ups
// (sum_to) the engine runs on a node's results.
bool autograd_record(const at::RecordFunction& fn) {
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) return true;
  constexpr char prefix[] = "autograd::engine::evaluate_function";
  return std::strncmp(fn.name(), prefix, sizeof prefix - 1) == 0;
}

bool has_leaf_requiring_grad(c10::ArrayRef<const c10::IValue> inputs) {
  for (const auto& v : inputs)
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined() && t.requires_grad() && t.is_leaf()) return true;
    }
  return false;
}

// Automatic steps (no code change): a new step begins with the first operator, after a backward
// pass, that runs with grad mode on and takes a parameter (a leaf that requires grad): the next
// forward pass. The optimizer (no-grad) and logging of the loss stay in the step they follow.
void begin_step_if_forward_starts(State& s, const at::RecordFunction& fn) {
  if (!g_backward_seen.load(std::memory_order_relaxed) || !at::GradMode::is_enabled() ||
      !has_leaf_requiring_grad(fn.inputs()))
    return;
  bool exit_now;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    advance_step_locked(s);
    exit_now = exit_due(s);
  }
  if (exit_now) CaptureEngine::instance().finish_and_exit("the last requested step was dumped");
}

std::unique_ptr<at::ObserverContext> start_entry(const at::RecordFunction& fn, State* s, ThreadState& ts,
                                                 const OpInfo* info);

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  State* s = g_state;
  if (!s) return nullptr;
  ThreadState& ts = thread_state();
  const OpInfo* info = lookup(fn, ts);
  if (!info) {
    if (!autograd_record(fn)) return nullptr;
    ++ts.backward_depth;
    g_backward_seen.store(true, std::memory_order_relaxed);
    // The operators a node runs are entries only with --capture-backward-ops.
    if (s->options.capture_backward_ops) return nullptr;
    return node_with_nested_calls_off();
  }
  if (ts.depth > 0) nested_call(ts);
  return start_entry(fn, s, ts, info);
}

// The forward half of an entry: the call's inputs, if the call is kept and the step is dumped.
// Its nested calls — the tool's own work on its inputs and outputs included — skip RecordFunction
// from the first of them on (nested_calls_off).
std::unique_ptr<at::ObserverContext> start_entry(const at::RecordFunction& fn, State* s, ThreadState& ts,
                                                 const OpInfo* info) {
  if (!info->kept) return nullptr;
  if (++ts.depth > 1) return nullptr;
  enter_outermost(ts, info);
  if (ts.backward_depth > 0 && !s->options.capture_backward_ops) return nullptr;
  g_ops_seen.fetch_add(1, std::memory_order_relaxed);
  if (s->options.auto_step && ts.backward_depth == 0) begin_step_if_forward_starts(*s, fn);
  if (!g_dumping.load(std::memory_order_relaxed)) return nullptr;

  std::int64_t call = 0, step = 0;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!g_dumping.load()) return nullptr;  // another thread ended the step meanwhile
    ++s->category_calls;
    s->last_step_seen = s->step;
    if (info->api_id >= s->counters.size()) s->counters.resize(info->api_id + 1, 0);
    call = s->counters[info->api_id]++;
    step = s->step;
    if (!s->options.list.empty() || !s->options.black_list.empty() || s->options.scope.size() == 2) {
      std::string entry = info->api_name + "." + std::to_string(call) + ".forward";
      bool keep = s->options.list.empty() || matches(entry, s->options.list);
      keep = keep && !matches(entry, s->options.black_list);
      if (s->options.scope.size() == 2) {
        if (s->scope == State::Scope::before && entry == s->options.scope[0]) s->scope = State::Scope::inside;
        bool inside = s->scope == State::Scope::inside;
        if (inside && entry == s->options.scope[1]) s->scope = State::Scope::after;
        keep = keep && inside;
      }
      if (!keep) {
        ++s->filtered;
        return nullptr;
      }
    }
  }
  auto ctx = std::make_unique<CallContext>();
  CapturedRecord& c = ctx->captured;
  c = DumpWriter::spare_record();  // one the writer is done with: its vectors keep their memory
  c.call = call;
  c.step = step;
  c.op = info;
  // Tensor mode copies every tensor (nested calls, seen by no one else then).
  if (s->tensor_mode) nested_calls_off(ts);
  std::unique_ptr<at::ObserverContext> result = std::move(ctx);
  try {
    FlatEncoder enc(c, s->tensor_mode);
    encode_inputs(fn.inputs(), info->args, enc);
    const host::StackMode mode = s->options.stack;
    if (mode != host::StackMode::off) {
      RawStack& st = c.stack;
      // Python frames for calls made from Python (forward only: backward runs on autograd threads).
      if (mode != host::StackMode::raw && ts.backward_depth == 0) st.python = capture_python_stack();
      if (st.python.empty() && mode != host::StackMode::python) st = capture_raw_stack();
      c.has_stack = !st.python.empty() || !st.frames.empty();
    }
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << c.api() << " not recorded: " << e.what() << "\n";
    return nullptr;
  }
  return result;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* raw) {
  State* s = g_state;
  if (!s) return end_nested_calls_off(raw);
  ThreadState& ts = thread_state();
  auto it = ts.ops.find(fn.name());
  const OpInfo* info = it == ts.ops.end() ? nullptr : it->second;
  if (!info) {
    if (autograd_record(fn) && ts.backward_depth > 0) --ts.backward_depth;
    return end_nested_calls_off(raw);
  }
  if (!info->kept) return;
  // The operator threw (its exception is unwinding through the dispatcher): it produced nothing,
  // and the program gets the exception unchanged. No entry, as msprobe's hooks record none.
  if (raw && std::uncaught_exceptions() == 0) {
    // Encoded while the call still counts, so the tool's own operators are nested calls.
    CapturedRecord& c = static_cast<CallContext*>(raw)->captured;
    try {
      FlatEncoder enc(c, s->tensor_mode);
      encode_outputs(fn.outputs(), enc);
      // Gradients: one post hook on the autograd node that produced the outputs.
      for (const auto& v : fn.outputs()) {
        if (!v.isTensor()) continue;
        const at::Tensor& t = v.toTensor();
        if (!t.defined() || !t.requires_grad() || !t.grad_fn()) continue;
        t.grad_fn()->add_post_hook(std::make_unique<BackwardCapture>(c.op, c.call, c.step));
        break;
      }
      s->writer->push(std::move(c));
    } catch (const std::exception& e) {
      std::cerr << "acccheck dump: " << c.api() << " not recorded: " << e.what() << "\n";
    }
  }
  leave_category_call(ts);
}

// The end of the backward pass `watch_backward` saw begin: the engine runs its final callbacks
// when the pass completes and drops them with the pass whichever way it ends, so the hand-over
// happens once, at the first of the two (a pass that fails — out of memory in a node, an anomaly
// check, a throwing hook — runs none, and a program that catches the error goes on to its next
// forward pass).
struct BackwardPassEnd {
  std::atomic<bool> done{false};
  void fire() {
    if (done.exchange(true)) return;
    State* s = g_state;
    if (!s || !g_backward_ending.exchange(false)) return;
    std::lock_guard<std::mutex> lock(s->mutex);
    apply_callbacks(*s);  // `watch`, or the recording callback when the next step is dumped
  }
  ~BackwardPassEnd() { fire(); }
};

// The watch callbacks: steps only. An autograd node, the first of a backward pass: when the pass
// ends, `watch` takes over (none of the pass's own operators can begin a step, so they need no
// callback; a pass another thread runs meanwhile may get them). Where no final callback can be
// queued (a node run outside the engine) `watch` takes over at once. A node's end still comes
// here (RecordFunction ends the callbacks a call began with), so the backward depth stays balanced.
std::unique_ptr<at::ObserverContext> on_watch_backward_start(const at::RecordFunction&) {
  State* s = g_state;
  if (!s) return nullptr;
  ++thread_state().backward_depth;
  if (g_backward_ending.load()) return nullptr;
  g_backward_seen.store(true);
  if (torch::autograd::get_current_graph_task_exec_info()) {  // inside one of the engine's passes
    g_backward_ending.store(true);
    try {
      auto end = std::make_shared<BackwardPassEnd>();
      torch::autograd::Engine::get_default_engine().queue_callback([end] { end->fire(); });
      return nullptr;
    } catch (const std::exception&) {
      g_backward_ending.store(false);
    }
  }
  std::lock_guard<std::mutex> lock(s->mutex);
  apply_callbacks(*s);
  return nullptr;
}

void on_watch_backward_end(const at::RecordFunction&, at::ObserverContext*) {
  if (!g_state) return;
  ThreadState& ts = thread_state();
  if (ts.backward_depth > 0) --ts.backward_depth;
}

// After a backward pass began: the operator that begins the next forward pass.
std::unique_ptr<at::ObserverContext> on_watch_start(const at::RecordFunction& fn) {
  State* s = g_state;
  if (!s) return nullptr;
  ThreadState& ts = thread_state();
  const OpInfo* info = lookup(fn, ts);
  if (!info) {
    if (autograd_record(fn)) {
      ++ts.backward_depth;
      if (!g_backward_seen.exchange(true)) {
        std::lock_guard<std::mutex> lock(s->mutex);
        apply_callbacks(*s);  // arms the recording callback when the next step is dumped
      }
    }
    return nullptr;
  }
  // Only an outermost category call can begin a step (a nested one runs on what its caller was given).
  if (ts.depth > 0) nested_call(ts);
  if (!info->kept) return nullptr;
  if (++ts.depth > 1) return nullptr;
  enter_outermost(ts, info);
  if (ts.backward_depth > 0) return nullptr;
  g_ops_seen.fetch_add(1, std::memory_order_relaxed);
  // A no-grad call (the optimizer's updates) cannot begin a step.
  if (at::GradMode::is_enabled()) begin_step_if_forward_starts(*s, fn);
  return nullptr;
}

void on_watch_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (!g_state) return;
  ThreadState& ts = thread_state();
  auto it = ts.ops.find(fn.name());  // only dispatcher operators are there
  if (it == ts.ops.end()) {
    if (autograd_record(fn) && ts.backward_depth > 0) --ts.backward_depth;
    return;
  }
  if (it->second->kept) leave_category_call(ts);
}

// ---- set-up ------------------------------------------------------------------------------------------

std::optional<std::int64_t> rank_from_environment() {
  for (const char* v : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "LOCAL_RANK"}) {
    const char* s = std::getenv(v);
    if (!s || !*s) continue;
    char* end = nullptr;
    long long r = std::strtoll(s, &end, 10);
    if (end && *end == '\0' && r >= 0) return r;
  }
  return std::nullopt;
}

// Plugin folders relative to the binary holding the engine: a library in the build tree
// (<build>/plugins) or installed (<libdir>/acccheck/plugins), or the TorchScript runner in
// libexec/acccheck/ (two levels up, the same two layouts).
std::vector<std::string> own_plugin_dirs() {
  Dl_info info{};
  std::vector<std::string> dirs;
  if (!::dladdr(reinterpret_cast<void*>(&rank_from_environment), &info) || !info.dli_fname) return dirs;
  fs::path here = fs::path(info.dli_fname).parent_path();
  fs::path up = here / ".." / "..";
  for (fs::path p : {here / "plugins", here / "acccheck" / "plugins", up / "plugins", up / "lib" / "acccheck" / "plugins"})
    if (fs::is_directory(p)) dirs.push_back(fs::weakly_canonical(p).string());
  return dirs;
}

// The writer of a state's dump. A writing error turns dumping off; the program goes on.
void open_writer(State& s) {
  s.writer = std::make_unique<DumpWriter>(s.options, s.rank_dir, [](const std::string& what) {
    std::cerr << "acccheck dump: " << what << "; dumping is off, the program goes on\n";
    g_dumping.store(false);
  });
}

// ---- fork ---------------------------------------------------------------------------------------------
// A forked child (a DataLoader worker) inherits the callbacks and the engine's memory but not the
// writer thread. Around fork() the engine's locks are held and the writer is made idle (waiting
// for work, inside no lock and no malloc), so the child inherits no lock held by a thread it does
// not have. In the child the parent's engine is abandoned (never touched, never destroyed: its
// condition variables may have had waiters). Without --follow-children the callbacks are removed;
// with it the child gets an engine of its own, writing <dump_path>/child-<pid>/, in the step the
// parent was in (a worker runs no backward pass: all its operators belong to that step).
constexpr std::chrono::seconds kForkWriterWait{10};

void before_fork() {
  g_ops_mutex.lock();
  if (!g_state) return;
  g_state->mutex.lock();
  // A writer still busy after the wait is paused all the same; only a child could suffer.
  g_state->writer->pause_for_fork(kForkWriterWait);
}

void after_fork_in_parent() {
  if (!g_state) return g_ops_mutex.unlock();
  g_state->writer->resume_after_fork();
  g_state->mutex.unlock();
  g_ops_mutex.unlock();
}

// The followed child's engine: the parent's options, hooks, classification and callbacks; a new
// writer and new counters. Throws what the writer's set-up throws.
State* engine_for_forked_child(const State& parent) {
  auto s = std::make_unique<State>(parent.options);
  s->options.dump_path = CaptureEngine::child_dump_path(parent.options.dump_path);
  s->options.exit_after_last_step = false;  // ending a worker would break the parent's training
  s->rank = parent.rank;
  s->rank_dir = parent.rank_dir;
  s->hooks = parent.hooks;  // the parent's registry is never destroyed: the plugins stay loaded
  s->callback = parent.callback;
  s->watch = parent.watch;
  s->watch_backward = parent.watch_backward;
  s->started = parent.started;
  s->step = parent.step;
  open_writer(*s);
  return s.release();
}

void after_fork_in_child() {
  State* parent = g_state;
  g_ops_mutex.unlock();
  if (!parent) return;
  g_state = nullptr;  // abandoned, locks and all
  g_dumping.store(false);
  g_backward_seen.store(false);  // the child's own step begins with no backward pass seen
  g_backward_ending.store(false);
  if (parent->options.follow_children && !parent->finished) {
    try {
      State* child = engine_for_forked_child(*parent);
      std::lock_guard<std::mutex> lock(child->mutex);
      g_state = child;
      update_dumping(*child);
      return;
    } catch (const std::exception& e) {
      std::cerr << "acccheck dump: forked process " << ::getpid() << " not dumped: " << e.what() << "\n";
    }
  }
  for (const State::Switch* sw : {&parent->callback, &parent->watch, &parent->watch_backward})
    at::removeCallback(sw->handle);
}

}  // namespace

CaptureEngine& CaptureEngine::instance() {
  static CaptureEngine e;
  return e;
}

bool CaptureEngine::configured() const { return g_state != nullptr; }

std::string CaptureEngine::child_dump_path(const std::string& dump_path) {
  return (fs::path(dump_path) / ("child-" + std::to_string(::getpid()))).string();
}

void CaptureEngine::configure(host::DumpOptions options) {
  if (g_state && !g_state->finished) throw std::runtime_error("a dump is already running in this process");
  static std::once_flag fork_handlers;
  std::call_once(fork_handlers, [] { ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child); });
  host::validate_dump_options(options, "dump options");
  auto s = std::make_unique<State>(std::move(options));
  s->rank = rank_from_environment();
  s->rank_dir = s->rank ? "rank" + std::to_string(*s->rank) : "rank";
  host::PluginSearch search;
  search.dirs = s->options.plugin_dirs;
  if (const char* env = std::getenv("ACCCHECK_PLUGIN_PATH")) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) search.dirs.push_back(d);
  }
  for (auto& d : own_plugin_dirs()) search.dirs.push_back(d);
  s->registry.load(search, {PluginKind::hook});
  for (const auto& [info, hook] : s->registry.hooks()) {
    hook->configure(host::PluginRegistry::sidecar_settings(*info));
    s->hooks.push_back(hook);
  }
  if (s->hooks.empty()) {
    std::string why = "no hook plugin found in";
    for (auto& d : search.dirs) why += " " + d;
    if (search.dirs.empty()) why += " any folder (set ACCCHECK_PLUGIN_PATH)";
    for (const auto& r : s->registry.refused()) why += "; " + r.line();
    throw std::runtime_error(why);
  }
  open_writer(*s);
  {
    // A new configuration may classify differently. The old entries are retired, not freed: another
    // thread may still hold a pointer until it sees the new epoch.
    std::lock_guard<std::mutex> lock(g_ops_mutex);
    static auto* retired = new std::vector<std::unique_ptr<OpInfo>>;
    for (auto& kv : ops_table()) retired->push_back(std::move(kv.second));
    ops_table().clear();
  }
  g_epoch.fetch_add(1);
  g_state = s.release();
  g_state->callback.handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_start, on_end)
          .needsInputs(true)
          .needsOutputs(true)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  g_state->watch.handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_watch_start, on_watch_end)
          .needsInputs(true)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  g_state->watch_backward.handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_watch_backward_start, on_watch_backward_end)
          .scopes({at::RecordScope::BACKWARD_FUNCTION}));
  std::lock_guard<std::mutex> lock(g_state->mutex);
  update_dumping(*g_state);
}

void CaptureEngine::start() {
  if (!g_state) throw std::runtime_error("start(): the dump is not configured");
  std::lock_guard<std::mutex> lock(g_state->mutex);
  g_epoch.fetch_add(1);
  g_state->started = true;
  update_dumping(*g_state);
}

void CaptureEngine::stop() {
  if (!g_state) return;
  std::lock_guard<std::mutex> lock(g_state->mutex);
  g_state->started = false;
  // Backward entries of this step still arrive through the autograd hooks (not the callback).
  update_dumping(*g_state);
}

void CaptureEngine::step() {
  if (!g_state) return;
  bool exit_now;
  {
    std::lock_guard<std::mutex> lock(g_state->mutex);
    advance_step_locked(*g_state);
    exit_now = exit_due(*g_state);
  }
  if (exit_now) finish_and_exit("the last requested step was dumped");
}

std::string CaptureEngine::finish() {
  State* s = g_state;
  if (!s) return "";
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    if (s->finished) return s->summary;
    s->finished = true;
    g_dumping.store(false);
  }
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    apply_callbacks(*s);  // both off
  }
  WriterTotals t = s->writer->finish();
  std::ostringstream os;
  os << "acccheck dump: ";
  if (t.entries > 0) {
    os << t.entries << " entr" << (t.entries == 1 ? "y" : "ies") << " in " << t.steps.size() << " step"
       << (t.steps.size() == 1 ? "" : "s") << " written to " << s->options.dump_path;
    if (t.tensor_files) os << " (" << t.tensor_files << " tensor files)";
    if (t.late_backward)
      os << "; " << t.late_backward << " entr" << (t.late_backward == 1 ? "y" : "ies")
         << " finished after " << (t.late_backward == 1 ? "its" : "their") << " step ended (another thread) and "
         << (t.late_backward == 1 ? "was" : "were") << " dropped (first: " << t.first_late << ")";
    if (t.producer_waits)
      os << "; the program waited " << t.producer_waits << " times for the writer (queue full: queue_size "
         << s->options.queue_size << ", queue_bytes " << s->options.queue_bytes << ")";
  } else {
    os << "nothing was written to " << s->options.dump_path << ": ";
    if (s->writer->failed()) os << "writing failed (see the error above)";
    else if (!s->options.ranks.all() && !(s->rank && s->options.ranks.contains(*s->rank)))
      os << "this process is " << (s->rank ? "rank " + std::to_string(*s->rank) : std::string("not a ranked process"))
         << ", not in the rank list " << s->options.ranks.text();
    else if (s->category_calls == 0 && !s->options.steps.all() && first_requested(s->options.steps) > s->step)
      os << "no requested step was reached (steps " << s->options.steps.text() << " requested, the program ended in step "
         << s->step << ")";
    else if (g_ops_seen.load() == 0)
      os << "no operator of the hook plugins' categories ran"
         << (s->started || s->options.auto_step ? "" : " (start() was never called)");
    else if (s->category_calls == 0)
      os << "no requested step was reached (steps " << (s->options.steps.all() ? "all" : s->options.steps.text())
         << " requested, the program ended in step " << s->step << ")";
    else if (s->filtered == s->category_calls)
      os << s->category_calls << " calls ran in the requested steps but none matched list/black_list/scope";
    else
      os << "no entry was kept";
  }
  s->summary = os.str();
  return s->summary;
}

bool CaptureEngine::finished() const { return !g_state || g_state->finished; }

bool CaptureEngine::owned_by_this_process() const { return g_state && g_state->pid == ::getpid(); }

void CaptureEngine::drain_before_death(long timeout_ms) {
  if (!owned_by_this_process() || g_state->finished) return;
  g_dumping.store(false);
  g_state->writer->drain(std::chrono::milliseconds(timeout_ms));
}

void CaptureEngine::finish_and_exit(const std::string& why) {
  std::string summary = finish();
  std::cerr << summary << "\nacccheck dump: exit_after_last_step: " << why << " (step "
            << (g_state ? g_state->step - 1 : 0) << "); ending the program with exit code 0\n";
  std::fflush(nullptr);
  std::_Exit(0);
}

}  // namespace acccheck::capture
