// The host-owned registry of loaded plugins: where plugins are looked for, which were loaded,
// which were refused and why. Plugins never register themselves; the host decides what loads.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <acccheck/device_probe.hpp>
#include <acccheck/hook.hpp>
#include <acccheck/metric.hpp>
#include <acccheck/settings.hpp>

#include "plugin_host/plugin_loader.hpp"

namespace acccheck::core {

struct PluginSearch {
  std::vector<std::string> dirs;   // --plugin-dir (in order), then ACCCHECK_PLUGIN_PATH, then built-in
  std::vector<std::string> files;  // --plugin FILE.so: loaded whatever their name says
};

// --plugin-dir values, then ACCCHECK_PLUGIN_PATH entries, then the folder next to the executable
// (build tree: <exe dir>/plugins; installed: <exe dir>/../lib/acccheck/plugins).
std::vector<std::string> plugin_search_dirs(const std::vector<std::string>& cli_dirs);

// The *.so files of a plugin folder, sorted, or a reason to skip the whole folder (missing,
// world-writable, foreign owner). Shared by the registry and `acccheck plugins`.
struct FolderScan {
  std::vector<std::string> files;
  std::optional<std::string> refusal;
};
FolderScan scan_plugin_folder(const std::string& dir);

class PluginRegistry {
 public:
  // Loads files of the given kinds found in search.dirs (recognised by their file name), and every
  // search.files entry. With all_shared_objects, every *.so in the folders is tried (for listing).
  void load(const PluginSearch& search, const std::set<PluginKind>& kinds, bool all_shared_objects = false);

  const std::vector<LoadedPlugin>& loaded() const { return loaded_; }
  const std::vector<Refusal>& refused() const { return refused_; }
  // Refusals of files named with --plugin: a plugin the user asked for by name must load, so
  // commands treat these as fatal (a folder's plugins are optional).
  const std::vector<Refusal>& explicit_refused() const { return explicit_refused_; }

  std::vector<std::pair<const LoadedPlugin*, MetricPlugin*>> metrics() const;
  std::vector<std::pair<const LoadedPlugin*, HookPlugin*>> hooks() const;
  std::vector<std::pair<const LoadedPlugin*, DeviceProbe*>> devices() const;

  // Settings in the YAML shipped next to a plugin (<file stem>.yaml), empty if there is none.
  // Throws with the YAML file name on a parse error.
  static Settings sidecar_settings(const LoadedPlugin& plugin);

 private:
  void load_one(const std::string& file, std::optional<PluginKind> expected);
  std::vector<LoadedPlugin> loaded_;
  std::vector<Refusal> refused_, explicit_refused_;
  std::set<std::string> seen_real_files_;
};

}  // namespace acccheck::core
