// Stage 2 (compare side) of each standard, on hand-made NPU/GPU cells: boundaries, inf/nan
// consistency, the dtype floors of the ratio denominators, blank cells.
#include <cmath>

#include "support/test_support.hpp"

using namespace acccheck;
using acccheck::test::MapRow;
using acccheck::test::metric_plugin;

namespace {

MapRow benchmark_row(const std::string& small, const std::string& rmse, const std::string& max_rel,
                     const std::string& mean_rel, const std::string& eb) {
  return MapRow{{"小值域错误占比", small}, {"均方根误差", rmse}, {"相对误差最大值", max_rel},
                {"相对误差平均值", mean_rel}, {"误差均衡性", eb}};
}

std::map<std::string, std::string> cells(const Judgement& j) {
  return std::map<std::string, std::string>(j.cells.begin(), j.cells.end());
}

Judgement judge(const std::string& standard, const MapRow& npu, const MapRow& gpu, const std::string& dtype) {
  return metric_plugin(standard).judge(JudgeInput{npu, gpu, dtype});
}

}  // namespace

TEST(BenchmarkJudge, RatioEqualToTheThresholdPasses) {
  auto j = judge("benchmark", benchmark_row("0.2", "0.02", "1.0", "0.02", "0.5"),
                 benchmark_row("0.1", "0.01", "0.1", "0.01", "0.5"), "torch.float32");
  auto c = cells(j);
  EXPECT_EQ(c["小值域错误比值"], "2.00000000000000");
  EXPECT_EQ(c["小值域判定结果"], "pass");
  EXPECT_EQ(c["相对误差最大值比值"], "10.00000000000000");
  EXPECT_EQ(c["相对误差最大值判定结果"], "pass");
  EXPECT_EQ(j.verdict, Verdict::pass);
  EXPECT_EQ(j.message, "");
}

TEST(BenchmarkJudge, RatioAboveTheThresholdErrorsWithMessagesInOrder) {
  auto j = judge("benchmark", benchmark_row("0.0", "0.0300001", "1.1", "0.03", "0.5"),
                 benchmark_row("0.0", "0.01", "0.1", "0.01", "0.5"), "torch.float32");
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(j.message, "ERROR: 均方根误差比值超过阈值\nERROR: 相对误差最大值比值超过阈值\nERROR: 相对误差平均值比值超过阈值\n");
  EXPECT_EQ(j.deciding_metric, "均方根误差比值");
}

TEST(BenchmarkJudge, ErrorBalanceIsReportedButNeverDecides) {
  auto j = judge("benchmark", benchmark_row("0", "0.01", "0.1", "0.01", "0.9"),
                 benchmark_row("0", "0.01", "0.1", "0.01", "0.1"), "torch.float32");
  EXPECT_EQ(cells(j)["误差均衡性判定结果"], "error");
  EXPECT_EQ(j.verdict, Verdict::pass);
  EXPECT_EQ(j.message, "");
}

TEST(BenchmarkJudge, DenominatorFloorsPerDtype) {
  // |x| / max(|y|, floor): floor 2^-11 (fp16), 2^-8 (bf16), 2^-14 (fp32).
  auto ratio = [](const std::string& dtype) {
    auto j = judge("benchmark", benchmark_row("0", "0.001", "0", "0", "0"), benchmark_row("0", "0", "0", "0", "0"), dtype);
    return std::stod(cells(j)["均方根误差比值"]);
  };
  EXPECT_DOUBLE_EQ(ratio("torch.float16"), 0.001 / std::ldexp(1.0, -11));
  EXPECT_DOUBLE_EQ(ratio("torch.bfloat16"), 0.001 / std::ldexp(1.0, -8));
  EXPECT_DOUBLE_EQ(ratio("torch.float32"), 0.001 / std::ldexp(1.0, -14));
}

