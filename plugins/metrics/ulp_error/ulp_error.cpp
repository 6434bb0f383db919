// ULP误差比对法 (ULP error standard, precision-standards.md §5.4): errors measured in units in the
// last place of the benchmark value. Used for matmul-like APIs and fp8 outputs.
#include <cmath>
#include <cstdint>
#include <cstring>

#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>

namespace {

using namespace acccheck;
namespace ms = acccheck::metric_support;

constexpr const char* kMax = "ULP误差最大值";
constexpr const char* kMean = "ULP误差平均值";
constexpr const char* kProportion = "ULP误差大于阈值占比";
constexpr const char* kRatio = "ULP误差大于阈值占比比值";
constexpr const char* kStatus = "ULP误差判定结果";
constexpr const char* kErrorMessage = "ERROR: ULP误差不满足标准\n";

class UlpStandard final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "ulp_compare"; }
  std::string_view algorithm_name() const override { return "ULP误差比对法"; }
  std::vector<std::string> details_columns() const override { return {kMax, kMean, kProportion}; }
  std::vector<std::string> compare_columns() const override { return {kMean, kProportion, kRatio, kStatus}; }
  void configure(const Settings& s) override { settings_ = s; }

  std::vector<MetricValue> compute(const OutputPair& out) const override {
    const std::string dtype(out.device_dtype);
    const std::size_t n = out.count;
    std::vector<double> ulp(n);
    bool fp8 = is_fp8(dtype);
    double threshold = settings_.number("ulp_threshold", dtype);
    bool f32_math = false;
    if (fp8) {
      for (std::size_t i = 0; i < n; ++i) ulp[i] = fp8_ulp(out.bench[i], out.device[i]);
    } else {
      FloatKind kind = float_kind(dtype);
      double min_eb = settings_.number("min_eb", dtype);
      double exponent_num = settings_.number("exponent_num", dtype);
      f32_math = kind != FloatKind::float32;  // float16/bfloat16: computed in float32
      for (std::size_t i = 0; i < n; ++i) {
        double b = out.bench[i];
        double ab = std::fabs(b);
        // eb = max(floor(log2|b|), min_eb), scale = 2^(exponent_num - eb). For a normal finite b
        // the exponent is read from the bits (exact, and far cheaper than log2/ldexp per element);
        // zero, subnormals, inf and NaN keep the reference's log2 semantics (fmax drops a NaN).
        std::uint64_t bits;
        std::memcpy(&bits, &ab, sizeof bits);
        int biased = static_cast<int>(bits >> 52);
        double eb;
        if (biased > 0 && biased < 0x7ff) eb = static_cast<double>(biased - 1023);
        else eb = ab != 0.0 ? std::floor(std::log2(ab)) : 0.0;
        eb = std::isnan(eb) || eb < min_eb ? min_eb : eb;  // std::fmax(eb, min_eb)
        double k = exponent_num - eb;
        double scale;
        if (k >= -1022 && k <= 1023) {
          std::uint64_t sb = static_cast<std::uint64_t>(static_cast<int>(k) + 1023) << 52;
          std::memcpy(&scale, &sb, sizeof scale);
        } else if (k >= -1100 && k <= 1100) {
          scale = std::ldexp(1.0, static_cast<int>(k));  // subnormal scales
        } else {
          scale = k < 0 ? 0.0 : INFINITY;  // |b| = inf: 2^-inf
        }
        if (f32_math) {
          double diff = round_to_float32(round_to_float32(out.device[i]) - round_to_float32(b));
          ulp[i] = std::fabs(round_to_float32(diff * scale));
        } else {
          ulp[i] = std::fabs((out.device[i] - b) * scale);
        }
      }
    }
    double mx = n ? ulp[0] : std::nan("");
    std::size_t above = 0;
    for (double u : ulp) {
      if (std::isnan(u) || std::isnan(mx)) mx = std::nan("");
      else if (u > mx) mx = u;
      above += u > threshold;
    }
    double mean = f32_math ? ms::numpy_float32_mean(ulp) : ms::numpy_float64_mean(ulp);
    NumberStyle style = f32_math ? NumberStyle::float32_repr : NumberStyle::fixed14;
    double share = n ? static_cast<double>(above) / static_cast<double>(n) : std::nan("");
    return {{kMax, mx, style}, {kMean, mean, style}, {kProportion, share, NumberStyle::fixed14}};
  }

  Judgement judge(const JudgeInput& in) const override {
    const std::string dtype(in.dtype);
    Judgement j;
    double p = ms::parse_cell(in.npu, kProportion);
    if (is_fp8(dtype)) {
      // fp8: mean and ratio are not computed; the proportion alone decides.
      bool ok = p < settings_.number("proportion");
      j.verdict = ok ? Verdict::pass : Verdict::error;
      j.cells = {{kMean, " "}, {kProportion, ms::fixed14(p)}, {kRatio, " "}, {kStatus, ok ? "pass" : "error"}};
      if (!ok) j.message = kErrorMessage;
      ms::apply_domain_checks({{kProportion, p, ms::Domain::rate}}, {kStatus}, j);
      return j;
    }
    double m = ms::parse_cell(in.npu, kMean);
    double gm = ms::parse_cell(in.gpu, kMean);
    double q = ms::parse_cell(in.gpu, kProportion);
    const std::vector<ms::DomainCheck> domains = {{kMean, m, ms::Domain::non_negative}, {kMean, gm, ms::Domain::non_negative},
                                                  {kProportion, p, ms::Domain::rate}, {kProportion, q, ms::Domain::rate}};
    bool consistent = true;
    if (!std::isfinite(m) || !std::isfinite(gm)) consistent = consistent && ms::inf_nan_consistency(m, gm).consistent;
    double ratio;
    if (!std::isfinite(p) || !std::isfinite(q)) {
      consistent = consistent && ms::inf_nan_consistency(p, q).consistent;
      ratio = std::nan("");
    } else {
      ratio = std::fabs(p) / std::fmax(std::fabs(q), settings_.number("minimum_err", dtype));
    }
    bool ok;
    if (!consistent) {
      ok = false;  // the reference leaves the status cell blank here; we write "error" (docs/compat.md)
    } else if (float_kind(dtype) == FloatKind::float32) {
      ok = m < settings_.number("float32_mean_ulp") || p < settings_.number("float32_proportion") ||
           ratio < settings_.number("ratio");
    } else {
      ok = p < settings_.number("proportion") || ratio < settings_.number("ratio");
    }
    j.verdict = ok ? Verdict::pass : Verdict::error;
    j.cells = {{kMean, ms::fixed14(m)}, {kProportion, ms::fixed14(p)}, {kRatio, ms::fixed14(ratio)},
               {kStatus, ok ? "pass" : "error"}};
    if (!ok) {
      j.message = kErrorMessage;
      j.deciding_metric = kRatio;
      j.severity = consistent ? ratio : INFINITY;
    }
    ms::apply_domain_checks(domains, {kStatus}, j);
    return j;
  }

 private:
  // fp8 ULP (precision-standards.md §5.4): signed, mantissa width by exponent bucket.
  static double fp8_ulp(double x, double h) {
    const double tiny = std::ldexp(1.0, -1000);
    double ex = std::log2(std::fabs(x) + tiny);
    if (ex < -22) ex = -22;
    double e = std::floor(ex);
    double ae = std::fabs(e);
    int wm = ae <= 3 ? 3 : ae <= 7 ? 2 : ae <= 15 ? 1 : 0;
    if (wm > 0) return (h - x) * std::pow(2.0, wm - e);
    auto sign = [](double v) { return v >= 0 ? 1.0 : -1.0; };
    return sign(h) * std::log2(std::fabs(h) + tiny) - sign(x) * ex;
  }

  Settings settings_;
};

}  // namespace

ACCCHECK_PLUGIN(metric, UlpStandard, "ulp_compare", "1.0.0",
                "ULP误差比对法: ULP error vs the benchmark; NPU share above threshold vs GPU's (matmul family)")
