#include "fault_injection.hpp"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>

#include <acccheck/number_format.hpp>

namespace acccheck::npusim {

namespace {

std::mutex g_plan_mutex;
std::shared_ptr<const FaultPlan> g_plan = std::make_shared<FaultPlan>();
// Every plan ever installed stays alive: kernels running on other threads may hold a Fault*.
std::vector<std::shared_ptr<const FaultPlan>>* g_all_plans = new std::vector<std::shared_ptr<const FaultPlan>>();

FaultKind kind_from(const std::string& s, std::size_t i) {
  static const std::pair<const char*, FaultKind> kinds[] = {
      {"rel_noise", FaultKind::rel_noise}, {"bias", FaultKind::bias},         {"scale", FaultKind::scale},
      {"ulp_shift", FaultKind::ulp_shift}, {"low_precision", FaultKind::low_precision},
      {"nan", FaultKind::nan},             {"zero", FaultKind::zero},         {"crash", FaultKind::crash},
      {"hang", FaultKind::hang}};
  for (const auto& [name, kind] : kinds)
    if (s == name) return kind;
  throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) + ": unknown kind '" + s +
                           "' (expected rel_noise, bias, scale, ulp_shift, low_precision, nan, zero, crash or hang)");
}

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t hash_text(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Spacing of `kind` values around v (one unit in the last place).
double ulp_of(double v, c10::ScalarType dtype) {
  int mantissa = 52, min_exp = -1022;
  if (dtype == c10::ScalarType::Float) { mantissa = 23; min_exp = -126; }
  if (dtype == c10::ScalarType::Half) { mantissa = 10; min_exp = -14; }
  if (dtype == c10::ScalarType::BFloat16) { mantissa = 7; min_exp = -126; }
  int e = v == 0.0 ? min_exp : std::max(static_cast<int>(std::floor(std::log2(std::fabs(v)))), min_exp);
  return std::ldexp(1.0, e - mantissa);
}

}  // namespace

FaultPlan parse_fault_plan(const Settings& s) {
  FaultPlan plan;
  if (auto seed = s.text("seed")) plan.seed = static_cast<std::uint64_t>(std::stoull(*seed));
  for (std::size_t i = 0;; ++i) {
    std::string p = "faults/" + std::to_string(i) + "/";
    auto op = s.text(p + "op");
    auto kind = s.text(p + "kind");
    if (!op && !kind) break;
    if (!op || op->rfind("::") == std::string::npos)
      throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) +
                               ": 'op' must name a dispatcher operator such as \"aten::gelu\"");
    if (!kind) throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) + ": 'kind' is missing");
    Fault f;
    f.op = *op;
    f.kind = kind_from(*kind, i);
    std::string dir = s.text(p + "direction").value_or("any");
    if (dir == "forward") f.direction = FaultDirection::forward;
    else if (dir == "backward") f.direction = FaultDirection::backward;
    else if (dir == "any") f.direction = FaultDirection::any;
    else throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) + ": direction '" + dir +
                                  "' (expected forward, backward or any)");
    auto magnitude = s.text(p + "magnitude");
    if (f.kind == FaultKind::low_precision) {
      std::string m = magnitude.value_or("");
      if (m == "float16") f.low_precision_dtype = c10::ScalarType::Half;
      else if (m == "bfloat16") f.low_precision_dtype = c10::ScalarType::BFloat16;
      else if (m == "tf32") f.tf32 = true;
      else throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) +
                                    ": low_precision needs magnitude float16, bfloat16 or tf32, found '" + m + "'");
    } else if (magnitude) {
      auto v = parse_python_float(*magnitude);
      if (!v) throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) + ": magnitude '" + *magnitude +
                                       "' is not a number");
      f.magnitude = *v;
    } else if (f.kind == FaultKind::rel_noise || f.kind == FaultKind::bias || f.kind == FaultKind::scale ||
               f.kind == FaultKind::ulp_shift) {
      throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) + ": kind '" + *kind + "' needs a magnitude");
    }
    if (auto fraction = s.text(p + "fraction")) {
      auto v = parse_python_float(*fraction);
      if (!v || *v < 0 || *v > 1)
        throw std::runtime_error("npu-sim faults: fault " + std::to_string(i) + ": fraction must be in [0, 1]");
      f.fraction = *v;
    }
    plan.faults.push_back(std::move(f));
  }
  return plan;
}

void install_fault_plan(FaultPlan plan) {
  std::lock_guard<std::mutex> lock(g_plan_mutex);
  g_plan = std::make_shared<FaultPlan>(std::move(plan));
  g_all_plans->push_back(g_plan);
}

static std::shared_ptr<const FaultPlan> current_plan() {
  std::lock_guard<std::mutex> lock(g_plan_mutex);
  return g_plan;
}

namespace {
thread_local int t_faults_off = 0;
}

