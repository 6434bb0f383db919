// How operator calls reach the dump engine: a boxed dispatcher fallback on a mode key that the
// threads being captured hold in their thread-local "included" dispatch-key set.
//
// Why not RecordFunction: with any FUNCTION-scope RecordFunction callback enabled, every dispatcher
// call — each nested one too (linear → t → transpose → as_strided, every op of every autograd node)
// — builds a RecordFunction and runs the callbacks; on the small op-bound example step a callback
// that does nothing at all costs 1.06-1.25× the step (bench/RESULTS.md, eleventh and twelfth
// sessions; dump_bench.sh's mode rf-noop), the idle goal several times over. A mode key
// costs only the calls that reach it: the fallback runs the operator with the key excluded, so its
// nested calls and the tool's own work dispatch as if no tool were there, and the outermost call is
// one boxing of its arguments and results (the small step: 1.00-1.04×, within noise).
//
// The key is TESTING_ONLY_GenericMode: the only mode key in LibTorch 1.13 and 2.x that no part of
// PyTorch uses (the Python keys belong to torch_python's own fallbacks). It sits above autograd,
// autocast and functorch, so the engine sees a call as the program made it (aten::linear, not the
// addmm inside). Another library that registers a fallback on it is refused in one line.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cstddef>
#include <functional>

namespace acccheck::capture {

constexpr c10::DispatchKey kCaptureKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

// Registers `fallback` as the key's fallback, once per process (later calls do nothing). Throws
// std::runtime_error with one line if the key already has a fallback of someone else's.
void install_capture_fallback(c10::KernelFunction fallback);

// Operators outside every category skip the key altogether: a fallthrough kernel at the key for
// each operator registered now for which `transparent` says so (the dispatcher then leaves the key
// out of their calls' key sets: no boxing of their arguments and results, no fallback call — ~0.4 µs
// a call). Such an operator already ran below the key with the key left in place (on_operator), so
// what it calls still comes to the fallback: the same calls reach the engine as before, fewer pass
// through it. Operators registered later (a library loaded afterwards) reach the fallback, which
// runs them the same way. Replaces the set made by the previous call (a new configuration may
// classify differently). Returns how many operators were made transparent.
std::size_t make_operators_transparent(const std::function<bool(const c10::OperatorName&)>& transparent);

// The calling thread's calls reach the fallback (or no longer do). Threads it creates from then on
// inherit the setting (capture_mode.cpp's pthread_create); autograd's and at::launch's threads carry it with the rest
// of LibTorch's thread-local state.
void capture_calls_on_this_thread(bool on);

// A pause (the engine's steps that are not dumped, automatic steps): the key excluded on the
// calling thread until resume_calls_on_this_thread, so its calls skip the fallback entirely — no
// boxing. A thread created during a pause starts paused (it captures once its own pause ends: a
// thread that never ends one, such as a pool LibTorch starts inside an operator, never does).
void pause_calls_on_this_thread();
void resume_calls_on_this_thread();  // nothing when not paused
bool calls_paused_on_this_thread();

// The key is included and not excluded: a call made now reaches the fallback.
inline bool this_thread_captures() {
  return c10::impl::tls_is_dispatch_key_included(kCaptureKey) && !c10::impl::tls_is_dispatch_key_excluded(kCaptureKey);
}

// The key set an operator is run with from the fallback: every key below the capture key.
inline c10::DispatchKeySet below_capture(c10::DispatchKeySet ks) {
  return ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kCaptureKey);
}

// While it lives, the calling thread's calls skip the fallback: the operator the fallback runs
// (so its nested calls are never entries) and the tool's own work.
struct ToolCalls {
  ToolCalls() : excluded(kCaptureKey) {}
  c10::impl::ExcludeDispatchKeyGuard excluded;
};

}  // namespace acccheck::capture
