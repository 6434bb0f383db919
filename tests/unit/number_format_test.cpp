// Numbers print and parse exactly as the reference's Python/numpy do.
#include <cmath>

#include <acccheck/number_format.hpp>

#include "support/test_support.hpp"

using namespace acccheck;

TEST(PythonFloatRepr, MatchesPythonRepr) {
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(-2.5), "-2.5");
  EXPECT_EQ(python_float_repr(1e-05), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(python_float_repr(165558.0), "165558.0");
  EXPECT_EQ(python_float_repr(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(python_float_repr(std::nan("")), "NaN");
  EXPECT_EQ(python_float_repr(INFINITY), "Infinity");
  EXPECT_EQ(python_float_repr(-INFINITY), "-Infinity");
}

TEST(NumpyFloat32Repr, UsesShortestFloat32Digits) {
  EXPECT_EQ(numpy_float32_repr(0.00390625f), "0.00390625");
  EXPECT_EQ(numpy_float32_repr(0.3797404f), "0.3797404");
  EXPECT_EQ(numpy_float32_repr(1e-05f), "1e-05");
  EXPECT_EQ(numpy_float32_repr(6.845093f), "6.845093");
  EXPECT_EQ(numpy_float32_repr(0.0f), "0.0");
  EXPECT_EQ(numpy_float32_repr(NAN), "nan");
}

// A float32 statistic in dump.json: float32's shortest digits, json.dumps's spelling of non-finite.
TEST(JsonFloat32Repr, ShortestFloat32DigitsThatReadBackAsTheSameFloat) {
  const float v = 1.9947922229766846f;
  EXPECT_EQ(python_float_repr(v), "1.9947922229766846");  // the double of the same value
  EXPECT_EQ(json_float32_repr(v), "1.9947922");
  EXPECT_EQ(static_cast<float>(std::stod(json_float32_repr(v))), v);
  EXPECT_EQ(json_float32_repr(-0.0002459497f), "-0.0002459497");
  EXPECT_EQ(json_float32_repr(1e-05f), "1e-05");
  EXPECT_EQ(json_float32_repr(3.0f), "3.0");
  EXPECT_EQ(json_float32_repr(1e20f), "1e+20");
  EXPECT_EQ(json_float32_repr(NAN), "NaN");
  EXPECT_EQ(json_float32_repr(INFINITY), "Infinity");
  EXPECT_EQ(json_float32_repr(-INFINITY), "-Infinity");
}

TEST(PythonFixed, FourteenDecimals) {
  EXPECT_EQ(python_fixed(1.6), "1.60000000000000");
  EXPECT_EQ(python_fixed(3e-16), "0.00000000000000");
  EXPECT_EQ(python_fixed(2.0 / 3.0), "0.66666666666667");
  EXPECT_EQ(python_fixed(-std::nan("")), "nan");  // Python never prints "-nan"
  EXPECT_EQ(python_fixed(-INFINITY), "-inf");
}

TEST(ParsePythonFloat, AcceptsWhatPythonFloatAccepts) {
  EXPECT_EQ(*parse_python_float(" 0.5 "), 0.5);
  EXPECT_EQ(*parse_python_float("-inf"), -INFINITY);
  EXPECT_EQ(*parse_python_float("Infinity"), INFINITY);
  EXPECT_TRUE(std::isnan(*parse_python_float("nan")));
  EXPECT_EQ(*parse_python_float("1e-05"), 1e-05);
  EXPECT_EQ(*parse_python_float("+3"), 3.0);
  EXPECT_FALSE(parse_python_float(" ").has_value());
  EXPECT_FALSE(parse_python_float("0.5x").has_value());
  EXPECT_FALSE(parse_python_float("abc").has_value());
}

TEST(ParsePythonFloat, IsCorrectlyRoundedAtAThreshold) {
  // 0.999 must be the double nearest to 0.999, so "0.999 >= 0.999" passes (thousandth standard).
  EXPECT_EQ(*parse_python_float("0.999"), 0.999);
  EXPECT_EQ(*parse_python_float("0.99899999999999"), 0.99899999999999);
  EXPECT_LT(*parse_python_float("0.99899999999999"), 0.999);
  // 2^-14 written out in full parses to exactly 2^-14.
  EXPECT_EQ(*parse_python_float("6.103515625e-05"), std::ldexp(1.0, -14));
}
