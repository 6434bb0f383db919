// run_ut's dump reader (api_list): pairing forward/backward entries, the SKIP rules, -f signatures,
// and the JSON each job sends to a worker, on any bytes.
#include "commands/run_ut/api_list.hpp"
#include "fuzz_input_file.hpp"

#include <acccheck/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acccheck::host::ApiListOptions o;
  o.dump_json = acccheck::fuzz::write_input("dump.json", data, size);
  o.filter_duplicates = size % 2 == 0;
  try {
    auto list = acccheck::host::read_api_list(o);
    for (const auto& job : list.jobs) {
      // What the worker receives must parse back.
      if (!job.forward_json.empty()) (void)acccheck::parse_json(job.forward_json, "job");
    }
    if (!list.jobs.empty()) (void)acccheck::host::shard_indices(list.jobs, 0, 3);
  } catch (const std::exception&) {
  }
  return 0;
}