TEST(BenchmarkJudge, InfNanConsistency) {
  // Same-sign inf on both sides: consistent, ratio nan, pass. NaN vs number: inconsistent, error.
  auto j = judge("benchmark", benchmark_row("0", "inf", "nan", "0.1", "0.1"),
                 benchmark_row("0", "inf", "0.5", "0.1", "0.1"), "torch.float32");
  auto c = cells(j);
  EXPECT_EQ(c["均方根误差比值"], "nan");
  EXPECT_EQ(c["均方根误差判定结果"], "pass");
  EXPECT_EQ(c["相对误差最大值判定结果"], "error");
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(j.message, "均方根误差同为同号inf或nan\n相对误差最大值inf或nan不一致\nERROR: 相对误差最大值比值超过阈值\n");
  // Opposite-sign infinities are inconsistent.
  auto k = judge("benchmark", benchmark_row("0", "inf", "0", "0", "0"), benchmark_row("0", "-inf", "0", "0", "0"),
                 "torch.float32");
  EXPECT_EQ(k.verdict, Verdict::error);
}

TEST(BenchmarkJudge, BlankCellIsUnjudgeable) {
  try {
    judge("benchmark", benchmark_row("0", " ", "0", "0", "0"), benchmark_row("0", "0", "0", "0", "0"), "torch.float16");
    FAIL();
  } catch (const UnjudgeableRow& e) {
    EXPECT_EQ(std::string(e.what()), "ERROR: Input data is an empty string");
  }
}

// The maximum relative error of a reduction sits where its output nearly cancels, and its NPU/GPU
// ratio is heavy-tailed on healthy devices (docs/compat.md, fix be). The figures are torchvision's
// shufflenet_v2_x0_5, Aten.convolution.54 (a 1x1 convolution, output (2, 96, 1, 1)), healthy
// npu-sim against the cpu: max-rel 0.00134019789985 against 0.00004793625118, floored to 2^-14:
// ratio 0.00134019789985 * 16384 = 21.9578..., above 10; the NPU's largest absolute error
// 2.5681026e-07 against the GPU's 2.2516037e-07, within 2x (4.5032074e-07).
namespace {
MapRow conv_row(const std::string& max_rel, const std::string& max_abs) {
  MapRow r = benchmark_row("0.0", "0.00000005878016", max_rel, "0.00000773833190", "0.03125");
  r.cells_.emplace("最大绝对误差", max_abs);
  return r;
}
}  // namespace

TEST(BenchmarkJudge, AMaxRelativeErrorWhoseAbsoluteErrorTheGpuReachesPassesWithANote) {
  auto j = judge("benchmark", conv_row("0.00134019789985", "2.5681026e-07"), conv_row("0.00004793625118", "2.2516037e-07"),
                 "torch.float32");
  auto c = cells(j);
  EXPECT_EQ(c["相对误差最大值比值"], "21.95780239114240");
  EXPECT_EQ(c["相对误差最大值判定结果"], "pass");
  EXPECT_EQ(j.verdict, Verdict::pass);
  EXPECT_EQ(j.message,
            "NOTE: 相对误差最大值比值 21.9578023911424 above its threshold, but the NPU's 最大绝对误差 (2.5681026e-07) is "
            "within 2.0x the GPU's (2.2516037e-07): an element near zero, within rounding\n");
  // Exactly twice the GPU's still passes (at most F times).
  EXPECT_EQ(judge("benchmark", conv_row("0.00134019789985", "4.5032074e-07"), conv_row("0.00004793625118", "2.2516037e-07"),
                  "torch.float32")
                .verdict,
            Verdict::pass);
}

