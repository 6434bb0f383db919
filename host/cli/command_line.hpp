// Command-line parsing shared by all commands: msprobe's spellings are rewritten to acccheck's long
// options first (so `-api_info x` and `--api-info x` are the same thing), then Boost.Program_options
// parses, then --config FILE.yaml fills what the command line left unset (command line wins).
#pragma once

#include <boost/program_options.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace acccheck::host {

namespace po = boost::program_options;

struct CommandSpec {
  std::string name;
  std::string summary;
  std::function<void(po::options_description&)> add_options;  // command-specific options
  // msprobe spelling → acccheck long option, e.g. {"-api_info", "--api-info"}
  std::vector<std::pair<std::string, std::string>> spellings;
  // nullptr: the command is not available yet; `not_available` says which work brings it.
  std::function<int(const po::variables_map&)> run;
  std::string not_available;
  std::string usage_tail;  // e.g. "-- PROGRAM [ARGS...]"
  // true: --config is the command's own file format (dump's YAML), not a list of option values.
  bool own_config = false;
  // The option a bare argument fills (`acccheck report DIR` → --dir); empty: bare arguments are errors.
  std::string positional;
};

// Rewrites msprobe spellings (exact token, or "-flag=value") into long options.
std::vector<std::string> normalise_spellings(const std::vector<std::string>& args,
                                             const std::vector<std::pair<std::string, std::string>>& spellings);

// Options every command accepts: --help, --log-level, --config, --plugin-dir, --plugin.
void add_common_options(po::options_description& desc);

// Parses args for the command; merges the YAML config (top-level keys and the command's own
// section). Throws po::error or std::runtime_error (config file problems) with one clear line.
po::variables_map parse_command(const CommandSpec& spec, const po::options_description& desc,
                                const std::vector<std::string>& args,
                                std::vector<std::string>* passthrough = nullptr);

}  // namespace acccheck::host
