#include "config/yaml_settings.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace acccheck::core {

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

namespace {

constexpr std::uintmax_t kMaxYamlBytes = 16u << 20;
constexpr int kMaxYamlDepth = 200;
constexpr std::size_t kMaxYamlValues = 1000000;

// Before yaml-cpp builds a tree (recursively): refuse documents nested deeper than kMaxYamlDepth,
// counting indentation, leading "- " items and flow brackets, outside quotes.
void check_depth(const std::string& text, const std::string& file) {
  int flow = 0, line = 1;
  bool in_single = false, in_double = false;
  std::size_t i = 0;
  while (i < text.size()) {
    // Start of a line: indentation and block sequence markers.
    int block = 0;
    while (i < text.size() && (text[i] == ' ' || (text[i] == '-' && i + 1 < text.size() && text[i + 1] == ' '))) {
      block += text[i] == '-' ? 2 : 1;
      i += text[i] == '-' ? 2 : 1;
    }
    if (flow == 0 && block / 2 > kMaxYamlDepth)
      throw std::runtime_error(file + ": line " + std::to_string(line) + ": nested deeper than " +
                               std::to_string(kMaxYamlDepth) + " levels; expected a settings file");
    for (; i < text.size() && text[i] != '\n'; ++i) {
      char c = text[i];
      if (c == '#' && !in_single && !in_double) {
        while (i < text.size() && text[i] != '\n') ++i;
        break;
      }
      if (c == '\'' && !in_double) in_single = !in_single;
      else if (c == '"' && !in_single) in_double = !in_double;
      else if (!in_single && !in_double && (c == '[' || c == '{')) {
        if (++flow > kMaxYamlDepth)
          throw std::runtime_error(file + ": line " + std::to_string(line) + ": nested deeper than " +
                                   std::to_string(kMaxYamlDepth) + " levels; expected a settings file");
      } else if (!in_single && !in_double && (c == ']' || c == '}')) {
        if (flow > 0) --flow;
      }
    }
    if (i < text.size()) ++i;
    ++line;
    if (flow == 0) in_single = in_double = false;  // quotes do not span lines in settings files
  }
}

// After parsing: duplicate keys (yaml-cpp keeps the last silently) and alias expansion (a few
// lines of anchors can stand for billions of values: an alias bomb) are refused.
void check_tree(const YAML::Node& node, const std::string& file, std::size_t& values) {
  if (++values > kMaxYamlValues)
    throw std::runtime_error(file + ": more than " + std::to_string(kMaxYamlValues) +
                             " values once aliases are expanded (an alias bomb?); expected a settings file");
  if (node.IsMap()) {
    std::set<std::string> keys;
    for (const auto& kv : node) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "<complex key>";
      if (!keys.insert(key).second)
        throw std::runtime_error(file + ": line " + std::to_string(kv.first.Mark().line + 1) + ": duplicate key '" + key +
                                 "' (each key may appear once)");
      check_tree(kv.second, file, values);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) check_tree(item, file, values);
  }
}

}  // namespace

YAML::Node load_yaml_file(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw std::runtime_error(file + ": is a directory, expected a YAML file");
  if (!std::filesystem::exists(file, ec)) throw std::runtime_error(file + ": no such file");
  if (!std::filesystem::is_regular_file(file, ec))
    throw std::runtime_error(file + ": not a regular file (a pipe, FIFO or device), expected a YAML file");
  auto size = std::filesystem::file_size(file, ec);
  if (!ec && size > kMaxYamlBytes)
    throw std::runtime_error(file + ": " + std::to_string(size) + " bytes, larger than a settings file may be (16 MiB)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  check_depth(text, file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw std::runtime_error(file + ": line " + std::to_string(e.mark.line + 1) + ", column " +
                             std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
  std::size_t values = 0;
  check_tree(root, file, values);
  return root;
}

Settings load_yaml_settings(const std::string& file) {
  Settings s;
  flatten_yaml(load_yaml_file(file), "", s);
  return s;
}

}  // namespace acccheck::core
