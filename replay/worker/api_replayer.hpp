// Replays one dumped API (run-ut.md §3-§5): rebuild its inputs, call the operator on the device
// under test and on the CPU benchmark in raised precision, run backward with the recorded output
// gradient, and compare (verdict/). Every failure inside becomes the API's SKIP row, as in the
// reference; only a crash or a hang escapes, and the host handles those.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <acccheck/device.hpp>
#include <acccheck/hook.hpp>
#include <acccheck/record.hpp>

#include "tensor_values.hpp"
#include "verdict/api_comparator.hpp"

namespace acccheck::replay {

struct ReplayContext {
  DevicePlugin* device = nullptr;
  // device->bench_functions(), asked once per worker: every vendor API looks its reference up here.
  std::map<std::string, BenchFunction> bench_functions;
  std::vector<const HookPlugin*> planners;  // hook plugins that implement plan_replay (ABI ≥ 1.1)
  MetricContext metrics;
  bool bench_float64 = false;               // --bench float64: every float input raised to float64
  std::string real_data_dir;                // dump_tensor_data/ (tensor-mode dumps); empty: random
  bool allow_outside_dump = false;          // run_ut --allow-outside-dump
  std::string error_data_dir;               // -save_error_data: failing APIs' tensors go here as .pt
};

// An API replayed up to its comparison: the outputs as the comparison reads them (float32 results
// still to be widened) and the time its operator calls took. Finishing it calls no LibTorch
// operator, so it can run on another thread while the next API's operators run.
struct PendingComparison {
  std::string api;
  ApiOutputs outputs;
  DeferredWidening widening;
  double operator_seconds = 0;
};

// What replay_api_until_comparison leaves: a finished result (a SKIP, a plan, a run with
// -save_error_data), or a comparison still due.
struct ReplayedApi {
  std::optional<ApiResult> result;
  std::shared_ptr<PendingComparison> pending;
  static ReplayedApi finished(ApiResult r) { return {std::move(r), nullptr}; }
  static ReplayedApi comparison_due(std::shared_ptr<PendingComparison> p) { return {std::nullopt, std::move(p)}; }
  // Elements the comparison still has to read (0 when finished): what it costs.
  std::size_t comparison_elements() const;
  // The result: runs the comparison if it is due (every failure inside becomes a SKIP row).
  ApiResult finish(const MetricContext& metrics);
};

// Everything up to the comparison. plan_only: resolve the operator and bind the arguments (on meta
// tensors), run nothing; the result is pass, or SKIP with the reason the API cannot be replayed
// (--list-unsupported).
ReplayedApi replay_api_until_comparison(const ApiRecord& forward, const ApiRecord* backward, const ReplayContext& ctx,
                                        bool plan_only = false);
// The two halves in one call.
ApiResult replay_api(const ApiRecord& forward, const ApiRecord* backward, const ReplayContext& ctx,
                     bool plan_only = false);

}  // namespace acccheck::replay
