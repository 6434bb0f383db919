// The metrics' per-element loops are built per dtype so that they vectorise (metric_support.cpp,
// the benchmark standard): these check them against the scalar formulas, element by element and
// bit for bit, on rows that mix ordinary values with the ones that take other branches (zeros,
// small values, subnormals, values beyond float16's range, ±inf, NaN), for every pairing of a
// device dtype with its benchmark dtype.
#include <acccheck/float_formats.hpp>
#include <acccheck/metric_support.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/test_support.hpp"

using namespace acccheck;
namespace ms = acccheck::metric_support;

namespace {

struct Pairing {
  const char* device_dtype;
  const char* bench_dtype;
};
const Pairing kPairings[] = {{"torch.float16", "torch.float32"}, {"torch.bfloat16", "torch.float32"},
                             {"torch.float32", "torch.float64"}, {"torch.float64", "torch.float64"},
                             {"torch.float16", "torch.float64"}, {"torch.float32", "torch.float32"}};

struct Row {
  std::vector<double> bench, device;
  OutputPair pair(const Pairing& p) const {
    return {bench.data(), device.data(), bench.size(), p.device_dtype, p.bench_dtype, false};
  }
};

// 5,000 elements (not a multiple of any vector width or block), each drawn from one of the cases.
Row mixed_row(const Pairing& p, unsigned seed) {
  const FloatKind dk = float_kind(p.device_dtype), bk = float_kind(p.bench_dtype);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  std::uniform_int_distribution<int> pick(0, 12), ulps(-3, 3);
  Row r;
  for (int i = 0; i < 5000; ++i) {
    double b;
    switch (pick(rng)) {
      case 0: b = 0.0; break;
      case 1: b = u(rng) * 1e-7; break;    // below small_value
      case 2: b = u(rng) * 1e-4; break;    // float16's small values
      case 3: b = u(rng) * 1e-310; break;  // subnormal
      case 4: b = u(rng) * 30000.0; break;  // beyond float16's range after the error below
      case 5: b = INFINITY; break;
      case 6: b = -INFINITY; break;
      case 7: b = std::nan(""); break;
      default: b = u(rng); break;
    }
    b = round_to(bk, b);
    double d = round_to(dk, b);
    if (std::isfinite(d)) d = round_to(dk, d * (1.0 + ulps(rng) * 1e-3));
    if (pick(rng) == 0) d = pick(rng) < 6 ? std::nan("") : INFINITY;  // the device's own inf/NaN
    if (pick(rng) == 1) {  // a benchmark beyond float16's range where the device saturated
      b = round_to(bk, 65520.0 + 40000.0 * std::fabs(u(rng)));
      d = round_to(dk, 65504.0);
    }
    r.bench.push_back(b);
    r.device.push_back(d);
  }
  return r;
}

}  // namespace

TEST(VectorisedMetrics, ElementErrorsEqualTheScalarFormulaForEveryDtype) {
  for (const Pairing& p : kPairings) {
    SCOPED_TRACE(std::string(p.device_dtype) + " vs " + p.bench_dtype);
    const Row row = mixed_row(p, 11);
    const OutputPair out = row.pair(p);
    const ms::ElementErrors e = ms::element_errors(out);
    ASSERT_EQ(e.abs_err.size(), row.bench.size());
    for (std::size_t i = 0; i < row.bench.size(); ++i) {
      const ms::ElementError x = ms::element_error(e, row.bench[i], row.device[i]);
      ASSERT_EQ(test::double_bits(e.abs_bench[i]), test::double_bits(x.abs_bench)) << "element " << i;
      ASSERT_EQ(test::double_bits(e.abs_err[i]), test::double_bits(x.abs_err)) << "element " << i;
      ASSERT_EQ(test::double_bits(e.rel_err[i]), test::double_bits(x.rel_err)) << "element " << i;
      ASSERT_EQ(e.finite[i] != 0, x.finite) << "element " << i << ": b " << row.bench[i] << " d " << row.device[i];
    }
  }
}

TEST(VectorisedMetrics, ErrorBalanceEqualsTheScalarFormulaForEveryDtype) {
  for (const Pairing& p : kPairings) {
    SCOPED_TRACE(std::string(p.device_dtype) + " vs " + p.bench_dtype);
    const Row row = mixed_row(p, 12);
    const OutputPair out = row.pair(p);
    const ms::ElementErrors e = ms::element_error_setup(out);
    long long pos = 0, neg = 0;
    for (std::size_t i = 0; i < row.bench.size(); ++i) {
      const double diff = row.device[i] - round_to(e.numpy_kind, row.bench[i]);
      pos += diff > 0;
      neg += diff < 0;
    }
    EXPECT_EQ(ms::error_balance(out, e), static_cast<double>(std::llabs(pos - neg)) / static_cast<double>(row.bench.size()));
  }
}

