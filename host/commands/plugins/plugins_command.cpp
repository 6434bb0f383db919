#include "commands/plugins/plugins_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <set>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "plugin_host/device_prober.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

void add_plugins_options(po::options_description& desc) {
  desc.add_options()
      ("verbose,v", po::bool_switch(), "also show description, ABI, LibTorch version, details")
      ("probe-timeout", po::value<int>()->default_value(60),
       "seconds a device plugin may take to load and answer available() before it is reported as hung")
      ("probe-devices", po::value<std::vector<std::string>>()->multitoken(),
       "(internal) the child process that opens device plugins for the listing");
}

namespace {

std::string status_of(const core::LoadedPlugin& p) {
  try {
    if (p.kind == PluginKind::hook) {
      auto* hook = dynamic_cast<HookPlugin*>(p.instance.get());
      hook->configure(core::PluginRegistry::sidecar_settings(p));
      return "loaded (" + std::to_string(hook->operator_count()) + " operators)";
    }
    return "loaded";
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

// Device plugin files in the searched folders (same folder checks and de-duplication as the
// registry): these are opened in a child process.
std::vector<std::string> device_files(const core::PluginSearch& search) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& dir : search.dirs) {
    for (const auto& f : core::scan_plugin_folder(dir).files) {  // refused folders: reported by the registry
      if (core::kind_from_file_name(f) != PluginKind::device) continue;
      std::error_code ec;
      std::string real = fs::canonical(f, ec).string();
      if (ec || seen.insert(real).second) out.push_back(f);
    }
  }
  return out;
}

struct Row {
  PluginKind kind;
  std::string name, version, status, file, description, abi, torch;
};

}  // namespace

int run_plugins(const po::variables_map& vm) {
  if (vm.count("probe-devices")) return core::run_probe_child(vm["probe-devices"].as<std::vector<std::string>>());
  const bool verbose = vm["verbose"].as<bool>();
  core::PluginSearch search = plugin_search_from(vm);
  // Hooks and metrics are torch-free and loaded here; devices are probed in a child process.
  core::PluginRegistry registry;
  registry.load(search, {PluginKind::hook, PluginKind::metric}, /*all_shared_objects=*/true);
  std::vector<Row> rows;
  std::vector<core::Refusal> refused = registry.refused();
  for (const auto& p : registry.loaded())
    rows.push_back({p.kind, p.name, p.version, status_of(p), p.file, p.description,
                    std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor), p.torch_version});
  std::set<std::string> names;
  for (const auto& r : rows)
    if (r.kind == PluginKind::device) names.insert(r.name);
  for (const auto& probe : core::probe_devices_in_child(device_files(search), vm["probe-timeout"].as<int>())) {
    if (!probe.loaded) {
      refused.push_back({probe.file, probe.refusal});
    } else if (!names.insert(probe.name).second) {
      refused.push_back({probe.file, "duplicate device plugin name '" + probe.name + "'"});
    } else {
      rows.push_back({PluginKind::device, probe.name, probe.version, probe.status, probe.file, probe.description,
                      probe.abi, probe.torch_version});
    }
  }

  std::cout << "Plugin folders:";
  for (const auto& d : search.dirs) std::cout << " " << d;
  std::cout << "\n\n";
  std::cout << std::left << std::setw(8) << "KIND" << std::setw(28) << "NAME" << std::setw(9) << "VERSION"
            << "STATUS\n";
  for (auto kind : {PluginKind::hook, PluginKind::device, PluginKind::metric}) {
    for (const auto& r : rows) {
      if (r.kind != kind) continue;
      std::cout << std::left << std::setw(8) << to_string(r.kind) << std::setw(28) << r.name << std::setw(9)
                << r.version << r.status << "\n";
      std::cout << "        file: " << r.file << "\n";
      if (verbose)
        std::cout << "        " << r.description << "\n"
                  << "        ABI " << r.abi << ", LibTorch " << (r.torch.empty() ? "not used" : r.torch) << "\n";
    }
  }
  if (!refused.empty()) {
    std::cout << "\nRefused:\n";
    for (const auto& r : refused) std::cout << "  " << r.line() << "\n";
    for (const auto& r : refused) std::cerr << "acccheck: warning: " << r.line() << "\n";
  }
  return kExitOk;
}

}  // namespace acccheck::host
