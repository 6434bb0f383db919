#include "standards/standards_setup.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "config/yaml_settings.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

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

YAML::Node merged_standards(const PluginRegistry& registry, const PluginSearch& search,
                            const std::optional<std::string>& user_file) {
  std::string shipped = shipped_standards_file(registry, search);
  if (shipped.empty())
    throw StandardsError("standards.yaml not found in the plugin folders (" + std::to_string(search.dirs.size()) +
                         " searched)");
  YAML::Node standards = load_yaml_file(shipped);
  if (!user_file) return standards;
  YAML::Node user = load_yaml_file(*user_file);
  if (!(user["standards"] && user["standards"].IsMap())) return merge_yaml(standards, user);
  // A standard defined only by the user is tried before the built-in ones.
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
  return standards;
}

}  // namespace

Standards load_standards(const PluginRegistry& registry, const PluginSearch& search,
                         const std::optional<std::string>& user_file) {
  Standards s;
  try {
    flatten_yaml(merged_standards(registry, search, user_file), "", s.flat);
  } catch (const StandardsError&) {
    throw;
  } catch (const std::exception& e) {
    throw StandardsError(e.what());
  }
  try {
    s.selector = std::make_unique<StandardSelector>(s.flat);
  } catch (const std::exception& e) {
    throw MetricPluginError(e.what());
  }
  for (const auto& [info, metric] : registry.metrics()) {
    std::string id(metric->standard_id());
    try {
      metric->configure(s.flat.section("standards/" + id));
    } catch (const std::exception& e) {
      throw MetricPluginError("metric plugin '" + info->name + "' (" + info->file + "): configure failed: " + e.what());
    }
    if (!s.by_standard.emplace(id, metric).second)
      throw MetricPluginError("two metric plugins implement standard '" + id + "'; remove one (see acccheck plugins)");
  }
  for (const auto& id : s.selector->all_standards())
    if (!s.by_standard.count(id))
      throw MetricPluginError("no metric plugin implements standard '" + id +
                              "' (named in standards.yaml); check `acccheck plugins`");
  return s;
}

}  // namespace acccheck::host