FaultsOff::FaultsOff() { ++t_faults_off; }
FaultsOff::~FaultsOff() { --t_faults_off; }

const Fault* find_fault(const std::string& name, const std::string& overload, bool is_out_variant, bool in_backward) {
  if (t_faults_off > 0) return nullptr;
  auto plan = current_plan();
  for (const auto& f : plan->faults) {
    if (f.direction == FaultDirection::forward && in_backward) continue;
    if (f.direction == FaultDirection::backward && !in_backward) continue;
    if (f.op == name) return &f;
    if (f.op.size() > name.size() && f.op.compare(0, name.size(), name) == 0 && f.op[name.size()] == '.') {
      if (is_out_variant || f.op.compare(name.size() + 1, std::string::npos, overload) == 0) return &f;
    }
  }
  return nullptr;
}

std::uint64_t installed_seed() { return current_plan()->seed; }

namespace {
std::atomic<std::uint64_t> g_api_key{0};         // mix(hash of the API's name); 0: no API begun
std::atomic<std::uint64_t> g_api_generation{0};  // grows with every begin_api
}  // namespace

void begin_api(const std::string& api) {
  g_api_key.store(mix(hash_text(api)));
  g_api_generation.fetch_add(1);
}

std::uint64_t next_call_index(const Fault& fault) {
  fault.calls->fetch_add(1);
  // The first call of a fault in a new API restarts its count (one API is replayed at a time).
  const std::uint64_t generation = g_api_generation.load();
  if (fault.api_generation->exchange(generation) != generation) fault.api_calls->store(0);
  return fault.api_calls->fetch_add(1);
}

std::vector<std::pair<std::string, std::uint64_t>> fault_use() {
  static const char* kinds[] = {"rel_noise", "bias", "scale", "ulp_shift", "low_precision", "nan", "zero", "crash", "hang"};
  static const char* directions[] = {"forward", "backward", "any direction"};
  std::vector<std::pair<std::string, std::uint64_t>> out;
  const auto plan = current_plan();
  for (std::size_t i = 0; i < plan->faults.size(); ++i) {
    const Fault& f = plan->faults[i];
    out.emplace_back("fault " + std::to_string(i) + " (" + f.op + ", " + directions[static_cast<int>(f.direction)] + ", " +
                         kinds[static_cast<int>(f.kind)] + ")",
                     f.calls->load());
  }
  return out;
}

void apply_value_fault(const Fault& fault, std::uint64_t seed, std::uint64_t call_index, const at::Tensor& out) {
  if (!out.defined() || out.numel() == 0) return;
  const bool floating = at::isFloatingType(out.scalar_type());
  if (!floating && fault.kind != FaultKind::zero) return;  // value faults need float outputs
  std::mt19937_64 rng(mix(seed ^ mix(hash_text(fault.op)) ^ mix(call_index) ^ g_api_key.load()));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  at::Tensor values = out.to(at::kDouble).contiguous();  // a copy in double; written back with rounding
  double* v = values.data_ptr<double>();
  const auto dtype = out.scalar_type();
  for (int64_t i = 0; i < values.numel(); ++i) {
    double pick = unit(rng);
    double u = unit(rng) * 2.0 - 1.0;  // drawn for every element so fraction does not shift the noise
    if (pick >= fault.fraction) continue;
    switch (fault.kind) {
      case FaultKind::rel_noise: v[i] *= 1.0 + u * fault.magnitude; break;
      case FaultKind::bias: v[i] *= 1.0 + fault.magnitude; break;
      case FaultKind::scale: v[i] *= fault.magnitude; break;
      case FaultKind::ulp_shift: v[i] += fault.magnitude * ulp_of(v[i], dtype); break;
      case FaultKind::nan: v[i] = std::nan(""); break;
      case FaultKind::zero: v[i] = 0.0; break;
      default: break;
    }
  }
  out.copy_(values.view(out.sizes()));
}

at::Tensor round_input(const Fault& fault, const at::Tensor& in) {
  if (!in.defined() || !at::isFloatingType(in.scalar_type())) return in;
  if (!fault.tf32) return in.to(fault.low_precision_dtype).to(in.scalar_type());
  // tf32: float32 with a 10-bit mantissa (round to nearest even on the 13 dropped bits).
  at::Tensor f = in.to(at::kFloat).contiguous().clone();
  auto* bits = reinterpret_cast<std::uint32_t*>(f.data_ptr<float>());
  for (int64_t i = 0; i < f.numel(); ++i) {
    std::uint32_t b = bits[i];
    if ((b & 0x7F800000u) == 0x7F800000u) continue;  // inf / nan
    std::uint32_t lsb = (b >> 13) & 1u;
    b += 0x0FFFu + lsb;
    bits[i] = b & ~0x1FFFu;
  }
  return f.to(in.scalar_type());
}

}  // namespace acccheck::npusim
