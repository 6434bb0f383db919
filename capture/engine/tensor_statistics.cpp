// One pass per tensor: max, min, sum and sum of squares are accumulated together
// (statistics_pass.hpp); Mean and Norm are then rounded to the tensor's dtype the way
// msprobe's low-precision statistics are (fp16/bf16/fp32 reduced in their own dtype, every other
// dtype in float32).
#include "engine/tensor_statistics.hpp"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/util/SmallVector.h>
#include <c10/util/intrusive_ptr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "engine/statistics_pass.hpp"

namespace acccheck::capture {

namespace {

// The dtypes accumulate_elements, gather_rows and first_element read in place.
bool read_in_place(at::ScalarType t) {
  switch (t) {
    case at::kFloat: case at::kDouble: case at::kHalf: case at::kBFloat16: case at::kLong:
    case at::kInt: case at::kShort: case at::kChar: case at::kByte: return true;
    default: return false;
  }
}

// float64 values keep their range in the max/min (cast to float32 only for mean/norm would differ
// from msprobe, which casts the whole tensor to float32 first): do what msprobe does. `data`: n
// elements of dtype `type` in a row, one of those read_in_place() accepts.
Accumulated accumulate_elements(at::ScalarType type, const void* data, std::int64_t n) {
  switch (type) {
    case at::kFloat: return accumulate(static_cast<const float*>(data), n);
    case at::kDouble: return accumulate(static_cast<const double*>(data), n);
    case at::kHalf: return accumulate(static_cast<const at::Half*>(data), n);
    case at::kBFloat16: return accumulate(static_cast<const at::BFloat16*>(data), n);
    case at::kLong: return accumulate(static_cast<const std::int64_t*>(data), n);
    case at::kInt: return accumulate(static_cast<const std::int32_t*>(data), n);
    case at::kShort: return accumulate(static_cast<const std::int16_t*>(data), n);
    case at::kChar: return accumulate(static_cast<const std::int8_t*>(data), n);
    default: return accumulate(static_cast<const std::uint8_t*>(data), n);  // kByte
  }
}

Accumulated accumulate_tensor(const at::Tensor& c) {
  if (read_in_place(c.scalar_type())) return accumulate_elements(c.scalar_type(), c.data_ptr(), c.numel());
  return accumulate(c.to(at::kFloat).data_ptr<float>(), c.numel());
}

// The elements of a CPU tensor that is not dense — a slice, a strided window, an expanded tensor —
// in row-major order, into `out`: what contiguous() would copy, the same values in the same order
// (so the same statistics, bit for bit), without an operator. contiguous() on such a tensor made a
// new tensor through the dispatcher and TensorIterator: ~3,000–4,600 cycles a small tensor, a third
// of a dumped vit step's statistics and nearly half of swin_t's (its windows and slices).
template <typename E>
void gather_rows(const E* base, c10::IntArrayRef sizes, c10::IntArrayRef strides, E* out) {
  const std::size_t last = sizes.size() - 1;
  const std::int64_t inner = sizes[last], step = strides[last];
  std::int64_t rows = 1;
  for (std::size_t d = 0; d < last; ++d) rows *= sizes[d];
  c10::SmallVector<std::int64_t, 8> index(last, 0);  // the row's position in the outer dimensions
  const E* row = base;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = 0; k < inner; ++k) *out++ = row[k * step];
    // The next row: an odometer over the outer dimensions, the last one turning fastest.
    for (std::size_t d = last; d-- > 0;) {
      if (++index[d] < sizes[d]) {
        row += strides[d];
        break;
      }
      index[d] = 0;
      row -= strides[d] * (sizes[d] - 1);
    }
  }
}

// The elements of a CPU tensor that is not dense (one of at least one element and one dimension,
// whose dtype is read in place or bool) in row-major order, in a per-thread buffer that stays for
// the next one; release_gathered() gives back one of more than 16 MiB.
thread_local std::vector<std::uint64_t> t_gathered;  // 8-byte aligned for every dtype

