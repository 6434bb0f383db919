#include "engine/capture_engine.hpp"

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
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
#include <vector>

#include <acccheck/incomplete_dump.hpp>

#include "engine/allocator_thresholds.hpp"
#include "engine/argument_capture.hpp"
#include "engine/capture_mode.hpp"
#include "engine/dump_writer.hpp"
#include "engine/pointer_map.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace acccheck::capture {

namespace fs = std::filesystem;

namespace {

// ---- the engine's state -------------------------------------------------------------------------

struct State {
  explicit State(core::DumpOptions o) : options(std::move(o)), tensor_mode(options.tensor_mode()) {}
  core::DumpOptions options;
  const bool tensor_mode;  // options.tensor_mode(), read on every call (not a string compare each)
  // Stacks that take Python frames (not off, not raw): read on every call not dumped.
  const bool reads_python_frames = options.stack != core::StackMode::off && options.stack != core::StackMode::raw;
  std::string rank_dir;
  std::optional<std::int64_t> rank;
  core::PluginRegistry registry;
  std::vector<HookPlugin*> hooks;
  std::unique_ptr<DumpWriter> writer;

  pid_t pid = ::getpid();  // the process that owns the writer thread
  std::mutex mutex;  // guards everything below
  bool started = false;
  std::int64_t step = 0;
  std::vector<std::int64_t> counters;  // OpInfo::api_id → next call number
  enum class Scope { before, inside, after } scope = Scope::before;
  std::size_t category_calls = 0;     // category calls seen while started, in selected steps
  std::size_t filtered = 0;           // of those, left out by list / black_list / scope
  std::int64_t last_step_seen = -1;
  std::uintptr_t heap_end_after_headroom = 0;  // heap_end() once the last headroom was given; 0: none yet
  bool finished = false;
  std::string summary;
};

State* g_state = nullptr;
std::atomic<bool> g_active{false};        // configured and not finished: the fallback looks at calls
std::atomic<bool> g_dumping{false};       // started, step and rank selected, writer healthy
std::atomic<bool> g_backward_seen{false}; // a backward pass ran in this step (auto steps)
// Backward passes told by the preload's interposer (backward_pass_starts / backward_pass_ended).
thread_local int t_backward_depth = 0;  // passes begun on this thread and not yet ended (re-entrant ones)
thread_local bool t_starts_backward_passes = false;
std::atomic<int> g_backward_threads{0};  // threads that began one
std::atomic<std::uint64_t> g_epoch{1};    // bumped on configure()/start(): stale thread caches reset
// An operator of a category ran (for the end-of-run reason when nothing was dumped). Set once, not
// counted: a locked read-modify-write per call waited for the record's stores to drain.
std::atomic<bool> g_op_seen{false};
// The process's first step, until its first backward pass: the Python call sites of the calls not
// dumped are learnt (learn_python_call_sites), at most 4,096 calls. A training step's forward pass
// meets the same call sites each step, and learning one costs a few microseconds (its code object's
// names and line table, with the GIL): ~0.04-0.07 ms of the first dumped gpt step (1.3 ms), moved
// to the program's first step, itself ~3x a later one (its kernels' first runs). Counts down; the
// first backward pass sets it to 0.
std::atomic<int> g_call_sites_to_learn{4096};
// settle_allocator_thresholds() set the engine's thresholds: a freed block of the heap stays in it,
// so headroom prepared for a dumped step is kept until that step grows into it.
std::atomic<bool> g_heap_keeps_freed_top{false};
// The headroom given before a dumped step (prepare_heap_for_next_step): several times what the
// corpus's first dumped steps grow the heap by (0.1–0.6 MiB over steps 5–7). Its 1,024 page faults
// (~1.5 ms on this project's VM) are taken by the writer thread; only on a kernel without
// MADV_POPULATE_WRITE by the training thread, at the end of the step before.
constexpr std::size_t kHeapHeadroom = 4u << 20;

// ---- operator classification, cached per dispatcher operator -----------------------------------

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
  // The operator's name object (owned by the dispatcher, one per operator) → its classification.
  PointerMap<const OpInfo> ops;
};
thread_local ThreadState tl;

