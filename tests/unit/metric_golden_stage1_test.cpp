// Stage 1 against the reference's own output: for every float tensor output in
// vectors/{npu,gpu}/cases.json, the metric columns of the standard chosen for it must equal the
// cells of the expected accuracy_checking_details CSV, as text.
#include <acccheck/csv.hpp>
#include <acccheck/json.hpp>
#include <acccheck/metric_support.hpp>
#include <acccheck/number_format.hpp>

#include "standards/standard_selector.hpp"
#include <yaml-cpp/yaml.h>

#include "config/yaml_settings.hpp"
#include "support/test_support.hpp"

using namespace acccheck;
using acccheck::test::fixture;
using acccheck::test::metric_plugin;
using acccheck::test::read_file;

namespace {

struct Tensor {
  std::string dtype;
  std::vector<double> values;
  std::vector<std::int64_t> shape;
};

std::optional<Tensor> tensor_of(const Json& j) {
  if (!j.is_object() || !j.find("dtype")) return std::nullopt;
  Tensor t;
  t.dtype = "torch." + j.find("dtype")->as_string();
  for (const auto& d : j.find("shape")->items()) t.shape.push_back(d.as_int());
  for (const auto& v : j.find("values")->items()) {
    if (v.is_string()) t.values.push_back(*parse_python_float(v.as_string()));
    else if (v.is_bool()) t.values.push_back(v.as_bool() ? 1.0 : 0.0);
    else t.values.push_back(v.as_double());
  }
  return t;
}

std::vector<Json> flatten(const Json& j) {
  if (j.is_object() && j.find("seq")) return j.find("seq")->items();
  return {j};
}

std::map<std::string, std::map<std::string, std::string>> expected_rows(const std::string& csv) {
  CsvReader r(csv);
  std::vector<std::string> header, f;
  r.next(header);
  std::map<std::string, std::map<std::string, std::string>> rows;
  while (r.next(f))
    for (std::size_t i = 0; i < header.size(); ++i) rows[f[0]][header[i]] = f[i];
  return rows;
}

void check_side(const std::string& side, int* checked) {
  Settings standards;
  core::flatten_yaml(core::load_yaml_file(std::string(ACCCHECK_PLUGIN_DIR) + "/standards.yaml"), "", standards);
  core::StandardSelector selector(standards);
  Json cases = parse_json(read_file(fixture("vectors/" + side + "/cases.json")), side + "/cases.json");
  auto expected = expected_rows(fixture("vectors/" + side + "/accuracy_checking_details_20250101000000.csv"));
  for (const auto& c : cases.items()) {
    std::string api = c.find("api")->as_string();
    if (api.find("dropout") != std::string::npos) continue;  // dropout rule: no details rows
    for (const char* direction : {"forward", "backward"}) {
      bool fwd = std::string(direction) == "forward";
      const Json* bench = c.find(fwd ? "bench_output" : "bench_grad");
      const Json* device = c.find(fwd ? "device_output" : "device_grad");
      if (!bench || bench->is_null() || !device || device->is_null()) continue;
      if (!fwd && !c.find("backward_message")->as_string().empty()) continue;
      auto b = flatten(*bench), d = flatten(*device);
      for (std::size_t i = 0; i < b.size() && i < d.size(); ++i) {
        auto bt = tensor_of(b[i]), dt = tensor_of(d[i]);
        if (!bt || !dt || bt->shape != dt->shape || bt->values.empty()) continue;
        auto kind = float_kind(dt->dtype);
        if (kind != FloatKind::float16 && kind != FloatKind::bfloat16 && kind != FloatKind::float32) continue;
        std::string row = api + "." + direction + ".output." + std::to_string(i);
        ASSERT_TRUE(expected.count(row)) << side << ": no expected row " << row;
        std::string short_api = api.substr(api.find('.') + 1);
        short_api = short_api.substr(0, short_api.rfind('.'));
        const std::string& standard = selector.select(short_api, dt->dtype, false);
        OutputPair pair{bt->values.data(), dt->values.data(), bt->values.size(), dt->dtype, bt->dtype, false};
        for (const auto& v : metric_plugin(standard).compute(pair)) {
          EXPECT_EQ(metric_support::format_value(v), expected[row][v.column])
              << side << " " << row << " (" << standard << ") column " << v.column;
          ++*checked;
        }
      }
    }
  }
}

}  // namespace

TEST(Stage1Golden, NpuCasesMatchTheReferenceCellForCell) {
  int checked = 0;
  check_side("npu", &checked);
  EXPECT_GE(checked, 60);
}

TEST(Stage1Golden, GpuCasesMatchTheReferenceCellForCell) {
  int checked = 0;
  check_side("gpu", &checked);
  EXPECT_GE(checked, 60);
}
