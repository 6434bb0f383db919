// libFuzzer harnesses feed bytes; acccheck's readers take paths (they stream files). This writes
// the bytes to one private temporary file per process, reused for every input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace acccheck::fuzz {

inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/acccheck-fuzz-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir;
}

// Writes data to <scratch>/<name> and returns the path.
inline std::string write_input(const std::string& name, const std::uint8_t* data, std::size_t size) {
  std::string path = scratch_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

}  // namespace acccheck::fuzz