TEST(BenchmarkJudge, AMaxRelativeErrorWithALargerAbsoluteErrorIsStillAnError) {
  const MapRow gpu = conv_row("0.00004793625118", "2.2516037e-07");
  // A wrong element of ordinary size: its absolute error is above twice the GPU's largest.
  auto j = judge("benchmark", conv_row("0.00134019789985", "4.6e-07"), gpu, "torch.float32");
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(j.message, "ERROR: 相对误差最大值比值超过阈值\n");
  EXPECT_EQ(cells(j)["相对误差最大值判定结果"], "error");
  // No absolute errors to go by: blank (run_ut leaves it blank where the cosine failed), not a
  // number, or a GPU value of 0 (14 decimals: it may be a rounded value).
  for (const auto& [npu_abs, gpu_abs] : std::vector<std::pair<std::string, std::string>>{
           {" ", "2.2516037e-07"}, {"2.5681026e-07", " "}, {"2.5681026e-07", "x"}, {"0.00000000000000", "0.00000000000000"},
           {"2.5681026e-07", "nan"}, {"-1", "2.2516037e-07"}})
    EXPECT_EQ(judge("benchmark", conv_row("0.00134019789985", npu_abs), conv_row("0.00004793625118", gpu_abs), "torch.float32")
                  .verdict,
              Verdict::error)
        << npu_abs << " / " << gpu_abs;
  // The other ratios are judged as before: the excuse covers the max-rel ratio alone.
  MapRow worse = conv_row("0.00134019789985", "2.5681026e-07");
  worse.cells_["均方根误差"] = "0.0002";  // 0.0002 / 2^-14 = 3.28 > 2
  auto k = judge("benchmark", worse, gpu, "torch.float32");
  EXPECT_EQ(k.verdict, Verdict::error);
  EXPECT_EQ(k.message.rfind("ERROR: 均方根误差比值超过阈值\nNOTE: 相对误差最大值比值 21.9578023911424", 0), 0u) << k.message;
}

