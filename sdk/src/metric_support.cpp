#include "acccheck/metric_support.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "acccheck/simd.hpp"

#include "acccheck/number_format.hpp"

namespace acccheck::metric_support {

namespace {
// Rounds to float32 when the reference's arithmetic is float32.
inline double arith(bool f32, double v) { return f32 ? round_to_float32(v) : v; }

// numpy's pairwise summation (PW_BLOCKSIZE 128, 8 accumulators): blocks of at most 128 summed in
// eight lanes (lane k takes the elements ≡ k mod 8, in order), longer runs split in halves.
// The lanes are GCC vector-extension values (one AVX-512 register, two AVX or four SSE ones):
// the plain loop over r[8] vectorised into a shuffle per element, half a ULP-standard row's time.
using F64x8 = double __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));

ACCCHECK_SIMD_CLONES float block_sum_f32(const double* a, std::size_t n) {  // 8 ≤ n ≤ 128
  auto load = [&](std::size_t i) {
    F32x8 v;
    for (int k = 0; k < 8; ++k) v[k] = static_cast<float>(a[i + k]);
    return v;
  };
  F32x8 r = load(0);
  std::size_t i = 8;
  for (; i < n - (n % 8); i += 8) r += load(i);
  float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; ++i) res += static_cast<float>(a[i]);
  return res;
}

ACCCHECK_SIMD_CLONES double block_sum_f64(const double* a, std::size_t n) {  // 8 ≤ n ≤ 128
  auto load = [&](std::size_t i) {
    F64x8 v;
    std::memcpy(&v, a + i, sizeof v);
    return v;
  };
  F64x8 r = load(0);
  std::size_t i = 8;
  for (; i < n - (n % 8); i += 8) r += load(i);
  double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; ++i) res += a[i];
  return res;
}

float pairwise_sum_f32(const double* a, std::size_t n) {
  if (n < 8) {
    float res = 0.f;
    for (std::size_t i = 0; i < n; ++i) res += static_cast<float>(a[i]);
    return res;
  }
  if (n <= 128) return block_sum_f32(a, n);
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum_f32(a, n2) + pairwise_sum_f32(a + n2, n - n2);
}

double pairwise_sum_f64(const double* a, std::size_t n) {
  if (n < 8) {
    double res = 0.;
    for (std::size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) return block_sum_f64(a, n);
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum_f64(a, n2) + pairwise_sum_f64(a + n2, n - n2);
}
}  // namespace

double numpy_block_sum_f64(const double* values, std::size_t n) { return block_sum_f64(values, n); }
float numpy_block_sum_f32(const double* values, std::size_t n) { return block_sum_f32(values, n); }

double numpy_float32_mean(const double* v, std::size_t n) {
  if (n == 0) return std::nan("");
  float s = pairwise_sum_f32(v, n);
  return round_to_float32(static_cast<double>(s) / static_cast<double>(n));
}

double numpy_float64_mean(const double* v, std::size_t n) {
  if (n == 0) return std::nan("");
  return pairwise_sum_f64(v, n) / static_cast<double>(n);
}

double numpy_float32_mean(const std::vector<double>& v) { return numpy_float32_mean(v.data(), v.size()); }
double numpy_float64_mean(const std::vector<double>& v) { return numpy_float64_mean(v.data(), v.size()); }

ElementErrors element_error_setup(const OutputPair& out) {
  ElementErrors e;
  e.device_kind = float_kind(out.device_dtype);
  e.numpy_kind = numpy_kind_of_device(e.device_kind);
  e.bench_kind = float_kind(out.bench_dtype);
  if (e.bench_kind == FloatKind::bfloat16 || e.bench_kind == FloatKind::other) e.bench_kind = FloatKind::float32;
  // numpy promotion of D − B: the wider of D's and B's numpy types.
  bool any64 = e.bench_kind == FloatKind::float64 || e.numpy_kind == FloatKind::float64;
  e.float32_math = !any64;
  e.eps = e.device_kind == FloatKind::bfloat16 ? 0.00390625 : machine_eps(e.bench_kind);
  return e;
}

namespace {

template <FloatKind K, bool F32Math, bool F32Denominator>
ACCCHECK_SIMD_CLONES void fill_element_errors(const double* bench, const double* device, std::size_t n, double eps,
                                              double* abs_bench, double* abs_err, double* rel_err, char* finite) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const double b = bench[i], d = device[i];
    const AbsRelError x = abs_rel_error(b, d, eps, F32Math, F32Denominator);
    abs_bench[i] = std::fabs(b);
    abs_err[i] = x.abs_err;
    rel_err[i] = x.rel_err;
    finite[i] = static_cast<char>(finite_in_numpy<FloatKind::float64>(d) & finite_in_numpy<K>(b));
  }
}

