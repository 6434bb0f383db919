#include "torch_rand.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/MT19937RNGEngine.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/rand.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include <acccheck/simd.hpp>

namespace acccheck::replay {

namespace {

constexpr int kN = at::MERSENNE_STATE_N;  // 624
constexpr int kM = at::MERSENNE_STATE_M;  // 397

inline std::uint32_t twist(std::uint32_t u, std::uint32_t v) {
  const std::uint32_t mixed = (u & at::UMASK) | (v & at::LMASK);
  return (mixed >> 1) ^ ((v & 1u) ? at::MATRIX_A : 0u);
}

// mt19937_engine::next_state: the same three loops. The first two vectorise: each element reads
// its successor before that is rewritten (loads precede stores within a vector) and an element
// 397 ahead (old values) or 227 behind (already new, farther back than any vector is wide).
ACCCHECK_SIMD_CLONES void next_state(std::uint32_t* s) {
#pragma omp simd
  for (int i = 0; i < kN - kM; ++i) s[i] = s[i + kM] ^ twist(s[i], s[i + 1]);
#pragma omp simd safelen(64)
  for (int i = kN - kM; i < kN - 1; ++i) s[i] = s[i + kM - kN] ^ twist(s[i], s[i + 1]);
  s[kN - 1] = s[kM - 1] ^ twist(s[kN - 1], s[0]);
}

ACCCHECK_SIMD_CLONES void temper(const std::uint32_t* s, std::uint32_t* out, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t y = s[i];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    out[i] = y;
  }
}

// operator() of mt19937_engine `count` times: a call first decrements left_ and twists when it
// reaches 0, then returns state_[next_++] tempered. So left_ - 1 outputs are ready before the next
// twist (a fresh engine has left_ = 1: it twists on its first call).
void draw(at::mt19937_data_pod& d, std::uint32_t* out, std::size_t count) {
  while (count > 0) {
    if (d.left_ == 1) {
      next_state(d.state_.data());
      d.left_ = kN + 1;
      d.next_ = 0;
    }
    const std::size_t ready = std::min<std::size_t>(count, static_cast<std::size_t>(d.left_ - 1));
    temper(d.state_.data() + d.next_, out, ready);
    d.next_ += static_cast<std::uint32_t>(ready);
    d.left_ -= static_cast<int>(ready);
    out += ready;
    count -= ready;
  }
}

// transformation::uniform_real with from 0, to 1: the low `digits` bits of a draw over 2^digits,
// in the distribution's accumulation type (float; double for double).
ACCCHECK_SIMD_CLONES void to_float(const std::uint32_t* r, float* out, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(r[i] & 0xFFFFFFu) * (1.0f / 16777216.0f);
}

// A double takes two draws (CPUGeneratorImpl::random64: the first is the high word).
ACCCHECK_SIMD_CLONES void to_double(const std::uint32_t* r, double* out, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t v = (static_cast<std::uint64_t>(r[2 * i] & 0x1FFFFFu) << 32) | r[2 * i + 1];
    out[i] = static_cast<double>(static_cast<std::int64_t>(v)) * (1.0 / 9007199254740992.0);
  }
}

// x · scale + low with each operation rounded to T, as LibTorch's mul_ and add_ kernels do for a
// T tensor and a Scalar (the Scalar converted to T first; add_'s fused a + 1·b is a + b).
template <typename T>
ACCCHECK_SIMD_CLONES void scale_in_place(T* x, std::size_t n, T scale, T low) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const T y = x[i] * scale;
    x[i] = y + low;
  }
}

// float16 / bfloat16. LibTorch 1.13's uniform kernel draws in the narrow type itself: the low
// `digits` bits (11, 8) over 2^digits, exact. Later ones (2.x; the kernel's opmath_t) draw a float
// (24 bits) and round it to the narrow type, a draw that rounds up to 1 becoming 0.
template <typename Half>
void to_narrow(const std::uint32_t* r, Half* out, std::size_t n, int digits) {
  const std::uint32_t mask = (1u << digits) - 1u;
  const float divisor = 1.0f / static_cast<float>(1u << digits);
  for (std::size_t i = 0; i < n; ++i) out[i] = Half(static_cast<float>(r[i] & mask) * divisor);
}

template <typename Half>
void to_narrow_through_float(const std::uint32_t* r, Half* out, std::size_t n) {
  const Half one(1.0f), zero(0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    const Half h(static_cast<float>(r[i] & 0xFFFFFFu) * (1.0f / 16777216.0f));
    out[i] = h == one ? zero : h;
  }
}

