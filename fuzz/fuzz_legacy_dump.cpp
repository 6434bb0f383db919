// The legacy forward_info / backward_info readers: the input is split at its first NUL byte into
// the forward file and the backward file.
#include <cstring>

#include <acccheck/record.hpp>

#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  std::size_t fwd = nul ? static_cast<std::size_t>(nul - data) : size;
  const std::string f = acccheck::fuzz::write_input("forward_info_1.json", data, fwd);
  const std::string b = acccheck::fuzz::write_input("backward_info_1.json", nul ? nul + 1 : data, nul ? size - fwd - 1 : 0);
  try {
    acccheck::read_legacy_dump(f, nul ? b : std::string(), [](acccheck::ApiRecord&&) {});
  } catch (const std::exception&) {
  }
  return 0;
}
