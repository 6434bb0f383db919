// run_ut's comparison against the reference's own output: every case of vectors/{npu,gpu}/cases.json
// through compare_api() must give the rows of the expected accuracy_checking_result/details CSVs —
// names, statuses, messages and blanks exactly; numbers as text, or within 1e-12 relative where the
// reference's BLAS-ordered dot product (cosine) can differ in the last digits.
#include <acccheck/csv.hpp>
#include <acccheck/json.hpp>
#include <acccheck/number_format.hpp>

#include <cmath>

#include <yaml-cpp/yaml.h>

#include "config/yaml_settings.hpp"
#include "standards/standard_selector.hpp"
#include "support/test_support.hpp"
#include "verdict/api_comparator.hpp"

using namespace acccheck;
using namespace acccheck::replay;
using acccheck::test::fixture;
using acccheck::test::metric_plugin;
using acccheck::test::read_file;

namespace {

OutputValue value_of(const Json& j) {
  if (j.is_null()) return OutputValue::none();
  if (const Json* seq = j.find("seq")) {
    std::vector<OutputValue> items;
    for (const auto& e : seq->items()) items.push_back(value_of(e));
    return OutputValue::sequence(std::move(items));
  }
  if (const Json* b = j.find("builtin")) {
    if (b->is_bool()) return OutputValue::builtin("bool", b->as_bool());
    if (b->is_integer()) return OutputValue::builtin("int", static_cast<double>(b->as_int()));
    if (b->is_string()) return OutputValue::builtin("str", 0, b->as_string());
    return OutputValue::builtin("float", b->as_double());
  }
  std::vector<std::int64_t> shape;
  for (const auto& d : j.find("shape")->items()) shape.push_back(d.as_int());
  std::vector<double> values;
  for (const auto& v : j.find("values")->items()) {
    if (v.is_string()) values.push_back(*parse_python_float(v.as_string()));
    else if (v.is_bool()) values.push_back(v.as_bool() ? 1.0 : 0.0);
    else values.push_back(v.as_double());
  }
  return OutputValue::tensor("torch." + j.find("dtype")->as_string(), std::move(shape), std::move(values));
}

std::vector<OutputValue> grads_of(const Json* j) {
  if (!j || j->is_null()) return {};
  OutputValue v = value_of(*j);
  return v.kind == OutputValue::Kind::seq ? v.items : std::vector<OutputValue>{v};
}

std::vector<std::vector<std::string>> records(const std::string& path) { return read_csv_records(path); }

void expect_cell(const std::string& expected, const std::string& actual, const std::string& where) {
  if (expected == actual) return;
  auto e = parse_python_float(expected), a = parse_python_float(actual);
  ASSERT_TRUE(e && a) << where << ": expected '" << expected << "', got '" << actual << "'";
  EXPECT_NEAR(*a, *e, 1e-12 * std::max(1.0, std::fabs(*e))) << where;
}

void check_side(const std::string& side) {
  Settings standards;
  core::flatten_yaml(core::load_yaml_file(std::string(ACCCHECK_PLUGIN_DIR) + "/standards.yaml"), "", standards);
  core::StandardSelector selector(standards);
  MetricContext metrics;
  metrics.selector = &selector;
  for (const auto& id : selector.all_standards()) metrics.by_standard[id] = &metric_plugin(id);

  Json cases = parse_json(read_file(fixture("vectors/" + side + "/cases.json")), side);
  std::vector<std::vector<std::string>> results{{"API name", "Forward Test Success", "Backward Test Success", "Message"}};
  std::vector<std::vector<std::string>> details;
  for (const auto& c : cases.items()) {
    ApiOutputs in;
    in.api = c.find("api")->as_string();
    in.bench = value_of(*c.find("bench_output"));
    in.device = value_of(*c.find("device_output"));
    in.bench_grads = grads_of(c.find("bench_grad"));
    in.device_grads = grads_of(c.find("device_grad"));
    if (const Json* m = c.find("backward_message")) in.backward_message = m->as_string();
    ApiResult r = compare_api(in, metrics);
    results.push_back(r.result_fields());
    for (const auto& row : r.rows) details.push_back(row.cells);
  }
  auto expected_results = records(fixture("vectors/" + side + "/accuracy_checking_result_20250101000000.csv"));
  ASSERT_EQ(results.size(), expected_results.size());
  for (std::size_t i = 1; i < results.size(); ++i) EXPECT_EQ(results[i], expected_results[i]) << side << " result row " << i;

  auto expected_details = records(fixture("vectors/" + side + "/accuracy_checking_details_20250101000000.csv"));
  ASSERT_EQ(details.size() + 1, expected_details.size()) << side;
  ASSERT_EQ(expected_details[0].size(), kDetailsColumns.size());
  for (std::size_t c = 0; c < kDetailsColumns.size(); ++c) EXPECT_EQ(expected_details[0][c], kDetailsColumns[c]);
  for (std::size_t i = 0; i < details.size(); ++i) {
    const auto& exp = expected_details[i + 1];
    ASSERT_EQ(details[i].size(), exp.size());
    for (std::size_t c = 0; c < exp.size(); ++c)
      expect_cell(exp[c], details[i][c], side + " " + exp[0] + " column " + std::string(kDetailsColumns[c]));
  }
}

}  // namespace

TEST(RunUtVerdictGolden, NpuCasesGiveTheReferenceRows) { check_side("npu"); }
TEST(RunUtVerdictGolden, GpuCasesGiveTheReferenceRows) { check_side("gpu"); }

TEST(RunUtVerdict, ResultRowHasAMessageOnlyWhenADirectionIsSkipped) {
  ApiResult r;
  r.api = "Torch.mm.0";
  r.forward_status = "pass";
  r.backward_status = "pass";
  r.message = "ignored";
  EXPECT_EQ(r.result_fields().size(), 3u);
  r.backward_status = "SKIP";
  EXPECT_EQ(r.result_fields(), (std::vector<std::string>{"Torch.mm.0", "pass", "SKIP", "ignored"}));
}

TEST(RunUtVerdict, ACrashIsAnErrorWithItsReason) {
  ApiResult r = failed_api("Torch.mm.0", "crashed (SIGSEGV)", true);
  EXPECT_EQ(r.result_fields(), (std::vector<std::string>{"Torch.mm.0", "error", "error", "crashed (SIGSEGV)"}));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].cells[0], "Torch.mm.0.forward.output.0");
  EXPECT_EQ(r.rows[0].status(), "error");
}

TEST(RunUtVerdict, ShortNames) {
  EXPECT_EQ(short_api_name("Torch.matmul.0"), "matmul");
  EXPECT_EQ(short_api_name("Torch.linalg.vector_norm.0"), "linalg.vector_norm");
  EXPECT_EQ(short_api_name("Torch.a.b.c.0"), "");
}

TEST(RunUtVerdict, BenchLongerThanDeviceIsSkippedLikeTheReference) {
  ApiOutputs in;
  in.api = "Torch.chunk.0";
  in.bench = OutputValue::sequence({OutputValue::builtin("int", 1), OutputValue::builtin("int", 2)});
  in.device = OutputValue::sequence({OutputValue::builtin("int", 1)});
  ApiResult r = compare_api(in, MetricContext{});
  EXPECT_EQ(r.result_fields(), (std::vector<std::string>{"Torch.chunk.0", "SKIP", "SKIP", "list index out of range"}));
}
