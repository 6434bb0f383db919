#include "config/yaml_settings.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <stdexcept>

namespace acccheck::host {

void flatten_yaml(const YAML::Node& node, const std::string& prefix, Settings& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      for (const auto& kv : node) {
        std::string key = kv.first.as<std::string>();
        flatten_yaml(kv.second, prefix.empty() ? key : prefix + "/" + key, out);
      }
      break;
    case YAML::NodeType::Sequence: {
      std::size_t i = 0;
      for (const auto& item : node) flatten_yaml(item, prefix + "/" + std::to_string(i++), out);
      break;
    }
    case YAML::NodeType::Scalar: out.set(prefix, node.Scalar()); break;
    case YAML::NodeType::Null: out.set(prefix, "~"); break;  // kept: a plugin may mean "None"
    default: break;
  }
}

YAML::Node load_yaml_file(const std::string& file) {
  if (std::filesystem::is_directory(file)) throw std::runtime_error(file + ": is a directory, expected a YAML file");
  if (!std::filesystem::exists(file)) throw std::runtime_error(file + ": no such file");
  try {
    return YAML::LoadFile(file);
  } catch (const YAML::ParserException& e) {
    throw std::runtime_error(file + ": line " + std::to_string(e.mark.line + 1) + ", column " +
                             std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  } catch (const YAML::BadFile&) {
    throw std::runtime_error(file + ": cannot open");
  }
}

Settings load_yaml_settings(const std::string& file) {
  Settings s;
  flatten_yaml(load_yaml_file(file), "", s);
  return s;
}

}  // namespace acccheck::host
