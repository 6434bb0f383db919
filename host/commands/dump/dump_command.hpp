// `acccheck dump`: the launcher side of the dump (torch-free). The engine itself is in capture/.
#pragma once

#include <string>
#include <vector>

#include "cli/command_line.hpp"

namespace acccheck::host {

void add_dump_options(po::options_description& d);
// program_args: what followed `--`. Returns the program's exit status (128 + signal when killed).
int run_dump(const po::variables_map& vm, const std::vector<std::string>& program_args);

}  // namespace acccheck::host
