// Max / Min / Mean / Norm of a tensor as msprobe's dumper writes them (dump-format.md §2.5).
#pragma once

#include <ATen/core/Tensor.h>

#include <acccheck/record.hpp>

namespace acccheck::capture {

// One statistic as a record holds it: the SDK's Statistic (its int-sized kind ahead of the
// double, 24 bytes) in 10, packed. A record's values are written on the training thread into memory
// that is seldom in its cache — a step's records go round the writer and come back evicted — so
// each line a value spans is a miss: with four statistics per tensor, the SDK's layout made a value
// 136 bytes, 16-byte statistics 104 (zeroing the 136 bytes held 60 % of FlatEncoder::add_tensor's
// samples, dumped gpt), these 56 (captured_record.hpp). The double is read and written unaligned,
// which x86-64 does at full speed within a line. Converts to and from Statistic.
struct __attribute__((packed)) HeldStatistic {
  double value = 0.0;
  Statistic::Kind kind : 8 = Statistic::Kind::null;
  bool float32 = false;

  HeldStatistic() = default;
  HeldStatistic(Statistic::Kind k, double v, bool f32 = false) : value(v), kind(k), float32(f32) {}
  HeldStatistic(const Statistic& s) : value(s.value), kind(s.kind), float32(s.float32) {}  // NOLINT: converts
  operator Statistic() const { return Statistic{kind, value, float32}; }                    // NOLINT: converts
  bool present() const { return kind != Statistic::Kind::null; }
};
static_assert(sizeof(HeldStatistic) == 10);

struct Statistics {
  HeldStatistic max, min, mean, norm;
};
static_assert(sizeof(Statistics) == 40);

// CPU tensors: computed now, in one pass over the elements. Tensors on another device: nothing is
// read back here (no host sync on the training thread); the four values are computed on the device
// into a 4-element float tensor returned in `pending`, which the writer thread copies to the host
// and applies with apply_pending_statistics(). Statistics the rules leave empty stay null. The
// operators some tensors need (complex and device tensors, dtypes neither read in place nor bool)
// go through the dispatcher: the engine runs this with the capture key excluded (capture_mode.hpp,
// ToolCalls), so they are never entries, and under a RecordFunction guard, so no profiler sees them.
//
// `zeros`: the caller knows every element is zero (the output of aten::zero_ — optimizers zero
// every gradient each step, megabytes of them in a CNN): the statistics are what the pass over
// zeros gives, without the pass.
//
// `reuse`: allowed — statistics of the same elements, unchanged since (the same version), are
// taken from a table of those computed before, and these kept there; never — the elements may
// change without their version moving (ArgSlot::written_unversioned): computed afresh, not kept,
// and any kept for the same data pointer dropped.
enum class Reuse { allowed, never };
void fill_statistics(const at::Tensor& t, Statistics& out, at::Tensor* pending, bool zeros = false,
                     Reuse reuse = Reuse::allowed);
void apply_pending_statistics(const at::Tensor& pending, Statistics& out);
// Makes the calling thread's table of reusable statistics now (engine set-up), not in the first
// dumped step (~250 KiB written).
void prepare_statistics_cache();

}  // namespace acccheck::capture
