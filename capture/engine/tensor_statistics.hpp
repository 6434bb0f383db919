// Max / Min / Mean / Norm of a tensor as msprobe's dumper writes them (dump-format.md §2.5).
#pragma once

#include <ATen/core/Tensor.h>

#include <acccheck/record.hpp>

namespace acccheck::capture {

struct Statistics {
  Statistic max, min, mean, norm;
};

// CPU tensors: computed now, in one pass over the elements. Tensors on another device: nothing is
// read back here (no host sync on the training thread); the four values are computed on the device
// into a 4-element float tensor returned in `pending`, which the writer thread copies to the host
// and applies with apply_pending_statistics(). Statistics the rules leave empty stay null. The
// operators some tensors need (complex, bool, device, non-dense, other dtypes) go through the
// dispatcher: the engine runs this with the capture key excluded (capture_mode.hpp, ToolCalls), so
// they are never entries, and under a RecordFunction guard, so no profiler sees them.
void fill_statistics(const at::Tensor& t, Statistics& out, at::Tensor* pending);
void apply_pending_statistics(const at::Tensor& pending, Statistics& out);
// Makes the calling thread's table of reusable statistics now (engine set-up), not in the first
// dumped step (~250 KiB written).
void prepare_statistics_cache();

}  // namespace acccheck::capture
