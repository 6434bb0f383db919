#include "error_data_files.hpp"

#include <acccheck/fnv1a.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace acccheck::replay {

namespace {
bool plain_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}
}  // namespace

std::string error_data_stem(const std::string& api) {
  constexpr std::size_t kLongest = 160;
  std::string stem;
  bool plain = !api.empty() && api.size() <= kLongest && api.find_first_not_of('.') != std::string::npos;
  for (unsigned char c : api) {
    const bool ok = plain_char(c);
    if (stem.size() < kLongest) stem += ok ? static_cast<char>(c) : '_';
    plain = plain && ok;
  }
  if (plain) return stem;
  // The "entry_" prefix keeps a hashed stem from equalling any plain one (a plain name would need
  // to end in the same 16 hex digits after a '-' and start with "entry_": the hash decides then).
  const std::uint64_t h = fnv1a64(api);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return "entry_" + stem + "-" + hex;
}

std::string write_error_data_file(const std::string& path, const std::vector<char>& bytes) {
  if (path.find('\0') != std::string::npos) return "(a path with a NUL byte): refused";
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return path + ": " + std::strerror(errno);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return path + ": " + std::strerror(errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "short write";
      ::close(fd);
      ::unlink(path.c_str());
      return path + ": " + why;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(path.c_str());
    return path + ": " + why;
  }
  return "";
}

}  // namespace acccheck::replay
