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

struct Cosine {
  std::string cell = " ";
  bool pass = true;
  std::string message;
};

double max_abs(const double* v, std::size_t n) {
  double m = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double a = std::fabs(v[i]);
    if (std::isnan(a)) return a;  // np.max propagates NaN
    if (a > m) m = a;
  }
  return m;
}

Cosine cosine_similarity(const OutputPair& out) {
  Cosine c;
  if (out.count == 1) {
    c.message = "All the data in device dump data is scalar. Please refer to other compare algorithms.";
    return c;
  }
  double n_max = max_abs(out.device, out.count), b_max = max_abs(out.bench, out.count);
  bool n_zero = n_max <= kDoubleEps, b_zero = b_max <= kDoubleEps;
  if (n_zero && b_zero) {
    c.message = "All the data in device and bench outputs are zero.";
    return c;
  }
  if (n_zero || b_zero) {
    c.pass = false;
    c.message = n_zero ? "All the data is zero in device dump data." : "All the data is zero in bench dump data.";
    return c;
  }
  // The reference divides both sides by their maximum first; cosine is scale invariant, so that
  // only matters when squares could overflow or underflow: otherwise skip two divisions per element.
  const bool normalise = !(n_max < 1e150 && b_max < 1e150 && n_max > 1e-150 && b_max > 1e-150);
  const double sn = normalise ? 1.0 / n_max : 1.0, sb = normalise ? 1.0 / b_max : 1.0;
  double dot = 0.0, nn = 0.0, bb = 0.0;
  for (std::size_t i = 0; i < out.count; ++i) {
    double n = out.device[i] * sn, b = out.bench[i] * sb;
    dot += n * b;
    nn += n * n;
    bb += b * b;
  }
  double cos = dot / (std::sqrt(nn) * std::sqrt(bb));
  if (std::isnan(cos)) {
    c.message = "Dump data has NaN when comparing with Cosine Similarity.";
    c.pass = false;
  } else {
    cos = std::min(1.0, std::max(-1.0, cos));
    c.pass = cos > kCosineThreshold;
  }
  c.cell = python_fixed(cos, 14);
  return c;
}

// One streaming pass (outputs can hold millions of elements): the maximum absolute error and
// count(RE < t) / N for the three thresholds; comparisons happen in float32 when the reference's
// arrays are float32.
struct ErrorSummary {
  double max_abs = 0.0;
  double below_hundredth = 1.0, below_thousandth = 1.0, below_ten_thousandth = 1.0;
  bool float32_math = false;
};
ErrorSummary summarise_errors(const OutputPair& out) {
  auto setup = metric_support::element_error_setup(out);
  ErrorSummary s;
  s.float32_math = setup.float32_math;
  auto thr = [&](double t) { return setup.float32_math ? round_to_float32(t) : t; };
  const double t2 = thr(0.01), t3 = thr(0.001), t4 = thr(0.0001);
  std::size_t k2 = 0, k3 = 0, k4 = 0;
  bool nan = false;
  for (std::size_t i = 0; i < out.count; ++i) {
    auto x = metric_support::element_error(setup, out.bench[i], out.device[i]);
    if (std::isnan(x.abs_err)) nan = true;
    else if (x.abs_err > s.max_abs) s.max_abs = x.abs_err;
    k2 += x.rel_err < t2;
    k3 += x.rel_err < t3;
    k4 += x.rel_err < t4;
  }
  if (nan) s.max_abs = std::nan("");  // np.max propagates NaN
  if (out.count > 0) {
    const double n = static_cast<double>(out.count);
    s.below_hundredth = static_cast<double>(k2) / n;
    s.below_thousandth = static_cast<double>(k3) / n;
    s.below_ten_thousandth = static_cast<double>(k4) / n;
  }
  return s;
}

}  // namespace

std::string status_ladder(const OutputPair& out, DetailsRow& row, std::string& message) {
  Cosine cos = cosine_similarity(out);
  row.set("余弦相似度", cos.cell);
  message += cos.message + "\n";
  if (!cos.pass) {
    message += "Cosine similarity is less than 0.99, consider as error, skip other check and set to SPACE.\n";
    return "error";
  }
  const ErrorSummary e = summarise_errors(out);
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
