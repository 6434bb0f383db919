// Fault injection for the simulated NPU: defects in chosen operators, described in YAML
// (docs/npu-sim.md) and applied deterministically from a seed. A fault on one operator changes
// nothing else: its random numbers come from a generator of its own, seeded per call.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <acccheck/settings.hpp>

namespace acccheck::npusim {

enum class FaultKind { rel_noise, bias, scale, ulp_shift, low_precision, nan, zero, crash, hang };
enum class FaultDirection { forward, backward, any };

struct Fault {
  std::string op;        // "aten::gelu" (any overload) or "aten::add.Tensor"
  FaultDirection direction = FaultDirection::any;
  FaultKind kind = FaultKind::rel_noise;
  double magnitude = 0.0;
  c10::ScalarType low_precision_dtype = c10::ScalarType::Float;  // low_precision: float16/bfloat16
  bool tf32 = false;                                             // low_precision: tf32
  double fraction = 1.0;
  std::shared_ptr<std::atomic<std::uint64_t>> calls = std::make_shared<std::atomic<std::uint64_t>>(0);
  // The calls matched within the current API (begin_api) and which API that count belongs to.
  std::shared_ptr<std::atomic<std::uint64_t>> api_calls = std::make_shared<std::atomic<std::uint64_t>>(0);
  std::shared_ptr<std::atomic<std::uint64_t>> api_generation = std::make_shared<std::atomic<std::uint64_t>>(0);
};

struct FaultPlan {
  std::uint64_t seed = 0;
  std::vector<Fault> faults;
};

// From flattened settings: seed, faults/N/{op,direction,kind,magnitude,fraction}. Throws
// std::runtime_error "npu-sim faults: fault N: <what is wrong>".
FaultPlan parse_fault_plan(const Settings& settings);

// The plan the backend applies; empty until set.
void install_fault_plan(FaultPlan plan);
// Seed of the installed plan.
std::uint64_t installed_seed();
// Each fault of the installed plan, described ("fault 0 (aten::gelu, forward, rel_noise)"), with
// the operator calls it has matched so far in this process.
std::vector<std::pair<std::string, std::uint64_t>> fault_use();
// The first fault for this operator in this direction, if any. Installed plans are never freed,
// so the pointer stays valid.
// A fault naming an overload ("aten::mul.Tensor") also matches the operator's out= variants
// ("aten::mul.out"): structured operators reach a backend that way.
const Fault* find_fault(const std::string& name, const std::string& overload, bool is_out_variant, bool in_backward);

// While one lives on this thread, find_fault finds nothing: the operators a fused operator's kernel
// runs inside are its own arithmetic, not calls a fault file names (a fault on aten::mm must not
// change npu_fusion_attention, whose kernel multiplies too).
class FaultsOff {
 public:
  FaultsOff();
  ~FaultsOff();
  FaultsOff(const FaultsOff&) = delete;
  FaultsOff& operator=(const FaultsOff&) = delete;
};

// run_ut replays `api` next (DevicePlugin::begin_api): the noise of every fault is drawn from the
// seed, the operator, the API's name and the call's index within that API — so a run's numbers do
// not depend on which worker replays an API or what it replayed before (-n 1, -n 2, resumed runs
// and --filter-api subsets are byte-identical). Without it (a program of one's own, the tests)
// the index counts the fault's calls in the process, as before.
void begin_api(const std::string& api);
// Counts a matched call (configuration_use) and returns its index within the current API.
std::uint64_t next_call_index(const Fault& fault);

// Value faults (rel_noise, bias, scale, ulp_shift, nan, zero) applied in place to one output
// held in host memory. `call_index` numbers the matched calls of this fault (next_call_index).
void apply_value_fault(const Fault& fault, std::uint64_t seed, std::uint64_t call_index, const at::Tensor& cpu_output);
// low_precision: the input rounded to the fault's dtype (returns a new CPU tensor).
at::Tensor round_input(const Fault& fault, const at::Tensor& cpu_input);

}  // namespace acccheck::npusim
