// The dump's statistics pass (capture/engine/statistics_pass.hpp) against the arithmetic it is
// defined by, written out element by element: the same bits for every size around the block
// boundaries, every dtype it reads, and NaN, infinities, signed zeros and subnormals. The model
// is the pass as it was before it was split in two (blocks / lanes and tail), so dumps keep their
// numbers.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/statistics_pass.hpp"

using acccheck::capture::Accumulated;

namespace {

template <typename T>
Accumulated model(const T* p, std::int64_t n) {
  constexpr int L = 64;
  constexpr std::int64_t kBlock = 512;
  float mx[L], mn[L];
  for (int l = 0; l < L; ++l) {
    mx[l] = -std::numeric_limits<float>::infinity();
    mn[l] = std::numeric_limits<float>::infinity();
  }
  double block_sum[L] = {}, block_sumsq[L] = {};
  Accumulated a;
  std::int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float s[L] = {}, q[L] = {};
    for (std::int64_t j = i; j < i + kBlock; j += L)
      for (int l = 0; l < L; ++l) {
        float v = static_cast<float>(p[j + l]);
        mx[l] = v > mx[l] ? v : mx[l];
        mn[l] = v < mn[l] ? v : mn[l];
        s[l] += v;
        volatile float square = v * v;  // never contracted into an FMA
        q[l] += square;
      }
    for (int l = 0; l < L; ++l) {
      block_sum[l] += s[l];
      block_sumsq[l] += q[l];
    }
  }
  for (int l = 0; i > 0 && l < L; ++l) {
    a.sum += block_sum[l];
    a.sumsq += block_sumsq[l];
  }
  for (; i < n; ++i) {
    float v = static_cast<float>(p[i]);
    a.max = std::max<double>(a.max, v);
    a.min = std::min<double>(a.min, v);
    a.sum += v;
    volatile double square = static_cast<double>(v) * v;
    a.sumsq += square;
  }
  for (int l = 0; l < L; ++l) {
    a.max = std::max<double>(a.max, mx[l]);
    a.min = std::min<double>(a.min, mn[l]);
  }
  a.nan = std::isnan(a.sumsq);
  return a;
}

std::uint64_t bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// The same bits, or both NaN.
::testing::AssertionResult same(double expected, double actual) {
  if (bits(expected) == bits(actual) || (std::isnan(expected) && std::isnan(actual)))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << expected << " (bits " << bits(expected) << "), got "
                                       << actual << " (bits " << bits(actual) << ")";
}

template <typename T>
void expect_model_bits(const std::vector<T>& values, const char* what) {
  const auto n = static_cast<std::int64_t>(values.size());
  Accumulated want = model(values.data(), n), got = acccheck::capture::accumulate(values.data(), n);
  EXPECT_TRUE(same(want.max, got.max)) << what << ", " << n << " elements: max";
  EXPECT_TRUE(same(want.min, got.min)) << what << ", " << n << " elements: min";
  EXPECT_TRUE(same(want.sum, got.sum)) << what << ", " << n << " elements: sum";
  EXPECT_TRUE(same(want.sumsq, got.sumsq)) << what << ", " << n << " elements: sum of squares";
  EXPECT_EQ(want.nan, got.nan) << what << ", " << n << " elements: NaN";
}

const std::vector<std::int64_t> kSizes = {0, 1, 7, 63, 64, 65, 511, 512, 513, 1023, 1024, 1025, 4096 + 37, 65536, 102700};

template <typename T>
std::vector<T> values(std::int64_t n, unsigned seed, double scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(normal(gen)));
  return v;
}

template <typename T>
void check_floating(const char* name) {
  const float inf = std::numeric_limits<float>::infinity();
  for (std::int64_t n : kSizes) {
    expect_model_bits(values<T>(n, 1, 3.0), name);
    if (n == 0) continue;
    // Signed zeros (which one a maximum keeps depends on the order), subnormals, extremes.
    std::vector<T> odd = values<T>(n, 2, 1e-3);
    for (std::int64_t i = 0; i < n; i += 5) odd[i] = static_cast<T>(i % 2 ? 0.0f : -0.0f);
    for (std::int64_t i = 3; i < n; i += 97) odd[i] = static_cast<T>(std::numeric_limits<float>::denorm_min() * 3);
    odd[n - 1] = std::numeric_limits<T>::max();
    expect_model_bits(odd, name);
    std::vector<T> infinite = values<T>(n, 3, 1.0);
    infinite[n / 2] = static_cast<T>(inf);
    infinite[n / 3] = static_cast<T>(-inf);
    expect_model_bits(infinite, name);
    // Magnitudes from 1e-12 to 1e12: every change of summation order shows in the bits.
    std::vector<T> spread = values<T>(n, 5, 1.0);
    for (std::int64_t i = 0; i < n; ++i)
      spread[i] = static_cast<T>(static_cast<float>(spread[i]) * std::pow(10.0f, static_cast<float>((i * 7919) % 25) - 12.0f));
    expect_model_bits(spread, name);
    std::vector<T> nan = values<T>(n, 4, 1.0);
    nan[n - 1 - n / 7] = static_cast<T>(std::numeric_limits<float>::quiet_NaN());
    expect_model_bits(nan, name);
  }
}

}  // namespace

TEST(StatisticsPass, Float32SameBitsAsTheElementByElementArithmetic) { check_floating<float>("float32"); }
TEST(StatisticsPass, Float64SameBitsAsTheElementByElementArithmetic) { check_floating<double>("float64"); }
TEST(StatisticsPass, Float16SameBitsAsTheElementByElementArithmetic) { check_floating<c10::Half>("float16"); }
TEST(StatisticsPass, BFloat16SameBitsAsTheElementByElementArithmetic) { check_floating<c10::BFloat16>("bfloat16"); }

TEST(StatisticsPass, IntegersSameBitsAsTheElementByElementArithmetic) {
  for (std::int64_t n : kSizes) {
    std::vector<std::int32_t> i32;
    std::vector<std::int8_t> i8;
    std::vector<std::int64_t> i64;
    std::vector<std::uint8_t> u8;
    for (std::int64_t i = 0; i < n; ++i) {
      i32.push_back(static_cast<std::int32_t>((i * 2654435761u) % 200001) - 100000);
      i8.push_back(static_cast<std::int8_t>(i * 37));
      i64.push_back((i % 3 ? 1 : -1) * (std::int64_t{1} << (i % 62)));
      u8.push_back(static_cast<std::uint8_t>(i * 13));
    }
    expect_model_bits(i32, "int32");
    expect_model_bits(i8, "int8");
    expect_model_bits(i64, "int64");
    expect_model_bits(u8, "uint8");
  }
}

TEST(StatisticsPass, HandComputedBlockAndTail) {
  // 512 ones, then 2 and -3 past the block: max 2, min -3, sum 511, sum of squares 512 + 4 + 9.
  std::vector<float> v(512, 1.0f);
  v.push_back(2.0f);
  v.push_back(-3.0f);
  Accumulated a = acccheck::capture::accumulate(v.data(), static_cast<std::int64_t>(v.size()));
  EXPECT_EQ(a.max, 2.0);
  EXPECT_EQ(a.min, -3.0);
  EXPECT_EQ(a.sum, 511.0);
  EXPECT_EQ(a.sumsq, 525.0);
  EXPECT_FALSE(a.nan);
}
