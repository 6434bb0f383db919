#include <acccheck/incomplete_dump.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace acccheck {

namespace fs = std::filesystem;

namespace {
// The folder itself, never through a symbolic link (a dump path that is a link is refused by the
// writer; its marker must not land in the link's target either). -1 when it cannot be opened.
int open_folder(const std::string& folder) {
  return ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}
}  // namespace

bool mark_incomplete(const std::string& folder, const std::string& reason) noexcept {
  try {
    const int dir = open_folder(folder);
    if (dir < 0) return false;
    int fd = ::openat(dir, kIncompleteMarkerName, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
    ::close(dir);
    if (fd < 0) return false;
    std::string line = reason + "\n";
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {  // a short or failed write leaves the marker, maybe without its reason
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    return true;
  } catch (...) {
    return false;
  }
}

void remove_incomplete_marker(const std::string& folder) noexcept {
  const int dir = open_folder(folder);
  if (dir < 0) return;
  ::unlinkat(dir, kIncompleteMarkerName, 0);
  ::close(dir);
}

std::optional<std::string> incomplete_marker_in(const std::string& folder) {
  const fs::path marker = fs::path(folder) / kIncompleteMarkerName;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(marker, ec))) return std::nullopt;
  std::ifstream in(marker);
  std::string reason;
  std::getline(in, reason);
  if (reason.size() > 500) reason = reason.substr(0, 500) + "...";
  return marker.string() + ": " + (reason.empty() ? "(no reason recorded: the disk was full)" : reason);
}

std::optional<std::string> incomplete_marker_of(const std::string& dump_json) {
  fs::path folder = fs::path(dump_json).parent_path();
  return incomplete_marker_in(folder.empty() ? "." : folder.string());
}

}  // namespace acccheck
