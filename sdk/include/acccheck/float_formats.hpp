// Floating-point formats the metrics reason about, without LibTorch: rounding a double into
// float16 / bfloat16 / float32 (round to nearest even, overflow to inf, as numpy and torch do),
// and the per-dtype constants (epsilon, finite range).
#pragma once

#include <string_view>

namespace acccheck {

enum class FloatKind { float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2, hifloat8, other };

// "torch.float16" → float16, "torch.bfloat16" → bfloat16, ...; anything else → other.
FloatKind float_kind(std::string_view torch_dtype);
bool is_fp8(std::string_view torch_dtype);  // float8_e4m3fn, float8_e5m2, HiFloat8

double round_to_float32(double v);
double round_to_float16(double v);
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
