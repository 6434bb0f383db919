#include "commands/compare/compare_command.hpp"

#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_timestamp.hpp"
#include "commands/compare/compare_engine.hpp"
#include "commands/compare/details_table.hpp"
#include "commands/report/report_command.hpp"
#include "standards/standards_setup.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

void add_compare_options(po::options_description& desc) {
  desc.add_options()
      ("npu", po::value<std::string>(), "NPU accuracy_checking_details_<ts>.csv (msprobe: -npu)")
      ("gpu", po::value<std::string>(), "GPU (reference) accuracy_checking_details_<ts>.csv (msprobe: -gpu)")
      ("out,o", po::value<std::string>()->default_value("./"), "output folder, created if missing (msprobe: -o)")
      ("standards", po::value<std::string>(),
       "YAML overriding the shipped standards.yaml: API lists, thresholds, selection order")
      ("fail-on", po::value<std::string>()->default_value("never"),
       "exit 1 when any API's verdict reaches this level: error, warning or never")
      ("worst", po::value<long long>()->default_value(10), "how many worst outputs the summary lists")
      ("html", po::bool_switch(), "also write report.html, the HTML report (acccheck report), in the output folder")
      ("dump", po::value<std::string>(), "with --html: the run's dump.json (call order, input shapes, stacks in the report)")
      ("timestamp", po::value<std::string>(),
       "use this %Y%m%d%H%M%S stamp in the output file names instead of the current time");
}

namespace {


}  // namespace

int run_compare(const po::variables_map& vm) {
  if (!vm.count("npu") || !vm.count("gpu")) {
    std::cerr << "acccheck compare: both -npu FILE and -gpu FILE are required (see acccheck compare --help)\n";
    return kExitUsage;
  }
  std::string fail_on = vm["fail-on"].as<std::string>();
  if (fail_on != "error" && fail_on != "warning" && fail_on != "never") {
    std::cerr << "acccheck compare: --fail-on: expected error, warning or never, found '" << fail_on << "'\n";
    return kExitUsage;
  }

  // Only metric plugins: compare never opens a device plugin, so LibTorch is not loaded.
  core::PluginRegistry registry;
  core::PluginSearch search = plugin_search_from(vm);
  registry.load(search, {PluginKind::metric});
  for (const auto& r : registry.refused()) spdlog::warn("{}", r.line());
  if (!registry.explicit_refused().empty()) {
    for (const auto& r : registry.explicit_refused()) std::cerr << "acccheck compare: --plugin " << r.line() << "\n";
    return kExitPlugin;
  }

  core::Standards standards;
  try {
    standards = core::load_standards(registry, search,
                               vm.count("standards") ? std::optional(vm["standards"].as<std::string>()) : std::nullopt);
  } catch (const core::StandardsError& e) {
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitUsage;
  } catch (const core::MetricPluginError& e) {
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitPlugin;
  }

  CompareEngine engine(*standards.selector, standards.by_standard);
  const long long worst = vm["worst"].as<long long>();
  if (worst < 0) {
    std::cerr << "acccheck compare: --worst: expected a whole number >= 0, found " << worst << "\n";
    return kExitUsage;
  }
  CompareSummary summary(static_cast<std::size_t>(worst));
  std::string stamp;
  try {
    stamp = output_timestamp(vm.count("timestamp") ? std::optional(vm["timestamp"].as<std::string>()) : std::nullopt);
  } catch (const std::exception& e) {
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitUsage;
  }
  CompareInputs in{vm["npu"].as<std::string>(), vm["gpu"].as<std::string>(), vm["out"].as<std::string>(), stamp};
  CompareOutputs outputs;
  try {
    outputs = engine.run(in, summary);
  } catch (const InputError& e) {
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitInput;
  } catch (const OutputError& e) {
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitOutput;
  } catch (const PluginFailure& e) {
    // A plugin that throws something other than UnjudgeableRow: name it, write nothing.
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitPlugin;
  }
  summary.print(std::cout);
  std::cout << "  details: " << outputs.details_path << "\n  result:  " << outputs.result_path << "\n";
  if (vm["html"].as<bool>()) {
    ReportSources sources;
    sources.result = outputs.result_path;
    sources.details = outputs.details_path;
    sources.npu_details = in.npu_details;
    sources.gpu_details = in.gpu_details;
    if (vm.count("dump")) sources.dump_json = vm["dump"].as<std::string>();
    const std::string html = (fs::path(in.out_dir) / "report.html").string();
    try {
      write_report(sources, html);
    } catch (const ReportError& e) {
      std::cerr << "acccheck compare: --html: " << e.what() << "\n";
      return kExitInput;
    } catch (const std::exception& e) {
      std::cerr << "acccheck compare: --html: " << e.what() << "\n";
      return kExitOutput;
    }
    std::cout << "  report:  " << html << "\n";
  }
  if (summary.nothing_compared()) {
    std::cerr << "acccheck compare: nothing was compared: none of the " << summary.rows() << " NPU rows of "
              << vm["npu"].as<std::string>() << " has a row in " << vm["gpu"].as<std::string>() << " (another run's file?)"
              << (fail_on != "never" ? "; --fail-on " + fail_on + ": failing" : "") << "\n";
    if (fail_on != "never") return kExitGateFailed;
  }
  if (fail_on == "error" && summary.apis_with("error") > 0) return kExitGateFailed;
  if (fail_on == "warning" && (summary.apis_with("error") + summary.apis_with("Warning")) > 0) return kExitGateFailed;
  return kExitOk;
}

}  // namespace acccheck::host