const void* gather_in_place(const at::Tensor& t) {
  const std::size_t item = t.element_size();
  t_gathered.resize((static_cast<std::size_t>(t.numel()) * item + 7) / 8);
  // Elements are moved as unsigned integers of their size: a copy, whatever the dtype.
  auto gather = [&](auto element) {
    using E = decltype(element);
    gather_rows(static_cast<const E*>(t.data_ptr()), t.sizes(), t.strides(), reinterpret_cast<E*>(t_gathered.data()));
  };
  switch (item) {
    case 1: gather(std::uint8_t{}); break;
    case 2: gather(std::uint16_t{}); break;
    case 4: gather(std::uint32_t{}); break;
    default: gather(std::uint64_t{}); break;
  }
  return t_gathered.data();
}

void release_gathered() {
  if (t_gathered.size() * 8 > (std::size_t{16} << 20)) std::vector<std::uint64_t>().swap(t_gathered);
}

// The statistics' pass over a tensor that is not dense (a read_in_place dtype, at least one
// element, one dimension or more).
Accumulated accumulate_gathered(const at::Tensor& t) {
  Accumulated a = accumulate_elements(t.scalar_type(), gather_in_place(t), t.numel());
  release_gathered();
  return a;
}

// x.any() and x.all() of a CPU bool tensor, from its bytes: a byte that is not 0 is true, as it is
// for the operators. Through them, each bool tensor cost two operators (TensorIterator set-up, a new
// 0-d result, the dispatcher), their items, and a RecordFunction guard around it all; LibTorch 2.13's
// TransformerEncoder checks ~20 masks a step (aten::all, tril, where, isneginf), and reading them
// this way took its dumped gpt step from 1.40x to 1.31x the plain one (bench/RESULTS.md).
struct AnyAll {
  bool any, all;
};
AnyAll any_all(const at::Tensor& x) {
  const std::int64_t n = x.numel();
  const auto* b = static_cast<const std::uint8_t*>(x.is_non_overlapping_and_dense() ? x.data_ptr() : gather_in_place(x));
  bool any = false, all = true;
  for (std::int64_t i = 0; i < n; ++i) {
    any |= b[i] != 0;
    all &= b[i] != 0;
  }
  release_gathered();
  return {any, all};
}

// Every statistic of a floating tensor is a float32 value (reduced in float32, or rounded to it as
// msprobe's are), so the file gets float32's shortest digits: dump.json's numbers are about half as
// long, with the same values for anything that reads them as float32 (run_ut's inputs do).
Statistic float32_statistic(double v) { return Statistic::of_float32(static_cast<float>(v)); }

double round_to(at::ScalarType t, double v) {
  switch (t) {
    case at::kHalf: return static_cast<float>(at::Half(static_cast<float>(v)));
    case at::kBFloat16: return static_cast<float>(at::BFloat16(static_cast<float>(v)));
    default: return static_cast<float>(v);
  }
}

// Statistics of this tensor are read from its memory, with no operator (the common case; a tensor
// that is not dense is gathered in place, accumulate_gathered; a bool one is scanned, any_all).
bool without_operators(const at::Tensor& t) {
  return t.is_cpu() && (read_in_place(t.scalar_type()) || t.scalar_type() == at::kBool);
}

bool no_data(const at::Tensor& t) {
  return !t.defined() || t.numel() == 0 || t.is_meta() || !t.has_storage() || !t.storage().data();
}

// The value of a 0-d tensor as t.to(kDouble).item() gives it; read in place (no operator) for the
// dtypes accumulate_tensor reads in place.
double first_element(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: return *t.data_ptr<float>();
    case at::kDouble: return *t.data_ptr<double>();
    case at::kHalf: return static_cast<float>(*t.data_ptr<at::Half>());
    case at::kBFloat16: return static_cast<float>(*t.data_ptr<at::BFloat16>());
    case at::kLong: return static_cast<double>(*t.data_ptr<std::int64_t>());
    case at::kInt: return *t.data_ptr<std::int32_t>();
    case at::kShort: return *t.data_ptr<std::int16_t>();
    case at::kChar: return *t.data_ptr<std::int8_t>();
    case at::kByte: return *t.data_ptr<std::uint8_t>();
    default: return t.to(at::kDouble).item<double>();
  }
}

