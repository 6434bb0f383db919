// `acccheck repro`'s generated code for one dump entry: the block that replaces // @REPRO_CASE@ in
// the program template (assets/repro_main.cpp) — the dump, the operator, and one line of C++ per
// argument — and the real-data files it reads. Every text from the dump or the command line
// reaches the program as an escaped string literal (a path with a newline must not become code;
// issue 25); kept apart from the command so that the fuzzer drives it on any dump entry.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <acccheck/record.hpp>

namespace acccheck::host {

// What the dump asks for that repro cannot rebuild, or a bad real-data file: exit 3.
class ReproError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReproCase {
  std::string code;  // the case block
  struct DataFile {
    std::string data_name;          // as the dump names it
    std::uint64_t expected_bytes;   // its shape × its dtype's size
    std::string bundled;            // the repro folder's own name for it: inputs/<safe name>.pt
  };
  std::vector<DataFile> data_files;
};

// Throws ReproError "<entry>: input_args[i]: ... is not supported by repro ..." for an argument
// it cannot write.
ReproCase generate_repro_case(const ApiRecord& entry_record, const DumpHeader& header, const std::string& dump,
                              const std::string& entry, const std::string& default_device, const std::string& plugin);

// A C++ string literal holding `text` exactly (quotes, backslashes and control bytes escaped).
std::string cxx_string(const std::string& text);

}  // namespace acccheck::host
