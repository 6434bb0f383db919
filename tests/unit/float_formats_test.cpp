// Rounding doubles into the device dtypes, as torch and numpy do.
#include <cmath>

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
