#include "cli/companion_files.hpp"

#include <filesystem>

namespace acccheck::host {

namespace fs = std::filesystem;

std::string executable_folder() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path().string() : self.parent_path().string();
}

std::string find_companion(const std::vector<std::string>& relative_paths) {
  std::error_code ec;
  fs::path dir = executable_folder();
  for (const auto& r : relative_paths)
    if (fs::exists(dir / r, ec)) return fs::weakly_canonical(dir / r, ec).string();
  return {};
}

}  // namespace acccheck::host
