// A descriptor with one field forged (ABI major, LibTorch version, C++ ABI flag or kind), chosen
// by FORGE_* definitions: what a plugin built against another SDK or LibTorch looks like.
#include <acccheck/metric.hpp>

namespace {
acccheck::Plugin* create_nothing() { return nullptr; }
}  // namespace

extern "C" const acccheck::PluginDescriptor forged_descriptor = {
    FORGE_ABI_MAJOR, 0, static_cast<std::uint32_t>(sizeof(acccheck::PluginDescriptor)),
    static_cast<acccheck::PluginKind>(FORGE_KIND), "forged", "0.0.1", "forged descriptor",
    FORGE_TORCH_VERSION, FORGE_CXX11_ABI, &create_nothing};
BOOST_DLL_ALIAS(forged_descriptor, acccheck_plugin)
