#include "fused_op_kernels.hpp"

#include <ATen/ATen.h>
#include <torch/library.h>

#include <chrono>
#include <csignal>
#include <mutex>
#include <thread>

#include "fault_injection.hpp"
#include "fused_ops.hpp"
#include "npu_sim_backend.hpp"

namespace acccheck::npusim {

namespace {

class ForwardToFallback final : public c10::OperatorKernel {
 public:
  explicit ForwardToFallback(BoxedKernelFn fn) : fn_(fn) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) { fn_(op, stack); }

 private:
  BoxedKernelFn fn_;
};

// The backward of a fused operator on the device: computed with faults off inside, then the faults
// planted on the operator's backward applied to its gradients.
std::vector<at::Tensor> backward_with_faults(const std::string& op, const std::function<std::vector<at::Tensor>()>& compute) {
  const Fault* fault = find_fault(op, "", false, /*in_backward=*/true);
  const std::uint64_t call_index = fault ? next_call_index(*fault) : 0;
  if (fault && fault->kind == FaultKind::crash) std::raise(SIGSEGV);
  if (fault && fault->kind == FaultKind::hang)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  std::vector<at::Tensor> grads;
  {
    FaultsOff off;
    grads = compute();
  }
  if (!fault) return grads;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    at::Tensor& g = grads[i];
    if (!g.defined()) continue;
    if (fault->kind == FaultKind::low_precision)
      g = round_input(*fault, host_view(g)).to(g.device());  // the gradient kept at the fault's precision
    else
      apply_value_fault(*fault, installed_seed(), call_index * 131 + i, host_view(g));
  }
  return grads;
}

}  // namespace

void register_fused_operators(BoxedKernelFn fallback) {
  static std::once_flag once;
  std::call_once(once, [fallback] {
    fused::define_missing_operators();
    auto* lib = new torch::Library(torch::Library::IMPL, "npu", c10::nullopt, __FILE__, __LINE__);  // never freed
    for (const fused::FusedOp& op : fused::fused_ops()) {
      if (op.name.rfind("npu::", 0) != 0) continue;
      for (const std::string& schema : op.schemas) {
        const std::string qualified = schema.substr(0, schema.find('('));
        lib->impl(qualified.c_str(), torch::dispatch(c10::DispatchKey::PrivateUse1,
                                                     torch::CppFunction::makeFromBoxedFunctor(std::make_unique<ForwardToFallback>(fallback))));
        lib->impl(qualified.c_str(), torch::dispatch(c10::DispatchKey::AutogradPrivateUse1, fused::autograd_kernel(backward_with_faults)));
      }
    }
  });
}

bool run_fused_operator(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const fused::FusedOp* f = fused::find_fused_op(op.schema().name());
  if (!f) return false;
  const std::size_t n = op.schema().arguments().size();
  fused::Values args(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  torch::jit::drop(*stack, n);
  fused::Values results;
  {
    FaultsOff off;
    results = fused::run_device_formula(*f, args);
  }
  for (auto& r : results) stack->push_back(std::move(r));
  return true;
}

}  // namespace acccheck::npusim
