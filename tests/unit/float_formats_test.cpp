// Rounding doubles into the device dtypes, as torch and numpy do.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <acccheck/float_formats.hpp>

#include "support/test_support.hpp"

using namespace acccheck;

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(round_to_float16(1.0), 1.0);
  EXPECT_EQ(round_to_float16(2.001), 2.001953125);  // spacing 2^-9 around 2
  EXPECT_EQ(round_to_float16(1.0 + std::ldexp(1.0, -11)), 1.0);  // tie → even
  EXPECT_EQ(round_to_float16(1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(round_to_float16(65504.0), 65504.0);
  EXPECT_EQ(round_to_float16(65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(round_to_float16(65520.0)));   // half-way to 2^16 overflows
  EXPECT_TRUE(std::isinf(round_to_float16(70000.0)));
  EXPECT_EQ(round_to_float16(std::ldexp(1.0, -24)), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(round_to_float16(std::ldexp(1.0, -26)), 0.0);
  EXPECT_EQ(round_to_float16(1e-4), 0.0001000165939331054688);
}

namespace {

// The first implementation (frexp / nearbyint), kept as the reference for the bit-arithmetic one.
double float16_by_frexp(double v) {
  if (std::isnan(v) || std::isinf(v) || v == 0.0) return v;
  double a = std::fabs(v);
  if (a >= 65520.0) return std::copysign(INFINITY, v);
  int e = 0;
  std::frexp(a, &e);
  double unit = std::ldexp(1.0, std::max(e - 11, -24));
  return std::copysign(std::nearbyint(a / unit) * unit, v);
}

}  // namespace

// Every float16 value, the midpoints between neighbours and the doubles just beside both (where
// ties-to-even and the carry into the exponent are decided), both signs; specials; random doubles
// over every binade from below the subnormals to beyond the overflow.
TEST(Float16, BitArithmeticEqualsTheFrexpReferenceEverywhere) {
  std::vector<double> values = {0.0, -0.0, INFINITY, -INFINITY, std::nan(""), 65504.0, 65519.999, 65520.0, 0x1p-24, 0x1p-25,
                                0x1p-14, 0x1p-14 - 0x1p-40, 6e-8, 3e-8};
  std::vector<double> halves;
  for (int e = -24; e <= 15; ++e) {
    const double unit = std::ldexp(1.0, std::max(e - 10, -24)), start = e == -24 ? 0.0 : std::ldexp(1.0, e);
    for (double h = start; h < std::ldexp(1.0, e + 1) && h <= 65504.0; h += unit) halves.push_back(h);
  }
  for (std::size_t i = 0; i + 1 < halves.size(); ++i) {
    const double mid = (halves[i] + halves[i + 1]) / 2;
    for (double x : {halves[i], mid}) {
      values.push_back(x);
      values.push_back(std::nextafter(x, 0.0));
      values.push_back(std::nextafter(x, 1e9));
    }
  }
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 17);
  for (int i = 0; i < 200000; ++i) values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  std::size_t checked = 0;
  for (double x : values)
    for (double v : {x, -x}) {
      ASSERT_EQ(test::double_bits(round_to_float16(v)), test::double_bits(float16_by_frexp(v))) << std::hexfloat << v;
      ++checked;
    }
  EXPECT_GT(checked, 700000u);  // 63,488 float16 values and midpoints × 3 neighbours × 2 signs, and more
}

TEST(BFloat16, RoundsThroughFloat32) {
  EXPECT_EQ(round_to_bfloat16(1.0), 1.0);
  EXPECT_EQ(round_to_bfloat16(1.00390625), 1.0);       // tie → even (mantissa 7 bits)
  EXPECT_EQ(round_to_bfloat16(1.01171875), 1.015625);  // tie → even, upwards
  EXPECT_EQ(round_to_bfloat16(3.0e38), 3.00405527047391e+38);  // torch: tensor(3e38).bfloat16()
}

TEST(FloatKinds, ConstantsOfTheReference) {
  EXPECT_EQ(machine_eps(FloatKind::float16), std::ldexp(1.0, -10));
  EXPECT_EQ(machine_eps(FloatKind::float32), std::ldexp(1.0, -23));
  EXPECT_EQ(machine_eps(FloatKind::float64), std::ldexp(1.0, -52));
  EXPECT_EQ(finite_max(FloatKind::bfloat16), 3.3895313892515355e+38);
  EXPECT_EQ(numpy_kind_of_device(FloatKind::bfloat16), FloatKind::float32);
  EXPECT_TRUE(is_fp8("torch.float8_e4m3fn"));
  EXPECT_TRUE(is_fp8("torch_npu.HiFloat8Tensor"));
  EXPECT_FALSE(is_fp8("torch.float16"));
}
