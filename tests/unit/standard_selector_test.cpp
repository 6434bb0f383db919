// Standard selection (precision-standards.md §2) from the shipped standards.yaml.
#include "standards/standard_selector.hpp"
#include <yaml-cpp/yaml.h>

#include "config/yaml_settings.hpp"
#include "support/test_support.hpp"

using namespace acccheck::core;

namespace {
StandardSelector shipped() {
  acccheck::Settings s;
  flatten_yaml(load_yaml_file(std::string(ACCCHECK_PLUGIN_DIR) + "/standards.yaml"), "", s);
  return StandardSelector(s);
}
}  // namespace

TEST(StandardSelector, RulesInTheReferenceOrder) {
  auto sel = shipped();
  EXPECT_EQ(sel.select("matmul", "torch.float8_e4m3fn", false), "ulp_compare");      // fp8 output
  EXPECT_EQ(sel.select("softmax", "torch.float16", true), "absolute_threshold");     // 相对误差错误率 filled
  EXPECT_EQ(sel.select("softmax", "torch.bool", false), "binary_consistency");       // non-float
  EXPECT_EQ(sel.select("argmax", "torch.int64", false), "binary_consistency");
  EXPECT_EQ(sel.select("size", "<class 'int'>", false), "binary_consistency");
  EXPECT_EQ(sel.select("mul", "torch.float16", false), "absolute_threshold");
  EXPECT_EQ(sel.select("abs", "torch.float32", false), "binary_consistency");
  EXPECT_EQ(sel.select("matmul", "torch.bfloat16", false), "ulp_compare");
  EXPECT_EQ(sel.select("conv2d", "torch.float32", false), "thousandth_threshold");
  EXPECT_EQ(sel.select("test_api", "torch.float32", false), "accumulative_error_compare");
  EXPECT_EQ(sel.select("softmax", "torch.float32", false), "benchmark");
  EXPECT_EQ(sel.select("linalg.vector_norm", "torch.float32", false), "benchmark");
}

TEST(StandardSelector, UnsupportedDtypesAndNotes) {
  auto sel = shipped();
  EXPECT_TRUE(sel.unsupported_dtype("torch.float64"));
  EXPECT_TRUE(sel.unsupported_dtype("torch.complex64"));
  EXPECT_FALSE(sel.unsupported_dtype("torch.float32"));
  ASSERT_NE(sel.note_for("topk"), nullptr);
  EXPECT_EQ(sel.note_for("softmax"), nullptr);
}

TEST(RowName, SixAndSevenSegments) {
  auto r6 = parse_row_name("Torch.matmul.0.forward.output.0");
  EXPECT_TRUE(r6.valid);
  EXPECT_EQ(r6.api, "Torch.matmul.0");
  EXPECT_EQ(r6.short_api, "matmul");
  EXPECT_EQ(r6.direction, "forward");
  auto r7 = parse_row_name("Torch.linalg.vector_norm.0.backward.output.1");
  EXPECT_TRUE(r7.valid);
  EXPECT_EQ(r7.api, "Torch.linalg.vector_norm.0");
  EXPECT_EQ(r7.short_api, "linalg.vector_norm");
  EXPECT_EQ(r7.direction, "backward");
  EXPECT_FALSE(parse_row_name("Torch.matmul.0.forward").valid);
}

TEST(Settings, SectionStripsThePrefixAndKeepsOnlyItsKeys) {
  acccheck::Settings s;
  s.set("standards/ulp/min_eb/torch.float16", "-14");
  s.set("standards/ulp/apis/0", "mm");
  s.set("standards/ulpx/apis/0", "other");  // same leading text, another section
  s.set("selection/default", "benchmark");
  const acccheck::Settings ulp = s.section("standards/ulp");
  EXPECT_EQ(ulp.all().size(), 2u);
  EXPECT_EQ(ulp.number("min_eb", "torch.float16"), -14.0);
  EXPECT_EQ(ulp.list("apis"), (std::vector<std::string>{"mm"}));
}

// A gradient with fewer elements than the forward output (a broadcast input's: a sum) is judged as
// a reduction where the API's own standard expects none (issue 24, docs/compat.md).
TEST(StandardSelector, AReducedGradientOfAnElementwiseApiIsJudgedAsAReduction) {
  auto sel = shipped();
  EXPECT_EQ(sel.select("add", "torch.float32", false, true), "benchmark");
  EXPECT_EQ(sel.select("mul", "torch.bfloat16", false, true), "benchmark");
  EXPECT_EQ(sel.select("broadcast_to", "torch.float32", false, true), "benchmark");  // binary consistency by name
  EXPECT_EQ(sel.select("add", "torch.float32", false, false), "absolute_threshold");
  // Standards that expect accumulation keep their own; the other rules come first.
  EXPECT_EQ(sel.select("matmul", "torch.float32", false, true), "ulp_compare");
  EXPECT_EQ(sel.select("conv2d", "torch.float32", false, true), "thousandth_threshold");
  EXPECT_EQ(sel.select("add", "torch.float32", true, true), "absolute_threshold");   // 相对误差错误率 filled
  EXPECT_EQ(sel.select("add", "torch.int64", false, true), "binary_consistency");    // non-float
  // A standards file without the key: the reference's choice by name.
  acccheck::Settings s;
  flatten_yaml(load_yaml_file(std::string(ACCCHECK_PLUGIN_DIR) + "/standards.yaml"), "", s);
  acccheck::Settings without;
  for (const auto& [k, v] : s.all())
    if (k.rfind("selection/reduced_gradient", 0) != 0) without.set(k, v);
  EXPECT_EQ(StandardSelector(without).select("add", "torch.float32", false, true), "absolute_threshold");
}

TEST(StandardSelector, ShapeCellsGiveTheirElementCount) {
  EXPECT_EQ(shape_elements("(2, 3)"), 6u);
  EXPECT_EQ(shape_elements("(5,)"), 5u);
  EXPECT_EQ(shape_elements("()"), 1u);
  EXPECT_EQ(shape_elements("(0,)"), 0u);
  EXPECT_EQ(shape_elements("(16, 8, 16, 16)"), 32768u);
  EXPECT_EQ(shape_elements(" "), std::nullopt);
  EXPECT_EQ(shape_elements("(2, x)"), std::nullopt);
  EXPECT_EQ(shape_elements("(,)"), std::nullopt);
}
