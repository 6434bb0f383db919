// The simulated NPU: a complete PrivateUse1 backend (allocator over host memory, device guard,
// the minimal kernels, and a boxed fallback running the CPU kernels) registered when this plugin
// is initialised. Healthy, it computes in each operator's own dtype, but matmul, convolution and
// reductions accumulate in a different, deterministic order than the CPU (split in two blocks,
// partials summed afterwards) — so its rounding differs the way a real accelerator's does.
// Elementwise operators are bit-identical to the CPU. Faults (fault_injection.hpp) come on top.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace acccheck::npusim {

// Registers the backend with LibTorch (once; idempotent). Throws if another backend already owns
// PrivateUse1 in this process.
void register_backend();
// True when PrivateUse1 belongs to another backend (e.g. torch_npu) in this process.
bool privateuse1_taken_by_someone_else();

// A CPU tensor sharing the memory of a simulated-NPU tensor (or the tensor itself if on CPU).
at::Tensor host_view(const at::Tensor& t);

// Whether the calling thread is running an autograd backward node right now.
bool in_backward_pass();

// Number of operator calls the fallback has served (for tests and diagnostics).
std::uint64_t fallback_calls();

}  // namespace acccheck::npusim