template <FloatKind K>
void fill_element_errors_for(const OutputPair& out, ElementErrors& e) {
  const bool f32_den = e.bench_kind != FloatKind::float64;
  auto* f = e.float32_math ? (f32_den ? &fill_element_errors<K, true, true> : &fill_element_errors<K, true, false>)
                           : (f32_den ? &fill_element_errors<K, false, true> : &fill_element_errors<K, false, false>);
  f(out.bench, out.device, out.count, e.eps, e.abs_bench.data(), e.abs_err.data(), e.rel_err.data(), e.finite.data());
}

template <FloatKind K>
ACCCHECK_SIMD_CLONES std::int64_t balance(const double* bench, const double* device, std::size_t n) {
  std::int64_t pos = 0, neg = 0;
#pragma omp simd reduction(+ : pos, neg)
  for (std::size_t i = 0; i < n; ++i) {
    const double diff = device[i] - rounded_to_numpy<K>(bench[i]);
    pos += diff > 0;
    neg += diff < 0;
  }
  return pos - neg;
}

}  // namespace

ElementErrors element_errors(const OutputPair& out) {
  ElementErrors e = element_error_setup(out);
  const std::size_t n = out.count;
  e.abs_bench.resize(n);
  e.abs_err.resize(n);
  e.rel_err.resize(n);
  e.finite.resize(n);
  switch (e.numpy_kind) {
    case FloatKind::float32: fill_element_errors_for<FloatKind::float32>(out, e); break;
    case FloatKind::float16: fill_element_errors_for<FloatKind::float16>(out, e); break;
    case FloatKind::bfloat16: fill_element_errors_for<FloatKind::bfloat16>(out, e); break;
    default: fill_element_errors_for<FloatKind::float64>(out, e); break;  // float64, other: B as is
  }
  return e;
}

double ratio_within(const std::vector<char>& a, const std::vector<char>& b) {
  std::size_t both = 0, base = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!b[i]) continue;
    ++base;
    if (a[i]) ++both;
  }
  return base == 0 ? 0.0 : static_cast<double>(both) / static_cast<double>(base);
}

std::vector<char> small_mask(const ElementErrors& e, double sv) {
  std::vector<char> m(e.abs_bench.size());
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = e.abs_bench[i] <= sv && e.finite[i];
  return m;
}

std::vector<char> normal_mask(const ElementErrors& e, double sv) {
  std::vector<char> m(e.abs_bench.size());
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = e.finite[i] && !(e.abs_bench[i] <= sv);
  return m;
}

double inf_nan_error_rate(const OutputPair& out, const ElementErrors& e, double rtol) {
  std::size_t infnan = 0, disagree = 0;
  double hi = finite_max(e.numpy_kind == FloatKind::float32 && e.device_kind == FloatKind::bfloat16
                             ? FloatKind::bfloat16
                             : e.numpy_kind);
  for (std::size_t i = 0; i < out.count; ++i) {
    if (e.finite[i]) continue;
    ++infnan;
    double bc = round_to(e.numpy_kind, out.bench[i]);
    double dc = out.device[i];
    auto clip = [&](double v) { return std::isnan(v) ? v : std::fmin(std::fmax(v, -hi), hi); };
    bc = clip(bc);
    dc = clip(dc);
    double diff = round_to(e.numpy_kind, dc - bc);  // evaluated in D's dtype: can overflow to inf
    double denom = arith(e.bench_kind != FloatKind::float64, e.abs_bench[i] + e.eps);
    double rel = std::fabs(diff) / denom;
    bool agree = rel <= rtol || (std::isnan(out.device[i]) && std::isnan(bc));
    if (!agree) ++disagree;
  }
  return infnan == 0 ? 0.0 : static_cast<double>(disagree) / static_cast<double>(infnan);
}

double error_balance(const OutputPair& out, const ElementErrors& e) {
  if (out.count == 0) return 0.0;
  std::int64_t net;
  switch (e.numpy_kind) {
    case FloatKind::float32: net = balance<FloatKind::float32>(out.bench, out.device, out.count); break;
    case FloatKind::float16: net = balance<FloatKind::float16>(out.bench, out.device, out.count); break;
    case FloatKind::bfloat16: net = balance<FloatKind::bfloat16>(out.bench, out.device, out.count); break;
    default: net = balance<FloatKind::float64>(out.bench, out.device, out.count); break;
  }
  return static_cast<double>(std::llabs(net)) / static_cast<double>(out.count);
}

