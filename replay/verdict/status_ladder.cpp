#include "status_ladder.hpp"

#include <cmath>
#include <limits>

#include <acccheck/metric_support.hpp>
#include <acccheck/number_format.hpp>

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

LadderInputs one_pass(const OutputPair& out) {
  LadderInputs s;
  auto setup = metric_support::element_error_setup(out);
  s.float32_math = setup.float32_math;
  auto thr = [&](double t) { return setup.float32_math ? round_to_float32(t) : t; };
  const double t2 = thr(0.01), t3 = thr(0.001), t4 = thr(0.0001);
  std::size_t k2 = 0, k3 = 0, k4 = 0;
  bool nan_err = false;
  double n_max = 0.0, b_max = 0.0, dot = 0.0, nn = 0.0, bb = 0.0;
  bool n_nan = false, b_nan = false;
  for (std::size_t i = 0; i < out.count; ++i) {
    const double d = out.device[i], b = out.bench[i];
    const double ad = std::fabs(d), ab = std::fabs(b);
    n_nan |= std::isnan(ad);
    b_nan |= std::isnan(ab);
    n_max = ad > n_max ? ad : n_max;
    b_max = ab > b_max ? ab : b_max;
    dot += d * b;
    nn += d * d;
    bb += b * b;
    auto x = metric_support::element_error(setup, b, d);
    nan_err |= std::isnan(x.abs_err);
    s.max_abs = x.abs_err > s.max_abs ? x.abs_err : s.max_abs;
    k2 += x.rel_err < t2;
    k3 += x.rel_err < t3;
    k4 += x.rel_err < t4;
  }
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
