// `acccheck demo` end to end, and the HTML report it writes opened in headless Chromium (Debian's
// `chromium`; skipped with a message where it is absent). Screenshots go to
// <build>/test-artifacts/.
#include <acccheck/csv.hpp>
#include <acccheck/json.hpp>
#include <acccheck/record.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "commands/report/script_hash.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::shell_quote;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

bool chromium_available() { return std::system("command -v chromium > /dev/null 2>&1") == 0; }

// Flags for a closed network (no component updates, no background requests).
std::string chromium(const std::string& flags, const std::string& url, const std::string& out_file) {
  std::string cmd = "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
                    "--disable-component-update --hide-scrollbars --virtual-time-budget=10000 " + flags + " " +
                    shell_quote(url) + " > " + shell_quote(out_file) + " 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return read_file(out_file);
}

std::string dom_of(const std::string& report, const std::string& hash, const TempDir& tmp) {
  return chromium("--dump-dom", "file://" + report + hash, tmp / "dom.html");
}

// The text of the element with this id, where it holds only text ("<span id="x">7</span>").
std::string text_of(const std::string& dom, const std::string& id) {
  std::smatch m;
  std::regex re("id=\"" + id + "\"[^>]*>(?:<div class=\"n\">)?([^<]*)<");
  return std::regex_search(dom, m, re) ? m[1].str() : "<no #" + id + ">";
}

// Runs a built reproducer (its command line, environment first) with its output in `log`, and
// returns each output line's mean relative error, in order.
std::vector<double> run_repro(const std::string& command, const std::string& log) {
  EXPECT_EQ(std::system((command + " > " + shell_quote(log) + " 2>&1").c_str()), 0) << read_file(log);
  std::vector<double> v;
  const std::string text = read_file(log);
  std::regex re("\noutput [0-9]+ .* mean rel ([0-9.e+-]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    v.push_back(std::stod((*it)[1].str()));
  return v;
}

std::size_t rendered_rows(const std::string& dom) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = dom.find("class=\"tabulator-row ", p)) != std::string::npos; ++p) ++n;
  return n;
}

struct ResultRows {
  std::size_t apis = 0, errors = 0;
  std::set<std::string> flagged;
};
ResultRows result_rows(const std::string& csv) {
  ResultRows r;
  auto rows = acccheck::read_csv_records(csv);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ++r.apis;
    if (rows[i][1] == "error" || rows[i][2] == "error") {
      ++r.errors;
      r.flagged.insert(rows[i][0]);
    }
  }
  return r;
}

constexpr const char* kStamp = "20260101000000";

// One demo for the whole suite (the pipeline takes seconds; every test reads its outputs).
class Demo : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!ACCCHECK_TORCH_BUILD) return;
    dir_ = new TempDir();
    *run_ = run_acccheck({"demo", "-o", *dir_ / "demo"});
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!ACCCHECK_TORCH_BUILD) GTEST_SKIP() << "built without LibTorch: no devices to run the demo on";
    ASSERT_EQ(run_->exit_code, 0) << run_->out << run_->err;
  }
  static std::string out(const std::string& rel) { return *dir_ / ("demo/" + rel); }
  static std::string result_csv() { return out(std::string("compare/api_precision_compare_result_") + kStamp + ".csv"); }
  static std::string report() { return fs::canonical(out("compare/report.html")).string(); }

  static TempDir* dir_;
  static acccheck::test::RunResult* run_;
};
TempDir* Demo::dir_ = nullptr;
acccheck::test::RunResult* Demo::run_ = new acccheck::test::RunResult();

}  // namespace

// Exactly the APIs the bundled fault file breaks are flagged: gelu and softmax (forward), and in
// backward every matmul that runs as mm on the device — those of the Linear layers, whose weight
// is a matrix; the attention matmuls of batched 4-d operands run as bmm and stay healthy.
TEST_F(Demo, FlagsExactlyThePlantedDefects) {
  std::set<std::string> expected;
  acccheck::read_dump_json(out("dump/step1/rank/dump.json"), [](const acccheck::DumpHeader&) {},
                           [&](acccheck::ApiRecord&& r) {
                             if (r.direction != acccheck::Direction::forward) return;
                             if (r.api.rfind("Aten.gelu.", 0) == 0 || r.api.rfind("Aten._softmax.", 0) == 0) expected.insert(r.api);
                             if (r.api.rfind("Aten.matmul.", 0) == 0 && r.args.size() == 2 && r.args[1].tensor.shape.size() == 2)
                               expected.insert(r.api);
                           });
  ASSERT_GE(expected.size(), 4u);
  ResultRows rows = result_rows(result_csv());
  EXPECT_EQ(rows.flagged, expected);
  EXPECT_GE(rows.apis, 80u);
  const std::string& o = run_->out;
  EXPECT_NE(o.find("[1/4] dump one training step of the example transformer (fp32)"), std::string::npos) << o;
  EXPECT_NE(o.find("[4/4] compare npu-sim against cpu"), std::string::npos) << o;
  EXPECT_NE(o.find("verdicts: " + std::to_string(rows.apis) + " APIs: " + std::to_string(rows.errors) + " error"),
            std::string::npos) << o;
  EXPECT_NE(o.find("Aten.gelu.0      error    pass      标杆比对法: forward.output.0 "), std::string::npos) << o;
  EXPECT_NE(o.find("report:  " + out("compare/report.html")), std::string::npos) << o;
}

