// Detection power: does acccheck flag exactly the broken APIs? Each scenario of scenarios.yaml
// plants defects in npu-sim (docs/npu-sim.md) under an example model's dump. The APIs a defect
// breaks are found by experiment, not guessed from operator names: the ones whose npu-sim metrics
// (run_ut details) differ from a healthy npu-sim run of the same dump — replay is deterministic,
// so any difference is the defect's. Every such API must be flagged error by compare against the
// cpu (reference) run, and at most 1 % of the others may be. Figures go to
// <build>/test-artifacts/detection.csv; the magnitudes each standard catches are measured by
// bench/detection_sensitivity.py.
#include <acccheck/csv.hpp>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

constexpr const char* kStamp = "20260101000000";

struct Scenario {
  std::string name, model, dtype, faults_yaml;
  std::string describe() const { return name + " (" + model + ", " + dtype + ")"; }
};

void PrintTo(const Scenario& s, std::ostream* os) { *os << s.describe(); }

std::vector<Scenario> load_scenarios() {
  std::vector<Scenario> out;
  YAML::Node root = YAML::LoadFile(std::string(ACCCHECK_SOURCE_DIR) + "/tests/detection/scenarios.yaml");
  for (const auto& s : root["scenarios"]) {
    Scenario sc{s["name"].as<std::string>(), s["model"].as<std::string>(), s["dtype"].as<std::string>("fp32"), ""};
    YAML::Emitter e;
    YAML::Node file;
    file["seed"] = s["seed"].as<int>(7);
    file["faults"] = s["faults"];
    e << file;
    sc.faults_yaml = e.c_str();
    out.push_back(sc);
  }
  return out;
}

std::string details(const std::string& dir) { return dir + "/accuracy_checking_details_" + kStamp + ".csv"; }

// API (without direction) → its details rows' metric cells, for the "what did the defect change" diff.
std::map<std::string, std::string> metrics_by_api(const std::string& csv) {
  std::map<std::string, std::string> m;
  auto rows = acccheck::read_csv_records(csv);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::string& name = rows[i][0];
    std::string api = name.substr(0, std::min(name.find(".forward"), name.find(".backward")));
    std::string cells = name + ":";
    for (std::size_t c = 4; c < rows[i].size(); ++c) cells += rows[i][c] + "|";
    m[api] += cells + "\n";
  }
  return m;
}

// One model's dump with its cpu (reference) and healthy npu-sim runs. CTest runs every scenario
// in a process of its own, so each makes its baseline in its own folder.
struct Baseline {
  std::string dump_json, cpu_dir, healthy_dir;
};