// The engine, taken out of the generator and put back after `fill` (under the generator's lock,
// as LibTorch's kernels take it).
template <typename Fill>
void with_engine(at::Generator& generator, const Fill& fill) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  auto* impl = at::check_generator<at::CPUGeneratorImpl>(generator);
  at::mt19937 engine = impl->engine();
  at::mt19937_data_pod data = engine.data();
  fill(data);
  engine.set_data(data);
  impl->set_engine(engine);
}

constexpr std::size_t kBlock = 2 * kN;  // draws per round trip through the scratch buffer

// Which of the two narrow-type formulas this LibTorch's at::rand uses, read off at::rand itself once
// (no version number says when the kernel changed): 64 float16 draws from a fixed seed.
bool narrow_draws_through_float() {
  static const bool through_float = [] {
    constexpr std::size_t n = 64;
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(12345);
    at::Tensor theirs = at::rand({static_cast<std::int64_t>(n)}, g, at::TensorOptions().dtype(c10::kHalf));
    at::Generator ours = at::make_generator<at::CPUGeneratorImpl>(12345);
    std::uint32_t r[n];
    auto* impl = at::check_generator<at::CPUGeneratorImpl>(ours);
    for (auto& v : r) v = impl->random();
    c10::Half mine[n];
    to_narrow_through_float(r, mine, n);
    return std::memcmp(mine, theirs.data_ptr<c10::Half>(), sizeof(mine)) == 0;
  }();
  return through_float;
}

}  // namespace

void torch_random_u32(at::Generator& generator, std::uint32_t* out, std::size_t count) {
  with_engine(generator, [&](at::mt19937_data_pod& d) { draw(d, out, count); });
}

namespace {

// The numbers of at::rand, block by block; with `affine` (float32 / float64 only) each block is
// scaled as it is made, while it is in L1: x · scale + low.
struct Affine {
  double low, scale;
};
at::Tensor draw_rand(c10::IntArrayRef shape, at::Generator& generator, c10::ScalarType dtype, const Affine* affine) {
  const bool narrow_through_float = (dtype == c10::kHalf || dtype == c10::kBFloat16) && narrow_draws_through_float();
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(dtype));
  const auto n = static_cast<std::size_t>(t.numel());
  with_engine(generator, [&](at::mt19937_data_pod& d) {
    alignas(64) std::uint32_t r[kBlock];
    for (std::size_t done = 0; done < n;) {
      const std::size_t per = dtype == c10::kDouble ? kBlock / 2 : kBlock;
      const std::size_t m = std::min(per, n - done);
      draw(d, r, dtype == c10::kDouble ? 2 * m : m);
      switch (dtype) {
        case c10::kFloat:
          to_float(r, t.data_ptr<float>() + done, m);
          if (affine)
            scale_in_place(t.data_ptr<float>() + done, m, static_cast<float>(affine->scale),
                           static_cast<float>(affine->low));
          break;
        case c10::kDouble:
          to_double(r, t.data_ptr<double>() + done, m);
          if (affine) scale_in_place(t.data_ptr<double>() + done, m, affine->scale, affine->low);
          break;
        case c10::kHalf:
          if (narrow_through_float) to_narrow_through_float(r, t.data_ptr<c10::Half>() + done, m);
          else to_narrow(r, t.data_ptr<c10::Half>() + done, m, 11);
          break;
        default:
          if (narrow_through_float) to_narrow_through_float(r, t.data_ptr<c10::BFloat16>() + done, m);
          else to_narrow(r, t.data_ptr<c10::BFloat16>() + done, m, 8);
          break;
      }
      done += m;
    }
  });
  return t;
}

bool drawn_here(c10::ScalarType dtype) {
  return dtype == c10::kFloat || dtype == c10::kDouble || dtype == c10::kHalf || dtype == c10::kBFloat16;
}

}  // namespace

at::Tensor torch_rand(c10::IntArrayRef shape, at::Generator& generator, c10::ScalarType dtype) {
  if (!drawn_here(dtype)) return at::rand(shape, generator, at::TensorOptions().dtype(dtype));
  return draw_rand(shape, generator, dtype, nullptr);
}

at::Tensor torch_uniform(c10::IntArrayRef shape, at::Generator& generator, c10::ScalarType dtype, double low,
                         double scale) {
  if (dtype == c10::kFloat || dtype == c10::kDouble) {
    const Affine affine{low, scale};
    return draw_rand(shape, generator, dtype, &affine);
  }
  return torch_rand(shape, generator, dtype).mul_(scale).add_(low);
}

}  // namespace acccheck::replay
