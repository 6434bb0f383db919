// torch_rand draws at::rand's numbers without LibTorch's per-element loop: these check it against
// at::rand itself, bit for bit, and that the generator is left where at::rand leaves it.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "worker/torch_rand.hpp"

namespace acccheck::replay {
namespace {

at::Generator generator_seeded(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

std::uint32_t next_u32(at::Generator& g) { return g.get<at::CPUGeneratorImpl>()->random(); }

const std::vector<std::uint64_t> kSeeds = {0, 1, 5489, 0x9e3779b97f4a7c15ULL, 0xFFFFFFFFFFFFFFFFULL};
const std::vector<std::vector<std::int64_t>> kShapes = {{}, {1}, {623}, {624}, {625}, {1247}, {1249}, {3, 0}, {256, 256}, {7, 5, 33}};

TEST(TorchRand, EqualsAtRandBitForBitInEveryFloatDtype) {
  for (c10::ScalarType dtype : {c10::kFloat, c10::kDouble, c10::kHalf, c10::kBFloat16})
    for (std::uint64_t seed : kSeeds)
      for (const auto& shape : kShapes) {
        at::Generator ours = generator_seeded(seed), theirs = generator_seeded(seed);
        at::Tensor mine = torch_rand(shape, ours, dtype);
        at::Tensor expected = at::rand(shape, theirs, at::TensorOptions().dtype(dtype));
        ASSERT_EQ(mine.scalar_type(), dtype);
        ASSERT_EQ(mine.sizes(), expected.sizes());
        ASSERT_TRUE(at::equal(mine, expected)) << c10::toString(dtype) << " seed " << seed << " shape " << mine.sizes();
        // Left in the same state: the next draw agrees.
        ASSERT_EQ(next_u32(ours), next_u32(theirs)) << c10::toString(dtype) << " seed " << seed << " shape " << mine.sizes();
      }
}

TEST(TorchRand, InterleavesWithLibTorchsOwnDrawsAsAtRandDoes) {
  // One API's inputs: floats, an index tensor (at::randint), doubles, halves, from one generator.
  at::Generator ours = generator_seeded(42), theirs = generator_seeded(42);
  auto opts = [](c10::ScalarType t) { return at::TensorOptions().dtype(t); };
  EXPECT_TRUE(at::equal(torch_rand({1000}, ours, c10::kFloat), at::rand({1000}, theirs, opts(c10::kFloat))));
  EXPECT_TRUE(at::equal(at::randint(0, 10, {37}, ours, opts(c10::kLong)), at::randint(0, 10, {37}, theirs, opts(c10::kLong))));
  EXPECT_TRUE(at::equal(torch_rand({333}, ours, c10::kDouble), at::rand({333}, theirs, opts(c10::kDouble))));
  EXPECT_TRUE(at::equal(torch_rand({4, 300}, ours, c10::kHalf), at::rand({4, 300}, theirs, opts(c10::kHalf))));
  EXPECT_TRUE(at::equal(at::randint(-5, 5, {2000}, ours, opts(c10::kInt)), at::randint(-5, 5, {2000}, theirs, opts(c10::kInt))));
  EXPECT_TRUE(at::equal(torch_rand({5000}, ours, c10::kBFloat16), at::rand({5000}, theirs, opts(c10::kBFloat16))));
  EXPECT_EQ(next_u32(ours), next_u32(theirs));
}

// Bit patterns equal (NaN included: at::equal says NaN != NaN).
bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const auto st = a.scalar_type();
  const c10::ScalarType as_int = st == c10::kDouble ? c10::kLong : st == c10::kFloat ? c10::kInt : c10::kShort;
  return at::equal(a.contiguous().view(as_int), b.contiguous().view(as_int));
}

TEST(TorchRand, UniformEqualsAtRandScaledByLibTorchsOwnOperators) {
  // (low, scale) as input_generator.cpp passes them, the finite-range substitutes of ±inf included
  // (a float32 range of 2·FLT_MAX rounds to inf: inf and, for a 0 draw, NaN, as LibTorch gives).
  const std::vector<std::pair<double, double>> ranges = {
      {-1.0, 2.0}, {0.1, 0.7}, {1e-3, 1e-7}, {-5.0, 0.0}, {-65504.0, 131008.0},
      {-3.4028234663852886e38, 6.805646932770577e38}, {-1.7976931348623157e308, INFINITY}};
  for (c10::ScalarType dtype : {c10::kFloat, c10::kDouble, c10::kHalf, c10::kBFloat16})
    for (const auto& [low, scale] : ranges)
      for (std::uint64_t seed : {3ULL, 0x9e3779b97f4a7c15ULL}) {
        at::Generator ours = generator_seeded(seed), theirs = generator_seeded(seed);
        at::Tensor mine = torch_uniform({257, 9}, ours, dtype, low, scale);
        at::Tensor expected = at::rand({257, 9}, theirs, at::TensorOptions().dtype(dtype)).mul_(scale).add_(low);
        ASSERT_TRUE(same_bits(mine, expected)) << c10::toString(dtype) << " low " << low << " scale " << scale;
        ASSERT_EQ(next_u32(ours), next_u32(theirs));
      }
}

TEST(TorchRand, OtherDtypesAreLeftToAtRand) {
  at::Generator ours = generator_seeded(7), theirs = generator_seeded(7);
  at::Tensor mine = torch_rand({10}, ours, c10::kComplexFloat);
  EXPECT_EQ(mine.scalar_type(), c10::kComplexFloat);
  EXPECT_TRUE(at::equal(mine, at::rand({10}, theirs, at::TensorOptions().dtype(c10::kComplexFloat))));
}

TEST(TorchRand, RawDrawsAreTheEnginesOutputsInOrder) {
  at::Generator ours = generator_seeded(2024), theirs = generator_seeded(2024);
  // Start mid-block, then cross several twists with odd-sized requests.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(next_u32(ours), next_u32(theirs));
  for (std::size_t count : {1u, 523u, 624u, 1u, 2000u, 0u, 7u}) {
    std::vector<std::uint32_t> got(count);
    torch_random_u32(ours, got.data(), count);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(got[i], next_u32(theirs)) << "request of " << count << ", draw " << i;
  }
  EXPECT_EQ(next_u32(ours), next_u32(theirs));
}

}  // namespace
}  // namespace acccheck::replay
