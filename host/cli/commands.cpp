#include "cli/commands.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>

#include "build_info.hpp"
#include "cli/exit_codes.hpp"
#include "cli/logging.hpp"
#include "commands/compare/compare_command.hpp"
#include "commands/dump/dump_command.hpp"
#include "commands/demo/demo_command.hpp"
#include "commands/plugins/plugins_command.hpp"
#include "commands/report/report_command.hpp"
#include "commands/repro/repro_command.hpp"
#include "commands/run_ut/run_ut_command.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace acccheck::host {

core::PluginSearch plugin_search_from(const po::variables_map& vm) {
  core::PluginSearch s;
  std::vector<std::string> cli_dirs;
  if (vm.count("plugin-dir")) cli_dirs = vm["plugin-dir"].as<std::vector<std::string>>();
  s.dirs = core::plugin_search_dirs(cli_dirs);
  if (vm.count("plugin")) s.files = vm["plugin"].as<std::vector<std::string>>();
  return s;
}

namespace {

const std::vector<std::pair<std::string, std::string>> kRunUtSpellings = {
    {"-api_info", "--api-info"}, {"--api_info_file", "--api-info"}, {"--out_path", "--out"},
    {"-save_error_data", "--save-error-data"}, {"--jit_compile", "--jit-compile"},
    {"-csv_path", "--csv-path"}, {"--result_csv_path", "--csv-path"}, {"--filter_api", "--filter-api"},
    {"-config", "--msprobe-config"}, {"--config_path", "--msprobe-config"}, {"--num_splits", "--num-splits"},
    {"-forward", "--forward"}, {"--forward_input_file", "--forward"}, {"-backward", "--backward"},
    {"--backward_input_file", "--backward"}, {"-real_data_path", "--real-data-path"},
};

const std::vector<std::pair<std::string, std::string>> kCompareSpellings = {
    {"-npu", "--npu"}, {"--npu_csv_path", "--npu"}, {"-gpu", "--gpu"}, {"--gpu_csv_path", "--gpu"},
    {"--out_path", "--out"},
};

void print_general_help() {
  std::cout << "acccheck " << build_info::version
            << " - find the PyTorch operators whose results are numerically wrong on an accelerator\n\n"
               "Usage: acccheck COMMAND [OPTIONS]\n       acccheck COMMAND --help\n\nCommands:\n";
  for (const auto& c : all_commands()) {
    std::string pad(10 - std::min<std::size_t>(9, c.name.size()), ' ');
    std::cout << "  " << c.name << pad << c.summary << (c.run ? "" : "  [not available yet]") << "\n";
  }
  std::cout << "\nOptions: --help, --version\n\n" << kExitCodeHelp;
}

int not_available(const CommandSpec& spec) {
  std::cerr << "acccheck " << spec.name << ": not available yet: " << spec.not_available << "\n";
  return kExitUsage;
}

// `dump` also needs the program after `--`: run_main calls run_dump with it.
int run_dump_placeholder(const po::variables_map&) { return kExitInternal; }

}  // namespace

const std::vector<CommandSpec>& all_commands() {
  static const std::vector<CommandSpec> commands = {
      {"dump", "capture every operator call of a LibTorch program (SDK or `dump -- PROG`)", add_dump_options,
       {}, run_dump_placeholder, "", "[-- PROGRAM [ARGS...] | --model FILE.pt | --repair DIR]", true, ""},
      {"run_ut", "replay captured calls on a device and on the CPU benchmark; write per-API metrics",
       add_run_ut_options, kRunUtSpellings, run_run_ut, "", "", false, ""},
      {"merge", "join the run_ut outputs of shards (--shard, mpirun, srun) into one pair of CSVs",
       add_merge_options, {{"-api_info", "--api-info"}}, run_merge, "", "", false, ""},
      {"compare", "judge NPU run_ut details against GPU details with the precision standards",
       add_compare_options, kCompareSpellings, run_compare, "", "", false, ""},
      {"plugins", "list hook, device and metric plugins: loaded, available, refused and why",
       add_plugins_options, {}, run_plugins, "", "", false, ""},
      {"report", "write the HTML report of a compare or run_ut output folder", add_report_options, {}, run_report,
       "", "DIR", false, "dir"},
      {"repro", "write a standalone C++ reproducer of one dumped API call (for a bug report)", add_repro_options, {},
       run_repro, "", "ENTRY --dump DUMP.json", false, "entry"},
      {"demo", "dump, run_ut and compare the bundled example end to end", add_demo_options, {}, run_demo, "", "", false, ""},
  };
  return commands;
}

int run_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_general_help();
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << "acccheck " << build_info::version << " (plugin ABI " << kAbiMajor << "." << kAbiMinor
              << ", LibTorch " << build_info::torch_version << ")\n"
              << "built against: " << build_info::torch_origin << "\n";
    return kExitOk;
  }
  const auto& commands = all_commands();
  auto it = std::find_if(commands.begin(), commands.end(), [&](const CommandSpec& c) { return c.name == args[0]; });
  if (it == commands.end()) {
    std::cerr << "acccheck: unknown command '" << args[0] << "' (see acccheck --help)\n";
    return kExitUsage;
  }
  const CommandSpec& spec = *it;
  po::options_description desc("Options for 'acccheck " + spec.name + "'");
  add_common_options(desc);
  spec.add_options(desc);
  std::vector<std::string> rest(args.begin() + 1, args.end());
  po::variables_map vm;
  std::vector<std::string> passthrough;
  try {
    vm = parse_command(spec, desc, rest, spec.name == "dump" ? &passthrough : nullptr);
  } catch (const std::exception& e) {
    std::cerr << "acccheck " << spec.name << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    std::cout << "Usage: acccheck " << spec.name << " [OPTIONS] " << spec.usage_tail << "\n" << spec.summary
              << "\n\n" << desc << "\n" << kExitCodeHelp;
    if (!spec.run) std::cout << "\nNot available yet: " << spec.not_available << "\n";
    return kExitOk;
  }
  try {
    setup_logging(vm["log-level"].as<std::string>());
  } catch (const std::exception& e) {
    std::cerr << "acccheck " << spec.name << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (!spec.run) return not_available(spec);
  try {
    if (spec.name == "dump") return run_dump(vm, passthrough);
    return spec.run(vm);
  } catch (const std::exception& e) {
    std::cerr << "acccheck " << spec.name << ": internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace acccheck::host
