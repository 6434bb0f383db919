// Building blocks for metric plugins, shared by the six built-in standards and available to
// out-of-tree metrics: the per-element error terms of precision-standards.md §3, ratio-of-masks,
// and the compare-stage cell parsing / inf-nan consistency rules.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "acccheck/float_formats.hpp"
#include "acccheck/metric.hpp"

namespace acccheck::metric_support {

// ---- stage 1 -------------------------------------------------------------------------------------

// Element-wise quantities of one output (precision-standards.md §3), computed with the precision
// the reference's numpy arithmetic has (float32 when the benchmark is float32).
struct ElementErrors {
  FloatKind device_kind = FloatKind::other;  // torch dtype of the device output
  FloatKind numpy_kind = FloatKind::other;   // D's numpy dtype (bf16 → float32)
  FloatKind bench_kind = FloatKind::float64; // B's numpy dtype
  bool float32_math = false;                 // AE/RE evaluated in float32 (bench is float32)
  double eps = 0.0;
  std::vector<double> abs_bench;      // |B|
  std::vector<double> abs_err;        // |D − B|
  std::vector<double> rel_err;        // AE / (|B| + eps)
  std::vector<char> finite;           // isfinite(D) & isfinite(B cast to D's numpy dtype)
};
ElementErrors element_errors(const OutputPair& out);
// The same quantities one element at a time, without the arrays (for streaming passes over large
// outputs): `setup` is element_errors' configuration (kinds, eps) with empty vectors.
ElementErrors element_error_setup(const OutputPair& out);
struct ElementError {
  double abs_bench, abs_err, rel_err;
  bool finite;
};
// AE = |D − B| and RE = AE / (|B| + eps) as numpy computes them: in float32 arithmetic when
// `float32_math`, the denominator rounded to float32 when `float32_denominator` (a benchmark that is
// not float64). Inline, and branch-free where the flags are constants (vectorised loops).
struct AbsRelError {
  double abs_err, rel_err;
};
inline AbsRelError abs_rel_error(double b, double d, double eps, bool float32_math, bool float32_denominator) {
  auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const double diff = d - b;
  const double abs_err = std::fabs(float32_math ? f32(diff) : diff);
  const double denom = float32_denominator ? f32(std::fabs(b) + eps) : std::fabs(b) + eps;
  return {abs_err, float32_math ? f32(abs_err / denom) : abs_err / denom};
}

// B rounded to D's numpy dtype K (误差均衡性's B'), and whether B is finite there — element_error's
// switch with K a constant, for loops that vectorise. Finiteness is fabs(x) <= max, not
// std::isfinite: the same answer, and GCC if-converts it (std::isfinite left control flow in the
// loops on targets without AVX-512). float16's rounding is branch-free bit arithmetic.
template <FloatKind K>
inline double rounded_to_numpy(double b) {
  if constexpr (K == FloatKind::float32) return round_to_float32(b);
  else if constexpr (K == FloatKind::float16) return round_to_float16(b);
  else if constexpr (K == FloatKind::bfloat16) return round_to_bfloat16(b);
  else return b;
}
template <FloatKind K>
inline bool finite_in_numpy(double b) {
  if constexpr (K == FloatKind::float32) return std::fabs(static_cast<float>(b)) <= std::numeric_limits<float>::max();
  else if constexpr (K == FloatKind::float16) return std::fabs(b) < 65520.0;  // false for NaN and inf
  else if constexpr (K == FloatKind::bfloat16) return std::fabs(round_to_bfloat16(b)) <= std::numeric_limits<double>::max();
  else return std::fabs(b) <= std::numeric_limits<double>::max();
}

// Inline: it runs once per element of every output (millions per API).
inline ElementError element_error(const ElementErrors& e, double b, double d) {
  ElementError x;
  x.abs_bench = std::fabs(b);
  const AbsRelError ar = abs_rel_error(b, d, e.eps, e.float32_math, e.bench_kind != FloatKind::float64);
  x.abs_err = ar.abs_err;
  x.rel_err = ar.rel_err;
  // isfinite(B cast to D's numpy dtype): a benchmark value the device dtype cannot hold is inf.
  bool b_finite;
  switch (e.numpy_kind) {
    case FloatKind::float32: b_finite = std::isfinite(static_cast<float>(b)); break;
    case FloatKind::float16: b_finite = std::isfinite(b) && std::fabs(b) < 65520.0; break;
    case FloatKind::bfloat16: b_finite = std::isfinite(round_to_bfloat16(b)); break;
    default: b_finite = std::isfinite(b); break;
  }
  x.finite = std::isfinite(d) && b_finite;
  return x;
}

// count(a & b) / count(b), 0 when b is empty.
double ratio_within(const std::vector<char>& a, const std::vector<char>& b);
std::vector<char> small_mask(const ElementErrors& e, double small_value);   // |B| ≤ sv & finite
std::vector<char> normal_mask(const ElementErrors& e, double small_value);  // finite & !small
// inf/nan错误率 of the absolute-threshold rule with tolerance rtol (precision-standards.md §5.1).
double inf_nan_error_rate(const OutputPair& out, const ElementErrors& e, double rtol);
// 误差均衡性: |count(D − B' > 0) − count(D − B' < 0)| / N, B' = B in D's numpy dtype.
double error_balance(const OutputPair& out, const ElementErrors& e);
// float32 mean as numpy computes it (pairwise summation in float32, then divided in float64).
double numpy_float32_mean(const std::vector<double>& values);
double numpy_float64_mean(const std::vector<double>& values);
double numpy_float32_mean(const double* values, std::size_t n);
double numpy_float64_mean(const double* values, std::size_t n);

// numpy's pairwise sum of a block of 8 to 128 values (eight lanes, then combined), in float64 or,
// with each value rounded to float32 first, in float32: the leaves of the sums above.
double numpy_block_sum_f64(const double* values, std::size_t n);
float numpy_block_sum_f32(const double* values, std::size_t n);

// The pairwise sum numpy_float64_mean (Sum = double) or numpy_float32_mean (Sum = float) takes of
// n values, for values that are computed rather than stored: `fill(start, count, out)` writes
// values start … start + count − 1 into out (count ≤ 128), once each, in order. The same blocks and
// additions as over a stored array, so the same sum — without an n-element buffer and the passes
// over it.
template <typename Sum, typename Fill>
Sum pairwise_sum_of(std::size_t start, std::size_t n, Fill& fill) {
  static_assert(std::is_same_v<Sum, double> || std::is_same_v<Sum, float>);
  if (n <= 128) {
    double block[128];
    fill(start, n, block);
    if (n >= 8) {
      if constexpr (std::is_same_v<Sum, float>) return numpy_block_sum_f32(block, n);
      else return numpy_block_sum_f64(block, n);
    }
    Sum res = 0;
    for (std::size_t i = 0; i < n; ++i) res += static_cast<Sum>(block[i]);
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum_of<Sum>(start, n2, fill) + pairwise_sum_of<Sum>(start + n2, n - n2, fill);
}

// The three rates of the absolute-threshold family (§5.1, §5.6): inf/nan错误率 with tolerance
// rtol, 相对误差错误率 (RE > rtol among normal values), 绝对误差错误率 (AE > atol among small
// values). An empty mask gives the integer 0, as in the reference.
std::vector<MetricValue> threshold_rates(const OutputPair& out, const ElementErrors& e, double small_value,
                                         double rtol, double atol);

// The text run_ut writes for a stage-1 value (run-ut.md §7.2).
std::string format_value(const MetricValue& v);

// ---- stage 2 -------------------------------------------------------------------------------------

// Python float() of a details cell; blank → UnjudgeableRow("ERROR: Input data is an empty string"),
// not a number → UnjudgeableRow naming the column and the text.
double parse_cell(const RowView& row, std::string_view column);
// A stage-1 value the metric cannot have: a rate outside [0, 1], a negative error. Such a row must
// never pass, whatever its ratio to the GPU's says (a hostile or corrupt file could otherwise turn
// an error into a pass). Returns "ERROR: <column> = <value> is impossible (expected ...)\n", or ""
// when the value is in its domain. NaN is left to the standard's own rules: the reference passes
// NaN on both sides on purpose (docs/compat.md).
enum class Domain { rate, non_negative };
std::string domain_violation(std::string_view column, double value, Domain domain);
// Applies the violations of `checks` (column, value, domain) to a judgement: error, the messages
// first, every status cell listed in `status_columns` set to "error". Returns true if any.
struct DomainCheck {
  std::string_view column;
  double value;
  Domain domain;
};
bool apply_domain_checks(const std::vector<DomainCheck>& checks, const std::vector<std::string_view>& status_columns,
                         Judgement& j);

// "{:.14f}" as the reference writes its floats.
std::string fixed14(double v);

// The inf/nan consistency rule of the benchmark standard (precision-standards.md §5.2): when x or
// y is inf/NaN, consistent iff both are inf of the same sign, or both NaN.
struct Consistency {
  bool nonfinite = false;  // x or y was inf/NaN
  bool consistent = true;
};
Consistency inf_nan_consistency(double x, double y);

// Rates that pass only when exactly 0 (absolute threshold, accumulative error): fills the value
// (as "{:.14f}") and status cells, marks the judgement as error when one fails, and returns the
// failing columns' messages in column order.
struct ZeroRate {
  const char* value_column;
  const char* status_column;
  const char* error_message;
};
std::vector<std::string> judge_zero_rates(const RowView& npu, const std::vector<ZeroRate>& rates, Judgement& j);

// ---- settings --------------------------------------------------------------------------------------

// A switch among a standard's settings whose values are `pass` and `error` (acccheck's fixes that
// one value turns back into the reference's verdicts, docs/compat.md): true for `pass`; `absent`
// when the key is not set. Anything else throws std::invalid_argument
// "<standard>: <key>: expected pass or error, found '<text>'".
bool pass_or_error_switch(const Settings& s, std::string_view standard, std::string_view key, std::string_view absent);

}  // namespace acccheck::metric_support