ThreadState& thread_state() {
  std::uint64_t e = g_epoch.load(std::memory_order_relaxed);
  if (tl.epoch != e) {  // a new configure()/start(): forget what this thread had cached
    tl.epoch = e;
    tl.ops.clear();
  }
  return tl;
}

// ArgSlot::written_unversioned. Batch norm (native_batch_norm, batch_norm, instance_norm and the
// backends' own) updates running_mean / running_var inside its kernel without moving their
// versions, in both LibTorch versions: reused statistics of them would be those of the first
// dumped step that met them. Other writes a schema declares move the version when the write is
// also the result (in-place and out= calls, ADInplaceOrView); one that is not returned may not.
bool written_unversioned(const c10::FunctionSchema& schema, const c10::Argument& a) {
  if (a.name() == "running_mean" || a.name() == "running_var") return true;
  const c10::AliasInfo* written = a.alias_info();
  if (!written || !written->isWrite()) return false;
  for (const auto& r : schema.returns()) {
    const c10::AliasInfo* returned = r.alias_info();
    if (!returned) continue;
    for (const auto& set : written->beforeSets())
      if (returned->beforeSets().count(set)) return false;
  }
  return true;
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

// The first hook plugin's decision that keeps the operator, if any keeps it.
std::optional<HookDecision> keeping_decision(const std::vector<HookPlugin*>& hooks, const OperatorName& name) {
  for (HookPlugin* h : hooks)
    if (auto d = h->classify(name)) return d;
  return std::nullopt;
}

std::unique_ptr<OpInfo> classify(const c10::OperatorHandle& op) {
  auto info = std::make_unique<OpInfo>();
  const c10::OperatorName& name = op.operator_name();
  info->op_name = name.name;
  info->overload = name.overload_name;
  info->zeroes_self = info->op_name == "aten::zero_";
  if (!op.hasSchema()) return info;  // never called: a call needs the schema to box its arguments
  const c10::FunctionSchema& schema = op.schema();
  info->arguments = schema.arguments().size();
  info->returns = schema.returns().size();
  if (auto d = keeping_decision(g_state->hooks, OperatorName{info->op_name, info->overload})) {
    info->kept = true;
    info->api_name = d->api_name;
    info->replayable = d->replayable;
    info->api_id = api_ids().emplace(info->api_name, api_ids().size()).first->second;
  }
  if (info->kept)
    for (const auto& a : schema.arguments())
      info->args.push_back({a.name(), a.kwarg_only(), meaning_of(a.real_type()), a.default_value(),
                            written_unversioned(schema, a)});
  return info;
}

const OpInfo& lookup(const c10::OperatorHandle& op, ThreadState& ts) {
  const void* key = &op.operator_name();
  if (const OpInfo* known = ts.ops.find(key)) return *known;
  const OpInfo* info;
  {
    std::lock_guard<std::mutex> lock(g_ops_mutex);
    const c10::OperatorName& name = op.operator_name();
    auto& slot = ops_table()[name.name + "." + name.overload_name];
    if (!slot) slot = classify(op);
    info = slot.get();
  }
  ts.ops.insert(key, info);
  return *info;
}

// Records made at set-up, ~1.8 KiB each (7 MiB): as many as the queue holds by default
// (docs/dump.md, queue_size). A dumped step of the corpus's models holds from ~300 (gpt, vit) to
// 1,009 entries (efficientnet_b0), and a writer that falls behind — every step dumped, its files
// slow to create (a busy or network file system; ext4 after a mass deletion took 0.65 ms a file on
// this project's VM, a gpt step 1.7 ms) — holds several steps' records. With 1,024 the training
// thread then made hundreds of new records a step (malloc, first-touch page faults, cold lines):
// those steps took 2.0-3.1 ms instead of 1.7, and gpt's steps 5-7, every step dumped, 1.45x the
// plain ones instead of 1.28x (bench/RESULTS.md, tenth session).
constexpr std::size_t kPreparedRecords = 4096;

bool matches(const std::string& entry, const std::vector<std::string>& items) {
  for (const auto& i : items)
    if (entry == i || entry.find(i) != std::string::npos) return true;
  return false;
}

bool rank_selected(const State& s) { return s.options.ranks.all() || (s.rank && s.options.ranks.contains(*s.rank)); }

// Whether `step` is dumped as things stand. Caller holds the mutex.
bool dumps_step(const State& s, std::int64_t step) {
  return s.started && !s.finished && s.options.steps.contains(step) && rank_selected(s) && !s.writer->failed();
}

// Caller holds the mutex.
void update_dumping(State& s) { g_dumping.store(dumps_step(s, s.step)); }

// The current step is over. Caller holds the mutex.
void advance_step_locked(State& s) {
  // Only a step that can have entries has files to finish: telling the writer of every other step
  // kept it looking at its queue every millisecond through steps that are not dumped (its naps
  // woke the other CPU ~1,000 times a second: the idle tool cost the small step 1.08x, not 1.0x).
  if (s.options.steps.contains(s.step) && rank_selected(s)) s.writer->end_step(s.step);
  ++s.step;
  std::fill(s.counters.begin(), s.counters.end(), 0);
  s.scope = State::Scope::before;
  g_backward_seen.store(false);
  update_dumping(s);
}

std::int64_t first_requested(const core::IndexSelection& steps) {
  std::int64_t first = steps.ranges.front().first;
  for (const auto& r : steps.ranges) first = std::min(first, r.first);
  return first;
}

bool exit_due(const State& s) {
  auto last = s.options.steps.last();
  return s.options.exit_after_last_step && last && s.step > *last;
}

// Where a step ends (its backward pass, or the SDK's step()) and the next one is dumped: the heap's
// headroom (allocator_thresholds.hpp), given before the first dumped step of a stretch, and again
// whenever the heap has grown past it since (the end of the heap moved): a run that dumps every
// step keeps growing its heap for hundreds of steps (gpt_adam, LibTorch 1.13: ~5 KB a step over
// its first 1,500, the plain run's heap flat). On the thread that runs the steps: a look at the
// heap's end per step, the headroom a few times a run. Not under the engine's lock: handing the
// pages to the writer waits while its queue is full, and other capturing threads would wait for the
// lock meanwhile (two threads ending backward passes at once may both give headroom: harmless).
void prepare_heap_for_next_step(State& s) {
  if (!g_heap_keeps_freed_top.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!dumps_step(s, s.step + 1) || s.heap_end_after_headroom == heap_end()) return;
  }
  // The writer thread faults the pages in while this one goes on; a kernel without
  // MADV_POPULATE_WRITE has this thread write them (the block is its own only until it frees it).
  if (populate_for_writing_supported()) s.writer->fault_in(reserve_heap_headroom(kHeapHeadroom));
  else prepare_heap_headroom(kHeapHeadroom);
  const std::uintptr_t end = heap_end();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.heap_end_after_headroom = end;
}

