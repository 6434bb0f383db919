#include "commands/plugins/plugins_command.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace acccheck::host {

void add_plugins_options(po::options_description& desc) {
  desc.add_options()("verbose,v", po::bool_switch(), "also show description, ABI, LibTorch version, details");
}

namespace {

std::string status_of(const LoadedPlugin& p) {
  try {
    if (p.kind == PluginKind::device) {
      auto* device = dynamic_cast<DeviceProbe*>(p.instance.get());
      device->configure(PluginRegistry::sidecar_settings(p));
      Availability a = device->available();
      return a.available ? "available" : "unavailable: " + a.reason;
    }
    if (p.kind == PluginKind::hook) {
      auto* hook = dynamic_cast<HookPlugin*>(p.instance.get());
      hook->configure(PluginRegistry::sidecar_settings(p));
      return "loaded (" + std::to_string(hook->operator_count()) + " operators)";
    }
    return "loaded";
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

int run_plugins(const po::variables_map& vm) {
  bool verbose = vm["verbose"].as<bool>();
  PluginRegistry registry;
  PluginSearch search = plugin_search_from(vm);
  registry.load(search, {PluginKind::hook, PluginKind::device, PluginKind::metric}, /*all_shared_objects=*/true);

  std::cout << "Plugin folders:";
  for (const auto& d : search.dirs) std::cout << " " << d;
  std::cout << "\n\n";
  std::cout << std::left << std::setw(8) << "KIND" << std::setw(28) << "NAME" << std::setw(9) << "VERSION"
            << "STATUS\n";
  for (auto kind : {PluginKind::hook, PluginKind::device, PluginKind::metric}) {
    for (const auto& p : registry.loaded()) {
      if (p.kind != kind) continue;
      std::cout << std::left << std::setw(8) << to_string(p.kind) << std::setw(28) << p.name << std::setw(9)
                << p.version << status_of(p) << "\n";
      std::cout << "        file: " << p.file << "\n";
      if (verbose) {
        std::cout << "        " << p.description << "\n"
                  << "        ABI " << p.abi_major << "." << p.abi_minor << ", LibTorch "
                  << (p.torch_version.empty() ? "not used" : p.torch_version) << "\n";
      }
    }
  }
  if (!registry.refused().empty()) {
    std::cout << "\nRefused:\n";
    for (const auto& r : registry.refused()) std::cout << "  " << r.line() << "\n";
    for (const auto& r : registry.refused()) std::cerr << "acccheck: warning: " << r.line() << "\n";
  }
  return kExitOk;
}

}  // namespace acccheck::host
