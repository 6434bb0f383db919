#pragma once
#include "cli/command_line.hpp"
namespace acccheck::host { void add_compare_options(po::options_description&); int run_compare(const po::variables_map&); }