// ---- the backward half of an entry -----------------------------------------------------------------

// Memory for the post hooks, kept per thread. A hook is made for each forward entry with gradients
// and destroyed with its autograd graph after the backward pass: a gpt step makes ~175 and frees
// them in two bursts, while malloc's per-thread cache holds 7 blocks of a size, so the rest went
// through malloc's arena (its lock) both ways. A block freed on another thread (a device's autograd
// thread) joins that thread's list; past kMaxFreeHookBlocks, or once the thread's list is gone (its
// exit), blocks go back to operator delete.
constexpr std::size_t kMaxFreeHookBlocks = 4096;
thread_local bool t_hook_blocks_gone = false;  // trivially destroyed: readable to the thread's end
struct FreeHookBlocks {
  std::vector<void*> blocks;
  ~FreeHookBlocks() {
    t_hook_blocks_gone = true;
    for (void* b : blocks) ::operator delete(b);
  }
};
thread_local FreeHookBlocks t_hook_blocks;

void* take_hook_block(std::size_t size) {
  if (t_hook_blocks_gone || t_hook_blocks.blocks.empty()) return ::operator new(size);
  void* b = t_hook_blocks.blocks.back();
  t_hook_blocks.blocks.pop_back();
  return b;
}

void give_back_hook_block(void* b) {
  if (t_hook_blocks_gone || t_hook_blocks.blocks.size() >= kMaxFreeHookBlocks) return ::operator delete(b);
  if (t_hook_blocks.blocks.capacity() == 0) t_hook_blocks.blocks.reserve(kMaxFreeHookBlocks);
  t_hook_blocks.blocks.push_back(b);
}