std::vector<MetricValue> threshold_rates(const OutputPair& out, const ElementErrors& e, double sv, double rtol,
                                         double atol) {
  // One pass: small = finite & |B| ≤ sv, normal = finite & !small (small_mask / normal_mask).
  std::size_t infnan = 0, small = 0, normal = 0, rel_bad = 0, abs_bad = 0;
  for (std::size_t i = 0; i < out.count; ++i) {
    const bool finite = e.finite[i] != 0;
    const bool is_small = finite && e.abs_bench[i] <= sv;
    const bool is_normal = finite && !(e.abs_bench[i] <= sv);
    infnan += !finite;
    small += is_small;
    normal += is_normal;
    rel_bad += is_normal && e.rel_err[i] > rtol;
    abs_bad += is_small && e.abs_err[i] > atol;
  }
  // ratio_within: count(bad & within) / count(within); an empty mask gives the integer 0.
  auto share = [](std::size_t bad, std::size_t within, const char* column) {
    return MetricValue{column, within == 0 ? 0.0 : static_cast<double>(bad) / static_cast<double>(within),
                       within == 0 ? NumberStyle::integer : NumberStyle::fixed14};
  };
  return {{"inf/nan错误率", inf_nan_error_rate(out, e, rtol), infnan ? NumberStyle::fixed14 : NumberStyle::integer},
          share(rel_bad, normal, "相对误差错误率"),
          share(abs_bad, small, "绝对误差错误率")};
}

std::vector<std::string> judge_zero_rates(const RowView& npu, const std::vector<ZeroRate>& rates, Judgement& j) {
  std::vector<std::string> messages;
  for (const auto& r : rates) {
    double v = parse_cell(npu, r.value_column);
    bool ok = v == 0.0;
    j.cells.emplace_back(r.value_column, fixed14(v));
    j.cells.emplace_back(r.status_column, ok ? "pass" : "error");
    if (ok) continue;
    j.verdict = Verdict::error;
    messages.push_back(r.error_message);
    if (j.deciding_metric.empty()) {
      j.deciding_metric = r.value_column;
      j.severity = 1.0 + v;  // pass/fail rule: any non-zero rate fails
    }
  }
  return messages;
}

double parse_cell(const RowView& row, std::string_view column) {
  std::string_view text = row.cell(column);
  if (text.empty() || is_python_space(text)) throw UnjudgeableRow("ERROR: Input data is an empty string");
  auto v = parse_python_float(text);
  if (!v)
    throw UnjudgeableRow("ERROR: column " + std::string(column) + ": expected a number, found '" +
                         std::string(text) + "'");
  return *v;
}

std::string fixed14(double v) { return python_fixed(v, 14); }

std::string format_value(const MetricValue& v) {
  switch (v.style) {
    case NumberStyle::fixed14: return python_fixed(v.value, 14);
    case NumberStyle::float32_repr: return numpy_float32_repr(static_cast<float>(v.value));
    case NumberStyle::integer: return std::to_string(static_cast<long long>(v.value));
  }
  return {};
}

Consistency inf_nan_consistency(double x, double y) {
  Consistency c;
  if (std::isfinite(x) && std::isfinite(y)) return c;
  c.nonfinite = true;
  if (std::isinf(x) || std::isinf(y)) {
    c.consistent = std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0);
  } else {
    c.consistent = std::isnan(x) && std::isnan(y);
  }
  return c;
}

std::string domain_violation(std::string_view column, double value, Domain domain) {
  if (std::isnan(value)) return {};
  bool ok = domain == Domain::rate ? value >= 0.0 && value <= 1.0 : value >= 0.0;
  if (ok) return {};
  return "ERROR: " + std::string(column) + " = " + python_float_repr(value) + " is impossible (expected " +
         (domain == Domain::rate ? "a rate in [0, 1]" : "a value >= 0") + ")\n";
}

bool apply_domain_checks(const std::vector<DomainCheck>& checks, const std::vector<std::string_view>& status_columns,
                         Judgement& j) {
  std::string messages;
  for (const auto& c : checks) {
    std::string m = domain_violation(c.column, c.value, c.domain);
    if (m.empty()) continue;
    if (messages.empty()) j.deciding_metric = std::string(c.column);
    messages += m;
  }
  if (messages.empty()) return false;
  j.verdict = Verdict::error;
  j.severity = INFINITY;
  j.message = messages + j.message;
  for (auto& [column, text] : j.cells)
    for (auto s : status_columns)
      if (column == s) text = "error";
  return true;
}

bool pass_or_error_switch(const Settings& s, std::string_view standard, std::string_view key, std::string_view absent) {
  const std::string mode = s.text(key).value_or(std::string(absent));
  if (mode != "pass" && mode != "error")
    throw std::invalid_argument(std::string(standard) + ": " + std::string(key) + ": expected pass or error, found '" + mode +
                                "'");
  return mode == "pass";
}

}  // namespace acccheck::metric_support