// The output of one call is often the input of the next (relu → addmm), views and detached aliases
// cover the same elements as their base (t, view, detach), and a parameter updated by the optimizer
// is read by the next forward pass: statistics of the same elements, unchanged since, are reused.
// Same elements: the same dtype, data pointer and element count, both dense without overlap (so the
// element set is the whole range). Unchanged: the same version of the same version counter — the
// one object a tensor shares with its views and with what detach() made of it (both LibTorch
// versions), and with nothing else. An alias with a counter of its own (`.data()`,
// `variable_data()`) writes without moving that counter, so it never shares the entry, and since
// there is one entry per data pointer, capturing the alias (an in-place call's input is captured
// before the call writes) replaces the entry. A write no capture sees — through such an alias in a
// call that is not an entry, or through data_ptr — goes unnoticed, as it does by autograd's own
// version checks. The entry holds a reference to the counter: while it lives no other counter can
// take its address, and a tensor that shares it shares the storage it was computed over (the
// storage cannot have been freed and its address reused under a tensor with that counter).
// Compared by counter, not by the tensor's root (its base if a view), detach()'s output hits its
// input's entry (a dumped step of gpt_adam detaches each gradient twice in clip_grad_norm_), and a
// look-up reads neither the base nor its reference count.
struct CachedStatistics {
  c10::VariableVersion counter;  // a reference that keeps the counter alive (disabled when empty)
  std::int64_t version = -1;
  std::int64_t numel = 0;
  at::ScalarType dtype = at::kFloat;
  Statistics stats;
};

// The identity of a tensor's version counter. c10::VariableVersion holds nothing but the pointer to
// the shared counter and hands it out nowhere (LibTorch 1.13 and 2.13 alike): its bytes are read.
static_assert(sizeof(c10::VariableVersion) == sizeof(void*), "c10::VariableVersion is one pointer to its counter");
const void* counter_id_of(const c10::VariableVersion& v) {
  const void* id;
  std::memcpy(&id, static_cast<const void*>(&v), sizeof id);
  return id;
}
const void* counter_id_of(const at::Tensor& t) { return counter_id_of(t.unsafeGetTensorImpl()->version_counter()); }

// Entries are found by data pointer in a 4-way set-associative table (least recently used out),
// big enough that a training step's parameters, gradients and optimizer buffers stay from one use
// to the next (a 32-slot ring forgot a parameter's statistics before the next step's forward pass
// read it). One table per thread that captures, on the heap (not in every thread's TLS block).
// A set's four data pointers lie together, apart from the entries: a look-up reads one cache line
// of a 16 KiB array, and an entry's own line only when its pointer matches. With the pointers in
// the ~150-byte entries a miss read four lines of a 300 KiB table that the step between two calls
// had evicted (the probe's load held a fifth of fill_statistics' own samples, dumped gpt).
constexpr std::size_t kWays = 4, kSets = 512;
struct StatisticsCache {
  const void* data[kSets][kWays] = {};
  std::uint64_t last_use[kSets][kWays] = {};
  CachedStatistics entries[kSets][kWays];
  std::uint64_t clock = 0;
};
thread_local std::unique_ptr<StatisticsCache> t_cache;

StatisticsCache& cache() {
  if (!t_cache) t_cache = std::make_unique<StatisticsCache>();
  return *t_cache;
}

std::size_t set_of(const void* data) {
  auto p = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(data));
  return static_cast<std::size_t>((p * 0x9E3779B97F4A7C15ull) >> 55) % kSets;  // Fibonacci hashing
}

