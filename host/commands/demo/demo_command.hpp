// `acccheck demo`: the whole pipeline on the bundled example with no arguments — dump one step of
// the example training program, run_ut on npu-sim with planted defects and on the cpu, compare,
// print the verdicts and write the HTML report. Builds nothing: it runs what the build installed.
#pragma once

#include "cli/command_line.hpp"

namespace acccheck::host {

void add_demo_options(po::options_description& desc);
int run_demo(const po::variables_map& vm);

}  // namespace acccheck::host
