// The one contract every acccheck plugin shares: a descriptor exported through a single entry
// symbol. The host reads the descriptor as plain data (no plugin code runs) and refuses it before
// calling anything when the ABI, the LibTorch version or the C++ ABI flag differ from its own.
//
// A plugin author writes, once per .so:
//   ACCCHECK_PLUGIN(metric, MyMetric, "my_metric", "1.0.0", "one line saying what it does")
// where MyMetric derives from acccheck::HookPlugin, DevicePlugin or MetricPlugin.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS 1  // Boost.DLL on std::filesystem: no libboost_filesystem needed.
#endif
#include <boost/dll/alias.hpp>

namespace acccheck {

// Bump the major on any change to a contract header (plugin/hook/device/metric/record); the minor
// on additions that old plugins do not see.
inline constexpr std::uint32_t kAbiMajor = 1;
inline constexpr std::uint32_t kAbiMinor = 3;  // 1.1: HookPlugin::plan_replay; 1.2: DevicePlugin::configuration_use;
                                               // 1.3: DevicePlugin::begin_api
inline constexpr const char* kEntrySymbol = "acccheck_plugin";

// Interface classes keep default visibility even in plugins built with -fvisibility=hidden, so
// their type identity is shared between host and plugin (dynamic_cast across the .so boundary).
#define ACCCHECK_INTERFACE __attribute__((visibility("default")))

enum class PluginKind : std::uint32_t { hook = 1, device = 2, metric = 3 };

inline const char* to_string(PluginKind kind) noexcept {
  switch (kind) {
    case PluginKind::hook: return "hook";
    case PluginKind::device: return "device";
    case PluginKind::metric: return "metric";
  }
  return "unknown";
}

// Base of every plugin object the factory returns. The host owns it and never unloads the .so.
class ACCCHECK_INTERFACE Plugin {
 public:
  virtual ~Plugin() = default;
};

extern "C" {
// Plain data, read before any plugin function is called. Fields are only ever appended.
struct PluginDescriptor {
  std::uint32_t abi_major;
  std::uint32_t abi_minor;
  std::uint32_t descriptor_size;  // sizeof(PluginDescriptor) in the plugin's build
  PluginKind kind;
  const char* name;         // unique per kind, e.g. "thousandth_threshold"
  const char* version;      // the plugin's own version
  const char* description;  // one line
  const char* torch_version;  // "MAJOR.MINOR" the plugin was compiled against, "" if it uses none
  int cxx11_abi;              // _GLIBCXX_USE_CXX11_ABI of the plugin's build (-1: not libstdc++)
  Plugin* (*create)();        // new object of the kind's interface; may throw
};
}

}  // namespace acccheck

#define ACCCHECK_DETAIL_STR2(x) #x
#define ACCCHECK_DETAIL_STR(x) ACCCHECK_DETAIL_STR2(x)

// Torch-using plugins include <acccheck/device.hpp> (or torch/version.h) before the macro, which
// makes TORCH_VERSION_MAJOR visible; torch-free plugins record "".
#if defined(TORCH_VERSION_MAJOR) && defined(TORCH_VERSION_MINOR)
#define ACCCHECK_DETAIL_TORCH_VERSION \
  ACCCHECK_DETAIL_STR(TORCH_VERSION_MAJOR) "." ACCCHECK_DETAIL_STR(TORCH_VERSION_MINOR)
#else
#define ACCCHECK_DETAIL_TORCH_VERSION ""
#endif

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define ACCCHECK_DETAIL_CXX11_ABI _GLIBCXX_USE_CXX11_ABI
#else
#define ACCCHECK_DETAIL_CXX11_ABI -1
#endif

#define ACCCHECK_PLUGIN(KIND, CLASS, NAME, VERSION, DESCRIPTION)                              \
  namespace {                                                                                 \
  ::acccheck::Plugin* acccheck_detail_create() { return new CLASS(); }                        \
  }                                                                                           \
  extern "C" const ::acccheck::PluginDescriptor acccheck_detail_descriptor = {                \
      ::acccheck::kAbiMajor,                                                                  \
      ::acccheck::kAbiMinor,                                                                  \
      static_cast<std::uint32_t>(sizeof(::acccheck::PluginDescriptor)),                       \
      ::acccheck::PluginKind::KIND,                                                           \
      NAME,                                                                                   \
      VERSION,                                                                                \
      DESCRIPTION,                                                                            \
      ACCCHECK_DETAIL_TORCH_VERSION,                                                          \
      ACCCHECK_DETAIL_CXX11_ABI,                                                              \
      &acccheck_detail_create};                                                               \
  BOOST_DLL_ALIAS(acccheck_detail_descriptor, acccheck_plugin)
