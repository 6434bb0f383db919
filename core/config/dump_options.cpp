#include "config/dump_options.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace acccheck::core {

bool IndexSelection::contains(std::int64_t v) const {
  if (ranges.empty()) return true;
  return std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) { return v >= r.first && v <= r.second; });
}

std::optional<std::int64_t> IndexSelection::last() const {
  if (ranges.empty()) return std::nullopt;
  std::int64_t m = ranges.front().second;
  for (const auto& r : ranges) m = std::max(m, r.second);
  return m;
}

std::string IndexSelection::text() const {
  std::string s;
  for (const auto& r : ranges) {
    if (!s.empty()) s += ",";
    s += std::to_string(r.first);
    if (r.second != r.first) s += "-" + std::to_string(r.second);
  }
  return s;
}

namespace {

std::int64_t parse_index(const std::string& s, const std::string& item, const std::string& where) {
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || v < 0)
    throw std::runtime_error(where + ": '" + item + "': expected a number >= 0 or a range 'a-b'");
  return v;
}

std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

IndexSelection parse_index_selection(const std::vector<std::string>& items, const std::string& where) {
  IndexSelection sel;
  for (const auto& raw : items) {
    std::stringstream ss(raw);
    std::string part;
    while (std::getline(ss, part, ',')) {
      part = trim(part);
      if (part.empty()) continue;
      auto dash = part.find('-', 1);
      if (dash == std::string::npos) {
        std::int64_t v = parse_index(part, part, where);
        sel.ranges.emplace_back(v, v);
      } else {
        std::int64_t a = parse_index(trim(part.substr(0, dash)), part, where);
        std::int64_t b = parse_index(trim(part.substr(dash + 1)), part, where);
        if (b < a) throw std::runtime_error(where + ": '" + part + "': the range ends before it starts");
        sel.ranges.emplace_back(a, b);
      }
    }
  }
  return sel;
}

const char* stack_mode_name(StackMode m) {
  switch (m) {
    case StackMode::off: return "off";
    case StackMode::python: return "python";
    case StackMode::raw: return "raw";
    case StackMode::full: return "full";
  }
  return "full";
}

std::optional<StackMode> stack_mode_of(const std::string& name) {
  for (StackMode m : {StackMode::off, StackMode::python, StackMode::raw, StackMode::full})
    if (name == stack_mode_name(m)) return m;
  return std::nullopt;
}

namespace {

struct Reader {
  const std::string& source;
  std::string at(const YAML::Node& n, const std::string& key) const {
    return source + ": line " + std::to_string(n.Mark().line + 1) + ": '" + key + "'";
  }
  std::vector<std::string> strings(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsNull()) return out;
    if (n.IsScalar()) {
      out.push_back(n.Scalar());
      return out;
    }
    if (!n.IsSequence()) throw std::runtime_error(at(n, key) + ": expected a list of values");
    for (const auto& item : n) {
      if (!item.IsScalar()) throw std::runtime_error(at(item, key) + ": expected a list of plain values");
      out.push_back(item.Scalar());
    }
    return out;
  }
  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) throw std::runtime_error(at(n, key) + ": expected a single value");
    return n.Scalar();
  }
  bool boolean(const YAML::Node& n, const std::string& key) const {
    std::string s = scalar(n, key);
    if (s == "true" || s == "True" || s == "yes" || s == "on" || s == "1") return true;
    if (s == "false" || s == "False" || s == "no" || s == "off" || s == "0") return false;
    throw std::runtime_error(at(n, key) + ": expected true or false, found '" + s + "'");
  }
  std::size_t count(const YAML::Node& n, const std::string& key) const {
    std::string s = scalar(n, key);
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size() || s.empty() || s[0] == '-' || v == 0)
      throw std::runtime_error(at(n, key) + ": expected a whole number > 0, found '" + s + "'");
    return static_cast<std::size_t>(v);
  }
};

// Keys of msprobe's config.json that mean nothing for an API-level C++ dump.
bool ignored_msprobe_key(const std::string& k) {
  static const char* keys[] = {"level", "framework", "enable_dataloader", "async_dump", "precision",
                               "is_deterministic", "seed", "acl_config", "data_mode", "summary_mode"};
  return std::any_of(std::begin(keys), std::end(keys), [&](const char* x) { return k == x; });
}

void apply_filter_key(DumpOptions& o, const Reader& r, const std::string& key, const YAML::Node& v) {
  if (key == "list") o.list = r.strings(v, key);
  else if (key == "black_list") o.black_list = r.strings(v, key);
  else if (key == "scope") o.scope = r.strings(v, key);
}

}  // namespace

