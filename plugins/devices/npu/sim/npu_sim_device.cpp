// The `npu-sim` device plugin: the simulated NPU backend (npu_sim_backend.cpp) behind the device
// contract, with its fault plan from --device-config / ACCCHECK_NPUSIM_FAULTS (docs/npu-sim.md).
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <set>

#include <acccheck/device.hpp>

#include "fused_ops.hpp"

#include "fault_injection.hpp"
#include "npu_sim_backend.hpp"

namespace {

using namespace acccheck;

// YAML → Settings (the host does the same for --device-config; the environment variable is read here).
void flatten(const YAML::Node& node, const std::string& prefix, Settings& out) {
  if (node.IsMap()) {
    std::set<std::string> keys;
    for (const auto& kv : node) {
      // A repeated key would silently replace the first (yaml-cpp keeps the last).
      if (!keys.insert(kv.first.as<std::string>()).second)
        throw std::runtime_error("line " + std::to_string(kv.first.Mark().line + 1) + ": duplicate key '" +
                                 kv.first.as<std::string>() + "'");
    }
    for (const auto& kv : node) flatten(kv.second, prefix.empty() ? kv.first.as<std::string>() : prefix + "/" + kv.first.as<std::string>(), out);
  } else if (node.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : node) flatten(item, prefix + "/" + std::to_string(i++), out);
  } else if (node.IsScalar()) {
    out.set(prefix, node.Scalar());
  }
}

class NpuSimDevice final : public DevicePlugin {
 public:
  std::string_view device_name() const override { return "npu-sim"; }

  void configure(const Settings& settings) override {
    Settings s = settings;
    if (!s.has("faults/0/op") && !s.has("faults/0/kind")) {
      if (const char* file = std::getenv("ACCCHECK_NPUSIM_FAULTS"); file && *file) {
        try {
          flatten(YAML::LoadFile(file), "", s);
        } catch (const std::exception& e) {
          throw std::runtime_error(std::string(file) + " (ACCCHECK_NPUSIM_FAULTS): " + e.what());
        }
      }
    }
    npusim::install_fault_plan(npusim::parse_fault_plan(s));
  }

  Availability available() const override {
    if (npusim::privateuse1_taken_by_someone_else())
      return {false, "PrivateUse1 is already registered by another backend in this process (torch_npu?)"};
    return {true, ""};
  }

  void initialize(const std::vector<int>& device_ids) override {
    for (int id : device_ids)
      if (id != 0) throw std::runtime_error("npu-sim: device id " + std::to_string(id) + " does not exist (only 0)");
    npusim::register_backend();
  }

  c10::Device device() const override { return c10::Device(c10::DeviceType::PrivateUse1, 0); }
  at::Tensor to_device(const at::Tensor& t) const override { return t.to(device(), t.scalar_type(), false, true); }
  at::Tensor to_cpu(const at::Tensor& t) const override { return t.to(c10::Device(c10::DeviceType::CPU), t.scalar_type(), false, true); }
  void synchronize() const override {}
  std::vector<c10::ScalarType> supported_dtypes() const override {
    using S = c10::ScalarType;
    return {S::Half, S::BFloat16, S::Float, S::Double, S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long};
  }
  // The vendor fused operators' references (plugins/devices/fused): run_ut's benchmark for NPU.* entries.
  std::map<std::string, BenchFunction> bench_functions() const override { return fused::reference_functions(); }
  std::vector<ConfigurationUse> configuration_use() const override {
    std::vector<ConfigurationUse> out;
    for (auto& [entry, matched] : npusim::fault_use()) out.push_back({std::move(entry), matched});
    return out;
  }
  void begin_api(const std::string& api) override { npusim::begin_api(api); }
};

}  // namespace

ACCCHECK_PLUGIN(device, NpuSimDevice, "npu-sim", "1.0.0",
                "simulated NPU: a PrivateUse1 backend with accelerator-like rounding and fault injection")
