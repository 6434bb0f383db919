#include "standards/standards_setup.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>

#include <acccheck/number_format.hpp>

#include "config/yaml_settings.hpp"

namespace fs = std::filesystem;

namespace acccheck::core {

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

// Every field of a standards file has a type and a range: a wrong one is refused naming the file
// and the key, never taken as something else (a NaN threshold made a 5000x ratio pass; an order
// that is not a list moved APIs to another standard).
void validate_standards(const YAML::Node& root, const std::string& file) {
  auto fail = [&](const std::string& key, const std::string& expected, const YAML::Node& n) {
    std::string found = n.IsScalar() ? "'" + n.Scalar() + "'" : n.IsMap() ? "a mapping" : n.IsSequence() ? "a list" : "nothing";
    throw StandardsError(file + ": line " + std::to_string(n.Mark().line + 1) + ": key '" + key + "': expected " +
                         expected + ", found " + found);
  };
  auto strings = [&](const std::string& key, const YAML::Node& n) {
    if (!n.IsSequence()) fail(key, "a list of names", n);
    for (const auto& item : n)
      if (!item.IsScalar()) fail(key, "a list of names", item);
  };
  auto finite_number = [&](const std::string& key, const YAML::Node& n) {
    auto v = n.IsScalar() ? parse_python_float(n.Scalar()) : std::nullopt;
    if (!v || !std::isfinite(*v)) fail(key, "a finite number", n);
  };
  if (!root || root.IsNull()) return;
  if (!root.IsMap()) fail("<document>", "a mapping with selection, notes and standards", root);
  for (const auto& top : root) {
    const std::string key = top.first.as<std::string>();
    const YAML::Node& v = top.second;
    if (key == "selection") {
      if (!v.IsMap()) fail(key, "a mapping", v);
      for (const auto& kv : v) {
        const std::string k = kv.first.as<std::string>();
        const std::string path = "selection/" + k;
        if (k == "order" || k == "float_dtypes" || k == "unsupported_dtypes" || k == "reduced_gradient_of") strings(path, kv.second);
        else if (k == "default" || k == "fp8_output" || k == "fp8_input" || k == "non_float" || k == "reduced_gradient") {
          if (!kv.second.IsScalar()) fail(path, "a standard id", kv.second);
        } else {
          fail(path,
               "one of order, default, fp8_output, fp8_input, non_float, float_dtypes, unsupported_dtypes, "
               "reduced_gradient, reduced_gradient_of",
               kv.first);
        }
      }
    } else if (key == "notes") {
      if (!v.IsMap()) fail(key, "a mapping of API names to text", v);
      for (const auto& kv : v)
        if (!kv.second.IsScalar()) fail("notes/" + kv.first.as<std::string>(), "a text", kv.second);
    } else if (key == "standards") {
      if (!v.IsMap()) fail(key, "a mapping of standard ids", v);
      for (const auto& std_kv : v) {
        const std::string id = std_kv.first.as<std::string>();
        if (!std_kv.second.IsMap()) fail("standards/" + id, "a mapping of thresholds", std_kv.second);
        for (const auto& kv : std_kv.second) {
          const std::string path = "standards/" + id + "/" + kv.first.as<std::string>();
          if (kv.first.as<std::string>() == "apis") {
            strings(path, kv.second);
          } else if (kv.first.as<std::string>() == "reference_shared" || kv.first.as<std::string>() == "nonfinite_outputs") {
            // The switches among the thresholds (absolute_threshold, ulp_compare: a rate the GPU shares;
            // benchmark: NaN/inf outputs); docs/compat.md.
            if (!kv.second.IsScalar() || (kv.second.Scalar() != "pass" && kv.second.Scalar() != "error"))
              fail(path, "pass or error", kv.second);
          } else if (kv.second.IsMap()) {
            for (const auto& d : kv.second) finite_number(path + "/" + d.first.as<std::string>(), d.second);
          } else {
            finite_number(path, kv.second);
          }
        }
      }
    } else {
      fail(key, "selection, notes or standards", top.first);
    }
  }
}

YAML::Node merged_standards(const PluginRegistry& registry, const PluginSearch& search,
                            const std::optional<std::string>& user_file) {
  std::string shipped = shipped_standards_file(registry, search);
  if (shipped.empty())
    throw StandardsError("standards.yaml not found in the plugin folders (" + std::to_string(search.dirs.size()) +
                         " searched)");
  YAML::Node standards = load_yaml_file(shipped);
  validate_standards(standards, shipped);
  if (!user_file) return standards;
  YAML::Node user = load_yaml_file(*user_file);
  validate_standards(user, *user_file);
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

}  // namespace acccheck::core
