// The YAML loaders behind --standards, --config and --device-config: size, depth, alias and
// duplicate-key limits, then the standards selector over whatever was accepted.
#include <yaml-cpp/yaml.h>

#include "config/yaml_settings.hpp"
#include "fuzz_input_file.hpp"
#include "standards/standard_selector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = acccheck::fuzz::write_input("settings.yaml", data, size);
  try {
    acccheck::Settings s = acccheck::core::load_yaml_settings(path);
    acccheck::core::StandardSelector selector(s);
    (void)selector.select("matmul", "torch.float16", false);
    (void)selector.all_standards();
  } catch (const std::exception&) {
  }
  return 0;
}
