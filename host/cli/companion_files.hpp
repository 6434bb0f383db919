// Files installed beside the acccheck executable (the replay worker, the dump's preload library,
// the TorchScript runner): found relative to the executable in the build tree and when installed.
#pragma once

#include <string>
#include <vector>

namespace acccheck::host {

// The folder holding the running executable.
std::string executable_folder();
// The first of `relative_paths` (relative to the executable's folder) that exists, canonical;
// empty when none does.
std::string find_companion(const std::vector<std::string>& relative_paths);

}  // namespace acccheck::host