class BackwardCapture final : public torch::autograd::FunctionPostHook {
 public:
  BackwardCapture(const OpInfo* op, std::int64_t call, std::int64_t step) : op_(op), call_(call), step_(step) {}
  // Autograd deletes the hook through its base (a virtual destructor), which calls these.
  static void* operator new(std::size_t size) { return take_hook_block(size); }
  static void operator delete(void* b) { give_back_hook_block(b); }

  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grad_inputs,
                                            const torch::autograd::variable_list& grad_outputs) override {
    if (!g_active.load(std::memory_order_relaxed) || g_state->writer->failed()) return grad_inputs;
    ToolCalls tool;  // the hook runs inside the backward pass, whose calls may be captured
    std::unique_ptr<CapturedRecord> c = DumpWriter::spare_record();
    c->step = step_;
    c->op = op_;
    c->call = call_;
    c->direction = Direction::backward;  // no acccheck_op: replay takes it from the forward
    try {
      FlatEncoder enc(*c, g_state->tensor_mode);
      for (const auto& g : grad_outputs) enc.tensor(g, Section::grad_inputs);
      for (const auto& g : grad_inputs) enc.tensor(g, Section::grad_outputs);
      g_state->writer->push(std::move(c));
    } catch (const std::exception& e) {
      std::cerr << "acccheck dump: " << op_->api_name << "." << call_ << ".backward not recorded: " << e.what() << "\n";
    }
    return grad_inputs;
  }

 private:
  const OpInfo* op_;
  std::int64_t call_;
  std::int64_t step_;
};

// ---- the calls ---------------------------------------------------------------------------------------

// A parameter among the inputs — also inside a tensor list: aten::lstm / gru / rnn_tanh take their
// weights as `Tensor[] params`, and a recurrent model's first call of a step is such a call.
bool has_leaf_requiring_grad(c10::ArrayRef<const c10::IValue> inputs) {
  auto is_parameter = [](const at::Tensor& t) { return t.defined() && t.requires_grad() && t.is_leaf(); };
  for (const auto& v : inputs) {
    if (v.isTensor()) {
      if (is_parameter(v.toTensor())) return true;
    } else if (v.isTensorList()) {
      const auto list = v.toTensorList();
      for (std::size_t k = 0; k < list.size(); ++k)
        if (is_parameter(list.get(k))) return true;
    }
  }
  return false;
}

// Automatic steps (no code change): a new step begins with the first operator, after a backward
// pass, that runs with grad mode on and takes a parameter (a leaf that requires grad): the next
// forward pass. The optimizer (no-grad) and logging of the loss stay in the step they follow.
void begin_step_if_forward_starts(State& s, c10::ArrayRef<const c10::IValue> inputs) {
  if (!g_backward_seen.load(std::memory_order_relaxed) || !at::GradMode::is_enabled() ||
      !has_leaf_requiring_grad(inputs))
    return;
  bool exit_now;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    advance_step_locked(s);
    exit_now = exit_due(s);
  }
  if (exit_now) CaptureEngine::instance().finish_and_exit("the last requested step was dumped");
}

// The call's number in its step, if it is an entry (list / black_list / scope keep it).
std::optional<std::int64_t> number_entry(State& s, const OpInfo& info, std::int64_t& step) {
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!g_dumping.load()) return std::nullopt;  // another thread ended the step meanwhile
  ++s.category_calls;
  s.last_step_seen = s.step;
  if (info.api_id >= s.counters.size()) s.counters.resize(info.api_id + 1, 0);
  std::int64_t call = s.counters[info.api_id]++;
  step = s.step;
  if (!s.options.list.empty() || !s.options.black_list.empty() || s.options.scope.size() == 2) {
    std::string entry = info.api_name + "." + std::to_string(call) + ".forward";
    bool keep = s.options.list.empty() || matches(entry, s.options.list);
    keep = keep && !matches(entry, s.options.black_list);
    if (s.options.scope.size() == 2) {
      if (s.scope == State::Scope::before && entry == s.options.scope[0]) s.scope = State::Scope::inside;
      bool inside = s.scope == State::Scope::inside;
      if (inside && entry == s.options.scope[1]) s.scope = State::Scope::after;
      keep = keep && inside;
    }
    if (!keep) {
      ++s.filtered;
      return std::nullopt;
    }
  }
  return call;
}

