#include "acccheck/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace acccheck {

void refuse_symlink_destination(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw std::runtime_error(path + ": refusing to write through a symbolic link");
  if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw std::runtime_error(path + ": is a directory, expected a file path to write");
}

AtomicOutputFile::AtomicOutputFile(std::string path, unsigned mode) : path_(std::move(path)) {
  refuse_symlink_destination(path_);
  std::string tmpl = path_ + ".tmp-XXXXXX";
  std::string buf = tmpl;
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0) throw std::runtime_error(path_ + ": cannot create output file: " + std::strerror(errno));
  temp_path_ = buf;
  ::fchmod(fd_, static_cast<mode_t>(mode));
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicOutputFile::write(std::string_view bytes) {
  buffer_.append(bytes);
  if (buffer_.size() >= (1u << 20)) flush();
}

void AtomicOutputFile::flush() {
  const char* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void AtomicOutputFile::commit() {
  flush();
  // Data on disk before the rename makes it visible (metadata comes with the rename).
  if (::fdatasync(fd_) != 0 && errno != EINVAL)
    throw std::runtime_error(path_ + ": fdatasync failed: " + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  refuse_symlink_destination(path_);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error(path_ + ": cannot move output into place: " + std::strerror(errno));
  committed_ = true;
}

}  // namespace acccheck
