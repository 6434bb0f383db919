#include "plugin_host/plugin_loader.hpp"

#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>
#include <filesystem>
#include <vector>

#include <acccheck/device_probe.hpp>
#include <acccheck/hook.hpp>
#include <acccheck/metric.hpp>

#include "build_info.hpp"
#include "plugin_host/plugin_file_check.hpp"

namespace acccheck::core {

const HostBuild& this_host_build() {
  static const HostBuild build{kAbiMajor, build_info::torch_version, ACCCHECK_DETAIL_CXX11_ABI};
  return build;
}

std::optional<PluginKind> kind_from_file_name(const std::string& file) {
  std::string base = std::filesystem::path(file).filename().string();
  for (auto kind : {PluginKind::hook, PluginKind::device, PluginKind::metric}) {
    std::string prefix = std::string("acccheck_") + to_string(kind) + "_";
    if (base.rfind(prefix, 0) == 0) return kind;
  }
  return std::nullopt;
}

namespace {
// Fields up to and including `create` exist in every ABI-1 descriptor.
constexpr std::uint32_t kMinDescriptorSize = sizeof(PluginDescriptor);

bool known_kind(PluginKind k) {
  return k == PluginKind::hook || k == PluginKind::device || k == PluginKind::metric;
}

std::string text_or_empty(const char* s) { return s ? std::string(s) : std::string(); }
}  // namespace

std::variant<LoadedPlugin, Refusal> load_plugin_file(const std::string& file,
                                                     std::optional<PluginKind> expected_kind,
                                                     const HostBuild& host) {
  if (auto why = unsafe_file_reason(file)) return Refusal{file, "refused: " + *why};
  std::error_code ec;
  std::string real = std::filesystem::canonical(file, ec).string();

  // Libraries are never unloaded: a device plugin may have registered a backend with libtorch,
  // and unloading code that libtorch still points to crashes at exit.
  static auto* keep_loaded = new std::vector<std::shared_ptr<boost::dll::shared_library>>();
  auto lib = std::make_shared<boost::dll::shared_library>();
  boost::dll::fs::error_code load_error;
  // RTLD_GLOBAL: a device plugin may register a PrivateUse1 backend whose symbols libtorch resolves.
  lib->load(real, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_global, load_error);
  if (load_error) {
    // Boost.DLL's error code says little ("Bad file descriptor"); dlerror() says why ("file too
    // short", "wrong ELF class", a missing dependency).
    std::string detail = load_error.message();
    if (void* h = ::dlopen(real.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      ::dlclose(h);
    } else if (const char* why = ::dlerror()) {
      detail = why;
    }
    return Refusal{file, "cannot load: " + detail};
  }
  keep_loaded->push_back(lib);
  if (!lib->has(kEntrySymbol))
    return Refusal{file, std::string("not an acccheck plugin (no '") + kEntrySymbol + "' entry symbol)"};

  const auto& d = lib->get_alias<const PluginDescriptor>(kEntrySymbol);
  if (d.abi_major != host.abi_major)
    return Refusal{file, "wrong plugin ABI: built for ABI " + std::to_string(d.abi_major) + "." +
                             std::to_string(d.abi_minor) + ", this acccheck supports ABI " +
                             std::to_string(host.abi_major) + ".x; rebuild the plugin against this SDK"};
  if (d.descriptor_size < kMinDescriptorSize)
    return Refusal{file, "corrupt descriptor: size " + std::to_string(d.descriptor_size) + ", expected at least " +
                             std::to_string(kMinDescriptorSize)};
  if (!known_kind(d.kind))
    return Refusal{file, "unknown plugin kind " + std::to_string(static_cast<std::uint32_t>(d.kind)) +
                             " (expected hook, device or metric)"};
  if (expected_kind && *expected_kind != d.kind)
    return Refusal{file, std::string("file name says kind '") + to_string(*expected_kind) +
                             "' but the plugin declares '" + to_string(d.kind) + "'"};
  if (!d.name || !*d.name || !d.create) return Refusal{file, "descriptor has no name or no factory"};
  std::string plugin_torch = text_or_empty(d.torch_version);
  if (!plugin_torch.empty() && plugin_torch != host.torch_version)
    return Refusal{file, "built against LibTorch " + plugin_torch + ", this acccheck uses LibTorch " +
                             host.torch_version + "; rebuild the plugin against LibTorch " + host.torch_version};
  if (d.cxx11_abi != host.cxx11_abi)
    return Refusal{file, "built with _GLIBCXX_USE_CXX11_ABI=" + std::to_string(d.cxx11_abi) +
                             ", this acccheck uses _GLIBCXX_USE_CXX11_ABI=" + std::to_string(host.cxx11_abi)};

  LoadedPlugin p;
  p.file = file;
  p.real_file = real;
  p.kind = d.kind;
  p.name = d.name;
  p.version = text_or_empty(d.version);
  p.description = text_or_empty(d.description);
  p.torch_version = plugin_torch;
  p.abi_major = d.abi_major;
  p.abi_minor = d.abi_minor;
  try {
    Plugin* raw = d.create();
    if (!raw) return Refusal{file, "plugin factory returned nothing"};
    bool kind_matches = (d.kind == PluginKind::metric && dynamic_cast<MetricPlugin*>(raw)) ||
                        (d.kind == PluginKind::hook && dynamic_cast<HookPlugin*>(raw)) ||
                        (d.kind == PluginKind::device && dynamic_cast<DeviceProbe*>(raw));
    if (!kind_matches) {
      delete raw;
      return Refusal{file, std::string("plugin declares kind '") + to_string(d.kind) +
                               "' but its factory made an object of another interface"};
    }
    // The object's code lives in the library: keep the library alive as long as the object.
    p.instance = std::shared_ptr<Plugin>(raw, [lib](Plugin* x) { delete x; });
  } catch (const std::exception& e) {
    return Refusal{file, std::string("plugin factory failed: ") + e.what()};
  } catch (...) {
    return Refusal{file, "plugin factory failed with a non-standard exception"};
  }
  p.library = lib;
  return p;
}

}  // namespace acccheck::core