// The forward half of an entry, before the call runs (an in-place call is about to write them):
// its inputs, and where it was called from. False if the record could not be made.
bool capture_inputs(State& s, const OpInfo& info, c10::ArrayRef<const c10::IValue> inputs, bool in_backward,
                    CapturedRecord& c) {
  try {
    FlatEncoder enc(c, s.tensor_mode);
    encode_inputs(inputs, info.args, enc);
    const core::StackMode mode = s.options.stack;
    if (mode != core::StackMode::off) {
      RawStack& st = c.stack;
      // Python frames for calls made from Python (forward only: backward runs on autograd threads).
      if (mode != core::StackMode::raw && !in_backward) st.interned_python = capture_python_stack(st.python);
      // The copied frames' vectors are read (and cleared for the next call) only when used.
      c.side_used = c.side_used || !st.interned_python;
      const bool python = !st.python_frames().empty();
      if (!python && mode != core::StackMode::python) capture_raw_stack(st.frames);
      c.has_stack = python || !st.frames.empty();
    }
    return true;
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << c.api() << " not recorded: " << e.what() << "\n";
    return false;
  }
}

// After the call: its results, a post hook for its gradients, and the record to the writer.
void capture_outputs(State& s, c10::ArrayRef<const c10::IValue> outputs, std::unique_ptr<CapturedRecord> c) {
  const OpInfo& op = *c->op;
  const std::int64_t call = c->call;
  try {
    FlatEncoder enc(*c, s.tensor_mode);
    if (op.zeroes_self) enc.tensors_are_zeros();
    encode_outputs(outputs, enc);
    // Gradients: one post hook on the autograd node that produced the outputs.
    for (const auto& v : outputs) {
      if (!v.isTensor()) continue;
      const at::Tensor& t = v.toTensor();
      if (!t.defined() || !t.requires_grad()) continue;
      // The node itself, not a shared_ptr copy (two locked instructions, each waiting for the
      // record's stores to drain) — except for a view, whose grad_fn() may rebuild its node after an
      // in-place call on its base.
      // (grad_fn() returns a std::shared_ptr in LibTorch 1.13, a c10::intrusive_ptr in 2.13.)
      const bool view = t.is_view();
      const auto view_node = view ? t.grad_fn() : decltype(t.grad_fn()){};
      torch::autograd::Node* node = view ? view_node.get() : torch::autograd::impl::grad_fn_unsafe(t);
      if (!node) continue;
      node->add_post_hook(std::make_unique<BackwardCapture>(&op, call, c->step));
      break;
    }
    s.writer->push(std::move(c));
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << op.api_name << "." << call << " not recorded: " << e.what() << "\n";
  }
}

// Whether the calling thread may pause (capture_mode.hpp) until its backward pass ends: a step that
// is not dumped, its start behind it (no backward pass since), automatic steps — the step rule looks
// only at calls after a backward pass, so nothing this thread calls before its next one ends can
// matter — and this thread the only one that starts backward passes, told by the preload's
// interposer (backward_pass_starts), which also ends the pause. Another thread's step change would
// not reach a paused thread: with two threads running backward passes none pauses.
bool may_pause(const State& s) {
  return t_starts_backward_passes && s.options.auto_step && !g_backward_seen.load(std::memory_order_relaxed) &&
         !g_dumping.load(std::memory_order_relaxed) && g_backward_threads.load(std::memory_order_relaxed) == 1;
}

c10::ArrayRef<const c10::IValue> last_values(const torch::jit::Stack& stack, std::size_t n) {
  n = std::min(n, stack.size());
  return c10::ArrayRef<const c10::IValue>(stack.data() + (stack.size() - n), n);
}

