// The per-element pass of the dump's statistics (tensor_statistics.cpp): max, min, sum and sum of
// squares of a CPU tensor's elements, read as float32, in one pass. Torch-free.
//
// The arithmetic is fixed, so the numbers are the same on every machine and in every code path:
// 64 lanes; element k of a 512-element block goes to lane k % 64. Max/min: float lanes over the
// whole tensor (`v > mx ? v : mx`). Sums: float lanes over each block (`s += v`, `q += v * v`,
// never contracted to an FMA), each block's lanes then added to double lanes (so the error stays
// that of an 8-element float sum per lane, then double's); the lanes are added in lane order at
// the end, then the elements past the last whole block one by one in double. No NaN test per
// element: the sum of squares is NaN exactly when an element is (squares are never negative, so no
// inf - inf can arise there), which tells it at the end for free.
#pragma once

#include <cstdint>
#include <limits>

namespace c10 {
struct Half;
struct BFloat16;
}  // namespace c10

namespace acccheck::capture {

struct Accumulated {
  double max = -std::numeric_limits<double>::infinity();
  double min = std::numeric_limits<double>::infinity();
  double sum = 0, sumsq = 0;
  bool nan = false;
};

constexpr int kLanes = 64;
constexpr std::int64_t kBlock = 512;

// What the whole blocks leave in the lanes.
struct Lanes {
  float max[kLanes], min[kLanes];
  double sum[kLanes], sumsq[kLanes];
  Lanes();
};

// The pass over p[0, n). T: float, double, c10::Half, c10::BFloat16, std::int64_t, std::int32_t,
// std::int16_t, std::int8_t, std::uint8_t.
template <typename T>
Accumulated accumulate(const T* p, std::int64_t n);

// Its two halves: the whole blocks into the lanes (vectorised, SIMD clones), then the lanes and
// the elements past the last whole block.
template <typename T>
void accumulate_blocks(const T* p, std::int64_t blocks, Lanes& lanes);
template <typename T>
Accumulated finish(const T* p, std::int64_t n, const Lanes& lanes);

}  // namespace acccheck::capture
