// Which LibTorch a program or library would load, read from its ELF files before anything of it is
// loaded (torch-free). `acccheck dump` asks it about PROG before starting it, and the preload library
// about every dlopen'd file (Python's `import torch`) before the real dlopen runs: a second LibTorch's
// static initialisers would run against acccheck's (two copies of c10, or one LibTorch's libraries
// bound to the other's symbols) and crash, where the user should get one line.
#pragma once

#include <optional>
#include <set>
#include <string>

namespace acccheck::core {

struct ForeignLibTorch {
  std::string library;  // the libtorch_cpu it would load, as the dynamic linker would find it
  std::string version;  // its version, where one can be read ("" otherwise)
};

// The libtorch_cpu that loading `file` (a path, or a bare name searched as dlopen searches it) would
// bring in, when that is not `ours` (a canonical path). `loaded` holds the names and paths of what the
// process has already loaded: the dynamic linker reuses those instead of searching. A libtorch_cpu
// loaded under the name a file asks for counts as reused unless the file's own RPATH / RUNPATH finds
// another one (a wheel's libtorch_python.so with its `$ORIGIN` beside another `libtorch_cpu.so`: the
// same soname as ours, built for another torch); one not loaded under that name is searched for as
// the linker would. Files that are not ELF, or cannot be read, add nothing.
std::optional<ForeignLibTorch> foreign_libtorch(const std::string& file, const std::string& ours,
                                                const std::set<std::string>& loaded);

// A LibTorch's version from the file: the torch package's version.py beside it (a wheel's
// torch/lib/../version.py, or that of `near`'s folder or its parent where it is named `torch`, for
// Python's torch/_C*.so), else the soname's suffix (Debian's libtorch_cpu.so.1.13 → "1.13"); ""
// when neither says.
std::string libtorch_version(const std::string& library, const std::string& near = "");

// The one line both places print, and their exit code (acccheck's "plugin error").
std::string foreign_libtorch_message(const ForeignLibTorch& theirs, const std::string& our_version,
                                     const std::string& our_library);
constexpr int kExitForeignLibTorch = 5;

}  // namespace acccheck::core
