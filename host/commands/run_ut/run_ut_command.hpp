// `acccheck run_ut`: replay every API of a dump on a device and on the CPU benchmark.
// The flow, top-down: api_list (what to run) → shard (which part is ours) → result_files (where
// rows go, resume) → worker_pool (acccheck-replay processes do the torch work) → rows written in
// dump order → progress and summary. `acccheck merge` joins the outputs of shards.
#pragma once

#include "cli/command_line.hpp"

namespace acccheck::host {

void add_run_ut_options(po::options_description& desc);
int run_run_ut(const po::variables_map& vm);

void add_merge_options(po::options_description& desc);
int run_merge(const po::variables_map& vm);

}  // namespace acccheck::host
