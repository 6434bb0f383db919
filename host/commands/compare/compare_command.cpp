#include "commands/compare/compare_command.hpp"

#include <yaml-cpp/yaml.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "commands/compare/compare_engine.hpp"
#include "commands/compare/details_table.hpp"
#include "config/yaml_settings.hpp"
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
      ("worst", po::value<std::size_t>()->default_value(10), "how many worst outputs the summary lists")
      ("timestamp", po::value<std::string>(),
       "use this %Y%m%d%H%M%S stamp in the output file names instead of the current time");
}

namespace {

// Deep-merges `over` into `base`: maps merge key by key, anything else is replaced.
YAML::Node merge_yaml(const YAML::Node& base, const YAML::Node& over) {
  if (!over.IsMap() || !base.IsMap()) return YAML::Clone(over);
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    std::string key = kv.first.as<std::string>();
    out[key] = out[key] ? merge_yaml(out[key], kv.second) : YAML::Clone(kv.second);
  }
  return out;
}

std::string shipped_standards_file(const PluginRegistry& registry, const PluginSearch& search) {
  for (const auto& d : search.dirs)
    if (fs::exists(fs::path(d) / "standards.yaml")) return (fs::path(d) / "standards.yaml").string();
  for (const auto& p : registry.loaded())
    if (fs::exists(fs::path(p.real_file).parent_path() / "standards.yaml"))
      return (fs::path(p.real_file).parent_path() / "standards.yaml").string();
  return {};
}

std::string now_timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

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
  PluginRegistry registry;
  PluginSearch search = plugin_search_from(vm);
  registry.load(search, {PluginKind::metric});
  for (const auto& r : registry.refused()) spdlog::warn("{}", r.line());

  YAML::Node standards;
  std::string shipped = shipped_standards_file(registry, search);
  try {
    if (shipped.empty())
      throw std::runtime_error("standards.yaml not found in the plugin folders (" +
                               std::to_string(search.dirs.size()) + " searched)");
    standards = load_yaml_file(shipped);
    if (vm.count("standards")) {
      YAML::Node user = load_yaml_file(vm["standards"].as<std::string>());
      // A standard defined only by the user is tried before the built-in ones.
      if (user["standards"] && user["standards"].IsMap()) {
        YAML::Node order = YAML::Clone(standards["selection"]["order"]);
        if (user["selection"] && user["selection"]["order"]) order = YAML::Clone(user["selection"]["order"]);
        YAML::Node new_order(YAML::NodeType::Sequence);
        for (const auto& kv : user["standards"]) {
          std::string id = kv.first.as<std::string>();
          bool listed = false;
          for (const auto& o : order) listed = listed || o.as<std::string>() == id;
          bool builtin = static_cast<bool>(standards["standards"][id]);
          if (!listed && !builtin && kv.second["apis"]) new_order.push_back(id);
        }
        for (const auto& o : order) new_order.push_back(o.as<std::string>());
        standards = merge_yaml(standards, user);
        standards["selection"]["order"] = new_order;
      } else {
        standards = merge_yaml(standards, user);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitUsage;
  }
  Settings flat;
  flatten_yaml(standards, "", flat);

  std::map<std::string, MetricPlugin*> by_standard;
  std::unique_ptr<StandardSelector> selector;
  try {
    selector = std::make_unique<StandardSelector>(flat);
    for (const auto& [info, metric] : registry.metrics()) {
      std::string id(metric->standard_id());
      try {
        metric->configure(flat.section("standards/" + id));
      } catch (const std::exception& e) {
        throw std::runtime_error("metric plugin '" + info->name + "' (" + info->file + "): configure failed: " + e.what());
      }
      if (!by_standard.emplace(id, metric).second)
        throw std::runtime_error("two metric plugins implement standard '" + id + "'; remove one (see acccheck plugins)");
    }
  } catch (const std::exception& e) {
    std::cerr << "acccheck compare: " << e.what() << "\n";
    return kExitPlugin;
  }
  for (const auto& id : selector->all_standards()) {
    if (!by_standard.count(id)) {
      std::cerr << "acccheck compare: no metric plugin implements standard '" << id
                << "' (named in standards.yaml); check `acccheck plugins`\n";
      return kExitPlugin;
    }
  }

  CompareEngine engine(*selector, by_standard);
  CompareSummary summary(vm["worst"].as<std::size_t>());
  std::string stamp = vm.count("timestamp") ? vm["timestamp"].as<std::string>() : now_timestamp();
  if (stamp.size() != 14 || stamp.find_first_not_of("0123456789") != std::string::npos) {
    std::cerr << "acccheck compare: --timestamp: expected 14 digits (%Y%m%d%H%M%S), found '" << stamp << "'\n";
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
  if (fail_on == "error" && summary.apis_with("error") > 0) return kExitGateFailed;
  if (fail_on == "warning" && (summary.apis_with("error") + summary.apis_with("Warning")) > 0) return kExitGateFailed;
  return kExitOk;
}

}  // namespace acccheck::host
