// Opens one plugin file and validates its descriptor before running any of its code: entry symbol,
// ABI major, descriptor size, kind, LibTorch version and C++ ABI flag. Errors are values: a
// refusal names the file and, for versions, both sides.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <acccheck/plugin.hpp>

namespace boost::dll { class shared_library; }

namespace acccheck::core {

// What this host was built with; the loader compares plugins against it.
struct HostBuild {
  std::uint32_t abi_major = kAbiMajor;
  std::string torch_version;  // "1.13" or "none"
  int cxx11_abi = ACCCHECK_DETAIL_CXX11_ABI;
};
const HostBuild& this_host_build();

struct LoadedPlugin {
  std::string file;          // as found
  std::string real_file;     // canonical path
  PluginKind kind{};
  std::string name, version, description, torch_version;
  std::uint32_t abi_major = 0, abi_minor = 0;
  std::shared_ptr<Plugin> instance;
  std::shared_ptr<boost::dll::shared_library> library;  // never unloaded while the host runs
};

struct Refusal {
  std::string file;
  std::string reason;
  std::string line() const { return file + ": " + reason; }
};

// expected_kind: the kind the file name announces (acccheck_<kind>_*.so), if any.
std::variant<LoadedPlugin, Refusal> load_plugin_file(const std::string& file,
                                                     std::optional<PluginKind> expected_kind,
                                                     const HostBuild& host = this_host_build());

// acccheck_metric_x.so → metric; anything else → nullopt.
std::optional<PluginKind> kind_from_file_name(const std::string& file);

}  // namespace acccheck::core
