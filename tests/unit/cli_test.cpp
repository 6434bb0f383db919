// Command-line parsing: msprobe spellings, long forms, and --config merging (command line wins).
#include "cli/commands.hpp"
#include "cli/command_line.hpp"
#include "support/test_support.hpp"

using namespace acccheck::host;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {
const CommandSpec& command(const std::string& name) {
  for (const auto& c : all_commands())
    if (c.name == name) return c;
  throw std::runtime_error("no command " + name);
}

po::variables_map parse(const std::string& name, std::vector<std::string> args) {
  const CommandSpec& spec = command(name);
  po::options_description desc;
  add_common_options(desc);
  spec.add_options(desc);
  std::vector<std::string> passthrough;
  return parse_command(spec, desc, args, name == "dump" ? &passthrough : nullptr);
}
}  // namespace

TEST(Cli, RunUtAcceptsMsprobeSpellings) {
  auto vm = parse("run_ut", {"-api_info", "dump.json", "-o", "out", "-save_error_data", "-j", "-d", "1", "2",
                             "-csv_path", "r.csv", "-f", "-config", "c.json", "-n", "4", "--device", "npu-sim"});
  EXPECT_EQ(vm["api-info"].as<std::string>(), "dump.json");
  EXPECT_EQ(vm["out"].as<std::string>(), "out");
  EXPECT_TRUE(vm["save-error-data"].as<bool>());
  EXPECT_TRUE(vm["jit-compile"].as<bool>());
  EXPECT_EQ(vm["device-id"].as<std::vector<int>>(), (std::vector<int>{1, 2}));
  EXPECT_EQ(vm["csv-path"].as<std::string>(), "r.csv");
  EXPECT_TRUE(vm["filter-api"].as<bool>());
  EXPECT_EQ(vm["msprobe-config"].as<std::string>(), "c.json");
  EXPECT_EQ(vm["num-splits"].as<int>(), 4);
  EXPECT_EQ(vm["device"].as<std::string>(), "npu-sim");
}

TEST(Cli, RunUtAcceptsMsprobeLongFormsAndEqualsSigns) {
  auto vm = parse("run_ut", {"--api_info_file=dump.json", "--out_path", "o", "--result_csv_path", "r.csv"});
  EXPECT_EQ(vm["api-info"].as<std::string>(), "dump.json");
  EXPECT_EQ(vm["out"].as<std::string>(), "o");
  EXPECT_EQ(vm["csv-path"].as<std::string>(), "r.csv");
}

TEST(Cli, CompareAcceptsMsprobeAndLongSpellings) {
  auto a = parse("compare", {"-npu", "n.csv", "-gpu", "g.csv", "-o", "out"});
  auto b = parse("compare", {"--npu", "n.csv", "--gpu", "g.csv", "--out", "out"});
  auto c = parse("compare", {"--npu_csv_path", "n.csv", "--gpu_csv_path", "g.csv", "--out_path", "out"});
  for (auto* vm : {&a, &b, &c}) {
    EXPECT_EQ((*vm)["npu"].as<std::string>(), "n.csv");
    EXPECT_EQ((*vm)["gpu"].as<std::string>(), "g.csv");
    EXPECT_EQ((*vm)["out"].as<std::string>(), "out");
  }
}

TEST(Cli, DumpPassesTheProgramAfterDoubleDash) {
  const CommandSpec& spec = command("dump");
  po::options_description desc;
  add_common_options(desc);
  spec.add_options(desc);
  std::vector<std::string> passthrough;
  auto vm = parse_command(spec, desc, {"--dump-path", "d", "--", "./train", "-o", "x"}, &passthrough);
  EXPECT_EQ(vm["dump-path"].as<std::string>(), "d");
  EXPECT_EQ(passthrough, (std::vector<std::string>{"./train", "-o", "x"}));
}

TEST(Cli, ConfigFileFillsWhatTheCommandLineLeftUnset) {
  TempDir d;
  write_file(d / "c.yaml", "log-level: debug\ncompare:\n  out: from-config\n  gpu: g.csv\n  fail-on: error\nrun_ut:\n  out: ignored\n");
  auto vm = parse("compare", {"--config", d / "c.yaml", "-npu", "n.csv", "-o", "from-cli"});
  EXPECT_EQ(vm["out"].as<std::string>(), "from-cli");  // command line wins
  EXPECT_EQ(vm["gpu"].as<std::string>(), "g.csv");
  EXPECT_EQ(vm["fail-on"].as<std::string>(), "error");
  EXPECT_EQ(vm["log-level"].as<std::string>(), "debug");  // replaces the default
}

TEST(Cli, ConfigFileErrorsNameFileAndKey) {
  TempDir d;
  write_file(d / "c.yaml", "compare:\n  colour: red\n");
  try {
    parse("compare", {"--config", d / "c.yaml"});
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()), d / "c.yaml" + ": section 'compare': unknown option 'colour' for 'acccheck compare'");
  }
  write_file(d / "bad.yaml", "compare: [unclosed\n");
  try {
    parse("compare", {"--config", d / "bad.yaml"});
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).rfind(d / "bad.yaml" + ": line 2, column 1: invalid YAML:", 0), 0u) << e.what();
  }
}

TEST(Cli, UnknownOptionIsAUsageError) {
  EXPECT_THROW(parse("compare", {"--frobnicate"}), po::error);
}

TEST(Cli, NormaliseLeavesOtherTokensAlone) {
  auto out = normalise_spellings({"-npu", "-npuX", "x", "-o=dir"}, {{"-npu", "--npu"}, {"-o", "--out"}});
  EXPECT_EQ(out, (std::vector<std::string>{"--npu", "-npuX", "x", "--out=dir"}));
}
