// 标杆比对法 (benchmark standard, precision-standards.md §5.2): the default standard. Stage 1
// measures small-value error share, RMSE, max/mean relative error and error balance against the
// CPU benchmark; stage 2 compares the NPU's numbers with the GPU's as ratios.
//
// The five metrics skip non-finite elements by definition (§5.2: RE' and RMSE mask infnan), so an
// output the NPU fills with NaN scores 0 on every ratio and passes in the reference tool. With
// `nonfinite_outputs: error` (the shipped default, docs/compat.md) an NPU row whose cosine run_ut
// wrote as nan, where the GPU row's is a number, is an error; `pass` restores the reference.
//
// The maximum relative error is the one ratio a healthy device fails at random on reductions
// (convolutions, normalisations): its largest element sits where the output nearly cancels
// (|B| ~ 1e-6 of a sum of terms ~ 1), whose rounding error relative to the value is large on any
// device, and the NPU/GPU ratio of two such maxima is heavy-tailed — one device's error at that
// element happens to be tiny. Torchvision networks on a healthy npu-sim: 5 of 370 convolutions
// above 10, the NPU's largest absolute error 0.51-1.14 times the GPU's. With
// `max_rel_abs_excuse: F` (2 in the shipped standards.yaml, docs/compat.md) a max-rel ratio above
// its threshold passes, with a note, when the NPU's 最大绝对误差 is at most F times the GPU's: an
// error no larger than the reference device's own rounding elsewhere in the same output cannot be
// told from rounding. A wrong element of ordinary size has an absolute error far above that and is
// still an error; errors spread over many elements still move the RMSE and mean ratios. 0 (or the
// key absent): the reference's verdicts.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <acccheck/float_formats.hpp>
#include <acccheck/metric.hpp>
#include <acccheck/metric_support.hpp>
#include <acccheck/number_format.hpp>
#include <acccheck/simd.hpp>

namespace {

using namespace acccheck;
namespace ms = acccheck::metric_support;

struct Metric {
  const char* details_column;  // stage-1 column in accuracy_checking_details
  const char* ratio_column;
  const char* status_column;
  const char* threshold_key;
  const char* error_message;   // nullptr: reported, never decides (error balance)
};
const Metric kMetrics[] = {
    {"小值域错误占比", "小值域错误比值", "小值域判定结果", "small_value", "ERROR: 小值域错误比值超过阈值\n"},
    {"均方根误差", "均方根误差比值", "均方根误差判定结果", "rmse", "ERROR: 均方根误差比值超过阈值\n"},
    {"相对误差最大值", "相对误差最大值比值", "相对误差最大值判定结果", "max_rel", "ERROR: 相对误差最大值比值超过阈值\n"},
    {"相对误差平均值", "相对误差平均值比值", "相对误差平均值判定结果", "mean_rel", "ERROR: 相对误差平均值比值超过阈值\n"},
    {"误差均衡性", "误差均衡性比值", "误差均衡性判定结果", "eb", nullptr},
};

class BenchmarkStandard final : public MetricPlugin {
 public:
  std::string_view standard_id() const override { return "benchmark"; }
  std::string_view algorithm_name() const override { return "标杆比对法"; }
  std::vector<std::string> details_columns() const override {
    return {"误差均衡性", "均方根误差", "小值域错误占比", "相对误差最大值", "相对误差平均值", "余弦相似度", "最大绝对误差"};
  }
  std::vector<std::string> compare_columns() const override {
    std::vector<std::string> c;
    for (const auto& m : kMetrics) {
      c.push_back(m.ratio_column);
      c.push_back(m.status_column);
    }
    return c;
  }

  void configure(const Settings& s) override {
    settings_ = s;
    for (std::size_t i = 0; i < 5; ++i)
      thresholds_[i] = s.number(std::string("ratio_thresholds/") + kMetrics[i].threshold_key);
    nonfinite_errors_ = !ms::pass_or_error_switch(s, "benchmark", "nonfinite_outputs", "pass");
    max_rel_abs_excuse_ = 0.0;
    if (const auto text = s.text("max_rel_abs_excuse")) {
      const auto v = parse_python_float(*text);
      if (!v || !std::isfinite(*v) || *v < 0)
        throw std::invalid_argument("benchmark: max_rel_abs_excuse: expected a number >= 0 (0: off), found '" + *text + "'");
      max_rel_abs_excuse_ = *v;
    }
  }

