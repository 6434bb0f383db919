#include "plugin_host/plugin_registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "build_info.hpp"
#include "config/yaml_settings.hpp"
#include "plugin_host/plugin_file_check.hpp"

namespace fs = std::filesystem;

namespace acccheck::core {

namespace {
fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

template <class T>
std::vector<std::pair<const LoadedPlugin*, T*>> of_kind(const std::vector<LoadedPlugin>& all, PluginKind kind) {
  std::vector<std::pair<const LoadedPlugin*, T*>> out;
  for (const auto& p : all)
    if (p.kind == kind) out.emplace_back(&p, dynamic_cast<T*>(p.instance.get()));
  return out;
}
}  // namespace

std::vector<std::string> plugin_search_dirs(const std::vector<std::string>& cli_dirs) {
  std::vector<std::string> dirs = cli_dirs;
  if (const char* env = std::getenv("ACCCHECK_PLUGIN_PATH")) {
    std::string s = env;
    std::size_t start = 0;
    while (start <= s.size()) {
      std::size_t colon = s.find(':', start);
      std::string part = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!part.empty()) dirs.push_back(part);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  fs::path exe_dir = executable_dir();
  if (fs::is_directory(exe_dir / "plugins")) {
    dirs.push_back((exe_dir / "plugins").string());
  } else if (fs::is_directory(exe_dir / ".." / build_info::plugin_relative_dir)) {
    dirs.push_back(fs::weakly_canonical(exe_dir / ".." / build_info::plugin_relative_dir).string());
  }
  return dirs;
}

void PluginRegistry::load_one(const std::string& file, std::optional<PluginKind> expected) {
  std::error_code ec;
  std::string real = fs::canonical(file, ec).string();
  if (!ec && !seen_real_files_.insert(real).second) return;  // same file via another path/link
  auto outcome = load_plugin_file(file, expected);
  if (auto* refusal = std::get_if<Refusal>(&outcome)) {
    refused_.push_back(*refusal);
    return;
  }
  auto& plugin = std::get<LoadedPlugin>(outcome);
  auto dup = std::find_if(loaded_.begin(), loaded_.end(), [&](const LoadedPlugin& p) {
    return p.kind == plugin.kind && p.name == plugin.name;
  });
  if (dup != loaded_.end()) {
    refused_.push_back({file, std::string("duplicate ") + to_string(plugin.kind) + " plugin name '" + plugin.name +
                                  "' (already loaded from " + dup->file + ")"});
    return;
  }
  loaded_.push_back(std::move(plugin));
}

FolderScan scan_plugin_folder(const std::string& dir) {
  FolderScan scan;
  std::error_code ec;
  // Error-code forms throughout: a symlink loop or an unreadable folder is this folder's refusal,
  // never the end of the command.
  bool is_dir = fs::is_directory(dir, ec);
  if (ec) {
    scan.refusal = "cannot read plugin folder: " + ec.message();
  } else if (!is_dir) {
    scan.refusal = "plugin folder does not exist";
  } else if (auto why = unsafe_folder_reason(dir)) {
    scan.refusal = "refused plugin folder: " + *why;
  } else {
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".so") scan.files.push_back(it->path().string());
    if (ec) {
      scan.files.clear();
      scan.refusal = "cannot read plugin folder: " + ec.message();
    }
    std::sort(scan.files.begin(), scan.files.end());
  }
  return scan;
}

void PluginRegistry::load(const PluginSearch& search, const std::set<PluginKind>& kinds, bool all_shared_objects) {
  for (const auto& dir : search.dirs) {
    FolderScan scan = scan_plugin_folder(dir);
    if (scan.refusal) {
      refused_.push_back({dir, *scan.refusal});
      continue;
    }
    for (const auto& f : scan.files) {
      auto kind = kind_from_file_name(f);
      if (kind ? kinds.count(*kind) != 0 : all_shared_objects) load_one(f, kind);
    }
  }
  for (const auto& f : search.files) {
    std::size_t before = refused_.size();
    load_one(f, std::nullopt);
    if (refused_.size() > before) explicit_refused_.push_back(refused_.back());
  }
}

std::vector<std::pair<const LoadedPlugin*, MetricPlugin*>> PluginRegistry::metrics() const {
  return of_kind<MetricPlugin>(loaded_, PluginKind::metric);
}
std::vector<std::pair<const LoadedPlugin*, HookPlugin*>> PluginRegistry::hooks() const {
  return of_kind<HookPlugin>(loaded_, PluginKind::hook);
}
std::vector<std::pair<const LoadedPlugin*, DeviceProbe*>> PluginRegistry::devices() const {
  return of_kind<DeviceProbe>(loaded_, PluginKind::device);
}

Settings PluginRegistry::sidecar_settings(const LoadedPlugin& plugin) {
  fs::path yaml = fs::path(plugin.real_file).replace_extension(".yaml");
  if (!fs::exists(yaml)) return {};
  return load_yaml_settings(yaml.string());
}

}  // namespace acccheck::core
