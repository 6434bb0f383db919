#include "commands/run_ut/error_data_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include <acccheck/output_file.hpp>

namespace acccheck::host {

namespace fs = std::filesystem;

std::string prepare_error_data_dir(const std::string& error_data_path, const std::string& timestamp) {
  if (is_symlinked_folder(error_data_path))
    throw std::runtime_error(error_data_path + ": error_data_path is a symbolic link; refusing to write through it");
  std::error_code ec;
  fs::create_directories(error_data_path, ec);
  if (ec) throw std::runtime_error(error_data_path + ": cannot create: " + ec.message());
  const std::string dir = (fs::path(error_data_path) / ("ut_error_data" + timestamp)).string();
  if (::mkdir(dir.c_str(), 0755) != 0) {
    const int err = errno;
    struct stat st {};
    if (err != EEXIST) throw std::runtime_error(dir + ": cannot create: " + std::strerror(err));
    if (::lstat(dir.c_str(), &st) != 0 || S_ISLNK(st.st_mode))
      throw std::runtime_error(dir + ": is a symbolic link; refusing to write the error data through it");
    if (!S_ISDIR(st.st_mode)) throw std::runtime_error(dir + ": exists and is not a folder");
  }
  if (::access(dir.c_str(), W_OK) != 0) throw std::runtime_error(dir + ": not writable: " + std::strerror(errno));
  return dir;
}

std::string timestamp_of_result_file(const std::string& result_csv) {
  static const std::regex name("^accuracy_checking_result_(\\d{14})\\.csv$");
  std::smatch m;
  const std::string base = fs::path(result_csv).filename().string();
  return std::regex_match(base, m, name) ? m[1].str() : std::string();
}

}  // namespace acccheck::host
