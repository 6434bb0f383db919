// npu-sim's kernels for the vendor fused operators (npu::npu_fusion_attention, npu::npu_rms_norm, ...;
// plugins/devices/fused): the healthy device formula run on the simulated device — its matmuls and
// reductions take the device's accumulation order — under the fault file like any other operator,
// forward and backward.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace acccheck::npusim {

using BoxedKernelFn = void (*)(const c10::OperatorHandle&, torch::jit::Stack*);

// Defines the fused operators this process lacks and routes their PrivateUse1 calls to `fallback`
// (the backend's fallback, which applies the faults and calls run_fused_operator) and their autograd
// to a node whose backward applies the faults planted on the operator's backward.
void register_fused_operators(BoxedKernelFn fallback);

// Runs a fused operator's device formula on the stack's device tensors (faults off inside); false
// when `op` is not a fused operator.
bool run_fused_operator(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace acccheck::npusim
