// RegularFile (regular_file.hpp).
#include "io/regular_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace acccheck::core {

RegularFile::RegularFile(const std::string& path, int extra_flags) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | extra_flags);
  if (fd_ < 0) {
    error_ = errno;
    return;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    error_ = 0;
    ::close(fd_);
    fd_ = -1;
    return;
  }
  size_ = static_cast<std::size_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t RegularFile::read_into(char* to, std::size_t max_bytes) {
  std::size_t got = 0;
  while (got < max_bytes) {
    const ssize_t n = ::pread(fd_, to + got, max_bytes - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // an error, or the end: what was read stands
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::string RegularFile::read_string(std::size_t max_bytes) {
  std::string text;
  if (!ok()) return text;
  text.resize(max_bytes < size_ ? max_bytes : size_);
  text.resize(read_into(text.data(), text.size()));
  return text;
}

std::vector<char> RegularFile::read_bytes(std::size_t max_bytes) {
  std::vector<char> bytes;
  if (!ok()) return bytes;
  bytes.resize(max_bytes < size_ ? max_bytes : size_);
  bytes.resize(read_into(bytes.data(), bytes.size()));
  return bytes;
}

}  // namespace acccheck::core
