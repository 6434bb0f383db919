// Replays one dumped API (run-ut.md §3-§5): rebuild its inputs, call the operator on the device
// under test and on the CPU benchmark in raised precision, run backward with the recorded output
// gradient, and compare (verdict/). Every failure inside becomes the API's SKIP row, as in the
// reference; only a crash or a hang escapes, and the host handles those.
#pragma once

#include <string>
#include <vector>

#include <acccheck/device.hpp>
#include <acccheck/hook.hpp>
#include <acccheck/record.hpp>

#include "verdict/api_comparator.hpp"

namespace acccheck::replay {

struct ReplayContext {
  DevicePlugin* device = nullptr;
  std::vector<const HookPlugin*> planners;  // hook plugins that implement plan_replay (ABI ≥ 1.1)
  MetricContext metrics;
  bool bench_float64 = false;               // --bench float64: every float input raised to float64
  std::string real_data_dir;                // dump_tensor_data/ (tensor-mode dumps); empty: random
  std::string error_data_dir;               // -save_error_data: failing APIs' tensors go here as .pt
};

// plan_only: resolve the operator and bind the arguments (on meta tensors), run nothing; the result
// is pass, or SKIP with the reason the API cannot be replayed (--list-unsupported).
ApiResult replay_api(const ApiRecord& forward, const ApiRecord* backward, const ReplayContext& ctx,
                     bool plan_only = false);

}  // namespace acccheck::replay
