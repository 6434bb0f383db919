// `acccheck repro`'s generated code from any dump entry: every forward entry the reader accepts
// gives either a ReproError or a case block whose text from the dump stays inside string literals —
// checked by lexing the block: no raw control byte inside a literal, no comment and no line beyond
// the fixed ones outside.
#include <cstdint>
#include <string>

#include <acccheck/record.hpp>

#include "commands/repro/repro_case.hpp"
#include "fuzz_input_file.hpp"

namespace {

// The block's lines outside string literals must be exactly: 1 comment line, 6 constants, the
// function's 2 opening lines, one line per argument, 2 closing lines.
void check(const std::string& code, std::size_t arguments) {
  std::size_t lines = 0, comments = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(code[i]);
    if (in_string) {
      if (c < 0x20) __builtin_trap();  // a raw newline or control byte inside a literal
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '\n') ++lines;
    else if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
      ++comments;
      while (i < code.size() && code[i] != '\n') ++i;
      --i;
    }
  }
  if (in_string || comments != 2 || lines != 1 + 6 + 2 + arguments + 2) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = acccheck::fuzz::write_input("dump.json", data, size);
  acccheck::DumpHeader header;
  try {
    acccheck::read_dump_json(path, [&](const acccheck::DumpHeader& h) { header = h; }, [&](acccheck::ApiRecord&& r) {
      if (r.direction != acccheck::Direction::forward) return;
      try {
        // A hostile dump path and device name too: they reach the program the same way.
        auto g = acccheck::host::generate_repro_case(r, header, "/d\n#include </etc/passwd>\n/dump.json", r.entry_name(),
                                                     "cpu\n// x", "");
        check(g.code, r.args.size() + r.kwargs.size());
        for (const auto& f : g.data_files)
          if (f.bundled.rfind("inputs/", 0) != 0 || f.bundled.find('/', 7) != std::string::npos) __builtin_trap();
      } catch (const acccheck::host::ReproError&) {
      }
    });
  } catch (const std::exception&) {
  }
  return 0;
}