// Runs the operator below the capture key with the key excluded: what it calls in turn, and
// whatever the tool runs meanwhile, dispatch as if the tool were not there.
void run_unseen(const c10::OperatorHandle& op, c10::DispatchKeySet next, torch::jit::Stack* stack) {
  ToolCalls tool;
  op.redispatchBoxed(next, stack);
}

// The capture key's fallback: the calls a capturing thread makes reach it (capture_mode.hpp), except
// those nested in a call of a hook plugin's category, which run with the key excluded — an entry is
// always the outermost category call. Operators outside every category are transparent: they run
// below the key with the key still in place, so the calls they make come here in turn (C++
// torch::nn::Linear → t + addmm, conv2d → convolution). The calls the autograd engine makes
// during a backward pass are looked at only for the step rule (a backward pass ran) and run unseen,
// unless --capture-backward-ops. The operator's own exceptions pass through; they leave no entry, as
// msprobe's hooks record none.
void on_operator(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  const c10::DispatchKeySet next = below_capture(ks);
  if (!g_active.load(std::memory_order_relaxed)) return run_unseen(op, next, stack);
  State* s = g_state;
  const OpInfo& info = lookup(op, thread_state());
  const bool in_backward = torch::autograd::get_current_graph_task_exec_info() != nullptr;
  if (in_backward && !g_backward_seen.load(std::memory_order_relaxed)) {
    g_backward_seen.store(true);
    g_call_sites_to_learn.store(0, std::memory_order_relaxed);
  }
  if (in_backward && !s->options.capture_backward_ops) {
    // The rest of this autograd node's calls skip the fallback too: the engine sets every node's
    // thread-local state afresh from the backward pass's (and puts the caller's back after it), so
    // the key comes back for the next node and for the program after the pass.
    c10::impl::tls_set_dispatch_key_excluded(kCaptureKey, true);
    return op.redispatchBoxed(next, stack);
  }
  if (!in_backward && may_pause(*s)) {
    pause_calls_on_this_thread();  // from the next call on
    return op.redispatchBoxed(next, stack);
  }
  if (!info.kept) return op.redispatchBoxed(next, stack);
  ToolCalls tool;  // from here on the operator's nested calls and the tool's own work skip the fallback
  if (!in_backward && !g_op_seen.load(std::memory_order_relaxed)) g_op_seen.store(true, std::memory_order_relaxed);
  const auto inputs = last_values(*stack, info.arguments);
  if (s->options.auto_step && !in_backward) begin_step_if_forward_starts(*s, inputs);
  std::int64_t step = 0;
  std::optional<std::int64_t> call;
  if (g_dumping.load(std::memory_order_relaxed)) call = number_entry(*s, info, step);
  if (!call) {
    // Once per process, in a step that is not dumped: how Python frames are to be read.
    if (!in_backward && s->reads_python_frames) {
      if (g_call_sites_to_learn.load(std::memory_order_relaxed) > 0 &&
          g_call_sites_to_learn.fetch_sub(1, std::memory_order_relaxed) > 0)
        learn_python_call_sites();
      else
        choose_python_frame_source();
    }
    return op.redispatchBoxed(next, stack);
  }

  std::unique_ptr<CapturedRecord> c = DumpWriter::spare_record();  // one the writer is done with: its vectors keep their memory
  c->call = *call;
  c->step = step;
  c->op = &info;
  const bool recorded = capture_inputs(*s, info, inputs, in_backward, *c);
  op.redispatchBoxed(next, stack);
  if (recorded) capture_outputs(*s, last_values(*stack, info.returns), std::move(c));
}

}  // namespace

bool backward_pass_starts() {
  ++t_backward_depth;
  if (!t_starts_backward_passes) {
    t_starts_backward_passes = true;
    g_backward_threads.fetch_add(1);
  }
  g_call_sites_to_learn.store(0, std::memory_order_relaxed);
  if (!g_active.load(std::memory_order_relaxed)) return false;
  if (!g_backward_seen.load(std::memory_order_relaxed)) g_backward_seen.store(true);
  return !g_state->options.capture_backward_ops;
}

