// Stage 1 (run_ut side) of each standard, on hand-computed numbers. The main case is run-ut.md
// §12: bench float32 [1, 2, 3, 4, 1e-4, 0.5], device float16 [1, 2.001, 3, 4.004, 1.0001e-4, 0.5].
#include <cmath>

#include <acccheck/float_formats.hpp>
#include <acccheck/metric_support.hpp>

#include "support/test_support.hpp"

using namespace acccheck;
using acccheck::test::metric_plugin;

namespace {

struct Output {
  std::vector<double> bench, device;
  std::string device_dtype, bench_dtype;
  OutputPair pair() const {
    return {bench.data(), device.data(), bench.size(), device_dtype, bench_dtype, false};
  }
};

// The worked example; values are exactly what float32 / float16 store.
Output worked_example() {
  Output o;
  for (double b : {1.0, 2.0, 3.0, 4.0, 1e-4, 0.5}) o.bench.push_back(round_to_float32(b));
  for (double d : {1.0, 2.001, 3.0, 4.004, 1.0001e-4, 0.5}) o.device.push_back(round_to_float16(d));
  o.device_dtype = "torch.float16";
  o.bench_dtype = "torch.float32";
  return o;
}

std::map<std::string, std::string> texts(const std::vector<MetricValue>& values) {
  std::map<std::string, std::string> m;
  for (const auto& v : values) m[v.column] = metric_support::format_value(v);
  return m;
}

}  // namespace

TEST(Stage1, BenchmarkOnTheWorkedExample) {
  auto o = worked_example();
  auto t = texts(metric_plugin("benchmark").compute(o.pair()));
  EXPECT_EQ(t["误差均衡性"], "0.33333333333333");   // two device values above bench (after fp16 rounding), none below
  EXPECT_EQ(t["均方根误差"], "0.00195318682509");   // sqrt(((2^-9)^2 + (2^-8)^2)/6 * (6/(6-1+1e-4) + 1e-4))
  EXPECT_EQ(t["小值域错误占比"], "1.00000000000000"); // 1e-4 is small (≤ 2^-10) and its error exceeds 1e-16
  EXPECT_EQ(t["相对误差最大值"], "0.0009765625");    // 2^-9 / 2 = (2^-8)/4, as a float32 repr
  EXPECT_EQ(t["相对误差平均值"], "0.000390625");     // 2 · 2^-10 / 5 normal elements
}

TEST(Stage1, AbsoluteThresholdOnTheWorkedExample) {
  auto o = worked_example();
  auto t = texts(metric_plugin("absolute_threshold").compute(o.pair()));
  EXPECT_EQ(t["inf/nan错误率"], "0");               // no inf/nan: the integer 0
  EXPECT_EQ(t["相对误差错误率"], "0.00000000000000"); // 2^-10 is not > rtol 2^-10
  EXPECT_EQ(t["绝对误差错误率"], "0.00000000000000"); // |fp16(1.0001e-4) - 1e-4| ≈ 1.7e-8 ≤ 2^-16
}

TEST(Stage1, AbsoluteThresholdCountsRelativeErrorsAboveRtol) {
  Output o;
  o.bench = {1.0, 1.0, 1.0, 1.0};
  o.device = {1.0, 1.0 + std::ldexp(1.0, -9), 1.0, 1.0};  // RE 2^-9 > rtol 2^-10
  o.device_dtype = "torch.float16";
  o.bench_dtype = "torch.float32";
  auto t = texts(metric_plugin("absolute_threshold").compute(o.pair()));
  EXPECT_EQ(t["相对误差错误率"], "0.25000000000000");
  EXPECT_EQ(t["绝对误差错误率"], "0");  // no small values: empty mask gives the integer 0
}

TEST(Stage1, AbsoluteThresholdInfNanAgreementRules) {
  // §5.1: B=+inf,D=1 agrees; B=+inf,D=NaN disagrees; B=1,D=+inf disagrees; both NaN agree;
  // B=-inf,D=+inf disagrees (65504-(-65504) overflows); B=70000 (fp32) vs D=65504 agrees.
  Output o;
  o.bench = {INFINITY, INFINITY, 1.0, NAN, -INFINITY, 70000.0, 2.0};
  o.device = {1.0, NAN, INFINITY, NAN, INFINITY, 65504.0, 2.0};
  o.device_dtype = "torch.float16";
  o.bench_dtype = "torch.float32";
  auto values = metric_plugin("absolute_threshold").compute(o.pair());
  EXPECT_DOUBLE_EQ(values[0].value, 3.0 / 6.0);
}

TEST(Stage1, UlpOnTheWorkedExample) {
  auto o = worked_example();
  auto t = texts(metric_plugin("ulp_compare").compute(o.pair()));
  EXPECT_EQ(t["ULP误差最大值"], "1.0");
  EXPECT_EQ(t["ULP误差平均值"], "0.3797404");
  EXPECT_EQ(t["ULP误差大于阈值占比"], "0.00000000000000");
}