TEST(BenchmarkJudge, MaxRelAbsExcuseZeroRestoresTheReferenceAndABadValueIsRefused) {
  auto& plugin = metric_plugin("benchmark", {{"max_rel_abs_excuse", "0"}});
  const MapRow npu = conv_row("0.00134019789985", "2.5681026e-07"), gpu = conv_row("0.00004793625118", "2.2516037e-07");
  EXPECT_EQ(plugin.judge(JudgeInput{npu, gpu, "torch.float32"}).verdict, Verdict::error);
  for (const char* bad : {"-1", "nan", "inf", "two"}) {
    try {
      metric_plugin("benchmark", {{"max_rel_abs_excuse", bad}});
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("benchmark: max_rel_abs_excuse"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(judge("benchmark", npu, gpu, "torch.float32").verdict, Verdict::pass);  // as shipped again
}

TEST(AbsoluteThresholdJudge, AnyNonZeroRateIsAnError) {
  MapRow npu{{"inf/nan错误率", "0"}, {"相对误差错误率", "0.001"}, {"绝对误差错误率", "0.0"}};
  auto j = judge("absolute_threshold", npu, MapRow{}, "torch.float16");
  auto c = cells(j);
  EXPECT_EQ(c["inf/nan错误率"], "0.00000000000000");
  EXPECT_EQ(c["inf/nan判定结果"], "pass");
  EXPECT_EQ(c["相对误差错误率"], "0.00100000000000");
  EXPECT_EQ(c["相对误差判定结果"], "error");
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(j.message, "ERROR: 相对误差错误率超过阈值");
  MapRow two{{"inf/nan错误率", "0.5"}, {"相对误差错误率", "0"}, {"绝对误差错误率", "1e-9"}};
  EXPECT_EQ(judge("absolute_threshold", two, MapRow{}, "torch.float32").message,
            "ERROR: inf/nan错误率超过阈值ERROR: 绝对误差错误率超过阈值");  // no separator, as the reference
}

TEST(BinaryJudge, ZeroPassesAndTheCellIsCopiedVerbatim) {
  auto ok = judge("binary_consistency", MapRow{{"二进制一致错误率", "0"}}, MapRow{}, "<class 'int'>");
  EXPECT_EQ(ok.verdict, Verdict::pass);
  EXPECT_EQ(cells(ok)["二进制一致错误率"], "0");
  auto bad = judge("binary_consistency", MapRow{{"二进制一致错误率", "0.25"}}, MapRow{}, "torch.int64");
  EXPECT_EQ(bad.verdict, Verdict::error);
  EXPECT_EQ(bad.message, "ERROR: 二进制一致错误率超过阈值\n");
  EXPECT_THROW(judge("binary_consistency", MapRow{{"二进制一致错误率", " "}}, MapRow{}, "<class 'int'>"), UnjudgeableRow);
}

TEST(UlpJudge, Float32PassesOnAnyOfMeanProportionOrRatio) {
  auto row = [](const std::string& m, const std::string& p) { return MapRow{{"ULP误差平均值", m}, {"ULP误差大于阈值占比", p}}; };
  // mean 63.9 < 64 passes even with a high proportion and ratio
  EXPECT_EQ(judge("ulp_compare", row("63.9", "0.9"), row("1", "0.01"), "torch.float32").verdict, Verdict::pass);
  // mean 64 (strict <) and p 0.05 (strict <) and ratio 0.06/0.05 = 1.2 → error
  EXPECT_EQ(judge("ulp_compare", row("64", "0.06"), row("1", "0.05"), "torch.float32").verdict, Verdict::error);
  EXPECT_EQ(judge("ulp_compare", row("64", "0.0499"), row("1", "0.01"), "torch.float32").verdict, Verdict::pass);
  // ratio < 1 passes: 0.05 / 0.06
  EXPECT_EQ(judge("ulp_compare", row("70", "0.05"), row("1", "0.06"), "torch.float32").verdict, Verdict::pass);
}

TEST(UlpJudge, HalfPrecisionUsesTheProportionAndFloor) {
  auto row = [](const std::string& m, const std::string& p) { return MapRow{{"ULP误差平均值", m}, {"ULP误差大于阈值占比", p}}; };
  auto j = judge("ulp_compare", row("0.5", "0.0005"), row("0.5", "0.0001"), "torch.float16");
  EXPECT_EQ(j.verdict, Verdict::pass);  // p < 0.001
  EXPECT_EQ(cells(j)["ULP误差大于阈值占比比值"], "1.02400000000000");  // 0.0005 / max(0.0001, 2^-11)
  auto k = judge("ulp_compare", row("0.5", "0.002"), row("0.5", "0.0019"), "torch.bfloat16");
  EXPECT_EQ(k.verdict, Verdict::pass);  // 0.002 / max(0.0019, 2^-8) = 0.512 < 1
  auto e = judge("ulp_compare", row("0.5", "0.01"), row("0.5", "0.001"), "torch.bfloat16");
  EXPECT_EQ(e.verdict, Verdict::error);  // 0.01 / 2^-8 = 2.56
  EXPECT_EQ(e.message, "ERROR: ULP误差不满足标准\n");
}

TEST(UlpJudge, InconsistentNanIsAnErrorWithAStatus) {
  auto row = [](const std::string& m, const std::string& p) { return MapRow{{"ULP误差平均值", m}, {"ULP误差大于阈值占比", p}}; };
  auto j = judge("ulp_compare", row("nan", "0.0"), row("1.0", "0.0"), "torch.float16");
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(cells(j)["ULP误差判定结果"], "error");  // the reference leaves it blank (docs/compat.md d)
  // Consistent NaN on both sides still fails: every comparison with NaN is false.
  auto k = judge("ulp_compare", row("nan", "nan"), row("nan", "nan"), "torch.float16");
  EXPECT_EQ(k.verdict, Verdict::error);
}

// Fix bg (docs/compat.md): the bfloat16 baddbmm of an encoder-decoder nn.Transformer (scores plus a
// float32 causal mask drawn at float32's lowest value): 1 of 256 outputs overflows to -inf in
// bfloat16 where the float32 benchmark stays finite, on npu-sim and on the CPU alike — run_ut's
// real cells. The reference needs a ratio strictly below 1: an NPU identical to the GPU failed.
TEST(UlpJudge, AShareTheGpuHasExactlyPassesWithANote) {
  auto row = [](const std::string& m, const std::string& p) { return MapRow{{"ULP误差平均值", m}, {"ULP误差大于阈值占比", p}}; };
  auto j = judge("ulp_compare", row("nan", "0.00390625000000"), row("nan", "0.00390625000000"), "torch.bfloat16");
  EXPECT_EQ(j.verdict, Verdict::pass);
  EXPECT_EQ(cells(j)["ULP误差大于阈值占比比值"], "1.00000000000000");
  EXPECT_EQ(cells(j)["ULP误差判定结果"], "pass");
  EXPECT_EQ(j.message, "NOTE: ULP误差大于阈值占比 not above the GPU's (0.00390625000000)");
  // float32: mean 70 >= 64, share 0.06 >= 0.05, ratio exactly 1.
  auto f = judge("ulp_compare", row("70", "0.06"), row("70", "0.06"), "torch.float32");
  EXPECT_EQ(f.verdict, Verdict::pass);
  EXPECT_EQ(f.message, "NOTE: ULP误差大于阈值占比 not above the GPU's (0.06000000000000)");
  // One element in 10,000 more than the GPU's is above it: an error, as before.
  auto above = judge("ulp_compare", row("nan", "0.0040"), row("nan", "0.0039"), "torch.bfloat16");
  EXPECT_EQ(above.verdict, Verdict::error);
  EXPECT_EQ(above.message, "ERROR: ULP误差不满足标准\n");
  // A GPU share below the ratio's floor (2^-8): an NPU share at the floor has ratio 1 but is above it.
  auto floor = judge("ulp_compare", row("0.5", "0.00390625"), row("0.5", "0.002"), "torch.bfloat16");
  EXPECT_EQ(floor.verdict, Verdict::error);
  // Means inconsistent (NaN against a number): an error whatever the shares.
  EXPECT_EQ(judge("ulp_compare", row("nan", "0.5"), row("3", "0.5"), "torch.float16").verdict, Verdict::error);
  // A smaller share passed before the fix and passes without a note.
  auto below = judge("ulp_compare", row("nan", "0.0039"), row("nan", "0.0040"), "torch.bfloat16");
  EXPECT_EQ(below.verdict, Verdict::pass);
  EXPECT_EQ(below.message, "");
}

TEST(UlpJudge, ReferenceSharedErrorRestoresTheReferenceAndABadValueIsRefused) {
  auto row = [](const std::string& p) { return MapRow{{"ULP误差平均值", "nan"}, {"ULP误差大于阈值占比", p}}; };
  auto& plugin = metric_plugin("ulp_compare", {{"reference_shared", "error"}});
  auto j = plugin.judge(JudgeInput{row("0.00390625000000"), row("0.00390625000000"), "torch.bfloat16"});
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(j.message, "ERROR: ULP误差不满足标准\n");
  try {
    metric_plugin("ulp_compare", {{"reference_shared", "maybe"}});
    ADD_FAILURE() << "maybe accepted";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()), "ulp_compare: reference_shared: expected pass or error, found 'maybe'");
  }
  EXPECT_EQ(judge("ulp_compare", row("0.00390625000000"), row("0.00390625000000"), "torch.bfloat16").verdict,
            Verdict::pass);  // as shipped again
}

TEST(UlpJudge, Fp8DecidesOnTheProportionAlone) {
  MapRow npu{{"ULP误差平均值", "5"}, {"ULP误差大于阈值占比", "0.0009"}};
  auto j = judge("ulp_compare", npu, MapRow{}, "torch.float8_e4m3fn");
  EXPECT_EQ(j.verdict, Verdict::pass);
  EXPECT_EQ(cells(j)["ULP误差大于阈值占比比值"], " ");
}

TEST(ThousandthJudge, PointNineNineNinePasses) {
  EXPECT_EQ(judge("thousandth_threshold", MapRow{{"双千指标", "0.999"}}, MapRow{}, "torch.float16").verdict, Verdict::pass);
  auto j = judge("thousandth_threshold", MapRow{{"双千指标", "0.99899999999999"}}, MapRow{}, "torch.float16");
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(j.message, "ERROR: 双千指标不达标\n");
  EXPECT_EQ(cells(j)["双千指标"], "0.99899999999999");
}

TEST(AccumulativeJudge, ErrorBalanceAgainstTheDtypeThreshold) {
  MapRow npu{{"inf/nan错误率", "0"}, {"相对误差错误率", "0"}, {"绝对误差错误率", "0"}, {"误差均衡性", "0.0001"}};
  auto j = judge("accumulative_error_compare", npu, MapRow{}, "torch.float32");  // 0.0001 > 2^-14
  EXPECT_EQ(j.verdict, Verdict::error);
  EXPECT_EQ(j.message, "ERROR: 误差均衡性超过阈值\n");
  EXPECT_EQ(judge("accumulative_error_compare", npu, MapRow{}, "torch.bfloat16").verdict, Verdict::pass);  // 2^-7
}

// Issue 11, 1b: values a metric cannot have were judged pass. Each is an error now, naming the
// column and the value; NaN on both sides keeps the reference's deliberate pass (docs/compat.md).
TEST(ImpossibleValues, BinaryErrorRateOutsideZeroOneIsAnError) {
  for (const char* v : {"-1", "-inf", "-1e309", "1.5"}) {
    auto j = judge("binary_consistency", MapRow{{"二进制一致错误率", v}}, MapRow{}, "torch.bool");
    EXPECT_EQ(j.verdict, Verdict::error) << v;
    EXPECT_EQ(cells(j)["二进制一致错误率判定结果"], "error") << v;
    EXPECT_NE(j.message.find("ERROR: 二进制一致错误率 = "), std::string::npos) << j.message;
    EXPECT_NE(j.message.find("is impossible (expected a rate in [0, 1])"), std::string::npos) << j.message;
  }
}

TEST(ImpossibleValues, ThousandthRatioAboveOneIsAnError) {
  for (const char* v : {"5", "inf"}) {
    auto j = judge("thousandth_threshold", MapRow{{"双千指标", v}}, MapRow{}, "torch.float32");
    EXPECT_EQ(j.verdict, Verdict::error) << v;
    EXPECT_EQ(j.message, std::string("ERROR: 双千指标 = ") + (v == std::string("5") ? "5.0" : "Infinity") +
                             " is impossible (expected a rate in [0, 1])\n");
  }
}

TEST(ImpossibleValues, UlpNegativeProportionIsAnError) {
  auto row = [](const char* mean, const char* p) { return MapRow{{"ULP误差平均值", mean}, {"ULP误差大于阈值占比", p}}; };
  auto ratio_two = judge("ulp_compare", row("0.5", "-1"), row("0.5", "-0.5"), "torch.float16");
  EXPECT_EQ(ratio_two.verdict, Verdict::error);
  EXPECT_EQ(cells(ratio_two)["ULP误差判定结果"], "error");
  auto both_neg_inf = judge("ulp_compare", row("0.5", "-inf"), row("0.5", "-inf"), "torch.float16");
  EXPECT_EQ(both_neg_inf.verdict, Verdict::error);
  EXPECT_NE(both_neg_inf.message.find("ULP误差大于阈值占比 = -Infinity is impossible"), std::string::npos);
}

TEST(ImpossibleValues, BenchmarkNegativeInfinityOnBothSidesIsAnErrorNanStaysAPass) {
  auto neg = judge("benchmark", benchmark_row("0.1", "-inf", "0.1", "0.1", "0.1"),
                   benchmark_row("0.1", "-inf", "0.1", "0.1", "0.1"), "torch.float16");
  EXPECT_EQ(neg.verdict, Verdict::error);
  EXPECT_EQ(cells(neg)["均方根误差判定结果"], "error");
  EXPECT_NE(neg.message.find("ERROR: 均方根误差 = -Infinity is impossible (expected a value >= 0)"), std::string::npos);
  auto nan = judge("benchmark", benchmark_row("0.1", "nan", "0.1", "0.1", "0.1"),
                   benchmark_row("0.1", "nan", "0.1", "0.1", "0.1"), "torch.float16");
  EXPECT_EQ(nan.verdict, Verdict::pass);  // the reference's rule: NaN on both sides is consistent
  auto share = judge("benchmark", benchmark_row("2", "0.01", "0.1", "0.1", "0.1"),
                     benchmark_row("2", "0.01", "0.1", "0.1", "0.1"), "torch.float16");
  EXPECT_EQ(share.verdict, Verdict::error);  // a share of 2 (ratio 1) used to pass
}