std::size_t free_post_hook_blocks() { return t_hook_blocks_gone ? 0 : t_hook_blocks.blocks.size(); }

void backward_pass_ended() {
  if (--t_backward_depth != 0) return;
  resume_calls_on_this_thread();
  if (g_active.load(std::memory_order_relaxed) && g_state->options.auto_step) prepare_heap_for_next_step(*g_state);
}

namespace {

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
// A forked child (a DataLoader worker) inherits the forking thread's capture setting and the
// engine's memory but not the writer thread. Around fork() the engine's locks are held and the writer is made idle (waiting
// for work, inside no lock and no malloc), so the child inherits no lock held by a thread it does
// not have. In the child the parent's engine is abandoned (never touched, never destroyed: its
// condition variables may have had waiters). Without --follow-children its calls are no longer
// captured; with it the child gets an engine of its own, writing <dump_path>/child-<pid>/, in the step the
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

// The followed child's engine: the parent's options, hooks and classification; a new writer and new
// counters. Throws what the writer's set-up throws.
State* engine_for_forked_child(const State& parent) {
  auto s = std::make_unique<State>(parent.options);
  s->options.dump_path = CaptureEngine::child_dump_path(parent.options.dump_path);
  s->options.exit_after_last_step = false;  // ending a worker would break the parent's training
  s->rank = parent.rank;
  s->rank_dir = parent.rank_dir;
  s->hooks = parent.hooks;  // the parent's registry is never destroyed: the plugins stay loaded
  s->started = parent.started;
  s->step = parent.step;
  open_writer(*s);
  return s.release();
}

void after_fork_in_child() {
  State* parent = g_state;
  g_ops_mutex.unlock();
  if (!parent) return;
  g_active.store(false);
  g_state = nullptr;  // abandoned, locks and all
  g_dumping.store(false);
  g_backward_seen.store(false);  // the child's own step begins with no backward pass seen
  if (parent->options.follow_children && !parent->finished) {
    try {
      State* child = engine_for_forked_child(*parent);
      std::lock_guard<std::mutex> lock(child->mutex);
      g_state = child;
      update_dumping(*child);
      g_active.store(true);
      return;
    } catch (const std::exception& e) {
      std::cerr << "acccheck dump: forked process " << ::getpid() << " not dumped: " << e.what() << "\n";
    }
  }
  capture_calls_on_this_thread(false);  // a child has only the thread that forked
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

void CaptureEngine::configure(core::DumpOptions options) {
  if (g_state && !g_state->finished) throw std::runtime_error("a dump is already running in this process");
  static std::once_flag once_per_process;
  std::call_once(once_per_process, [] {
    ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    // Before the program's tensors (the preload configures before main): a dumped step must not
    // trim and re-fault the heap where the plain step does not (allocator_thresholds.hpp).
    g_heap_keeps_freed_top.store(settle_allocator_thresholds());
  });
  core::validate_dump_options(options, "dump options");
  install_capture_fallback(c10::KernelFunction::makeFromBoxedFunction<&on_operator>());
  auto s = std::make_unique<State>(std::move(options));
  s->rank = rank_from_environment();
  s->rank_dir = s->rank ? "rank" + std::to_string(*s->rank) : "rank";
  core::PluginSearch search;
  search.dirs = s->options.plugin_dirs;
  if (const char* env = std::getenv("ACCCHECK_PLUGIN_PATH")) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) search.dirs.push_back(d);
  }
  for (auto& d : own_plugin_dirs()) search.dirs.push_back(d);
  s->registry.load(search, {PluginKind::hook});
  for (const auto& [info, hook] : s->registry.hooks()) {
    hook->configure(core::PluginRegistry::sidecar_settings(*info));
    s->hooks.push_back(hook);
  }
  if (s->hooks.empty()) {
    std::string why = "no hook plugin found in";
    for (auto& d : search.dirs) why += " " + d;
    if (search.dirs.empty()) why += " any folder (set ACCCHECK_PLUGIN_PATH)";
    for (const auto& r : s->registry.refused()) why += "; " + r.line();
    throw std::runtime_error(why);
  }
  // The calls of operators outside every category no longer reach the fallback (each one's boxing
  // cost a gpt step ~36 calls of ~0.4 µs), in dumped steps and others alike.
  make_operators_transparent([&hooks = s->hooks](const c10::OperatorName& name) {
    return !keeping_decision(hooks, OperatorName{name.name, name.overload_name});
  });
  open_writer(*s);
  if (s->options.stack != core::StackMode::off) {
    prepare_stack_capture();
    if (s->options.stack != core::StackMode::raw) prepare_python_stack();
  }
  // The first dumped step's records and statistics table, made now: a program that dumps one step
  // pays for them here, not in that step (on the configuring thread, which runs the steps).
  DumpWriter::prepare_spare_records(std::min<std::size_t>(s->options.queue_size, kPreparedRecords));
  prepare_statistics_cache();
  {
    // A new configuration may classify differently. The old entries are retired, not freed: another
    // thread may still hold a pointer until it sees the new epoch.
    std::lock_guard<std::mutex> lock(g_ops_mutex);
    static auto* retired = new std::vector<std::unique_ptr<OpInfo>>;
    for (auto& kv : ops_table()) retired->push_back(std::move(kv.second));
    ops_table().clear();
  }
  g_epoch.fetch_add(1);
  g_backward_seen.store(false);
  g_state = s.release();
  {
    std::lock_guard<std::mutex> lock(g_state->mutex);
    update_dumping(*g_state);
  }
  g_active.store(true);
  // The configuring thread's calls are captured, and those of the threads started from then on by
  // a capturing thread (capture_mode.cpp).
  capture_calls_on_this_thread(true);
}

