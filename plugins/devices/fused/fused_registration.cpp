// Registers the fused operators a process lacks, with a device kernel and an autograd kernel whose
// backward differentiates the device formula at the saved inputs (recomputed: nothing but the
// inputs is kept between forward and backward).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "fused_ops.hpp"

namespace acccheck::fused {

namespace {

Values take_arguments(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::size_t n = op.schema().arguments().size();
  Values args(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  torch::jit::drop(*stack, n);
  return args;
}

const FusedOp& fused_op_of(const c10::OperatorHandle& op) {
  const FusedOp* f = find_fused_op(op.schema().name());
  if (!f) throw std::runtime_error(op.schema().name() + ": not a fused operator acccheck knows");
  return *f;
}

// The CompositeExplicitAutograd kernel: the device formula on whatever backend the inputs are on.
void device_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const FusedOp& f = fused_op_of(op);
  Values results = run_device_formula(f, take_arguments(op, stack));
  for (auto& r : results) stack->push_back(std::move(r));
}

bool writes_an_argument(const c10::FunctionSchema& schema) {
  for (const auto& a : schema.arguments())
    if (a.alias_info() && a.alias_info()->isWrite()) return true;
  return false;
}

class FusedBackward final : public torch::autograd::Node {
 public:
  FusedBackward(const FusedOp& op, Values args, std::vector<std::size_t> inputs, BackwardWrapper wrapper)
      : op_(op), args_(std::move(args)), inputs_(std::move(inputs)), wrapper_(std::move(wrapper)) {}

  std::vector<std::size_t> output_slots;  // which results of the operator feed this node, in order

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    auto compute = [&]() -> std::vector<at::Tensor> {
      at::AutoGradMode grad_mode(true);
      Values args = args_;
      std::vector<at::Tensor> leaves;
      for (std::size_t i : inputs_) {
        at::Tensor leaf = args[i].toTensor().detach().requires_grad_(true);
        args[i] = leaf;
        leaves.push_back(leaf);
      }
      Values results = op_.device(args);
      std::vector<at::Tensor> outputs, seeds;
      for (std::size_t j = 0; j < output_slots.size() && j < grads.size(); ++j) {
        if (!grads[j].defined()) continue;
        at::Tensor out = results.at(output_slots[j]).toTensor();
        if (!out.requires_grad()) continue;
        outputs.push_back(out);
        seeds.push_back(grads[j]);
      }
      if (outputs.empty()) return std::vector<at::Tensor>(leaves.size());
      return torch::autograd::grad(outputs, leaves, seeds, /*retain_graph=*/false, /*create_graph=*/false, /*allow_unused=*/true);
    };
    return wrapper_ ? wrapper_(op_.name, compute) : compute();
  }

  std::string name() const override { return op_.name + "Backward"; }
  void release_variables() override { args_.clear(); }

 private:
  const FusedOp& op_;
  Values args_;
  std::vector<std::size_t> inputs_;  // positions of the arguments that require grad
  BackwardWrapper wrapper_;
};

// Autograd holds nodes by std::shared_ptr in LibTorch 1.13 and by c10::intrusive_ptr in 2.13 (the
// release between where it changed is not pinned here): the edge's pointer type says which.
using NodePtr = decltype(torch::autograd::Edge{}.function);

template <class T, class... Args>
NodePtr make_node(Args&&... args) {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<torch::autograd::Node>>)
    return std::make_shared<T>(std::forward<Args>(args)...);
  else
    return c10::make_intrusive<T>(std::forward<Args>(args)...);
}

class FusedAutograd final : public c10::OperatorKernel {
 public:
  explicit FusedAutograd(BackwardWrapper wrapper) : wrapper_(std::move(wrapper)) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    const auto& schema = op.schema();
    const std::size_t n = schema.arguments().size();
    std::vector<std::size_t> positions;
    std::vector<at::Tensor> inputs;
    Values saved;
    // An out= call (the optimizer steps) updates its state in place: nothing to differentiate.
    if (at::GradMode::is_enabled() && !writes_an_argument(schema)) {
      for (std::size_t i = 0; i < n; ++i) {
        const c10::IValue& v = (*stack)[stack->size() - n + i];
        if (v.isTensor() && v.toTensor().defined() && v.toTensor().requires_grad() && at::isFloatingType(v.toTensor().scalar_type())) {
          positions.push_back(i);
          inputs.push_back(v.toTensor());
        }
      }
      if (!inputs.empty()) {
        for (std::size_t i = 0; i < n; ++i) {
          const c10::IValue& v = (*stack)[stack->size() - n + i];
          saved.push_back(v.isTensor() && v.toTensor().defined() ? c10::IValue(v.toTensor().detach()) : v);
        }
      }
    }
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      op.redispatchBoxed(ks & c10::after_autograd_keyset, stack);
    }
    if (inputs.empty()) return;
    const FusedOp& f = fused_op_of(op);
    NodePtr node = make_node<FusedBackward>(f, std::move(saved), std::move(positions), wrapper_);
    auto* fused_node = static_cast<FusedBackward*>(node.get());
    node->set_next_edges(torch::autograd::collect_next_edges(inputs));
    const std::size_t nret = schema.returns().size();
    for (std::size_t k = 0; k < nret; ++k) {
      c10::IValue& v = (*stack)[stack->size() - nret + k];
      if (!v.isTensor()) continue;
      at::Tensor t = v.toTensor();
      if (!t.defined() || !at::isFloatingType(t.scalar_type())) continue;
      torch::autograd::set_history(t, node);
      fused_node->output_slots.push_back(k);
    }
  }

 private:
  BackwardWrapper wrapper_;
};

// "npu_sort_v2.out(Tensor self, ...)" → {"npu_sort_v2", "out"}
std::pair<std::string, std::string> name_and_overload(const std::string& schema) {
  std::string name = schema.substr(0, schema.find('('));
  auto dot = name.find('.');
  if (dot == std::string::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

}  // namespace

Values run_device_formula(const FusedOp& op, const Values& args) {
  Values results = op.device(args);
  for (auto& r : results) {
    if (!r.isTensor() || !r.toTensor().defined()) continue;
    for (const auto& a : args)
      if (a.isTensor() && a.toTensor().defined() && r.toTensor().is_alias_of(a.toTensor()) && !r.toTensor().is_same(a.toTensor())) {
        r = r.toTensor().clone();
        break;
      }
  }
  return results;
}

torch::CppFunction autograd_kernel(BackwardWrapper wrapper) {
  return torch::CppFunction::makeFromBoxedFunctor(std::make_unique<FusedAutograd>(std::move(wrapper)));
}

void define_missing_operators() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const FusedOp& op : fused_ops()) {
    const std::string ns = op.name.substr(0, op.name.find("::"));
    for (const std::string& schema : op.schemas) {
      auto [name, overload] = name_and_overload(schema);
      if (dispatcher.findSchema({ns + "::" + name, overload})) continue;
      // Never freed: the registrations must outlive every call (the plugins are never unloaded).
      auto* lib = new torch::Library(torch::Library::FRAGMENT, ns, c10::nullopt, __FILE__, __LINE__);
      lib->def(schema.c_str());
      const std::string qualified = overload.empty() ? name : name + "." + overload;
      lib->impl(qualified.c_str(), torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd,
                                                   torch::CppFunction::makeFromBoxedFunction<&device_kernel>()));
      lib->impl(qualified.c_str(), torch::dispatch(c10::DispatchKey::Autograd, autograd_kernel()));
    }
  }
}

}  // namespace acccheck::fused
