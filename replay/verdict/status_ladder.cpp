#include "status_ladder.hpp"

#include <cmath>
#include <cstdint>
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
// arithmetic, a float32 denominator) so that it has no branches; see acccheck/simd.hpp for how it
// vectorises. The cosine's sums run in four fixed accumulators, as numpy's BLAS dot products use
// several: the same numbers on every machine, whatever the vector width.
struct PassSums {
  std::int64_t n_nan = 0, b_nan = 0, err_nan = 0;
  double n_max = 0.0, b_max = 0.0, max_abs = 0.0, dot = 0.0, nn = 0.0, bb = 0.0;
  std::int64_t k2 = 0, k3 = 0, k4 = 0;
};

template <bool F32Math, bool F32Denominator>
ACCCHECK_SIMD_CLONES PassSums pass_sums(const OutputPair& out, double eps, double t2, double t3, double t4) {
  auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const double* device = out.device;
  const double* bench = out.bench;
  const std::size_t count = out.count;
  // 64-bit flags and counts, as wide as the double lanes (narrower ones stop the vectoriser).
  std::int64_t n_nan = 0, b_nan = 0, err_nan = 0, k2 = 0, k3 = 0, k4 = 0;
  double n_max = 0.0, b_max = 0.0, max_abs = 0.0;
#pragma omp simd reduction(| : n_nan, b_nan, err_nan) reduction(max : n_max, b_max, max_abs) reduction(+ : k2, k3, k4)
  for (std::size_t i = 0; i < count; ++i) {
    const double d = device[i], b = bench[i];
    const double ad = std::fabs(d), ab = std::fabs(b);
    n_nan |= ad != ad;
    b_nan |= ab != ab;
    n_max = ad > n_max ? ad : n_max;
    b_max = ab > b_max ? ab : b_max;
    // metric_support::element_error's abs_err and rel_err, specialised.
    const double abs_err = std::fabs(F32Math ? f32(d - b) : d - b);
    const double denom = F32Denominator ? f32(ab + eps) : ab + eps;
    const double rel_err = F32Math ? f32(abs_err / denom) : abs_err / denom;
    err_nan |= abs_err != abs_err;
    max_abs = abs_err > max_abs ? abs_err : max_abs;
    k2 += rel_err < t2;
    k3 += rel_err < t3;
    k4 += rel_err < t4;
  }
  double dot[4] = {0, 0, 0, 0}, nn[4] = {0, 0, 0, 0}, bb[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4)
    for (int l = 0; l < 4; ++l) {
      const double d = device[i + l], b = bench[i + l];
      dot[l] += d * b;
      nn[l] += d * d;
      bb[l] += b * b;
    }
  for (; i < count; ++i) {
    dot[0] += device[i] * bench[i];
    nn[0] += device[i] * device[i];
    bb[0] += bench[i] * bench[i];
  }
  PassSums p;
  p.n_nan = n_nan, p.b_nan = b_nan, p.err_nan = err_nan;
  p.n_max = n_max, p.b_max = b_max, p.max_abs = max_abs;
  p.dot = (dot[0] + dot[1]) + (dot[2] + dot[3]);
  p.nn = (nn[0] + nn[1]) + (nn[2] + nn[3]);
  p.bb = (bb[0] + bb[1]) + (bb[2] + bb[3]);
  p.k2 = k2, p.k3 = k3, p.k4 = k4;
  return p;
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
  const bool n_nan = p.n_nan, b_nan = p.b_nan, nan_err = p.err_nan;
  const std::size_t k2 = static_cast<std::size_t>(p.k2), k3 = static_cast<std::size_t>(p.k3), k4 = static_cast<std::size_t>(p.k4);
  double n_max = p.n_max, b_max = p.b_max, dot = p.dot, nn = p.nn, bb = p.bb;
  s.max_abs = p.max_abs;
  if (nan_err) s.max_abs = std::nan("");  // np.max propagates NaN
  if (out.count > 0) {
    const double n = static_cast<double>(out.count);
    s.below_hundredth = static_cast<double>(k2) / n;
    s.below_thousandth = static_cast<double>(k3) / n;
    s.below_ten_thousandth = static_cast<double>(k4) / n;
  }

  // Cosine.
  if (n_nan) n_max = std::nan("");
  if (b_nan) b_max = std::nan("");
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