  // One pass over the output (the default standard: most rows of a run come here), driven by
  // numpy's pairwise summation of the squares (metric_support::pairwise_sum_of): 128 elements at
  // a time, the errors of metric_support::element_error, the masks and counts, the squares summed
  // straight from L1, and RE' over the unmasked elements appended in order (the one array numpy's
  // other mean needs). The per-element work is a branch-free loop built per numpy dtype of D, so
  // that it vectorises (a scalar loop with a dtype switch and rounding calls per element was most
  // of this standard's time, and it is the standard most rows use).
  std::vector<MetricValue> compute(const OutputPair& out) const override {
    const std::string dtype(out.device_dtype);
    const double sv = settings_.number("small_value", dtype);
    const double atol = settings_.number("small_value_atol", dtype);
    const auto e = ms::element_error_setup(out);
    const std::size_t n = out.count;
    const NumberStyle f32_style = e.float32_math ? NumberStyle::float32_repr : NumberStyle::fixed14;

    std::unique_ptr<double[]> rel_ok(new double[n ? n : 1]);  // RE' of the unmasked elements, in order
    std::size_t kept = 0;
    Totals t;
    const BlockFn block = block_function(e);
    auto fill = [&](std::size_t start, std::size_t count, double* squares) {
      alignas(64) double rel[128];
      alignas(64) std::int64_t keep[128];
      block(out.bench + start, out.device + start, count, e.eps, sv, atol, squares, rel, keep, t);
      for (std::size_t j = 0; j < count; ++j) {  // compaction: branch-free, in order
        rel_ok[kept] = rel[j];
        kept += static_cast<std::size_t>(keep[j]);
      }
    };
    double mse = std::nan("");
    if (n > 0)
      mse = e.float32_math
                ? round_to_float32(static_cast<double>(ms::pairwise_sum_of<float>(0, n, fill)) / static_cast<double>(n))
                : ms::pairwise_sum_of<double>(0, n, fill) / static_cast<double>(n);
    double rel_max = t.rel_max;
    const std::size_t small_count = static_cast<std::size_t>(t.small_count), small_bad = static_cast<std::size_t>(t.small_bad);
    const long long pos = t.pos, neg = t.neg;
    if (t.rel_nan) {  // np.max's NaN, as the reference's running rule keeps it (not reached for finite D and B)
      rel_max = -1.0;
      for (std::size_t i = 0; i < kept; ++i)
        if (!(rel_ok[i] <= rel_max)) rel_max = rel_ok[i];
    }
    const std::size_t masked = n - kept;
    std::vector<MetricValue> v;
    // 误差均衡性, 均方根误差, 小值域错误占比, 相对误差最大值, 相对误差平均值 (details column order)
    v.push_back({"误差均衡性", n ? static_cast<double>(std::llabs(pos - neg)) / static_cast<double>(n) : 0.0,
                 NumberStyle::fixed14});
    mse *= static_cast<double>(n) / (static_cast<double>(n - masked) + 0.0001) + 0.0001;
    v.push_back({"均方根误差", std::sqrt(mse), NumberStyle::fixed14});
    v.push_back({"小值域错误占比", small_count ? static_cast<double>(small_bad) / static_cast<double>(small_count) : 0.0,
                 small_count ? NumberStyle::fixed14 : NumberStyle::integer});
    if (kept == 0 || rel_max < 0) {
      v.push_back({"相对误差最大值", 0.0, NumberStyle::integer});
    } else {
      v.push_back({"相对误差最大值", rel_max, f32_style});
    }
    if (kept == 0) {
      v.push_back({"相对误差平均值", 0.0, NumberStyle::integer});
    } else {
      double mean = e.float32_math ? ms::numpy_float32_mean(rel_ok.get(), kept) : ms::numpy_float64_mean(rel_ok.get(), kept);
      v.push_back({"相对误差平均值", mean, f32_style});
    }
    return v;
  }