// Not for a storage of fewer bytes than a block of the tensor's dtype (statistics_pass.hpp): the
// pass over so few elements (no blocks, only the tail) costs less than the table's probe and
// entry, which miss the cache more often than not — a small tensor's statistics took ~500–780
// cycles through the table and ~260–350 without it (dumped gpt, ~150 such tensors a step: biases,
// norms' weights, labels, losses). Every tensor over a storage — views, `.data` aliases — has its
// size, so none of them has an entry, and the one entry per data pointer (above) still covers the
// aliases of the storages that are looked up.
bool cacheable(const at::Tensor& t) {
  return !t.is_inference() && t.is_non_overlapping_and_dense() &&
         t.unsafeGetTensorImpl()->unsafe_storage().nbytes() >= static_cast<std::size_t>(kBlock) * t.element_size();
}

// The way of `set` holding `data`'s entry (one entry per data pointer), or kWays.
std::size_t way_holding(const StatisticsCache& k, std::size_t set, const void* data) {
  for (std::size_t w = 0; w < kWays; ++w)
    if (k.data[set][w] == data) return w;
  return kWays;
}

// cached, remember and forget: for tensors cacheable() accepts.
const CachedStatistics* cached(const at::Tensor& t) {
  const void* data = t.data_ptr();
  StatisticsCache& k = cache();
  const std::size_t set = set_of(data);
  const std::size_t w = way_holding(k, set, data);
  if (w == kWays) return nullptr;
  const CachedStatistics& c = k.entries[set][w];
  if (c.numel != t.numel() || c.dtype != t.scalar_type() || counter_id_of(c.counter) != counter_id_of(t) ||
      c.version != static_cast<std::int64_t>(t._version()))
    return nullptr;
  k.last_use[set][w] = ++k.clock;
  return &c;
}

// The entry for these elements (whoever's they were: the newest capture supersedes), else the
// set's least recently used.
void remember(const at::Tensor& t, const Statistics& spec) {
  StatisticsCache& k = cache();
  const void* data = t.data_ptr();
  const std::size_t set = set_of(data);
  std::size_t way = way_holding(k, set, data);
  if (way == kWays) {
    way = 0;
    for (std::size_t w = 1; w < kWays; ++w)
      if (k.last_use[set][w] < k.last_use[set][way]) way = w;
  }
  k.last_use[set][way] = ++k.clock;
  CachedStatistics& c = k.entries[set][way];
  c.counter = t.unsafeGetTensorImpl()->version_counter();
  c.version = static_cast<std::int64_t>(t._version());
  k.data[set][way] = data;
  c.numel = t.numel();
  c.dtype = t.scalar_type();
  c.stats = spec;
}

// No entry for t's data pointer any more (its elements may change unseen by their version).
void forget(const at::Tensor& t) {
  StatisticsCache& k = cache();
  const void* data = t.data_ptr();
  const std::size_t set = set_of(data);
  const std::size_t w = way_holding(k, set, data);
  if (w == kWays) return;
  k.data[set][w] = nullptr;
  k.entries[set][w].counter = c10::VariableVersion();
}

// The same statistic four times, in four stores: a chained `a = b = c = d = s` read back what it had
// just stored into the record's (seldom cached) memory and waited for the line.
void set_all(Statistics& spec, HeldStatistic s) {
  spec.max = s;
  spec.min = s;
  spec.mean = s;
  spec.norm = s;
}

}  // namespace

