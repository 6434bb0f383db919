// The details CSV reader and the compare engine: the input is the NPU details file, judged
// against a fixed GPU file with the real metric plugins and standards; outputs go to a scratch
// folder. Any bytes end in outputs or one InputError/OutputError line — never a crash.
#include <filesystem>

#include "commands/compare/compare_engine.hpp"
#include "commands/compare/compare_summary.hpp"
#include "commands/compare/details_table.hpp"
#include "fuzz_input_file.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "standards/standards_setup.hpp"

namespace {

struct Engine {
  acccheck::core::PluginRegistry registry;
  acccheck::core::Standards standards;
  std::string gpu;
  Engine() {
    acccheck::core::PluginSearch search;
    search.dirs = {ACCCHECK_FUZZ_PLUGIN_DIR};
    registry.load(search, {acccheck::PluginKind::metric});
    standards = acccheck::core::load_standards(registry, search, std::nullopt);
    gpu = ACCCHECK_FUZZ_GPU_DETAILS;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Engine* engine = new Engine();
  const std::string npu = acccheck::fuzz::write_input("npu.csv", data, size);
  const std::string out = acccheck::fuzz::scratch_dir() + "/out";
  std::filesystem::create_directories(out);
  acccheck::host::CompareEngine compare(*engine->standards.selector, engine->standards.by_standard);
  acccheck::host::CompareSummary summary;
  acccheck::host::CompareInputs in{npu, engine->gpu, out, "20250101000000"};
  try {
    (void)compare.run(in, summary);
  } catch (const acccheck::host::InputError&) {
  } catch (const acccheck::host::OutputError&) {
  } catch (const acccheck::host::PluginFailure&) {
  }
  return 0;
}
