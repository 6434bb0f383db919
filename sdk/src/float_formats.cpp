#include "acccheck/float_formats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace acccheck {

FloatKind float_kind(std::string_view d) {
  if (d == "torch.float16" || d == "torch.half") return FloatKind::float16;
  if (d == "torch.bfloat16") return FloatKind::bfloat16;
  if (d == "torch.float32" || d == "torch.float") return FloatKind::float32;
  if (d == "torch.float64" || d == "torch.double") return FloatKind::float64;
  if (d == "torch.float8_e4m3fn") return FloatKind::float8_e4m3fn;
  if (d == "torch.float8_e5m2") return FloatKind::float8_e5m2;
  if (d == "torch_npu.HiFloat8Tensor") return FloatKind::hifloat8;
  return FloatKind::other;
}

bool is_fp8(std::string_view d) {
  auto k = float_kind(d);
  return k == FloatKind::float8_e4m3fn || k == FloatKind::float8_e5m2 || k == FloatKind::hifloat8;
}

double round_to_bfloat16(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return v;
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  std::uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7FFFu + lsb;
  bits &= 0xFFFF0000u;
  std::memcpy(&f, &bits, 4);
  return f;
}

FloatKind numpy_kind_of_device(FloatKind device) {
  switch (device) {
    case FloatKind::bfloat16:
    case FloatKind::float8_e4m3fn:
    case FloatKind::float8_e5m2:
    case FloatKind::hifloat8: return FloatKind::float32;
    default: return device;
  }
}

double round_to(FloatKind kind, double v) {
  switch (kind) {
    case FloatKind::float16: return round_to_float16(v);
    case FloatKind::bfloat16: return round_to_bfloat16(v);
    case FloatKind::float32: return round_to_float32(v);
    default: return v;
  }
}

double finite_max(FloatKind kind) {
  switch (kind) {
    case FloatKind::float16: return 65504.0;
    case FloatKind::bfloat16: return 3.3895313892515355e+38;
    case FloatKind::float32: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

double machine_eps(FloatKind kind) {
  switch (kind) {
    case FloatKind::float16: return 0.0009765625;
    case FloatKind::float32: return 1.1920928955078125e-07;
    case FloatKind::bfloat16: return 0.00390625;
    default: return 2.220446049250313e-16;
  }
}

}  // namespace acccheck
