// Autograd's backward passes, seen where they begin: torch::autograd::Engine::execute is defined
// here under its own (mangled) name, so in a program that has this library in LD_PRELOAD every
// call of it lands here first — the virtual call of `loss.backward()` in C++ (the vtable slot is
// bound by symbol at load time), PythonEngine::execute's call of it in Python (through the PLT),
// torch.autograd.grad alike — and goes on to LibTorch's own through dlsym(RTLD_NEXT). The same
// symbol and signature in LibTorch 1.13 and 2.13 (checked against both libraries' relocations and
// headers); a LibTorch where they differ simply never calls this one, and the engine sees backward
// passes through their first calls to the fallback, as without it.
//
// What it is for: the engine is told that a backward pass ran (the step rule) before the pass
// starts, so the pass's own calls can skip the capture fallback (capture_engine.hpp,
// backward_pass_starts). The exclusion is set on this thread around the call; autograd copies the
// thread-local state into the pass (every node runs with it, on any thread), and the guard puts
// the caller's state back afterwards, exceptions included. Its end (backward_pass_ended) is where
// a thread paused for a step that is not dumped resumes: the next step's first call must be seen.
#include <ATen/core/Tensor.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "engine/capture_engine.hpp"
#include "engine/capture_mode.hpp"

namespace {

// Engine::execute(const edge_list& roots, const variable_list& inputs, bool keep_graph,
// bool create_graph, bool accumulate_grad, const edge_list& outputs) as a free function: the
// return slot, then `this`, then the arguments (the Itanium C++ ABI on x86-64 and AArch64). The
// edge lists are passed by reference and only handed on, so they need not be typed here.
using VariableList = std::vector<at::Tensor>;
using ExecuteFn = VariableList (*)(void* engine, const void* roots, const VariableList& inputs, bool keep_graph,
                                   bool create_graph, bool accumulate_grad, const void* outputs);

#define ACCCHECK_ENGINE_EXECUTE \
  "_ZN5torch8autograd6Engine7executeERKSt6vectorINS0_4EdgeESaIS3_EERKS2_IN2at6TensorESaIS9_EEbbbS7_"

ExecuteFn libtorch_execute() {
  static const ExecuteFn real = reinterpret_cast<ExecuteFn>(::dlsym(RTLD_NEXT, ACCCHECK_ENGINE_EXECUTE));
  return real;
}

}  // namespace

extern "C++" __attribute__((visibility("default"))) VariableList acccheck_engine_execute(
    void* engine, const void* roots, const VariableList& inputs, bool keep_graph, bool create_graph,
    bool accumulate_grad, const void* outputs) __asm__(ACCCHECK_ENGINE_EXECUTE);

VariableList acccheck_engine_execute(void* engine, const void* roots, const VariableList& inputs, bool keep_graph,
                                     bool create_graph, bool accumulate_grad, const void* outputs) {
  const ExecuteFn real = libtorch_execute();
  if (!real) {  // only LibTorch calls this, and it defines the symbol: not reached
    std::fputs("acccheck dump: autograd's Engine::execute was not found after libacccheck_preload.so\n", stderr);
    std::abort();
  }
  struct Ended {  // destroyed last: after the guard has put the caller's key state back
    ~Ended() { acccheck::capture::backward_pass_ended(); }
  } ended;
  std::optional<c10::impl::ExcludeDispatchKeyGuard> unseen;
  if (acccheck::capture::backward_pass_starts()) unseen.emplace(acccheck::capture::kCaptureKey);
  return real(engine, roots, inputs, keep_graph, create_graph, accumulate_grad, outputs);
}
