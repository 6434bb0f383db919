// -save_error_data's file stems from any entry name: one plain file name in the error folder
// (no '/', no NUL, no control character, not "." or ".."), bounded, and the same name always gives
// the same stem while a plain name keeps its own.
#include <cstdint>
#include <string>

#include "error_data_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name(reinterpret_cast<const char*>(data), size);
  const std::string stem = acccheck::replay::error_data_stem(name);
  if (stem.empty() || stem.size() > 6 + 160 + 1 + 16) __builtin_trap();
  if (stem.find_first_not_of('.') == std::string::npos) __builtin_trap();
  for (unsigned char c : stem)
    if (c == '/' || c < 0x20 || c == 0x7f) __builtin_trap();
  if (stem != acccheck::replay::error_data_stem(name)) __builtin_trap();
  if (stem.rfind("entry_", 0) != 0 && stem != name) __builtin_trap();
  return 0;
}