  Judgement judge(const JudgeInput& in) const override {
    const std::string dtype(in.dtype);
    const double minimum_err = settings_.number("minimum_err", dtype);
    Judgement j;
    std::string inf_nan_messages, error_messages, notes;
    std::vector<ms::DomainCheck> domains;
    std::vector<std::string_view> statuses;
    for (std::size_t i = 0; i < 5; ++i) {
      const Metric& m = kMetrics[i];
      double x = ms::parse_cell(in.npu, m.details_column);
      double y = ms::parse_cell(in.gpu, m.details_column);
      // 小值域错误占比 and 误差均衡性 are shares; RMSE and relative errors are >= 0.
      ms::Domain d = i == 0 || i == 4 ? ms::Domain::rate : ms::Domain::non_negative;
      domains.push_back({m.details_column, x, d});
      domains.push_back({m.details_column, y, d});
      statuses.push_back(m.status_column);
      auto c = ms::inf_nan_consistency(x, y);
      double ratio;
      if (c.nonfinite) {
        ratio = std::nan("");
        inf_nan_messages += std::string(m.details_column) + (c.consistent ? "同为同号inf或nan\n" : "inf或nan不一致\n");
      } else {
        ratio = std::fabs(x) / std::fmax(std::fabs(y), minimum_err);
      }
      bool error = !c.consistent || (std::isfinite(ratio) && ratio > thresholds_[i]);
      if (error && c.consistent && i == kMaxRel && max_rel_abs_excuse_ > 0) {
        if (auto note = max_rel_excuse(in, ratio)) {
          error = false;
          notes += *note;
        }
      }
      j.cells.emplace_back(m.ratio_column, ms::fixed14(ratio));
      j.cells.emplace_back(m.status_column, error ? "error" : "pass");
      if (error && m.error_message) {
        j.verdict = Verdict::error;
        error_messages += m.error_message;
        double severity = c.consistent ? ratio / thresholds_[i] : INFINITY;
        if (j.deciding_metric.empty() || severity > j.severity) {
          j.deciding_metric = m.ratio_column;
          j.severity = severity;
        }
      }
    }
    j.message = inf_nan_messages + error_messages + notes;
    ms::apply_domain_checks(domains, statuses, j);
    if (nonfinite_errors_ && is_nan_text(in.npu.cell("余弦相似度")) && !is_nan_text(in.gpu.cell("余弦相似度"))) {
      j.verdict = Verdict::error;
      j.message = "ERROR: NPU output has NaN or inf (余弦相似度 nan), the GPU's has none\n" + j.message;
      j.deciding_metric = "余弦相似度";
      j.severity = INFINITY;
    }
    return j;
  }

 private:
  static constexpr std::size_t kMaxRel = 2;  // kMetrics' 相对误差最大值

  // The note for a max-rel ratio above its threshold that the NPU's absolute errors excuse (the
  // comment at the top), or nothing. The excuse needs both rows' 最大绝对误差 as numbers (run_ut
  // leaves it blank where the cosine failed) and the GPU's above 0: run_ut writes it with 14
  // decimals, so a 0 there may be a rounded value and says nothing about the scale.
  std::optional<std::string> max_rel_excuse(const JudgeInput& in, double ratio) const {
    auto value = [](std::string_view text) -> std::optional<double> {
      auto v = parse_python_float(text);
      if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
      return v;
    };
    const auto npu = value(in.npu.cell("最大绝对误差")), gpu = value(in.gpu.cell("最大绝对误差"));
    if (!npu || !gpu || !(*gpu > 0) || *npu > max_rel_abs_excuse_ * *gpu) return std::nullopt;
    return "NOTE: 相对误差最大值比值 " + python_float_repr(ratio) + " above its threshold, but the NPU's 最大绝对误差 (" +
           python_float_repr(*npu) + ") is within " + python_float_repr(max_rel_abs_excuse_) + "x the GPU's (" +
           python_float_repr(*gpu) + "): an element near zero, within rounding\n";
  }

