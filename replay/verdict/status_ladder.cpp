#include "status_ladder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <acccheck/metric_support.hpp>
#include <acccheck/number_format.hpp>
#include <acccheck/simd.hpp>

namespace acccheck::replay {

namespace {

constexpr double kCosineThreshold = 0.99;
constexpr double kMaxAbsErrorPass = 0.001;
constexpr double kDoubleEps = 2.220446049250313e-16;  // np.finfo(float).eps

// Everything the ladder may need from one output, in one pass over the data (outputs can hold
// millions of elements): the cosine similarity (run-ut.md §6.4), the maximum absolute error and
// count(RE < t) / N for 双百/双千/双万 (comparisons in float32 when the reference's arrays are).
struct LadderInputs {
  std::string cos_cell = " ";
  bool cos_pass = true;
  std::string cos_message;
  double max_abs = 0.0;
  double below_hundredth = 1.0, below_thousandth = 1.0, below_ten_thousandth = 1.0;
  bool float32_math = false;
};

// The maxima, counts and sums of one output. The loop is instantiated per rounding mode (float32
// arithmetic, a float32 denominator: metric_support::abs_rel_error's flags) so that it has no branches; see acccheck/simd.hpp for how it
// vectorises. The cosine's sums run in four fixed accumulators, as numpy's BLAS dot products use
// several: the same numbers on every machine, whatever the vector width.
struct PassSums {
  double n_max, b_max, max_abs;  // NaN where a NaN was met (np.max)
  double dot, nn, bb;
  std::size_t k2, k3, k4;        // count(RE < 0.01), (< 0.001), (< 0.0001)
};

template <bool F32Math, bool F32Denominator>
ACCCHECK_SIMD_CLONES PassSums pass_sums(const OutputPair& out, double eps, double t2, double t3, double t4) {
  const double* device = out.device;
  const double* bench = out.bench;
  const std::size_t count = out.count;
  // 64-bit flags and counts, as wide as the double lanes (narrower ones stop the vectoriser).
  std::int64_t n_nan = 0, b_nan = 0, err_nan = 0, k2 = 0, k3 = 0, k4 = 0;
  double n_max = 0.0, b_max = 0.0, max_abs = 0.0;
  // The cosine's sums: lane l sums the elements i ≡ l (mod 4), in order, as 4-lane vectors (GCC's
  // vector extension: one AVX register, two SSE2 ones) because the vectoriser made a shuffle per
  // element of the plain loop over dot[l] — two thirds of this function's time.
  using Lanes = double __attribute__((vector_size(32)));
  Lanes vdot = {0, 0, 0, 0}, vnn = {0, 0, 0, 0}, vbb = {0, 0, 0, 0};
  // Both loops run over one chunk at a time, so that the second reads it from L1 (a chunk of 1024
  // is 16 KiB of the two rows) instead of reading a whole row again from L3. 1024 is a multiple of
  // 4: the lanes keep their elements.
  constexpr std::size_t kChunk = 1024;
  std::size_t i = 0;
  for (std::size_t begin = 0; begin < count; begin += kChunk) {
    const std::size_t end = std::min(count, begin + kChunk);
#pragma omp simd reduction(| : n_nan, b_nan, err_nan) reduction(max : n_max, b_max, max_abs) reduction(+ : k2, k3, k4)
    for (std::size_t j = begin; j < end; ++j) {
      const double d = device[j], b = bench[j];
      const double ad = std::fabs(d), ab = std::fabs(b);
      n_nan |= ad != ad;
      b_nan |= ab != ab;
      n_max = ad > n_max ? ad : n_max;
      b_max = ab > b_max ? ab : b_max;
      const metric_support::AbsRelError e = metric_support::abs_rel_error(b, d, eps, F32Math, F32Denominator);
      err_nan |= e.abs_err != e.abs_err;
      max_abs = e.abs_err > max_abs ? e.abs_err : max_abs;
      k2 += e.rel_err < t2;
      k3 += e.rel_err < t3;
      k4 += e.rel_err < t4;
    }
    for (; i + 4 <= end; i += 4) {
      Lanes d, b;
      std::memcpy(&d, device + i, sizeof d);
      std::memcpy(&b, bench + i, sizeof b);
      vdot += d * b;
      vnn += d * d;
      vbb += b * b;
    }
  }
  double dot[4] = {vdot[0], vdot[1], vdot[2], vdot[3]}, nn[4] = {vnn[0], vnn[1], vnn[2], vnn[3]},
         bb[4] = {vbb[0], vbb[1], vbb[2], vbb[3]};
  for (; i < count; ++i) {
    dot[0] += device[i] * bench[i];
    nn[0] += device[i] * device[i];
    bb[0] += bench[i] * bench[i];
  }
  const double nan = std::nan("");
  return {n_nan ? nan : n_max,
          b_nan ? nan : b_max,
          err_nan ? nan : max_abs,
          (dot[0] + dot[1]) + (dot[2] + dot[3]),
          (nn[0] + nn[1]) + (nn[2] + nn[3]),
          (bb[0] + bb[1]) + (bb[2] + bb[3]),
          static_cast<std::size_t>(k2),
          static_cast<std::size_t>(k3),
          static_cast<std::size_t>(k4)};
}

LadderInputs one_pass(const OutputPair& out) {
  LadderInputs s;
  auto setup = metric_support::element_error_setup(out);
  s.float32_math = setup.float32_math;
  auto thr = [&](double t) { return setup.float32_math ? round_to_float32(t) : t; };
  const double t2 = thr(0.01), t3 = thr(0.001), t4 = thr(0.0001);
  const bool f32_denominator = setup.bench_kind != FloatKind::float64;
  PassSums p = setup.float32_math ? (f32_denominator ? pass_sums<true, true>(out, setup.eps, t2, t3, t4)
                                                     : pass_sums<true, false>(out, setup.eps, t2, t3, t4))
                                  : (f32_denominator ? pass_sums<false, true>(out, setup.eps, t2, t3, t4)
                                                     : pass_sums<false, false>(out, setup.eps, t2, t3, t4));
  s.max_abs = p.max_abs;
  if (out.count > 0) {
    const double n = static_cast<double>(out.count);
    s.below_hundredth = static_cast<double>(p.k2) / n;
    s.below_thousandth = static_cast<double>(p.k3) / n;
    s.below_ten_thousandth = static_cast<double>(p.k4) / n;
  }

  // Cosine.
  const double n_max = p.n_max, b_max = p.b_max;
  double dot = p.dot, nn = p.nn, bb = p.bb;
  if (out.count == 1) {
    s.cos_message = "All the data in device dump data is scalar. Please refer to other compare algorithms.";
    return s;
  }
  bool n_zero = n_max <= kDoubleEps, b_zero = b_max <= kDoubleEps;
  if (n_zero && b_zero) {
    s.cos_message = "All the data in device and bench outputs are zero.";
    return s;
  }
  if (n_zero || b_zero) {
    s.cos_pass = false;
    s.cos_message = n_zero ? "All the data is zero in device dump data." : "All the data is zero in bench dump data.";
    return s;
  }
  // The reference divides both sides by their maximum first; cosine is scale invariant, so that
  // only matters when the squares could overflow or underflow: then the sums are taken again.
  if (!(n_max < 1e150 && b_max < 1e150 && n_max > 1e-150 && b_max > 1e-150)) {
    dot = nn = bb = 0.0;
    for (std::size_t i = 0; i < out.count; ++i) {
      double n = out.device[i] / n_max, b = out.bench[i] / b_max;
      dot += n * b;
      nn += n * n;
      bb += b * b;
    }
  }
  double cos = dot / (std::sqrt(nn) * std::sqrt(bb));
  if (std::isnan(cos)) {
    s.cos_message = "Dump data has NaN when comparing with Cosine Similarity.";
    s.cos_pass = false;
  } else {
    cos = std::min(1.0, std::max(-1.0, cos));
    s.cos_pass = cos > kCosineThreshold;
  }
  s.cos_cell = python_fixed(cos, 14);
  return s;
}

}  // namespace

std::string status_ladder(const OutputPair& out, DetailsRow& row, std::string& message) {
  const LadderInputs e = one_pass(out);
  row.set("余弦相似度", e.cos_cell);
  message += e.cos_message + "\n";
  if (!e.cos_pass) {
    message += "Cosine similarity is less than 0.99, consider as error, skip other check and set to SPACE.\n";
    return "error";
  }
  const double max_err = e.max_abs;
  row.set("最大绝对误差", metric_support::format_value(
                              {"", max_err, e.float32_math ? NumberStyle::float32_repr : NumberStyle::fixed14}));
  if (max_err < kMaxAbsErrorPass) {
    message += "Max abs error is less than 0.001, consider as pass, skip other check and set to SPACE.\n";
    return "pass";
  }
  auto passes = [](double ratio, double t) { return ratio > 1.0 - t; };
  FloatKind kind = float_kind(out.device_dtype);
  if (kind == FloatKind::float16 || kind == FloatKind::bfloat16) {
    double hundred = e.below_hundredth;
    row.set("双百指标", python_fixed(hundred, 14));
    if (!passes(hundred, 0.01)) {
      message += "Relative error is greater than 0.01, consider as error, skip other check and set to SPACE.\n";
      return "error";
    }
    double thousand = e.below_thousandth;
    row.set("双千指标", python_fixed(thousand, 14));
    if (passes(thousand, 0.001)) {
      message += "Relative error is less than 0.001, consider as pass, skip other check and set to SPACE.\n";
      return "pass";
    }
    message += "Relative error is greater than 0.001, consider as warning, skip other check and set to SPACE.\n";
    return "Warning";
  }
  double thousand = e.below_thousandth, ten_thousand = e.below_ten_thousandth;
  row.set("双千指标", python_fixed(thousand, 14));
  row.set("双万指标", python_fixed(ten_thousand, 14));
  if (kind != FloatKind::float32 && kind != FloatKind::float64) return "pass";  // fp8 outputs
  if (!passes(thousand, 0.001)) {
    message += "Relative error is greater than 0.001, consider as error, skip other check and set to SPACE.\n";
    return "error";
  }
  if (!passes(ten_thousand, 0.0001)) {
    message += "Relative error is greater than 0.0001, consider as warning, skip other check and set to SPACE.\n";
    return "Warning";
  }
  message += "Relative error is less than 0.0001, consider as pass.\n";
  return "pass";
}

}  // namespace acccheck::replay