DumpOptions parse_dump_options(const std::string& yaml_text, const std::string& source, DumpOptions o) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(source + ": line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root || root.IsNull()) return o;
  if (!root.IsMap()) throw std::runtime_error(source + ": expected a mapping of dump options");
  Reader r{source};
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "dump_path") o.dump_path = r.scalar(v, key);
    else if (key == "task") o.task = r.scalar(v, key);
    else if (key == "step") o.steps = parse_index_selection(r.strings(v, key), r.at(v, key));
    else if (key == "rank") o.ranks = parse_index_selection(r.strings(v, key), r.at(v, key));
    else if (key == "list" || key == "black_list" || key == "scope") apply_filter_key(o, r, key, v);
    else if (key == "statistics" || key == "tensor") {
      if (!v.IsMap()) throw std::runtime_error(r.at(v, key) + ": expected a section (list, scope, black_list)");
      for (const auto& inner : v) {
        std::string ik = inner.first.as<std::string>();
        if (ik == "list" || ik == "black_list" || ik == "scope") apply_filter_key(o, r, ik, inner.second);
        else if (!ignored_msprobe_key(ik) && ik != "tensor_list" && ik != "file_format")
          throw std::runtime_error(r.at(inner.second, key + "." + ik) + ": unknown key (expected list, scope or black_list)");
      }
    } else if (key == "stack") {
      std::string s = r.scalar(v, key);
      if (auto m = stack_mode_of(s)) o.stack = *m;
      else throw std::runtime_error(r.at(v, key) + ": expected off, python, raw or full, found '" + s + "'");
    } else if (key == "capture_backward_ops") o.capture_backward_ops = r.boolean(v, key);
    else if (key == "exit_after_last_step") o.exit_after_last_step = r.boolean(v, key);
    else if (key == "follow_children") o.follow_children = r.boolean(v, key);
    else if (key == "auto_step") o.auto_step = r.boolean(v, key);
    else if (key == "queue_size") o.queue_size = r.count(v, key);
    else if (key == "queue_bytes") o.queue_bytes = r.count(v, key);
    else if (key == "plugin_dirs") o.plugin_dirs = r.strings(v, key);
    else if (!ignored_msprobe_key(key))
      throw std::runtime_error(r.at(v, key) + ": unknown dump option (expected dump_path, task, step, rank, list, "
                               "black_list, scope, stack, capture_backward_ops, exit_after_last_step, queue_size, "
                               "queue_bytes)");
  }
  return o;
}

DumpOptions load_dump_options_file(const std::string& file, DumpOptions defaults) {
  YAML::Node probe;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_dump_options(ss.str(), file, std::move(defaults));
}

void validate_dump_options(const DumpOptions& o, const std::string& source) {
  if (o.dump_path.empty()) throw std::runtime_error(source + ": dump_path: expected the output folder (--dump-path DIR)");
  if (o.task != "statistics" && o.task != "tensor")
    throw std::runtime_error(source + ": task: expected statistics or tensor, found '" + o.task + "'");
  if (!o.scope.empty() && o.scope.size() != 2)
    throw std::runtime_error(source + ": scope: expected two entry names [first, last], found " +
                             std::to_string(o.scope.size()));
}

std::string dump_options_to_yaml(const DumpOptions& o) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "dump_path" << YAML::Value << YAML::DoubleQuoted << o.dump_path;
  e << YAML::Key << "task" << YAML::Value << o.task;
  auto seq = [&](const char* key, const std::vector<std::string>& v) {
    e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& s : v) e << YAML::DoubleQuoted << s;
    e << YAML::EndSeq;
  };
  auto sel = [&](const char* key, const IndexSelection& s) {
    std::vector<std::string> items;
    for (const auto& r : s.ranges)
      items.push_back(r.first == r.second ? std::to_string(r.first) : std::to_string(r.first) + "-" + std::to_string(r.second));
    seq(key, items);
  };
  sel("step", o.steps);
  sel("rank", o.ranks);
  seq("list", o.list);
  seq("black_list", o.black_list);
  seq("scope", o.scope);
  seq("plugin_dirs", o.plugin_dirs);
  e << YAML::Key << "stack" << YAML::Value << stack_mode_name(o.stack);
  e << YAML::Key << "capture_backward_ops" << YAML::Value << o.capture_backward_ops;
  e << YAML::Key << "exit_after_last_step" << YAML::Value << o.exit_after_last_step;
  e << YAML::Key << "follow_children" << YAML::Value << o.follow_children;
  e << YAML::Key << "auto_step" << YAML::Value << o.auto_step;
  e << YAML::Key << "queue_size" << YAML::Value << o.queue_size;
  e << YAML::Key << "queue_bytes" << YAML::Value << o.queue_bytes;
  e << YAML::EndMap;
  return e.c_str();
}

}  // namespace acccheck::core
