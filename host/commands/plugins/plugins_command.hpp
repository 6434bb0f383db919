// `acccheck plugins [-v]`: what loaded, what is available, what was refused and why (our gst-inspect).
#pragma once

#include "cli/command_line.hpp"

namespace acccheck::host {

void add_plugins_options(po::options_description& desc);
int run_plugins(const po::variables_map& vm);

}  // namespace acccheck::host
