// Floating-point formats the metrics reason about, without LibTorch: rounding a double into
// float16 / bfloat16 / float32 (round to nearest even, overflow to inf, as numpy and torch do),
// and the per-dtype constants (epsilon, finite range).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

namespace acccheck {

enum class FloatKind { float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2, hifloat8, other };

// "torch.float16" → float16, "torch.bfloat16" → bfloat16, ...; anything else → other.
FloatKind float_kind(std::string_view torch_dtype);
bool is_fp8(std::string_view torch_dtype);  // float8_e4m3fn, float8_e5m2, HiFloat8

// Inline and branch-free: they run per element inside the metrics' vectorised loops.
inline double round_to_float32(double v) { return static_cast<double>(static_cast<float>(v)); }
// float16 by bit arithmetic on the double: the significand rounded to 11 bits (ties to even) in the
// normal range, to a multiple of 2^-24 below 2^-14 ((a + 2^28) − 2^28 rounds there: the doubles
// near 2^28 are 2^-24 apart), inf from 65520 (halfway between 65504 and 65536) up; NaN, inf and
// ±0 keep their sign and bits.
inline double round_to_float16(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const std::uint64_t sign = bits & (std::uint64_t{1} << 63), magnitude = bits ^ sign;
  double a;
  std::memcpy(&a, &magnitude, sizeof a);
  const std::uint64_t rounded =
      (magnitude + ((std::uint64_t{1} << 41) - 1) + ((magnitude >> 42) & 1)) & ~((std::uint64_t{1} << 42) - 1);
  double r;
  std::memcpy(&r, &rounded, sizeof r);
  const double subnormal = (a + 0x1p28) - 0x1p28;
  r = a < 0x1p-14 ? subnormal : r;
  r = a >= 65520.0 ? std::numeric_limits<double>::infinity() : r;
  r = a != a ? a : r;
  std::uint64_t out;
  std::memcpy(&out, &r, sizeof out);
  out |= sign;  // the sign put back as a bit (std::copysign kept GCC from vectorising the loops)
  std::memcpy(&r, &out, sizeof r);
  return r;
}
double round_to_bfloat16(double v);  // via float32, as torch converts

// The numpy dtype a device output has once the reference converted it for comparison:
// bfloat16 outputs become float32 (numpy has no bfloat16), fp8 are compared as float32.
FloatKind numpy_kind_of_device(FloatKind device);
// Rounds v into `kind` (float64 and other: unchanged).
double round_to(FloatKind kind, double v);
// numpy finfo(kind).max; bfloat16 uses 3.3895313892515355e+38.
double finite_max(FloatKind kind);
// numpy finfo(kind).eps of the numpy type (float16 2^-10, float32 2^-23, float64 2^-52).
double machine_eps(FloatKind kind);

}  // namespace acccheck
