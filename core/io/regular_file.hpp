// Reading a file that must be a regular file, without ever waiting on something else put under
// its name. Torch-free, no dependencies: the dump engine (capture/: source lines for stack.json)
// and the run_ut worker (replay/worker/: a dump's .pt files) read through it.
//
// Why not std::ifstream: opening a FIFO blocks until a writer comes (a FIFO on a stack frame's
// path or a dump's data_name would hang the writer thread or the worker), and a check of the path
// before the open can be raced by a rename; here the open never blocks (O_NONBLOCK) and the kind
// and size are read from what was opened (fstat), not from the name.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>
#include <vector>

namespace acccheck::core {

// An open descriptor of a regular file, closed on destruction.
class RegularFile {
 public:
  // Opens path read-only with O_NONBLOCK | O_CLOEXEC and `extra_flags` (e.g. O_NOFOLLOW). ok() is
  // false when it cannot be opened (error() is errno) or is not a regular file (error() is 0).
  explicit RegularFile(const std::string& path, int extra_flags = 0);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  int error() const { return error_; }
  // The size fstat gave at the open (a file can still grow or shrink afterwards).
  std::size_t size() const { return size_; }

  // Reads from the start the size seen at the open, at most max_bytes (EINTR retried); a file that
  // shrank meanwhile gives what was there. Empty when !ok().
  std::string read_string(std::size_t max_bytes);
  std::vector<char> read_bytes(std::size_t max_bytes);

 private:
  std::size_t read_into(char* to, std::size_t max_bytes);

  int fd_ = -1;
  int error_ = 0;
  std::size_t size_ = 0;
};

}  // namespace acccheck::core
