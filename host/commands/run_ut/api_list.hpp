// Step 1 of run_ut: the list of APIs to replay, in dump order (run-ut.md §2). Reads dump.json (or
// the legacy forward_info/backward_info pair), pairs each forward entry with its backward entry,
// and decides up front what the host can decide alone: the reference's SKIP rules (Distributed,
// MindSpeed, malformed names, black/white list), -f de-duplication, entries that do not parse.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace acccheck::host {

struct ApiJob {
  std::string api;             // "Functional.linear.0"
  std::string forward_json;    // the entry bodies as compact JSON, sent to a worker as they are
  std::string backward_json;   // empty: no backward entry
  std::string skip_message;    // non-empty: reported SKIP with this message, not replayed
  std::uint64_t cost = 1;      // estimated work: elements of the input tensors
};

struct ApiListOptions {
  std::string dump_json;                    // current layout
  std::string legacy_forward, legacy_backward;  // legacy layout (instead of dump_json)
  bool filter_duplicates = false;           // -f
  std::vector<std::string> white_list, black_list;
};

struct ApiList {
  std::vector<ApiJob> jobs;
  std::string real_data_dir;   // dump_tensor_data/ beside dump.json when the dump has tensors
  std::vector<std::string> errors;  // one line per bad entry (file, entry, field)
  std::size_t dropped_duplicates = 0;
};

// Throws std::runtime_error naming the file for a file that cannot be read at all.
ApiList read_api_list(const ApiListOptions& options);

// The APIs of shard `index` of `count`, balanced by cost (largest first onto the lightest shard),
// returned in dump order.
std::vector<std::size_t> shard_indices(const std::vector<ApiJob>& jobs, std::size_t index, std::size_t count);

}  // namespace acccheck::host
