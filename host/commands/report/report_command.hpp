// `acccheck report DIR`: the HTML report of a compare or run_ut output folder (also written by
// `compare --html` and by `demo`).
#pragma once

#include <string>

#include "cli/command_line.hpp"
#include "commands/report/report_model.hpp"

namespace acccheck::host {

void add_report_options(po::options_description& desc);
int run_report(const po::variables_map& vm);

// Builds and writes the report atomically (never through a symlink); returns the file written.
// Throws ReportError / std::runtime_error with one line naming the file.
std::string write_report(const ReportSources& sources, const std::string& out_file);

}  // namespace acccheck::host
