// What the tests need to know of the build they test: where its binaries, plugins and sources are,
// and which LibTorch and Python it was made with. The values live in one source CMake generates
// (build_config.cpp in the build tree), not in compile definitions: every other test source then
// compiles the same in every build tree, and ccache shares it between the two configurations.
// The names are the compile definitions they replace.
#pragma once

namespace acccheck::test::build_config {
extern const char* const acccheck_binary;        // the host, `acccheck`
extern const char* const plugin_dir;             // the real plugins, next to the host
extern const char* const test_plugin_dir;        // the tests' own (good and broken) plugins
extern const char* const fixtures;               // tests/fixtures in the sources
extern const char* const source_dir;             // the checkout
extern const char* const build_dir;              // this build tree
extern const char* const cmake;                  // the CMake that configured it
extern const char* const test_tmp_dir;           // where TempDir makes its folders
extern const bool torch_build;                   // built with LibTorch (the device plugins, capture)
extern const char* const test_python;            // a Python whose torch is this build's LibTorch
extern const char* const torch_full_version;     // that LibTorch's version, "2.13.0+cpu"
extern const char* const torch_cpu_library;      // its libtorch_cpu.so
extern const char* const foreign_torch_python;   // a Python whose torch is another LibTorch ("" if none)
extern const char* const example_flags;          // the sanitizer flags out-of-tree examples build with
}  // namespace acccheck::test::build_config

#define ACCCHECK_BINARY (::acccheck::test::build_config::acccheck_binary)
#define ACCCHECK_PLUGIN_DIR (::acccheck::test::build_config::plugin_dir)
#define ACCCHECK_TEST_PLUGIN_DIR (::acccheck::test::build_config::test_plugin_dir)
#define ACCCHECK_FIXTURES (::acccheck::test::build_config::fixtures)
#define ACCCHECK_SOURCE_DIR (::acccheck::test::build_config::source_dir)
#define ACCCHECK_BUILD_DIR (::acccheck::test::build_config::build_dir)
#define ACCCHECK_CMAKE (::acccheck::test::build_config::cmake)
#define ACCCHECK_TEST_TMP_DIR (::acccheck::test::build_config::test_tmp_dir)
#define ACCCHECK_TORCH_BUILD (::acccheck::test::build_config::torch_build)
#define ACCCHECK_TEST_PYTHON (::acccheck::test::build_config::test_python)
#define ACCCHECK_TORCH_FULL_VERSION (::acccheck::test::build_config::torch_full_version)
#define ACCCHECK_TORCH_CPU_LIBRARY (::acccheck::test::build_config::torch_cpu_library)
#define ACCCHECK_FOREIGN_TORCH_PYTHON (::acccheck::test::build_config::foreign_torch_python)
#define ACCCHECK_EXAMPLE_FLAGS (::acccheck::test::build_config::example_flags)
