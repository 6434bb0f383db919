// dump.json and stack.json readers (msprobe's current layout): any bytes end in records, one
// RecordError per bad entry, or one runtime_error for the file — never a crash or a hang.
#include <acccheck/record.hpp>

#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = acccheck::fuzz::write_input("dump.json", data, size);
  try {
    std::size_t n = 0;
    acccheck::read_dump_json(
        path, [](const acccheck::DumpHeader&) {},
        [&](acccheck::ApiRecord&& r) {
          // Round trip what was read: the writer must take anything the reader accepts.
          (void)acccheck::to_json_text(acccheck::record_to_json(r));
          ++n;
        },
        [](const std::string&, const acccheck::RecordError&) {});
  } catch (const std::exception&) {
  }
  try {
    (void)acccheck::read_stack_json(path);
  } catch (const std::exception&) {
  }
  return 0;
}