// The benchmark standard's five values by the scalar definition (precision-standards.md §5.2, the
// loop this plugin had before it was vectorised), against the plugin.
TEST(VectorisedMetrics, BenchmarkStandardEqualsTheScalarDefinitionForEveryDtype) {
  MetricPlugin& plugin = test::metric_plugin("benchmark");
  for (const Pairing& p : kPairings) {
    SCOPED_TRACE(std::string(p.device_dtype) + " vs " + p.bench_dtype);
    const Row row = mixed_row(p, 13);
    const OutputPair out = row.pair(p);
    const FloatKind dk = float_kind(p.device_dtype);
    // standards.yaml, standards/benchmark: small_value and small_value_atol by dtype.
    const double sv = dk == FloatKind::float16 || dk == FloatKind::bfloat16 ? 0.0009765625 : 9.5367431640625e-07;
    const double atol = dk == FloatKind::float16 || dk == FloatKind::bfloat16 ? 1.0e-16 : 9.313225746154785e-10;
    const ms::ElementErrors e = ms::element_error_setup(out);
    const std::size_t n = row.bench.size();
    std::vector<double> squares(n), rel_ok;
    std::size_t small_count = 0, small_bad = 0;
    long long pos = 0, neg = 0;
    double rel_max = -1.0;
    for (std::size_t i = 0; i < n; ++i) {
      const ms::ElementError x = ms::element_error(e, row.bench[i], row.device[i]);
      const bool small = x.abs_bench <= sv && x.finite;
      small_count += small;
      small_bad += small && x.abs_err > atol;
      const bool masked = small || !x.finite;
      if (!masked) {
        rel_ok.push_back(x.rel_err);
        if (!(x.rel_err <= rel_max)) rel_max = x.rel_err;  // np.max: a NaN wins
      }
      const double a = masked ? 0.0 : x.abs_err;
      squares[i] = e.float32_math ? round_to_float32(a * a) : a * a;
      const double diff = row.device[i] - round_to(e.numpy_kind, row.bench[i]);
      pos += diff > 0;
      neg += diff < 0;
    }
    double mse = e.float32_math ? ms::numpy_float32_mean(squares) : ms::numpy_float64_mean(squares);
    mse *= static_cast<double>(n) / (static_cast<double>(rel_ok.size()) + 0.0001) + 0.0001;
    const std::vector<double> expected = {
        static_cast<double>(std::llabs(pos - neg)) / static_cast<double>(n), std::sqrt(mse),
        small_count ? static_cast<double>(small_bad) / static_cast<double>(small_count) : 0.0,
        rel_ok.empty() || rel_max < 0 ? 0.0 : rel_max,
        rel_ok.empty() ? 0.0 : (e.float32_math ? ms::numpy_float32_mean(rel_ok) : ms::numpy_float64_mean(rel_ok))};
    const std::vector<MetricValue> got = plugin.compute(out);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k)
      EXPECT_EQ(test::double_bits(got[k].value), test::double_bits(expected[k])) << got[k].column << ": " << got[k].value << " vs " << expected[k];
  }
}

// The ULP standard's three values by the scalar formula (precision-standards.md §5.4: eb =
// max(floor(log2|B|), min_eb), 0 for B = 0; ULP = |D − B| · 2^(exponent_num − eb), in float32 for
// float16/bfloat16 outputs), against the plugin's branch-free loop.
TEST(VectorisedMetrics, UlpStandardEqualsTheScalarFormulaForEveryDtype) {
  MetricPlugin& plugin = test::metric_plugin("ulp_compare");
  for (const Pairing& p : kPairings) {
    const FloatKind dk = float_kind(p.device_dtype);
    if (dk == FloatKind::float64) continue;  // not a ULP-standard dtype
    SCOPED_TRACE(std::string(p.device_dtype) + " vs " + p.bench_dtype);
    const Row row = mixed_row(p, 14);
    const OutputPair out = row.pair(p);
    // standards.yaml, standards/ulp_compare.
    const double min_eb = dk == FloatKind::float16 ? -14 : -126;
    const double exponent_num = dk == FloatKind::float16 ? 10 : dk == FloatKind::bfloat16 ? 7 : 23;
    const double threshold = dk == FloatKind::float32 ? 32 : 1;
    const bool f32 = dk != FloatKind::float32;
    const std::size_t n = row.bench.size();
    std::vector<double> ulp(n);
    double mx = -INFINITY;
    bool nan = false;
    std::size_t above = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double b = row.bench[i], d = row.device[i];
      double eb = b == 0.0 ? 0.0 : std::floor(std::log2(std::fabs(b)));
      eb = std::isnan(eb) || eb < min_eb ? min_eb : eb;
      const double scale = std::isinf(eb) ? 0.0 : std::ldexp(1.0, static_cast<int>(exponent_num - eb));
      ulp[i] = f32 ? std::fabs(round_to_float32(round_to_float32(round_to_float32(d) - round_to_float32(b)) * scale))
                   : std::fabs((d - b) * scale);
      nan = nan || std::isnan(ulp[i]);
      if (ulp[i] > mx) mx = ulp[i];
      above += ulp[i] > threshold;
    }
    const std::vector<double> expected = {nan ? std::nan("") : mx,
                                          f32 ? ms::numpy_float32_mean(ulp) : ms::numpy_float64_mean(ulp),
                                          static_cast<double>(above) / static_cast<double>(n)};
    const std::vector<MetricValue> got = plugin.compute(out);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k)
      EXPECT_EQ(test::double_bits(got[k].value), test::double_bits(expected[k])) << got[k].column << ": " << got[k].value << " vs " << expected[k];
  }
}
