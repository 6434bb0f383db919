// `acccheck repro ENTRY --dump DUMP.json [--device NAME]`: a standalone C++ program and CMakeLists
// rebuilding one dumped API call (random inputs from the recorded statistics, or the dump's real
// tensors) that runs it on the device and on the CPU benchmark and prints the metrics — something
// to attach to a bug report. Torch-free: it writes source text.
#pragma once

#include "cli/command_line.hpp"

namespace acccheck::host {

void add_repro_options(po::options_description& desc);
int run_repro(const po::variables_map& vm);

}  // namespace acccheck::host
