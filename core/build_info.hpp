// What this acccheck was built with: its version, the LibTorch it was built against and where that
// came from, its install folders. Defined in the build tree (core/build_info.cpp.in, configured by
// CMake).
#pragma once

namespace acccheck::build_info {
extern const char* const version;
// "2.13", or "none" without LibTorch; the whole version; where that LibTorch came from
// (cmake/AcccheckTorch.cmake), for --version.
extern const char* const torch_version;
extern const char* const torch_full_version;
extern const char* const torch_origin;
// Its core library ("" without LibTorch): `acccheck dump` refuses a program linked against another.
extern const char* const torch_cpu_library;
// What a CMake project prepends to CMAKE_PREFIX_PATH to find that LibTorch ("" for a system one).
extern const char* const torch_prefix_path;
// The plugins' folder, relative to the install prefix.
extern const char* const plugin_relative_dir;
}  // namespace acccheck::build_info