  // What one block adds to the row's totals (64-bit: as wide as the double lanes).
  struct Totals {
    std::int64_t small_count = 0, small_bad = 0, pos = 0, neg = 0;
    double rel_max = -1.0;
    bool rel_nan = false;
  };
  using BlockFn = void (*)(const double*, const double*, std::size_t, double, double, double, double*, double*,
                           std::int64_t*, Totals&);

  // metric_support::element_error with its dtype choices as constants (metric_support's
  // finite_in_numpy / rounded_to_numpy for D's numpy dtype K); AE/RE in float32 (F32Math) and the
  // denominator in float32 (F32Denominator).
  template <FloatKind K, bool F32Math, bool F32Denominator>
  ACCCHECK_SIMD_CLONES static void block(const double* bench, const double* device, std::size_t n, double eps, double sv,
                                         double atol, double* squares, double* rel, std::int64_t* keep, Totals& t) {
    std::int64_t small_count = 0, small_bad = 0, pos = 0, neg = 0, rel_nan = 0;
    double rel_max = t.rel_max;
#pragma omp simd reduction(+ : small_count, small_bad, pos, neg) reduction(| : rel_nan) reduction(max : rel_max)
    for (std::size_t i = 0; i < n; ++i) {
      const double b = bench[i], d = device[i];
      const ms::AbsRelError x = ms::abs_rel_error(b, d, eps, F32Math, F32Denominator);
      const bool finite = ms::finite_in_numpy<FloatKind::float64>(d) & ms::finite_in_numpy<K>(b);
      const bool small = (std::fabs(b) <= sv) & finite;
      small_count += small;
      small_bad += small & (x.abs_err > atol);
      const bool masked = small | !finite;
      rel[i] = x.rel_err;
      keep[i] = !masked;
      rel_nan |= !masked & (x.rel_err != x.rel_err);
      const double r = masked ? -1.0 : x.rel_err;
      rel_max = r > rel_max ? r : rel_max;
      const double a = masked ? 0.0 : x.abs_err;
      squares[i] = F32Math ? static_cast<double>(static_cast<float>(a * a)) : a * a;
      const double diff = d - ms::rounded_to_numpy<K>(b);
      pos += diff > 0;
      neg += diff < 0;
    }
    t.small_count += small_count;
    t.small_bad += small_bad;
    t.pos += pos;
    t.neg += neg;
    t.rel_nan = t.rel_nan || rel_nan != 0;
    t.rel_max = rel_max;
  }
  template <FloatKind K>
  static BlockFn block_for(bool f32_math, bool f32_denominator) {
    if (f32_math) return f32_denominator ? &block<K, true, true> : &block<K, true, false>;
    return f32_denominator ? &block<K, false, true> : &block<K, false, false>;
  }
  static BlockFn block_function(const ms::ElementErrors& e) {
    const bool f32_denominator = e.bench_kind != FloatKind::float64;
    switch (e.numpy_kind) {
      case FloatKind::float32: return block_for<FloatKind::float32>(e.float32_math, f32_denominator);
      case FloatKind::float16: return block_for<FloatKind::float16>(e.float32_math, f32_denominator);
      default: return block_for<FloatKind::float64>(e.float32_math, f32_denominator);  // float64, other: B as is
    }
  }

  static bool is_nan_text(std::string_view t) {
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    return t == "nan" || t == "NaN" || t == "-nan";
  }

  Settings settings_;
  double thresholds_[5] = {2, 2, 10, 2, 2};
  bool nonfinite_errors_ = false;
  double max_rel_abs_excuse_ = 0.0;  // 0: the reference's verdicts
};

}  // namespace

ACCCHECK_PLUGIN(metric, BenchmarkStandard, "benchmark", "1.0.0",
                "标杆比对法: NPU/GPU ratios of small-value error, RMSE, max and mean relative error")
