// The statistics pass (statistics_pass.hpp).
#include "engine/statistics_pass.hpp"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>

#include <acccheck/simd.hpp>

namespace acccheck::capture {

Lanes::Lanes() {
  for (int l = 0; l < kLanes; ++l) {
    max[l] = -std::numeric_limits<float>::infinity();
    min[l] = std::numeric_limits<float>::infinity();
    sum[l] = sumsq[l] = 0;
  }
}

// 64 lanes are four AVX-512 registers per quantity: four independent chains of adds, maxima and
// minima, so the loop runs at the vector units' throughput, not at one add's latency per 16
// elements (16 lanes, one register per quantity, read 3 elements per cycle on this project's VM).
// The blocks are a function of their own, apart from the lanes' sums and the tail: in one function
// with them, GCC 12's AVX2 clone ran at 5.4 G float32 elements/s in cache, on its own at 9.3
// (bench/RESULTS.md, eleventh session).
template <typename T>
ACCCHECK_SIMD_CLONES void accumulate_blocks(const T* p, std::int64_t blocks, Lanes& lanes) {
  constexpr int L = kLanes;
  float mx[L], mn[L];
  double block_sum[L], block_sumsq[L];  // the blocks' float sums, added in double per lane
  for (int l = 0; l < L; ++l) {
    mx[l] = lanes.max[l];
    mn[l] = lanes.min[l];
    block_sum[l] = lanes.sum[l];
    block_sumsq[l] = lanes.sumsq[l];
  }
  for (std::int64_t i = 0; i < blocks * kBlock; i += kBlock) {
    float s[L] = {}, q[L] = {};
    for (std::int64_t j = i; j < i + kBlock; j += L)
      for (int l = 0; l < L; ++l) {
        float v = static_cast<float>(p[j + l]);
        mx[l] = v > mx[l] ? v : mx[l];
        mn[l] = v < mn[l] ? v : mn[l];
        s[l] += v;
        q[l] += v * v;
      }
    for (int l = 0; l < L; ++l) {  // lane by lane: vector adds, not a chain of 64 scalar ones
      block_sum[l] += s[l];
      block_sumsq[l] += q[l];
    }
  }
  for (int l = 0; l < L; ++l) {
    lanes.max[l] = mx[l];
    lanes.min[l] = mn[l];
    lanes.sum[l] = block_sum[l];
    lanes.sumsq[l] = block_sumsq[l];
  }
}

template <typename T>
Accumulated finish(const T* p, std::int64_t n, const Lanes& lanes) {
  Accumulated a;
  std::int64_t i = n / kBlock * kBlock;
  for (int l = 0; i > 0 && l < kLanes; ++l) {
    a.sum += lanes.sum[l];
    a.sumsq += lanes.sumsq[l];
  }
  for (; i < n; ++i) {
    float v = static_cast<float>(p[i]);
    a.max = std::max<double>(a.max, v);
    a.min = std::min<double>(a.min, v);
    a.sum += v;
    a.sumsq += static_cast<double>(v) * v;
  }
  for (int l = 0; l < kLanes; ++l) {
    a.max = std::max<double>(a.max, lanes.max[l]);
    a.min = std::min<double>(a.min, lanes.min[l]);
  }
  a.nan = std::isnan(a.sumsq);
  return a;
}

// Fewer elements than a block: only the tail. The lanes would still be at their start (-inf, +inf,
// no sums), which leave max, min and sums as the tail made them, so they are not looked at (most of
// a step's tensors are this small: biases, losses, scalars).
template <typename T>
Accumulated tail_only(const T* p, std::int64_t n) {
  Accumulated a;
  for (std::int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(p[i]);
    a.max = std::max<double>(a.max, v);
    a.min = std::min<double>(a.min, v);
    a.sum += v;
    a.sumsq += static_cast<double>(v) * v;
  }
  a.nan = std::isnan(a.sumsq);
  return a;
}

template <typename T>
Accumulated accumulate(const T* p, std::int64_t n) {
  if (n < kBlock) return tail_only(p, n);
  Lanes lanes;
  accumulate_blocks(p, n / kBlock, lanes);
  return finish(p, n, lanes);
}

#define ACCCHECK_STATISTICS_PASS(T)                                        \
  template void accumulate_blocks<T>(const T*, std::int64_t, Lanes&);       \
  template Accumulated finish<T>(const T*, std::int64_t, const Lanes&);   \
  template Accumulated accumulate<T>(const T*, std::int64_t);
ACCCHECK_STATISTICS_PASS(float)
ACCCHECK_STATISTICS_PASS(double)
ACCCHECK_STATISTICS_PASS(c10::Half)
ACCCHECK_STATISTICS_PASS(c10::BFloat16)
ACCCHECK_STATISTICS_PASS(std::int64_t)
ACCCHECK_STATISTICS_PASS(std::int32_t)
ACCCHECK_STATISTICS_PASS(std::int16_t)
ACCCHECK_STATISTICS_PASS(std::int8_t)
ACCCHECK_STATISTICS_PASS(std::uint8_t)
#undef ACCCHECK_STATISTICS_PASS

}  // namespace acccheck::capture
