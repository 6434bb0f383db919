// run_ut's comparison of one API (run-ut.md §6): bench vs device outputs (and input gradients) →
// the summary row of accuracy_checking_result and the rows of accuracy_checking_details. The
// new-precision-standard columns come from the metric plugins' stage 1; the status is run_ut's own
// ladder (cosine, max abs error, 双百/双千/双万). Torch-free: the worker converts tensors first.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <acccheck/metric.hpp>

#include "details_columns.hpp"
#include "output_value.hpp"

namespace acccheck::core { class StandardSelector; }

namespace acccheck::replay {

// Which standard's metrics fill a float row, and the plugins that compute them.
struct MetricContext {
  const core::StandardSelector* selector = nullptr;
  std::map<std::string, const MetricPlugin*> by_standard;
};

struct ApiOutputs {
  std::string api;                 // "Functional.linear.0"
  OutputValue bench, device;       // forward results (a tuple is a seq)
  std::vector<OutputValue> bench_grads, device_grads;  // gradients of the positional inputs
  std::string backward_message;    // non-empty: backward is one SKIP row with this message
  bool fp8_input = false;
};

struct ApiResult {
  std::string api;
  std::string forward_status = "pass";
  std::string backward_status = " ";
  std::string message;
  bool replay_failed = false;  // crash / time-out: the message is written whatever the statuses
  double operator_seconds = 0;  // time in the device and benchmark operator calls (forward + backward)
  // -save_error_data could not write this API's tensors (path and reason): reported on its own line
  // and in run_ut's exit code; the verdicts above stand.
  std::string error_data_problem;
  std::vector<DetailsRow> rows;
  // 3 fields, or 4 when a direction is SKIP (run-ut.md §7.1).
  std::vector<std::string> result_fields() const;
};

// "matmul" for "Torch.matmul.0", "linalg.vector_norm" for "Torch.linalg.vector_norm.0"; empty when
// the name has neither 3 nor 4 segments.
std::string short_api_name(const std::string& api);

ApiResult compare_api(const ApiOutputs& outputs, const MetricContext& metrics);

// "Record SKIP" (run-ut.md §2): result [name, SKIP, SKIP, message], one SKIP details row.
ApiResult skip_api(const std::string& api, const std::string& message);
// An API whose replay failed outside the comparison (worker crash, time-out): error in both
// directions (backward only when the dump has a backward entry), one error details row.
ApiResult failed_api(const std::string& api, const std::string& message, bool has_backward);

}  // namespace acccheck::replay
