#include "plugin_host/plugin_file_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace acccheck::core {

namespace {
std::optional<std::string> ownership_reason(const struct stat& st, const char* what) {
  uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    return std::string(what) + " is owned by uid " + std::to_string(st.st_uid) + ", expected you (uid " +
           std::to_string(me) + ") or root";
  if (st.st_mode & S_IWOTH) return std::string(what) + " is world-writable (fix: chmod o-w)";
  return std::nullopt;
}
}  // namespace

std::optional<std::string> unsafe_folder_reason(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "cannot inspect folder: " + std::string(std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return std::string("not a folder");
  return ownership_reason(st, "folder");
}

std::optional<std::string> unsafe_file_reason(const std::string& path) {
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0) return "cannot inspect file: " + std::string(std::strerror(errno));
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::canonical(path, ec);
  if (ec) return "cannot resolve path: " + ec.message();
  struct stat st {};
  if (::stat(resolved.c_str(), &st) != 0) return "cannot inspect file: " + std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return std::string("not a regular file");
  if (auto why = ownership_reason(st, S_ISLNK(lst.st_mode) ? "link target" : "file")) return why;
  if (auto why = unsafe_folder_reason(resolved.parent_path().string()))
    return "folder " + resolved.parent_path().string() + ": " + *why;
  if (S_ISLNK(lst.st_mode)) {
    std::filesystem::path link_dir = std::filesystem::absolute(path).parent_path();
    if (auto why = unsafe_folder_reason(link_dir.string())) return "folder " + link_dir.string() + ": " + *why;
  }
  return std::nullopt;
}

}  // namespace acccheck::core