TEST_F(Demo, ASecondRunReplacesTheFirstButAForeignFolderIsRefused) {
  TempDir t;
  auto again = run_acccheck({"demo", "-o", t / "d", "--model", "mlp"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  again = run_acccheck({"demo", "-o", t / "d", "--model", "mlp"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  fs::create_directories(t / "mine");
  write_file(t / "mine/notes.txt", "keep me");
  auto refused = run_acccheck({"demo", "-o", t / "mine"});
  EXPECT_EQ(refused.exit_code, 4);
  EXPECT_EQ(refused.err, "acccheck demo: " + t / "mine" + ": not empty and not made by acccheck demo; choose another folder with -o\n");
  EXPECT_EQ(read_file(t / "mine/notes.txt"), "keep me");
}

TEST_F(Demo, ReportOpensInHeadlessChromiumWithItsRowsCountsAndFilter) {
  if (!chromium_available()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium): report not opened";
  TempDir tmp;
  ResultRows rows = result_rows(result_csv());
  std::string all = dom_of(report(), "", tmp);
  EXPECT_NE(all.find("data-state=\"ready\""), std::string::npos) << "the report's script did not finish";
  EXPECT_EQ(text_of(all, "count-apis"), std::to_string(rows.apis));
  EXPECT_EQ(text_of(all, "count-error"), std::to_string(rows.errors));
  EXPECT_EQ(text_of(all, "visible-count"), std::to_string(rows.apis));
  EXPECT_EQ(rendered_rows(all), rows.apis);
  // The filter from the address, as a user's link would carry it.
  std::string errors = dom_of(report(), "#verdict=error", tmp);
  EXPECT_EQ(text_of(errors, "visible-count"), std::to_string(rows.errors));
  EXPECT_EQ(rendered_rows(errors), rows.errors);
  for (const auto& api : rows.flagged) EXPECT_NE(errors.find(">" + api + "<"), std::string::npos) << api;
  std::string gelu = dom_of(report(), "#q=gelu&api=Aten.gelu.0", tmp);
  EXPECT_EQ(text_of(gelu, "visible-count"), "1");
  EXPECT_NE(gelu.find("data-api=\"Aten.gelu.0\""), std::string::npos);
  EXPECT_NE(gelu.find("run_ut metrics of both sides"), std::string::npos);
  EXPECT_NE(gelu.find("models.hpp, line "), std::string::npos) << "the stack from stack.json";
  EXPECT_NE(gelu.find("float32[4, 8, 128]"), std::string::npos) << "input shapes from dump.json";
  // Three plots drawn (Chart.js sizes each canvas it draws on).
  for (const char* id : {"plot-ratios", "plot-scatter", "plot-order"}) {
    std::regex drawn(std::string("<canvas id=\"") + id + "\"[^>]*height=\"[1-9]");
    EXPECT_TRUE(std::regex_search(all, drawn)) << id << " was not drawn";
  }
  fs::create_directories(std::string(ACCCHECK_BUILD_DIR) + "/test-artifacts");
  const std::string shot = std::string(ACCCHECK_BUILD_DIR) + "/test-artifacts/report-demo.png";
  fs::remove(shot);
  chromium("--window-size=1400,2400 --screenshot=" + shot, "file://" + report() + "#verdict=error", tmp / "shot.log");
  ASSERT_TRUE(fs::exists(shot));
  EXPECT_GT(fs::file_size(shot), 20000u);
  std::cout << "screenshot: " << shot << "\n";
}

TEST_F(Demo, ARunUtFolderGetsADeviceVersusBenchmarkReport) {
  TempDir tmp;
  auto r = run_acccheck({"report", out("npu-sim"), "--dump", out("dump/step1/rank/dump.json"), "-o", tmp / "ut.html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "report: " + tmp / "ut.html" + "\n");
  std::string html = read_file(tmp / "ut.html");
  EXPECT_NE(html.find("\"mode\": \"run_ut\""), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "a report must not load anything";
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  if (!chromium_available()) GTEST_SKIP() << "chromium is not installed: report not opened";
  ResultRows rows = result_rows(out(std::string("npu-sim/accuracy_checking_result_") + kStamp + ".csv"));
  std::string dom = dom_of(tmp / "ut.html", "#verdict=error", tmp);
  EXPECT_NE(dom.find("device under test against the CPU benchmark"), std::string::npos);
  EXPECT_EQ(text_of(dom, "count-apis"), std::to_string(rows.apis));
  EXPECT_EQ(text_of(dom, "visible-count"), std::to_string(rows.errors));
}

// A reproducer to attach to a bug report: written, built against the installed SDK, run on npu-sim
// healthy and with the demo's gelu defect, and on the CPU.
TEST_F(Demo, ReproBuildsAndShowsTheDefectOnlyWhenItIsPlanted) {
  TempDir t;
  auto r = run_acccheck({"repro", "Aten.gelu.0", "--dump", out("dump/step1/rank/dump.json"), "-o", t / "repro"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("repro: " + t / "repro/repro.cpp" + " (aten::gelu, 1 arguments)\n", 0), 0u) << r.out;
  std::string build = acccheck::test::build_cmake_project(t / "repro", t);
  const std::string repro = build + "/repro";
  ASSERT_TRUE(fs::exists(repro));
  auto mean_rel = [](const std::string& env_and_args, const std::string& log) {
    const std::vector<double> v = run_repro(env_and_args, log);
    return v.empty() ? -1.0 : v[0];
  };
  double healthy = mean_rel(shell_quote(repro), t / "healthy.log");
  EXPECT_NE(read_file(t / "healthy.log").find("Aten.gelu.0.forward  aten::gelu on npu-sim (privateuseone:0) vs the CPU benchmark"),
            std::string::npos) << read_file(t / "healthy.log");
  write_file(t / "faults.yaml", "seed: 1\nfaults:\n  - {op: \"aten::gelu\", kind: rel_noise, magnitude: 1.0e-2}\n");
  double faulty = mean_rel("ACCCHECK_NPUSIM_FAULTS=" + shell_quote(t / "faults.yaml") + " " + shell_quote(repro), t / "faulty.log");
  double cpu = mean_rel(shell_quote(repro) + " --device cpu", t / "cpu.log");
  EXPECT_GE(healthy, 0.0);
  EXPECT_LT(healthy, 1e-5) << read_file(t / "healthy.log");
  EXPECT_GT(faulty, 3e-3) << read_file(t / "faulty.log");  // uniform noise of ±1 %: mean 0.5 %
  EXPECT_LT(faulty, 7e-3) << read_file(t / "faulty.log");
  EXPECT_LT(cpu, 1e-5) << read_file(t / "cpu.log");
}

// Real data: a tensor-mode dump's .pt files travel with the reproducer and are what it reads.
TEST_F(Demo, ReproOfATensorDumpCarriesAndReadsTheRealInputs) {
  TempDir t;
  auto d = run_acccheck({"dump", "--dump-path", t / "d", "--task", "tensor", "--step", "1", "--",
                         std::string(ACCCHECK_BUILD_DIR) + "/examples/acccheck-example-train", "--steps", "2"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  auto r = run_acccheck({"repro", "Aten.addmm.0", "--dump", t / "d/step1/rank/dump.json", "--device", "cpu", "-o", t / "r"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(aten::addmm, 3 arguments, 3 tensor files)"), std::string::npos) << r.out;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(fs::exists(t / ("r/inputs/Aten.addmm.0.forward.input." + std::to_string(i) + ".pt")));
  const std::string code = read_file(t / "r/repro.cpp");
  EXPECT_NE(code.find("named(\"self\", tensor({64}, at::kFloat, "), std::string::npos) << code.substr(0, 400);
  EXPECT_NE(code.find("\"inputs/Aten.addmm.0.forward.input.1.pt\")"), std::string::npos);
  std::string build = acccheck::test::build_cmake_project(t / "r", t);
  // The same inputs whatever the seed: they are read, not drawn.
  const std::string run1 = t / "run1.log", run2 = t / "run2.log";
  ASSERT_EQ(std::system((shell_quote(build + "/repro") + " > " + shell_quote(run1) + " 2>&1").c_str()), 0) << read_file(run1);
  ASSERT_EQ(std::system((shell_quote(build + "/repro") + " --seed 99 > " + shell_quote(run2) + " 2>&1").c_str()), 0);
  auto metrics = [](const std::string& log) { std::string s = read_file(log); return s.substr(s.find("output 0")); };
  EXPECT_EQ(metrics(run1), metrics(run2));
  EXPECT_NE(read_file(run1).find("aten::addmm on cpu vs the CPU benchmark"), std::string::npos) << read_file(run1);
}

// The bundle meant for a vendor carries only the dump's own real data, read as run_ut reads it
// (issue 25, item 5): a data_name outside dump_tensor_data/, or a file run_ut would refuse, stops
// repro with one line and nothing is copied.
TEST_F(Demo, ReproCopiesRealDataOnlyFromInsideTheDump) {
  TempDir t;
  auto d = run_acccheck({"dump", "--dump-path", t / "d", "--task", "tensor", "--step", "1", "--",
                         std::string(ACCCHECK_BUILD_DIR) + "/examples/acccheck-example-train", "--steps", "2"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string rank = t / "d/step1/rank";
  fs::copy_file(rank + "/dump_tensor_data/Aten.addmm.0.forward.input.0.pt", t / "secret.pt");
  std::string json = read_file(rank + "/dump.json");
  const std::string key = "\"data_name\": \"Aten.addmm.0.forward.input.0.pt\"";
  ASSERT_NE(json.find(key), std::string::npos);
  json.replace(json.find(key), key.size(), "\"data_name\": \"../../../../secret.pt\"");
  write_file(rank + "/dump.json", json);
  auto r = run_acccheck({"repro", "Aten.addmm.0", "--dump", rank + "/dump.json", "--device", "cpu", "-o", t / "r"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err, "acccheck repro: " + rank + "/dump_tensor_data/../../../../secret.pt: outside the dump's folder " + rank +
                       "/dump_tensor_data (run_ut --allow-outside-dump reads it anyway)\n");
  EXPECT_FALSE(fs::exists(t / "r/inputs/secret.pt"));
  EXPECT_FALSE(fs::exists(t / "r/repro.cpp"));
  // A file inside that run_ut would refuse (not a torch.save file) is not copied either.
  json.replace(json.find("../../../../secret.pt"), std::string("../../../../secret.pt").size(), "Aten.addmm.0.forward.input.0.pt");
  write_file(rank + "/dump.json", json);
  write_file(rank + "/dump_tensor_data/Aten.addmm.0.forward.input.0.pt", "not a zip");
  r = run_acccheck({"repro", "Aten.addmm.0", "--dump", rank + "/dump.json", "--device", "cpu", "-o", t / "r2"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("Aten.addmm.0.forward.input.0.pt: not a tensor file written by torch.save ("), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(t / "r2/repro.cpp"));
}

TEST_F(Demo, ReproRefusesWhatItCannotRebuildInOneLine) {
  TempDir t;
  const std::string dump = out("dump/step1/rank/dump.json");
  auto missing = run_acccheck({"repro", "Aten.nothing.0", "--dump", dump, "-o", t / "r"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_EQ(missing.err, "acccheck repro: " + dump + ": no entry 'Aten.nothing.0.forward'\n");
  auto backward = run_acccheck({"repro", "Aten.gelu.0.backward", "--dump", dump, "-o", t / "r"});
  EXPECT_EQ(backward.exit_code, 2);
  EXPECT_EQ(backward.err, "acccheck repro: Aten.gelu.0.backward: repro rebuilds forward calls; give Aten.gelu.0.forward "
                          "(its backward is checked by run_ut)\n");
  const std::string msprobe = std::string(ACCCHECK_SOURCE_DIR) + "/examples/dumps/msprobe-mlp/dump.json";
  auto foreign = run_acccheck({"repro", "Functional.gelu.0", "--dump", msprobe, "-o", t / "r"});
  EXPECT_EQ(foreign.exit_code, 3);
  EXPECT_EQ(foreign.err, "acccheck repro: " + msprobe + ": entry 'Functional.gelu.0.forward' names no dispatcher operator "
                         "(acccheck_op): repro needs an acccheck dump; replay msprobe entries with run_ut --filter-api\n");
  auto device = run_acccheck({"repro", "Aten.gelu.0", "--dump", dump, "--device", "quantum", "-o", t / "r"});
  EXPECT_EQ(device.exit_code, 5);
  EXPECT_EQ(device.err, "acccheck repro: device 'quantum': no acccheck_device_*.so of that name in the plugin folders\n");
  EXPECT_FALSE(fs::exists(t / "r"));
}

// Names and messages are data: they reach the page as text, never as markup or script.
TEST(Report, TextFromTheCsvFilesIsNeverMarkup) {
  TempDir t;
  write_file(t / "accuracy_checking_result_20260101000000.csv",
             "API name,Forward Test Success,Backward Test Success,Message\r\n"
             "Evil.</script><b>bold</b>.0,error, ,\"<img src=x onerror=alert(1)>\"\r\n");
  write_file(t / "accuracy_checking_details_20260101000000.csv",
             "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,最大绝对误差,Status,Message\r\n"
             "Evil.</script><b>bold</b>.0.forward.output.0,torch.float64,torch.float32,\"(2,)\",0.5,1.0,error,x\r\n");
  auto r = run_acccheck({"report", t.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = read_file(t / "report.html");
  EXPECT_EQ(html.find("</script><b>"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_NE(html.find("Evil.\\u003c/script>\\u003cb>bold"), std::string::npos);
  if (!chromium_available()) GTEST_SKIP() << "chromium is not installed: report not opened";
  std::string dom = dom_of(t / "report.html", "", t);
  EXPECT_NE(dom.find("data-state=\"ready\""), std::string::npos);
  EXPECT_NE(dom.find("Evil.&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;.0"), std::string::npos);
  EXPECT_EQ(dom.find("<b>bold</b>"), std::string::npos);
  EXPECT_EQ(dom.find("<img src=\"x\""), std::string::npos);
}

// The CSP hashes (script_hash.cpp): FIPS 180-4's examples, one and two padding blocks, base64.
TEST(Report, ScriptHashesAreSha256InBase64AsTheCspWantsThem) {
  using acccheck::host::csp_script_hash;
  EXPECT_EQ(csp_script_hash(""), "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
  EXPECT_EQ(csp_script_hash("abc"), "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='");
  // 56 bytes: the length no longer fits the first padding block.
  EXPECT_EQ(csp_script_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "'sha256-JI1qYdIGOLjlwCaTDD5gOaM85Flk/yFn9uzt1BnbBsE='");
  const std::uint8_t two[] = {0xfb, 0xff};
  EXPECT_EQ(acccheck::host::base64(two, 2), "+/8=");
  EXPECT_EQ(acccheck::host::base64(two, 1), "+w==");
}

// Tooltips and every other cell render text only, and the page's CSP runs its own three scripts
// and nothing else: hostile names, dtypes and messages hovered with a real mouse in headless
// Chromium (DevTools protocol: tests/e2e/report_hover.py), column by column.
TEST(Report, HoveringEveryColumnWithHostileValuesRunsNoScript) {
  TempDir t;
  const std::string hostile = "<img src=x onerror=\"window.__pwned=true;document.title='pwned'\">";
  auto cell = [](const std::string& text) {  // a CSV cell holding text exactly
    std::string q = "\"";
    for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  const std::string api = "Evil.x" + hostile + ".0";
  write_file(t / "accuracy_checking_result_20260101000000.csv",
             "API name,Forward Test Success,Backward Test Success,Message\r\n" + cell(api) + ",error,error," + cell(hostile) + "\r\n");
  write_file(t / "accuracy_checking_details_20260101000000.csv",
             "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,最大绝对误差,Status,Message\r\n" + cell(api + ".forward.output.0") +
                 "," + cell(hostile) + "," + cell(hostile) + ",\"(2,)\",0.5,1.0,error," + cell(hostile) + "\r\n");
  auto r = run_acccheck({"report", t.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_file(t / "report.html");
  EXPECT_EQ(html.find("'unsafe-inline'; style"), std::string::npos) << "scripts allowed by hash only";
  EXPECT_NE(html.find("script-src 'sha256-"), std::string::npos);
  if (!chromium_available()) GTEST_SKIP() << "chromium is not installed: report not hovered";
  const std::string cmd = std::string(ACCCHECK_TEST_PYTHON) + " " + shell_quote(std::string(ACCCHECK_SOURCE_DIR) + "/tests/e2e/report_hover.py") +
                          " " + shell_quote(t / "report.html") + " > " + shell_quote(t / "hover.json") + " 2> " + shell_quote(t / "hover.err");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(t / "hover.err");
  const acccheck::Json out = acccheck::parse_json(read_file(t / "hover.json"), "hover.json");
  ASSERT_EQ(out.find("state")->as_string(), "ready") << "the report's scripts did not run under its CSP";
  std::set<std::string> hovered, tipped;
  for (const auto& c : out.find("columns")->items()) {
    const std::string field = c.find("field")->is_string() ? c.find("field")->as_string() : "";
    hovered.insert(field);
    for (const auto& tip : c.find("tooltips")->items()) {
      tipped.insert(field);
      EXPECT_EQ(tip.find("elements")->as_int(), 0) << field << ": the tooltip holds markup: " << tip.find("html")->as_string();
      EXPECT_EQ(tip.find("html")->as_string().find("<img"), std::string::npos) << field;
      if (field == "message") {
        EXPECT_EQ(tip.find("text")->as_string(), hostile) << "shown as the text it is";
      }
    }
  }
  for (const char* f : {"name", "verdict", "deciding", "inputs", "message"}) EXPECT_TRUE(hovered.count(f)) << f << " not hovered";
  EXPECT_TRUE(tipped.count("message")) << "the message's tooltip was not shown: " << read_file(t / "hover.json");
  EXPECT_EQ(out.find("script")->find("pwned")->as_bool(), false) << read_file(t / "hover.json");
  EXPECT_NE(out.find("script")->find("title")->as_string(), "pwned");
}

// A large run: 6,000 APIs (the table renders only visible rows past 2,000; both sides' metrics
// are kept for flagged APIs and the first 5,000).
TEST(Report, ALargeRunOpensAndKeepsTheSidesOfFlaggedApis) {
  TempDir t;
  const std::string header = "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,最大绝对误差,双百指标,双千指标,双万指标,"
                             "二进制一致错误率,误差均衡性,均方根误差,小值域错误占比,相对误差最大值,相对误差平均值,"
                             "inf/nan错误率,相对误差错误率,绝对误差错误率,ULP误差最大值,ULP误差平均值,ULP误差大于阈值占比,"
                             "Status,Message\r\n";
  std::string npu = header, gpu = header;
  auto row = [](int i, double rmse) {
    return "Functional.gelu." + std::to_string(i) + ".forward.output.0,torch.float64,torch.float32,\"(64,)\",0.99999,1e-06, , , , ,"
           "0.1," + std::to_string(rmse) + ",0,1e-06,1e-07, , , , , , ,pass,\r\n";
  };
  for (int i = 0; i < 6000; ++i) {
    npu += row(i, i % 10 == 0 ? 1e-3 : 1e-4);  // every tenth API: RMSE ratio 10 > 2 (above minimum_err)
    gpu += row(i, 1e-4);
  }
  write_file(t / "npu.csv", npu);
  write_file(t / "gpu.csv", gpu);
  auto c = run_acccheck({"compare", "-npu", t / "npu.csv", "-gpu", t / "gpu.csv", "-o", t / "cmp", "--html"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::string html = read_file(t / "cmp/report.html");
  EXPECT_NE(html.find("\"sided_apis\": 5000"), std::string::npos);
  // API 5990 is flagged (sides kept), 5991 passes past the cap (no sides).
  // Whether an API's output carries "npu" cells: between its output's name and the next API.
  auto sides_of = [&](const std::string& api) {
    const std::size_t at = html.find("\"name\": \"" + api + ".forward.output.0\"");
    EXPECT_NE(at, std::string::npos) << api;
    const std::size_t next = html.find("\"name\": \"Functional.gelu.", at + 20);
    const std::size_t npu_cells = html.find("\"npu\": ", at);
    return npu_cells < next;
  };
  EXPECT_TRUE(sides_of("Functional.gelu.5990"));
  EXPECT_FALSE(sides_of("Functional.gelu.5991"));
  if (!chromium_available()) GTEST_SKIP() << "chromium is not installed: report not opened";
  std::string dom = dom_of(t / "cmp/report.html", "#verdict=error&api=Functional.gelu.5991", t);
  EXPECT_NE(dom.find("data-state=\"ready\""), std::string::npos);
  EXPECT_EQ(text_of(dom, "count-apis"), "6000");
  EXPECT_EQ(text_of(dom, "visible-count"), "600");
  EXPECT_LT(rendered_rows(dom), 100u) << "a large table renders only the rows in view";
  EXPECT_NE(dom.find("are kept for flagged APIs and the first 5000 APIs"), std::string::npos);
}

TEST(Report, BadInputsAreOneLineAndAnEarlierReportSurvives) {
  TempDir t;
  auto none = run_acccheck({"report", t.path()});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_EQ(none.err, "acccheck report: " + t.path() +
                          ": no api_precision_compare_{result,details}_*.csv nor accuracy_checking_{result,details}_*.csv here\n");
  auto missing = run_acccheck({"report"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "acccheck report: a folder is required: acccheck report DIR (see acccheck report --help)\n");

  const std::string header = "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,最大绝对误差,Status,Message\r\n";
  write_file(t / "accuracy_checking_result_20260101000000.csv",
             "API name,Forward Test Success,Backward Test Success,Message\r\nA.relu.0,pass, ,\r\n");
  write_file(t / "accuracy_checking_details_20260101000000.csv",
             header + "A.relu.0.forward.output.0,torch.float64,torch.float32,\"(2,)\",1.0,0.0,pass,\r\n");
  ASSERT_EQ(run_acccheck({"report", t.path()}).exit_code, 0);
  const std::string good = read_file(t / "report.html");
  // A truncated details row: refused naming file and line; the report written before is intact.
  write_file(t / "accuracy_checking_details_20260101000000.csv",
             header + "A.relu.0.forward.output.0,torch.float64,torch.float32,\"(2,)\",1.0,0.0,pass,\r\nA.relu.0.backward.output.0,torch.float64\r\n");
  auto bad = run_acccheck({"report", t.path()});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_EQ(bad.err, "acccheck report: " + t / "accuracy_checking_details_20260101000000.csv" +
                         ": line 3: expected 8 fields, found 2\n");
  EXPECT_EQ(read_file(t / "report.html"), good);
  // A result file that is not one: the header is checked.
  write_file(t / "accuracy_checking_result_20260101000001.csv", "name,x\r\n");
  write_file(t / "accuracy_checking_details_20260101000001.csv", header);
  auto wrong = run_acccheck({"report", t.path()});
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_EQ(wrong.err, "acccheck report: " + t / "accuracy_checking_result_20260101000001.csv" +
                           ": line 1: expected a header starting with 'API name'\n");
  fs::remove(t / "accuracy_checking_result_20260101000001.csv");
  fs::remove(t / "accuracy_checking_details_20260101000001.csv");
  write_file(t / "accuracy_checking_details_20260101000000.csv",
             header + "A.relu.0.forward.output.0,torch.float64,torch.float32,\"(2,)\",1.0,0.0,pass,\r\n");
  // The destination is a symlink: refused, never followed.
  write_file(t / "elsewhere.html", "untouched");
  fs::create_symlink(t / "elsewhere.html", t / "link.html");
  auto link = run_acccheck({"report", t.path(), "-o", t / "link.html"});
  EXPECT_EQ(link.exit_code, 4);
  EXPECT_NE(link.err.find("refusing to write through a symbolic link"), std::string::npos) << link.err;
  EXPECT_EQ(read_file(t / "elsewhere.html"), "untouched");
  // A dump.json that is not JSON.
  write_file(t / "dump.json", "{\"task\": ");
  auto dump = run_acccheck({"report", t.path(), "--dump", t / "dump.json"});
  EXPECT_EQ(dump.exit_code, 3);
  EXPECT_EQ(dump.err.rfind("acccheck report: " + t / "dump.json", 0), 0u) << dump.err;
  EXPECT_EQ(std::count(dump.err.begin(), dump.err.end(), '\n'), 1) << dump.err;
}

// Issue 25: texts from the dump and the command line never become code — a dump folder whose name
// holds a newline and a C++ statement stays inside a string literal — and non-finite scalars are
// written as what they are (NaN had compiled as `value(nan)` → an IValue(true): the replay
// multiplied by 1; -inf did not compile).
TEST_F(Demo, ReproKeepsHostileTextsInStringsAndNonFiniteScalarsAsThemselves) {
  TempDir t;
  const std::string folder = t / "d\nint injected = std::system(\"touch owned\"); //";
  fs::create_directories(folder);
  const std::string tensor = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4], \"Max\": 1.0, "
                             "\"Min\": -1.0, \"Mean\": 0.0, \"Norm\": 1.0, \"requires_grad\": false}";
  acccheck::test::write_file(folder + "/dump.json",
      "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": {"
      "\"Aten.mul.0.forward\": {\"input_args\": [" + tensor + ", {\"type\": \"float\", \"value\": NaN}], \"input_kwargs\": {}, "
      "\"output\": [], \"acccheck_op\": \"aten::mul.Scalar(self, other)\"},"
      "\"Aten.add.0.forward\": {\"input_args\": [" + tensor + ", {\"type\": \"float\", \"value\": -Infinity}], \"input_kwargs\": "
      "{\"alpha\": {\"type\": \"int\", \"value\": 1}}, \"output\": [], \"acccheck_op\": \"aten::add.Scalar(self, other, alpha)\"}}}");
  auto nan = run_acccheck({"repro", "Aten.mul.0", "--dump", folder + "/dump.json", "--device", "cpu", "-o", t / "nan"});
  ASSERT_EQ(nan.exit_code, 0) << nan.err;
  const std::string code = read_file(t / "nan/repro.cpp");
  EXPECT_EQ(code.find("\nint injected"), std::string::npos) << "the folder name became a line of code";
  EXPECT_NE(code.find("const char* kDump = \""), std::string::npos);
  EXPECT_NE(code.find("\\012int injected = std::system(\\\"touch owned\\\"); //"), std::string::npos) << code.substr(0, 3000);
  EXPECT_NE(code.find("value(static_cast<double>(NAN))"), std::string::npos);
  EXPECT_EQ(read_file(t / "nan/README.md").find("\nint injected"), std::string::npos);
  // The printed build command is shell-quoted: pasted, it names the folder and runs nothing else.
  EXPECT_NE(nan.out.find("  build: cmake -S '" + (t / "nan") + "' -B '" + (t / "nan/build") + "'"), std::string::npos) << nan.out;
  auto inf = run_acccheck({"repro", "Aten.add.0", "--dump", folder + "/dump.json", "--device", "cpu", "-o", t / "inf"});
  ASSERT_EQ(inf.exit_code, 0) << inf.err;
  EXPECT_NE(read_file(t / "inf/repro.cpp").find("value(-static_cast<double>(INFINITY))"), std::string::npos);
  // Built and run: x · NaN is NaN everywhere (4 non-finite outputs), x + -inf is -inf everywhere.
  for (const char* which : {"nan", "inf"}) {
    TempDir b;
    std::string build = acccheck::test::build_cmake_project(t / which, b);
    const std::string log = t / (std::string(which) + ".log");
    ASSERT_EQ(std::system(("cd " + shell_quote(t.path()) + " && " + shell_quote(build + "/repro") + " > " + shell_quote(log) +
                           " 2>&1").c_str()),
              0)
        << read_file(log);
    EXPECT_NE(read_file(log).find("nan/inf 4"), std::string::npos) << which << ": " << read_file(log);
    EXPECT_FALSE(fs::exists(t / "owned"));
  }
}

// Tensor-list arguments: the in-place foreach family optimizers and clipping run on CUDA and NPU
// (`_foreach_add_(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha) -> ()`) and index's `Tensor?[]`
// (None items kept). repro had refused them ("a list of torch.Tensor is not supported"); a call that
// returns nothing is judged on what it wrote, as run_ut judges it. Each tensor's inputs are copies
// on either side: with `--device cpu` the device's call had written the very tensors the benchmark
// was then made from.
TEST_F(Demo, ReproRebuildsTensorListsAndJudgesWhatAForeachCallWrote) {
  TempDir t;
  auto tensor = [](const std::string& shape, const std::string& dtype, double lo, double hi) {
    return "{\"type\": \"torch.Tensor\", \"dtype\": \"" + dtype + "\", \"shape\": " + shape + ", \"Max\": " +
           std::to_string(hi) + ", \"Min\": " + std::to_string(lo) + ", \"Mean\": 0.0, \"Norm\": 1.0, \"requires_grad\": false}";
  };
  const std::string a = tensor("[4]", "torch.float32", -1, 1), b = tensor("[2, 3]", "torch.float32", -2, 2);
  write_file(t / "dump.json",
      "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": {"
      "\"Aten._foreach_add_.0.forward\": {\"input_args\": [[" + a + ", " + b + "], [" + a + ", " + b + "]], "
      "\"input_kwargs\": {\"alpha\": {\"type\": \"int\", \"value\": 2}}, \"output\": [], "
      "\"acccheck_op\": \"aten::_foreach_add_.List(self, other, alpha)\"},"
      "\"Aten.index.0.forward\": {\"input_args\": [" + tensor("[3, 5]", "torch.float32", -1, 1) + ", [null, " +
      tensor("[3]", "torch.int64", 0, 4) + "]], \"input_kwargs\": {}, \"output\": [], "
      "\"acccheck_op\": \"aten::index.Tensor(self, indices)\"}}}");
  auto foreach = run_acccheck({"repro", "Aten._foreach_add_.0", "--dump", t / "dump.json", "-o", t / "foreach"});
  ASSERT_EQ(foreach.exit_code, 0) << foreach.err;
  const std::string code = read_file(t / "foreach/repro.cpp");
  EXPECT_NE(code.find("named(\"self\", tensors({tensor({4}, at::kFloat, -1, 1), tensor({2, 3}, at::kFloat, -2, 2)}))"),
            std::string::npos) << code.substr(0, 3000);
  auto index = run_acccheck({"repro", "Aten.index.0", "--dump", t / "dump.json", "--device", "cpu", "-o", t / "index"});
  ASSERT_EQ(index.exit_code, 0) << index.err;
  EXPECT_NE(read_file(t / "index/repro.cpp").find("tensors({value(c10::IValue()), tensor({3}, at::kLong, 0, 4)})"),
            std::string::npos) << read_file(t / "index/repro.cpp").substr(0, 3000);

  TempDir fb;
  const std::string repro = shell_quote(acccheck::test::build_cmake_project(t / "foreach", fb) + "/repro");
  write_file(t / "faults.yaml", "seed: 1\nfaults:\n  - {op: \"aten::_foreach_add_\", kind: rel_noise, magnitude: 1.0e-2}\n");
  const auto healthy = run_repro(repro, t / "healthy.log"), cpu = run_repro(repro + " --device cpu", t / "cpu.log");
  const auto faulty = run_repro("ACCCHECK_NPUSIM_FAULTS=" + shell_quote(t / "faults.yaml") + " " + repro, t / "faulty.log");
  // Two written tensors, two outputs, each judged: the float32 sums against float64 ones on a healthy
  // device (a copy of the inputs each side, so the benchmark did not add twice), ±1 % noise planted.
  ASSERT_EQ(healthy.size(), 2u) << read_file(t / "healthy.log");
  ASSERT_EQ(cpu.size(), 2u) << read_file(t / "cpu.log");
  ASSERT_EQ(faulty.size(), 2u) << read_file(t / "faulty.log");
  EXPECT_NE(read_file(t / "healthy.log").find("output 1  Float    [2, 3]"), std::string::npos) << read_file(t / "healthy.log");
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_LT(healthy[i], 1e-5) << read_file(t / "healthy.log");
    EXPECT_LT(cpu[i], 1e-5) << read_file(t / "cpu.log");
    EXPECT_GT(faulty[i], 1e-3) << read_file(t / "faulty.log");
  }
  TempDir ib;
  const auto indexed = run_repro(shell_quote(acccheck::test::build_cmake_project(t / "index", ib) + "/repro"), t / "index.log");
  ASSERT_EQ(indexed.size(), 1u) << read_file(t / "index.log");
  EXPECT_NE(read_file(t / "index.log").find("output 0  Float    [3, 3]"), std::string::npos) << read_file(t / "index.log");
  EXPECT_EQ(indexed[0], 0.0) << read_file(t / "index.log");  // a gather: the same elements
}

// An operator with a dropout inside (the attention's dropout_p here) is reproduced as run_ut replays
// it: switched off on both sides, and the reproducer says so. With the recorded 0.5 each side drew
// its own mask and a healthy device differed by half its elements.
TEST_F(Demo, ReproSwitchesOffTheDropoutInsideAnOperator) {
  if (std::string(ACCCHECK_TORCH_FULL_VERSION).rfind("1.", 0) == 0)
    GTEST_SKIP() << "LibTorch " << ACCCHECK_TORCH_FULL_VERSION << " has no aten::scaled_dot_product_attention";
  TempDir t;
  const std::string qkv = "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [1, 2, 4, 8], \"Max\": 1.0, "
                          "\"Min\": -1.0, \"Mean\": 0.0, \"Norm\": 1.0, \"requires_grad\": false}";
  write_file(t / "dump.json",
      "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": {"
      "\"Aten.scaled_dot_product_attention.0.forward\": {\"input_args\": [" + qkv + ", " + qkv + ", " + qkv +
      ", null, {\"type\": \"float\", \"value\": 0.5}, {\"type\": \"bool\", \"value\": false}], \"input_kwargs\": {}, "
      "\"output\": [], \"acccheck_op\": \"aten::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal)\"}}}");
  auto r = run_acccheck({"repro", "Aten.scaled_dot_product_attention.0", "--dump", t / "dump.json", "--device", "cpu", "-o", t / "r"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  TempDir b;
  const std::string log = t / "run.log";
  const auto rels = run_repro(shell_quote(acccheck::test::build_cmake_project(t / "r", b) + "/repro"), log);
  const std::string text = read_file(log);
  EXPECT_NE(text.find("dropout_p 0.5 switched off"), std::string::npos) << text;
  ASSERT_FALSE(rels.empty()) << text;
  EXPECT_LT(rels[0], 1e-5) << text;
}
