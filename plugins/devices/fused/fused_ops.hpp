// Vendor fused operators without a CPU kernel (npu::npu_fusion_attention, npu::npu_rms_norm, ...):
// their CPU references ("bench functions", the formulas of msprobe's bench_functions/, spec
// api-list.md §4) and a healthy device-side formula for backends that have no kernel of their own
// (the cpu device plays the GPU's role; npu-sim runs it with its own accumulation order).
// Torch-linked: linked into the device plugins only.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <torch/library.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <acccheck/device.hpp>

namespace acccheck::fused {

using Values = std::vector<c10::IValue>;

struct FusedOp {
  std::string name;                  // "npu::npu_rms_norm"
  std::vector<std::string> schemas;  // torch_npu's, for a process where torch_npu is absent
  // msprobe's reference on whatever dtype it is given (run_ut gives it the raised inputs): the
  // bench function. Arguments as the bound schema's stack.
  BenchFunction reference;
  // What a healthy accelerator returns: float16/bfloat16 inputs computed in float32, results in
  // torch_npu's output dtypes and count.
  BenchFunction device;
};

// Runs op.device on `args` and returns torch_npu's results; a result that aliases an input (a
// reshape's view) is copied, as the schema promises a new tensor.
Values run_device_formula(const FusedOp& op, const Values& args);

// Every fused operator acccheck has a reference for.
const std::vector<FusedOp>& fused_ops();
const FusedOp* find_fused_op(const std::string& qualified_name);
// The references keyed by qualified name, as DevicePlugin::bench_functions() returns them.
std::map<std::string, BenchFunction> reference_functions();

// Around a backward computation of a fused operator (npu-sim wraps it to turn its faults off for
// the operators inside, then to apply the fused operator's own backward faults to the gradients).
using BackwardWrapper = std::function<std::vector<at::Tensor>(const std::string& op, const std::function<std::vector<at::Tensor>()>& compute)>;

// Defines each fused operator this process lacks (torch_npu defines its own): the schema, the device
// formula as the CompositeExplicitAutograd kernel (every backend without a kernel of its own), and
// an autograd kernel. Idempotent; thread-safe.
void define_missing_operators();
// The autograd kernel (Autograd dispatch key): runs the operator below autograd and records a node
// whose backward differentiates the device formula at the saved inputs.
torch::CppFunction autograd_kernel(BackwardWrapper wrapper = {});

}  // namespace acccheck::fused
