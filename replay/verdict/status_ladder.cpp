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
  double dot = 0.0, nn = 0.0, bb = 0.0;
  for (std::size_t i = 0; i < out.count; ++i) {
    double n = out.device[i] / n_max, b = out.bench[i] / b_max;
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

// count(RE < t) / N; the comparison happens in float32 when the reference's arrays are float32.
double ratio_below(const metric_support::ElementErrors& e, double t) {
  if (e.rel_err.empty()) return 1.0;
  double thr = e.float32_math ? round_to_float32(t) : t;
  std::size_t k = 0;
  for (double r : e.rel_err) k += r < thr;
  return static_cast<double>(k) / static_cast<double>(e.rel_err.size());
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
  auto e = metric_support::element_errors(out);
  double max_err = 0.0;
  for (double a : e.abs_err) {
    if (std::isnan(a)) { max_err = a; break; }
    max_err = std::max(max_err, a);
  }
  row.set("最大绝对误差", metric_support::format_value(
                              {"", max_err, e.float32_math ? NumberStyle::float32_repr : NumberStyle::fixed14}));
  if (max_err < kMaxAbsErrorPass) {
    message += "Max abs error is less than 0.001, consider as pass, skip other check and set to SPACE.\n";
    return "pass";
  }
  auto passes = [](double ratio, double t) { return ratio > 1.0 - t; };
  FloatKind kind = float_kind(out.device_dtype);
  if (kind == FloatKind::float16 || kind == FloatKind::bfloat16) {
    double hundred = ratio_below(e, 0.01);
    row.set("双百指标", python_fixed(hundred, 14));
    if (!passes(hundred, 0.01)) {
      message += "Relative error is greater than 0.01, consider as error, skip other check and set to SPACE.\n";
      return "error";
    }
    double thousand = ratio_below(e, 0.001);
    row.set("双千指标", python_fixed(thousand, 14));
    if (passes(thousand, 0.001)) {
      message += "Relative error is less than 0.001, consider as pass, skip other check and set to SPACE.\n";
      return "pass";
    }
    message += "Relative error is greater than 0.001, consider as warning, skip other check and set to SPACE.\n";
    return "Warning";
  }
  double thousand = ratio_below(e, 0.001), ten_thousand = ratio_below(e, 0.0001);
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
