// at::rand's numbers, drawn in blocks. run-ut.md §3.3 draws every random input from the CPU torch
// generator; LibTorch's CPU uniform_ kernel asks the generator for one number per element through
// its serial loop (about 3 ns each: a third of the harness time of a 256×256 matmul's replay).
// This draws the same numbers from the same engine state — the generator's mt19937 — a block of
// 624 at a time with vectorised twist and tempering loops, then hands the advanced state back, so
// at::randint and every other draw that follows sees exactly what it would have after at::rand.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <cstddef>
#include <cstdint>

namespace acccheck::replay {

// What at::rand(shape, generator, dtype) returns, bit for bit, with the CPU generator left in the
// state at::rand leaves it in. Float32, float64, float16 and bfloat16; any other dtype is handed to
// at::rand itself.
at::Tensor torch_rand(c10::IntArrayRef shape, at::Generator& generator, c10::ScalarType dtype);

// at::rand(shape, generator, dtype).mul_(scale).add_(low) — a uniform draw on [low, low + scale),
// run-ut.md §3.3's scaling in the tensor's dtype as LibTorch computes it — in one pass for float32
// and float64 (the Scalars rounded to the dtype, one rounding per operation); other dtypes run
// those three operators.
at::Tensor torch_uniform(c10::IntArrayRef shape, at::Generator& generator, c10::ScalarType dtype, double low,
                         double scale);

// The next `count` outputs of the generator's mt19937 (CPUGeneratorImpl::random(), in order),
// advancing it as `count` calls would.
void torch_random_u32(at::Generator& generator, std::uint32_t* out, std::size_t count);

}  // namespace acccheck::replay
