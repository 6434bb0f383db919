// Vendor fused operators end to end (issue 27): a LibTorch program whose transformer block is made
// of npu:: fused operators (tests/programs/fused_ops_training.cpp) is dumped with no code change,
// replayed on npu-sim and on the cpu device (where the fused operators run their references) and
// compared: a healthy device is never flagged, every fused API is judged, a fault planted in one
// fused operator is flagged there and nowhere else. msprobe's own NPU.* entries (tensor and
// statistics dumps, tests/fixtures/fused/make_msprobe_npu_dumps.py) replay with the atten_mask rule.
#include <filesystem>
#include <map>
#include <set>

#include <acccheck/csv.hpp>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::read_csv_records;
using acccheck::test::fixture;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

using Rows = std::map<std::string, std::vector<std::string>>;
Rows rows_of(const std::string& csv) {
  Rows out;
  auto records = read_csv_records(csv);
  for (std::size_t i = 1; i < records.size(); ++i) out[records[i][0]] = records[i];
  return out;
}

const std::string kProgram = std::string(ACCCHECK_BUILD_DIR) + "/tests/fused_ops_training";

std::string run_ut(const std::string& json, const std::string& device, const std::string& out, const std::string& faults = "") {
  std::vector<std::string> args{"run_ut", "-api_info", json, "--device", device, "-n", "2", "-o", out, "--timestamp", "20260101000000"};
  if (!faults.empty()) args.insert(args.end(), {"--device-config", faults});
  auto r = run_acccheck(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out + "/accuracy_checking_details_20260101000000.csv";
}

Rows compare(const std::string& npu, const std::string& gpu, const std::string& out) {
  auto r = run_acccheck({"compare", "-npu", npu, "-gpu", gpu, "-o", out, "--timestamp", "20260101000001"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return rows_of(out + "/api_precision_compare_result_20260101000001.csv");
}

std::set<std::string> flagged(const Rows& rows) {
  std::set<std::string> out;
  for (const auto& [api, row] : rows)
    if (row[1] == "error" || row[2] == "error") out.insert(api);
  return out;
}

class FusedOpsProgram : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!ACCCHECK_TORCH_BUILD || !fs::exists(kProgram)) GTEST_SKIP() << "built without LibTorch";
  }
};

TEST_P(FusedOpsProgram, DumpedReplayedAndJudgedOnNpuSimWithAPlantedFaultCaught) {
  const std::string dtype = GetParam();
  TempDir dir;
  auto dump = run_acccheck({"dump", "--dump-path", dir / "d", "--step", "1", "--", kProgram, ACCCHECK_PLUGIN_DIR, "2", dtype});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const std::string json = dir / "d/step1/rank/dump.json";
  const std::string cpu = run_ut(json, "cpu", dir / "cpu");
  Rows healthy = compare(run_ut(json, "npu-sim", dir / "npu"), cpu, dir / "cmp");
  // Every fused operator of the program is an entry, judged forward and (where it has one) backward.
  std::set<std::string> fused;
  for (const auto& [api, row] : healthy) {
    if (api.rfind("NPU.", 0) != 0) continue;
    fused.insert(api.substr(0, api.rfind('.')));
    EXPECT_NE(row[1], "SKIP") << api << ": " << row[3];
    EXPECT_NE(row[2], "SKIP") << api << ": " << row[3];
  }
  EXPECT_EQ(fused, (std::set<std::string>{"NPU.npu_apply_adam_w", "NPU.npu_fast_gelu", "NPU.npu_fusion_attention", "NPU.npu_linear",
                                          "NPU.npu_rms_norm", "NPU.npu_rotary_mul", "NPU.npu_swiglu"}));
  EXPECT_EQ(healthy.at("NPU.npu_fusion_attention.0")[2], "pass") << "its backward from output 0 (grad_index)";
  EXPECT_EQ(flagged(healthy), std::set<std::string>{}) << "healthy npu-sim flagged";

  // A defect in one fused operator, forward (attention) or backward (rms_norm): flagged there only.
  // bfloat16 keeps 8 bits: its smallest caught noise is larger (docs/detection.md). float16 is here
  // because its Adam state once underflowed (grad² in float16) and turned the whole step to NaN.
  const std::string noise = dtype == "bfloat16" ? "5.0e-2" : "1.0e-2";
  write_file(dir / "fa.yaml", "seed: 5\nfaults:\n  - {op: \"npu::npu_fusion_attention\", direction: forward, kind: rel_noise, magnitude: " +
                                  noise + "}\n");
  EXPECT_EQ(flagged(compare(run_ut(json, "npu-sim", dir / "fa", dir / "fa.yaml"), cpu, dir / "cmp_fa")),
            std::set<std::string>{"NPU.npu_fusion_attention.0"});
  write_file(dir / "rms.yaml", "seed: 5\nfaults:\n  - {op: \"npu::npu_rms_norm\", direction: backward, kind: scale, magnitude: 1.02}\n");
  Rows rms = compare(run_ut(json, "npu-sim", dir / "rms", dir / "rms.yaml"), cpu, dir / "cmp_rms");
  EXPECT_EQ(flagged(rms), std::set<std::string>{"NPU.npu_rms_norm.0"});
  EXPECT_EQ(rms.at("NPU.npu_rms_norm.0")[1], "pass");
  EXPECT_EQ(rms.at("NPU.npu_rms_norm.0")[2], "error");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedOpsProgram, ::testing::Values("float32", "float16", "bfloat16"));

// msprobe's NPU.* entries, with real data and with statistics only, replay on both sides: the
// compressed causal mask of sparse_mode 2 (saved without a data file) is rebuilt, a mask of the
// call's own size is drawn, the optimizer's out=(var, m, v) list is bound, a fused operator without
// a reference says so.
TEST(FusedOpsMsprobeDumps, ReplayOnNpuSimAndCpuAndAreJudged) {
  if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch";
  for (const char* task : {"tensor", "statistics"}) {
    TempDir dir;
    const std::string json = fixture(std::string("fused/msprobe-npu-") + task + "/dump.json");
    const std::string npu = run_ut(json, "npu-sim", dir / "npu"), cpu = run_ut(json, "cpu", dir / "cpu");
    Rows result = rows_of(dir / "npu/accuracy_checking_result_20260101000000.csv");
    EXPECT_EQ(result.at("NPU.npu_fusion_attention.0")[1], "pass") << task << ": " << result.at("NPU.npu_fusion_attention.0")[3];
    EXPECT_EQ(result.at("NPU.npu_fusion_attention.0")[2], "pass") << task;
    EXPECT_EQ(result.at("NPU.npu_rms_norm.0")[1], "pass") << task;
    EXPECT_EQ(result.at("NPU.npu_rms_norm.0")[2], "pass") << task;
    Rows judged = compare(npu, cpu, dir / "cmp");
    EXPECT_EQ(flagged(judged), std::set<std::string>{}) << task;
    if (std::string(task) == "tensor") continue;
    for (const char* api : {"NPU.npu_fusion_attention.1", "NPU.npu_swiglu.0", "NPU.npu_fast_gelu.0", "NPU.fast_gelu.0",
                            "NPU.npu_rotary_mul.0", "NPU.npu_apply_adam_w.0"})
      EXPECT_EQ(judged.at(api)[1], "pass") << api << ": " << judged.at(api)[3];
    EXPECT_EQ(result.at("NPU.npu_dropout_with_add_softmax.0")[1], "SKIP");
    EXPECT_EQ(result.at("NPU.npu_dropout_with_add_softmax.0")[3], "There is not bench function npu_dropout_with_add_softmax");
  }
}

}  // namespace
