// The reference tool both ways, with mindstudio-probe (`msprobe`) from PyPI in the build's Python
// (scripts/setup.sh installs it into .venv): (a) the dumps msprobe's PrecisionDebugger writes on the
// CPU, statistics and tensor task, replay in `acccheck run_ut` with nothing SKIP; (b) acccheck's dump
// of the same script is read by msprobe's own run_ut (acc_check), run on the CPU by
// fixtures/python/msprobe/msprobe_run_ut_cpu.py (which says how). docs/compat.md records what
// msprobe 26.2 accepts of it and what not.
#include <filesystem>
#include <map>

#include <acccheck/csv.hpp>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::read_csv_records;
using acccheck::test::fixture;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::shell_quote;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

const std::string kPython = ACCCHECK_TEST_PYTHON;
const std::string kTrain = fixture("python/msprobe/train.py");
const std::string kMsprobeRunUt = fixture("python/msprobe/msprobe_run_ut_cpu.py");

class MsprobeInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch";
    if (std::system((shell_quote(kPython) + " -c 'import msprobe, torch' >/dev/null 2>&1").c_str()) != 0)
      GTEST_SKIP() << kPython << " has no msprobe (mindstudio-probe from PyPI; scripts/setup.sh installs it into .venv)";
  }
  int python(const std::vector<std::string>& args, const std::string& log) {
    std::string cmd = shell_quote(kPython) + " -W ignore";
    for (const auto& a : args) cmd += " " + shell_quote(a);
    return std::system((cmd + " >" + shell_quote(log) + " 2>&1").c_str());
  }
};

// API name → {forward status, backward status, message} of a run_ut result file.
std::map<std::string, std::vector<std::string>> results(const std::string& csv) {
  std::map<std::string, std::vector<std::string>> out;
  auto rows = read_csv_records(csv);
  for (std::size_t i = 1; i < rows.size(); ++i) out[rows[i][0]] = {rows[i][1], rows[i][2], rows[i].size() > 3 ? rows[i][3] : ""};
  return out;
}

std::string only_file(const std::string& dir, const std::string& prefix) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path().string();
  return "";
}

// msprobe writes DUMP/step0/proc<pid>/dump.json.
std::string msprobe_dump_json(const std::string& root) {
  for (const auto& e : fs::directory_iterator(root + "/step0"))
    if (fs::exists(e.path() / "dump.json")) return (e.path() / "dump.json").string();
  return "";
}

}  // namespace

TEST_F(MsprobeInterop, MsprobesDumpsReplayInAcccheckWithNothingSkipped) {
  for (const char* task : {"statistics", "tensor"}) {
    TempDir dir;
    write_file(dir / "config.json", std::string("{\"task\": \"") + task + "\", \"dump_path\": \"" + (dir / "dump") +
                                        "\", \"rank\": [], \"step\": [0], \"level\": \"L1\", \"" + task +
                                        "\": {\"scope\": [], \"list\": [], \"data_mode\": [\"all\"]}}");
    ASSERT_EQ(python({kTrain, dir / "config.json"}, dir / "msprobe.log"), 0) << read_file(dir / "msprobe.log");
    const std::string json = msprobe_dump_json(dir / "dump");
    ASSERT_FALSE(json.empty()) << read_file(dir / "msprobe.log");
    EXPECT_EQ(read_file(json).find("\"dump_data_dir\": null") == std::string::npos, std::string(task) == "tensor");
    for (const char* device : {"cpu", "npu-sim"}) {
      const std::string out = dir / device;
      auto ut = run_acccheck({"run_ut", "-api_info", json, "--device", device, "-o", out});
      ASSERT_EQ(ut.exit_code, 0) << ut.err;
      auto r = results(only_file(out, "accuracy_checking_result_"));
      for (const char* api : {"Functional.linear.0", "Functional.gelu.0", "Functional.layer_norm.0", "Functional.linear.1",
                              "Torch.softmax.0", "Functional.mse_loss.0"}) {
        ASSERT_TRUE(r.count(api)) << task << " " << device << ": " << api << " missing";
        EXPECT_EQ(r[api][0], "pass") << task << " " << device << " " << api << ": " << r[api][2];
        EXPECT_EQ(r[api][1], "pass") << task << " " << device << " " << api << " backward: " << r[api][2];
      }
      EXPECT_EQ(r.size(), 6u) << task << " " << device;
    }
  }
}

TEST_F(MsprobeInterop, AcccheckDumpsAreReadByMsprobesOwnRunUt) {
  for (const char* task : {"statistics", "tensor"}) {
    TempDir dir;
    auto d = run_acccheck({"dump", "--dump-path", dir / "dump", "--step", "0", "--task", task, "--", kPython, "-W", "ignore", kTrain});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    const std::string json = dir / "dump/step0/rank/dump.json";
    // msprobe 26.2 as it is: it reads the file and writes a row for every forward entry, but its API
    // registry has no Aten family, so each is SKIP (its own Aten dumps fare the same).
    ASSERT_EQ(python({kMsprobeRunUt, "-api_info", json, "-o", dir / "plain"}, dir / "plain.log"), 0) << read_file(dir / "plain.log");
    auto plain = results(only_file(dir / "plain", "accuracy_checking_result_"));
    ASSERT_TRUE(plain.count("Aten.addmm.0")) << read_file(dir / "plain.log");
    for (const auto& [api, row] : plain) {
      EXPECT_EQ(row[0], "SKIP") << api;
      EXPECT_EQ(row[2], "'NoneType' object is not subscriptable") << api;
    }
    // With torch.ops.aten registered as that family (what older msprobe releases did), msprobe
    // replays acccheck's entries: the model's operators pass forward and backward; what msprobe
    // cannot do itself stays as it says (a backward of several outputs).
    ASSERT_EQ(python({kMsprobeRunUt, "--register-aten", "-api_info", json, "-o", dir / "aten"}, dir / "aten.log"), 0)
        << read_file(dir / "aten.log");
    auto aten = results(only_file(dir / "aten", "accuracy_checking_result_"));
    EXPECT_EQ(aten.size(), plain.size());
    for (const char* api : {"Aten.addmm.0", "Aten.gelu.0", "Aten.addmm.1", "Aten._softmax.0", "Aten.mse_loss.0", "Aten.t.0"}) {
      ASSERT_TRUE(aten.count(api)) << task << ": " << api;
      EXPECT_EQ(aten[api][0], "pass") << task << " " << api << ": " << aten[api][2];
      EXPECT_EQ(aten[api][1], "pass") << task << " " << api << " backward: " << aten[api][2];
    }
    ASSERT_TRUE(aten.count("Aten.native_layer_norm.0"));
    EXPECT_EQ(aten["Aten.native_layer_norm.0"][0], "pass");
    EXPECT_EQ(aten["Aten.native_layer_norm.0"][2], "Multiple backward is not supported.");
  }
}