void fill_statistics(const at::Tensor& t, Statistics& spec, at::Tensor* pending, bool zeros, Reuse reuse) {
  set_all(spec, HeldStatistic{});
  if (no_data(t)) return;
  // The tool's own operators (complex and device tensors, dtypes neither read in place nor bool): no
  // profiler sees them. The engine runs this with the capture key excluded, so they are never entries.
  std::optional<at::RecordFunctionGuard> unseen;
  if (!without_operators(t)) unseen.emplace(false);
  // References, not copies: a tensor copy is two locked instructions on its reference count, each
  // waiting until the record's stores before it have reached the cache. A new tensor only where the
  // elements cannot be read as they are (complex: their absolute values; not dense and of a dtype not
  // read in place: a copy).
  at::Tensor made, dense;
  const at::Tensor& x = t.is_complex() ? (made = t.abs()) : t;
  if (!x.is_cpu()) {
    // Computed on the device; read back by the writer thread.
    if (x.scalar_type() == at::kBool) {
      *pending = at::stack({x.any().to(at::kFloat), x.all().to(at::kFloat)});
      return;
    }
    at::Tensor f = x.to(at::kFloat);
    *pending = at::stack({f.max(), f.min(), f.mean(), f.norm()});
    return;
  }
  if (x.scalar_type() == at::kBool) {
    const AnyAll b = any_all(x);
    spec.max = {Statistic::Kind::boolean, b.any ? 1.0 : 0.0};
    spec.min = {Statistic::Kind::boolean, b.all ? 1.0 : 0.0};
    return;
  }
  bool integral = at::isIntegralType(x.scalar_type(), /*includeBool=*/false);
  if (x.dim() == 0) {
    double v = zeros ? 0.0 : first_element(x);
    Statistic s = integral ? Statistic{Statistic::Kind::integer, v} : float32_statistic(round_to(x.scalar_type(), v));
    set_all(spec, s);
    return;
  }
  const bool in_table = cacheable(t), reusable = reuse == Reuse::allowed;
  if (const CachedStatistics* hit = in_table && reusable ? cached(t) : nullptr) {
    spec = hit->stats;
    return;
  }
  // A dense tensor is read in memory order whatever its strides (a transposed gradient, a channels-
  // last activation): the statistics do not depend on the order, and the copy contiguous() would
  // make cost as much as the pass. One that is not dense is read in row-major order, gathered in
  // place where its dtype allows, else copied by contiguous().
  const bool in_memory_order = zeros || x.is_non_overlapping_and_dense();
  const bool gathered = !in_memory_order && read_in_place(x.scalar_type());
  const at::Tensor& c = in_memory_order || gathered ? x : (dense = x.contiguous());
  // Zeros: the maximum and minimum are +0, the sums 0 — what the pass would find, not read.
  Accumulated a = zeros ? Accumulated{0.0, 0.0, 0.0, 0.0, false} : gathered ? accumulate_gathered(c) : accumulate_tensor(c);
  double n = static_cast<double>(c.numel());
  at::ScalarType rt = integral || c.scalar_type() == at::kDouble ? at::kFloat : c.scalar_type();
  if (a.nan) {
    set_all(spec, float32_statistic(std::numeric_limits<double>::quiet_NaN()));
  } else {
    spec.max = float32_statistic(round_to(at::kFloat, a.max));
    spec.min = float32_statistic(round_to(at::kFloat, a.min));
    spec.mean = float32_statistic(round_to(rt, a.sum / n));
    spec.norm = float32_statistic(round_to(rt, std::sqrt(a.sumsq)));
    if (t.is_complex()) spec.norm = HeldStatistic{};  // msprobe: no norm for complex tensors
  }
  if (in_table) reusable ? remember(t, spec) : forget(t);
}

void prepare_statistics_cache() { cache(); }

void apply_pending_statistics(const at::Tensor& pending, Statistics& spec) {
  at::Tensor h = pending.to(at::kCPU, at::kDouble);
  const double* v = h.data_ptr<double>();
  if (h.numel() == 2) {
    spec.max = {Statistic::Kind::boolean, v[0] != 0 ? 1.0 : 0.0};
    spec.min = {Statistic::Kind::boolean, v[1] != 0 ? 1.0 : 0.0};
    return;
  }
  spec.max = float32_statistic(v[0]);
  spec.min = float32_statistic(v[1]);
  spec.mean = float32_statistic(v[2]);
  spec.norm = float32_statistic(v[3]);
}

}  // namespace acccheck::capture