TEST(Stage1, UlpFloat32UsesExponent23AndThreshold32) {
  Output o;
  o.bench = {1.0, 1.0, 0.0};
  o.device = {1.0 + 40 * std::ldexp(1.0, -23), 1.0 + 2 * std::ldexp(1.0, -23), std::ldexp(1.0, -149)};
  o.device_dtype = "torch.float32";
  o.bench_dtype = "torch.float64";
  auto v = metric_plugin("ulp_compare").compute(o.pair());
  EXPECT_EQ(v[0].value, 40.0);  // max
  // zero bench: eb = max(0, -126) = 0 → 2^-149 · 2^23 = 2^-126
  EXPECT_DOUBLE_EQ(v[1].value, (40.0 + 2.0 + std::ldexp(1.0, -126)) / 3.0);
  EXPECT_DOUBLE_EQ(v[2].value, 1.0 / 3.0);  // only 40 > 32
}

TEST(Stage1, UlpFloat32EdgeValuesFollowTheReferenceFormula) {
  // The vectorised path against hand-computed values: eb = max(floor(log2|b|), -126).
  Output o;
  o.bench = {-3.0, std::ldexp(1.0, -1030), std::ldexp(1.0, 100), 0.5};
  o.device = {-3.0 - 5 * std::ldexp(1.0, -22),          // eb 1: 5 ULP
              std::ldexp(1.0, -149),                     // subnormal b: eb -126, (2^-149 - 2^-1030)·2^149 → 1.0
              std::ldexp(1.0, 100) + 7 * std::ldexp(1.0, 77),  // eb 100: 7 ULP
              0.5};
  o.device_dtype = "torch.float32";
  o.bench_dtype = "torch.float64";
  auto v = metric_plugin("ulp_compare").compute(o.pair());
  EXPECT_EQ(v[0].value, 7.0);
  EXPECT_EQ(v[1].value, (5.0 + 1.0 + 7.0 + 0.0) / 4.0);
  EXPECT_EQ(v[2].value, 0.0);
  // An inf benchmark value: 2^(23 - inf) = 0 and (inf - inf)·0 is NaN, which np.max propagates;
  // NaN is not above the threshold.
  o.bench = {1.0, INFINITY, 1.0};
  o.device = {1.0 + 40 * std::ldexp(1.0, -23), INFINITY, 1.0};
  v = metric_plugin("ulp_compare").compute(o.pair());
  EXPECT_TRUE(std::isnan(v[0].value));
  EXPECT_TRUE(std::isnan(v[1].value));
  EXPECT_DOUBLE_EQ(v[2].value, 1.0 / 3.0);
  // A NaN benchmark value: eb falls back to min_eb, the error is NaN.
  o.bench = {std::nan(""), 2.0};
  o.device = {1.0, 2.0 + std::ldexp(1.0, -22)};
  v = metric_plugin("ulp_compare").compute(o.pair());
  EXPECT_TRUE(std::isnan(v[0].value));
  EXPECT_EQ(v[2].value, 0.0);
}

TEST(Stage1, BinaryConsistencyOnTheWorkedExample) {
  auto o = worked_example();
  auto v = metric_plugin("binary_consistency").compute(o.pair());
  EXPECT_EQ(metric_support::format_value(v[0]), "0.50000000000000");  // 2.001.. and 1.0001e-4.. differ, 4.0039.. too
}

TEST(Stage1, ThousandthCountsRelativeErrorsBelowOneThousandth) {
  auto o = worked_example();
  auto v = metric_plugin("thousandth_threshold").compute(o.pair());
  EXPECT_EQ(v[0].value, 1.0);  // every relative error is < 0.001 (largest 2^-10)
  o.device[0] = 1.0 + std::ldexp(1.0, -9);  // RE 2^-9 ≈ 0.00195 is not < 0.001
  v = metric_plugin("thousandth_threshold").compute(o.pair());
  EXPECT_DOUBLE_EQ(v[0].value, 5.0 / 6.0);
  Output empty{{}, {}, "torch.float32", "torch.float64"};
  EXPECT_EQ(metric_plugin("thousandth_threshold").compute(empty.pair())[0].value, 1.0);
}

TEST(Stage1, AccumulativeUsesTheDtypeBoundAndSmallValueOne) {
  Output o;
  o.bench = {0.5, 2.0, 4.0, 8.0};
  // bf16 bound 2^-7: |0.51171875 - 0.5| > bound (a small value, |B| <= 1); 0.03125 / 4.0039 < bound.
  o.device = {round_to_bfloat16(0.51), 2.0, 4.03125, 8.0};
  o.device_dtype = "torch.bfloat16";
  o.bench_dtype = "torch.float32";
  auto t = texts(metric_plugin("accumulative_error_compare").compute(o.pair()));
  EXPECT_EQ(t["绝对误差错误率"], "1.00000000000000");
  EXPECT_EQ(t["相对误差错误率"], "0.00000000000000");
  EXPECT_EQ(t["误差均衡性"], "0.50000000000000");
}