Baseline make_baseline(const std::string& model, const std::string& dtype, const std::string& dir) {
  Baseline b;
  if (model.rfind("fixture:", 0) == 0) {
    b.dump_json = acccheck::test::fixture(model.substr(8) + "/dump.json");
  } else {
    auto d = run_acccheck({"dump", "--dump-path", dir + "/dump", "--step", "1", "--",
                           std::string(ACCCHECK_BUILD_DIR) + "/examples/acccheck-example-train", "--model", model,
                           "--dtype", dtype, "--steps", "2"});
    EXPECT_EQ(d.exit_code, 0) << d.err;
    b.dump_json = dir + "/dump/step1/rank/dump.json";
  }
  b.cpu_dir = dir + "/cpu";
  b.healthy_dir = dir + "/healthy";
  for (auto [device, out] : {std::pair<std::string, std::string>{"cpu", b.cpu_dir}, {"npu-sim", b.healthy_dir}}) {
    auto r = run_acccheck({"run_ut", "-api_info", b.dump_json, "--device", device, "-n", "2", "-o", out,
                           "--timestamp", kStamp});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return b;
}

// One line per scenario in <build>/test-artifacts/detection.csv (appended: scenarios are processes).
void record(const std::string& line) {
  fs::create_directories(std::string(ACCCHECK_BUILD_DIR) + "/test-artifacts");
  const std::string path = std::string(ACCCHECK_BUILD_DIR) + "/test-artifacts/detection.csv";
  const bool fresh = !fs::exists(path);
  std::ofstream out(path, std::ios::app);
  if (fresh) out << "scenario,model,dtype,defective_apis,flagged_defective,healthy_apis,flagged_healthy\n";
  out << line << "\n";
}

class Detection : public ::testing::TestWithParam<Scenario> {};

TEST_P(Detection, FlagsEveryDefectiveApiAndAtMostOnePercentOfTheHealthy) {
  if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no npu-sim";
  const Scenario& s = GetParam();
  TempDir t;
  const Baseline b = make_baseline(s.model, s.dtype, t / "baseline");
  ASSERT_TRUE(fs::exists(details(b.cpu_dir)) && fs::exists(details(b.healthy_dir))) << "baseline runs failed";
  write_file(t / "faults.yaml", s.faults_yaml);
  auto ut = run_acccheck({"run_ut", "-api_info", b.dump_json, "--device", "npu-sim", "--device-config", t / "faults.yaml",
                          "-n", "2", "-o", t / "npu", "--timestamp", kStamp});
  ASSERT_EQ(ut.exit_code, 0) << ut.err;
  auto cmp = run_acccheck({"compare", "-npu", details(t / "npu"), "-gpu", details(b.cpu_dir), "-o", t / "cmp",
                           "--timestamp", kStamp});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;

  auto healthy = metrics_by_api(details(b.healthy_dir)), faulty = metrics_by_api(details(t / "npu"));
  std::set<std::string> defective, flagged;
  for (const auto& [api, cells] : faulty)
    if (healthy[api] != cells) defective.insert(api);
  auto rows = acccheck::read_csv_records(t / ("cmp/api_precision_compare_result_" + std::string(kStamp) + ".csv"));
  std::set<std::string> apis;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    apis.insert(rows[i][0]);
    if (rows[i][1] == "error" || rows[i][2] == "error") flagged.insert(rows[i][0]);
  }
  ASSERT_FALSE(defective.empty()) << s.describe() << ": the planted defect changed no API (fault matches no operator?)";
  std::size_t caught = 0, false_alarms = 0;
  for (const auto& api : defective) {
    if (flagged.count(api)) ++caught;
    else ADD_FAILURE() << s.describe() << ": defective " << api << " was not flagged";
  }
  std::string alarms;
  for (const auto& api : flagged)
    if (!defective.count(api)) {
      ++false_alarms;
      alarms += " " + api;
    }
  const std::size_t healthy_apis = apis.size() - defective.size();
  EXPECT_LE(false_alarms * 100, healthy_apis) << s.describe() << ": healthy APIs flagged:" << alarms;
  record(s.name + "," + s.model + "," + s.dtype + "," + std::to_string(defective.size()) + "," + std::to_string(caught) +
         "," + std::to_string(healthy_apis) + "," + std::to_string(false_alarms));
  std::cout << s.describe() << ": " << caught << "/" << defective.size() << " defective APIs flagged, " << false_alarms
            << "/" << healthy_apis << " healthy APIs flagged\n";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Detection, ::testing::ValuesIn(load_scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// Without any defect nothing is flagged: the false-positive floor of every model and dtype.
TEST(DetectionHealthy, NoApiIsFlaggedOnAHealthyDevice) {
  if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no npu-sim";
  for (const char* model : {"mlp", "cnn", "transformer"}) {
    for (const char* dtype : {"fp32", "bf16"}) {
      TempDir t;
      const Baseline b = make_baseline(model, dtype, t.path());
      auto cmp = run_acccheck({"compare", "-npu", details(b.healthy_dir), "-gpu", details(b.cpu_dir), "-o", t / "cmp",
                               "--timestamp", kStamp, "--fail-on", "error"});
      EXPECT_EQ(cmp.exit_code, 0) << model << " " << dtype << ":\n" << cmp.out;
    }
  }
}

}  // namespace
