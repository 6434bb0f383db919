// Exit codes of `acccheck`, documented in `acccheck --help`.
#pragma once

namespace acccheck::host {

enum ExitCode : int {
  kExitOk = 0,
  kExitGateFailed = 1,     // compare --fail-on: some API reached the given verdict
  kExitUsage = 2,          // bad command line / config, or a command that is not available yet
  kExitInput = 3,          // an input file is missing, unreadable or malformed
  kExitOutput = 4,         // an output cannot be written
  kExitPlugin = 5,         // a plugin the command needs is missing or was refused
  kExitInternal = 70,      // a bug: please report it
};

inline constexpr const char* kExitCodeHelp =
    "Exit codes:\n"
    "  0   success\n"
    "  1   compare --fail-on LEVEL: at least one API reached LEVEL\n"
    "  2   usage error (bad option, bad config file) or command not available yet\n"
    "  3   input error (missing, unreadable or malformed input file)\n"
    "  4   output error (output cannot be written, symlinked output)\n"
    "  5   plugin error (a needed plugin is missing or was refused)\n"
    "  70  internal error\n";

}  // namespace acccheck::host