void CaptureEngine::start() {
  if (!g_state) throw std::runtime_error("start(): the dump is not configured");
  {
    std::lock_guard<std::mutex> lock(g_state->mutex);
    g_epoch.fetch_add(1);
    g_state->started = true;
    update_dumping(*g_state);
  }
  capture_calls_on_this_thread(true);  // start() may come from another thread than configure()
}

void CaptureEngine::stop() {
  if (!g_state) return;
  std::lock_guard<std::mutex> lock(g_state->mutex);
  g_state->started = false;
  // Backward entries of this step still arrive through the autograd hooks (not the fallback).
  update_dumping(*g_state);
}

void CaptureEngine::step() {
  if (!g_state) return;
  prepare_heap_for_next_step(*g_state);
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
    g_active.store(false);
  }
  capture_calls_on_this_thread(false);  // this thread's calls no longer box their arguments for nothing
  WriterTotals t = s->writer->finish();
  std::ostringstream os;
  os << "acccheck dump: ";
  if (t.entries > 0) {
    os << t.entries << " entr" << (t.entries == 1 ? "y" : "ies") << " in " << t.steps.size() << " step"
       << (t.steps.size() == 1 ? "" : "s") << " written to " << s->options.dump_path;
    if (t.tensor_files) os << " (" << t.tensor_files << " tensor files)";
    if (t.late_backward)
      os << "; " << t.late_backward << " entr" << (t.late_backward == 1 ? "y" : "ies")
         << " arrived after " << (t.late_backward == 1 ? "its" : "their")
         << " step's files were finished (a backward pass that ran after the next step began, or on another "
            "thread after the step ended) and "
         << (t.late_backward == 1 ? "was" : "were") << " dropped (first: " << t.first_late << ")";
    if (s->writer->failed())
      os << "; WRITING FAILED partway (see the error above): the dump is incomplete and marked so ("
         << kIncompleteMarkerName << ")";
    if (const auto older = s->writer->steps_of_earlier_dumps(t.steps); !older.empty()) {
      os << "; " << s->options.dump_path << " also holds " << older.size() << " step" << (older.size() == 1 ? "" : "s")
         << " of an earlier dump (";
      for (std::size_t i = 0; i < older.size() && i < 5; ++i) os << (i ? ", " : "") << "step" << older[i];
      os << (older.size() > 5 ? ", ..." : "") << ") that this run did not write: remove them or dump into an empty folder";
    }
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
    else if (!g_op_seen.load())
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
