// libFuzzer harnesses feed bytes; acccheck's readers take paths (they stream files). This writes
// the bytes to one private temporary file per process, reused for every input, and removes that
// process's scratch folder (with whatever a harness wrote under it) when the process exits.
#pragma once

#include <ftw.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace acccheck::fuzz {

namespace detail {

// The folder's path, for the exit handler: a plain buffer, because function-local statics (the
// std::string below) are destroyed before handlers registered after them run.
inline char scratch_path[64];

inline int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  ::remove(path);  // best effort: a folder that cannot be emptied stays, as before
  return 0;
}

inline void remove_scratch() {
  // Depth first (contents before their folder), never following a link a harness may have made.
  if (scratch_path[0]) ::nftw(scratch_path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace detail

inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/acccheck-fuzz-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (!d) std::abort();
    std::strncpy(detail::scratch_path, d, sizeof detail::scratch_path - 1);
    // libFuzzer ends a run that reached -max_total_time or -runs with exit(), which runs this; a
    // crash ends with _Exit and keeps the folder, beside the crash's own artefact.
    std::atexit(detail::remove_scratch);
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
