// YAML → flat Settings (acccheck/settings.hpp): nested maps join keys with '/', sequences use
// their index. Keeps yaml-cpp inside the host so plugins do not depend on it.
#pragma once

#include <string>

#include <acccheck/settings.hpp>

namespace YAML { class Node; }

namespace acccheck::core {

void flatten_yaml(const YAML::Node& node, const std::string& prefix, Settings& out);
// Throws "<file>: line L, column C: <yaml-cpp message>" on a parse error.
Settings load_yaml_settings(const std::string& file);
YAML::Node load_yaml_file(const std::string& file);

}  // namespace acccheck::core
