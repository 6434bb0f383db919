// The table of `acccheck` commands. Each command's flow lives in host/commands/<name>/.
#pragma once

#include <vector>

#include "cli/command_line.hpp"

namespace acccheck::core { struct PluginSearch; }

namespace acccheck::host {

const std::vector<CommandSpec>& all_commands();
int run_main(int argc, char** argv);

// Helpers for commands: the plugin search the common options describe.
core::PluginSearch plugin_search_from(const po::variables_map& vm);

}  // namespace acccheck::host
