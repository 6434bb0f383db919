#include "api_replayer.hpp"
#include "error_data_files.hpp"

#include <ATen/TensorUtils.h>
#include <ATen/core/List.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/_to_copy.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/autograd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include <map>
#include <mutex>
#include <set>

#include "torch_support/tensor_file_writer.hpp"
#include "input_generator.hpp"
#include "operator_binding.hpp"
#include "tensor_values.hpp"

namespace acccheck::replay {

namespace {

using c10::IValue;

constexpr const char* kIdKey = "acccheck_id";

// ACCCHECK_REPLAY_PHASES=1: cumulative time per phase, printed to stderr when the worker exits
// (for tuning the harness; off by default: one getenv per process). The worker leaves with
// quick_exit (worker_main.cpp), so the totals are printed by an at_quick_exit handler.
struct PhaseClock {
  static bool enabled() {
    static const bool on = std::getenv("ACCCHECK_REPLAY_PHASES") != nullptr;
    return on;
  }
  static std::map<std::string, double>& totals() {
    static auto* t = [] {
      std::at_quick_exit([] {
        for (const auto& [phase, seconds] : totals()) std::fprintf(stderr, "replay phase %-10s %.3f s\n", phase.c_str(), seconds);
      });
      return new std::map<std::string, double>();
    }();
    return *t;
  }
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  void mark(const char* phase) {
    if (!enabled()) return;
    auto now = std::chrono::steady_clock::now();
    static std::mutex m;  // the comparison thread marks "compare" while the job thread marks the rest
    std::lock_guard<std::mutex> lock(m);
    totals()[phase] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
};

const std::set<std::string> kNoBackward = {"repeat_interleave"};
const std::set<std::string> kUnsupportedBackward = {"masked_select"};
const std::map<std::string, std::size_t> kGradIndex = {{"topk", 0}, {"npu_fusion_attention", 0}};
// The loss scaler's bookkeeping tensors (a scale, an inf flag) stay float32 on the benchmark: the
// kernels refuse them raised ("inv_scale must be a float tensor"), and they are not data whose
// rounding the benchmark is there to beat. torch.amp.GradScaler runs these every step.
const std::map<std::string, std::set<std::string>> kFloat32Bookkeeping = {
    {"_amp_foreach_non_finite_check_and_unscale_", {"found_inf", "inv_scale"}},
    {"_amp_update_scale_", {"self", "found_inf"}}};

std::string first_line(std::string s) {
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

// Tags every tensor argument with its position in the draw order (args, then kwargs, depth first).
void tag_tensors(Argument& a, std::vector<const TensorSpec*>& specs, std::vector<bool>& positional, bool pos) {
  if (a.kind == Argument::Kind::tensor) {
    if (!a.tensor.extra.is_object()) a.tensor.extra = Json::object();
    a.tensor.extra.add(kIdKey, Json::integer(static_cast<std::int64_t>(specs.size())));
    specs.push_back(&a.tensor);
    positional.push_back(pos);
  }
  for (auto& item : a.items) tag_tensors(item, specs, positional, pos);
  for (auto& m : a.members) tag_tensors(m.second, specs, positional, pos);
}

// run-ut.md §3.2: npu_fusion_attention's sparse modes 2-4 take the compressed 2048×2048 causal mask
// (True above the diagonal). A mask without a data file is that mask, not random booleans drawn
// from its statistics (which the reference would take for a real S1×S2 mask).
void expand_compressed_mask(BoundCall& call, std::vector<at::Tensor>& base, const std::vector<const TensorSpec*>& specs,
                            const std::string& real_data_dir) {
  const auto& params = call.op.schema().arguments();
  std::optional<std::size_t> mask_at, mode_at;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].name() == "atten_mask") mask_at = i;
    if (params[i].name() == "sparse_mode") mode_at = i;
  }
  if (!mask_at || !mode_at || !call.stack[*mode_at].isInt() || !call.stack[*mask_at].isTensor()) return;
  const std::int64_t mode = call.stack[*mode_at].toInt();
  if (mode < 2 || mode > 4) return;
  const c10::TensorImpl* mask = call.stack[*mask_at].toTensor().unsafeGetTensorImpl();
  for (std::size_t i = 0; i < base.size(); ++i) {
    if (base[i].unsafeGetTensorImpl() != mask) continue;
    if (!specs[i]->data_name.empty() && !real_data_dir.empty()) return;  // the real mask, read from its file
    base[i] = at::triu(at::ones({2048, 2048}), 1).to(at::kBool);
    call.stack[*mask_at] = base[i];
    return;
  }
}

// A dropout inside an operator — F.scaled_dot_product_attention's `dropout_p` (and its kernels':
// flash, efficient, cuDNN, the CPU's), the recurrent operators' `dropout` between layers (lstm, gru,
// rnn_*) — draws random numbers: two runs of a healthy kernel differ (a GPT's attention with
// dropout 0.1 was an error on cpu against cpu). The call is replayed with it switched off on both
// sides, so the operator's arithmetic is judged; the dropout is not (docs/compat.md, run_ut).
void switch_off_inner_dropout(BoundCall& call) {
  const auto& params = call.op.schema().arguments();
  for (std::size_t i = 0; i < params.size() && i < call.stack.size(); ++i)
    if ((params[i].name() == "dropout_p" || params[i].name() == "dropout") && call.stack[i].isDouble() && call.stack[i].toDouble() != 0)
      call.stack[i] = IValue(0.0);
}

// aten::_reshape_alias(self, size, stride) is reshape's view (LibTorch 1.13 to 2.0), and its strides
// are those of the caller's `self` — often a strided view of a larger tensor, whose strides the dump
// does not hold (a tensor's statistics and shape only). Replayed on the input drawn here (dense,
// row-major) those strides point past its storage: npu-sim's view checks the bounds (SKIP, "setStorage:
// ... out of bounds", 12 APIs of torchvision's maxvit_t), the CPU's does not and read past the end of
// the allocation (garbage judged as an error). The view reshape would make of the replayed input is
// the call: its strides are computed from that input, as reshape computes them
// (at::detail::computeStride); a size the input cannot be viewed as keeps the recorded strides.
void restride_reshape_alias(BoundCall& call) {
  if (call.op.schema().name() != "aten::_reshape_alias" || call.stack.size() < 3 || !call.stack[0].isTensor() ||
      !call.stack[1].isIntList())
    return;
  const at::Tensor& self = call.stack[0].toTensor();
  const std::vector<std::int64_t> size = call.stack[1].toIntVector();
  if (auto stride = at::detail::computeStride(self.sizes(), self.strides(), c10::IntArrayRef(size))) call.stack[2] = IValue(*stride);
}

std::int64_t tensor_id(const TensorSpec& t) {
  const Json* id = t.extra.is_object() ? t.extra.find(kIdKey) : nullptr;
  if (!id) throw std::runtime_error("internal: untagged tensor argument");
  return id->as_int();
}

int memory_format_of(const std::string& f) {
  if (f == "contiguous_format") return static_cast<int>(c10::MemoryFormat::Contiguous);
  if (f == "preserve_format") return static_cast<int>(c10::MemoryFormat::Preserve);
  if (f == "channels_last") return static_cast<int>(c10::MemoryFormat::ChannelsLast);
  if (f == "channels_last_3d") return static_cast<int>(c10::MemoryFormat::ChannelsLast3d);
  throw std::runtime_error("unknown memory format '" + f + "'");
}

// A layout as Python prints it (what the dump writes: {"type": "torch.layout", "value":
// "torch.strided"}) → the schema's int (`Layout? layout`).
int layout_of(const std::string& name) {
  static const std::pair<const char*, c10::Layout> layouts[] = {
      {"torch.strided", c10::Layout::Strided}, {"torch.sparse_coo", c10::Layout::Sparse},
      {"torch.sparse_csr", c10::Layout::SparseCsr}, {"torch._mkldnn", c10::Layout::Mkldnn}};
  for (const auto& [n, l] : layouts)
    if (name == n) return static_cast<int>(l);
  throw std::runtime_error("layout '" + name + "' cannot be replayed (expected torch.strided, torch.sparse_coo, torch.sparse_csr or torch._mkldnn)");
}

IValue scalar_value(const Argument& a) {
  const Json& v = a.value;
  const std::string& t = a.type_name;
  if (v.is_null()) return IValue();
  if (t == "torch.layout" && v.is_string()) return IValue(static_cast<int64_t>(layout_of(v.as_string())));
  if (v.is_bool()) return IValue(v.as_bool());
  if (v.is_string()) return IValue(v.as_string());
  bool integer_type = t == "int" || t.find("int") != std::string::npos;
  bool float_type = t == "float" || t.find("float") != std::string::npos;
  if (float_type) return IValue(v.as_double());
  if (integer_type || v.is_integer()) return IValue(v.as_int());
  return IValue(v.as_double());
}

// A recorded argument as an IValue; tensors come from `tensors` by tag. Lists become generic lists
// (typed when the schema is bound).
IValue to_ivalue(const Argument& a, const std::vector<at::Tensor>& tensors) {
  using K = Argument::Kind;
  switch (a.kind) {
    case K::none: return IValue();
    case K::tensor: return IValue(tensors.at(static_cast<std::size_t>(tensor_id(a.tensor))));
    case K::scalar: return scalar_value(a);
    case K::size: {
      c10::List<int64_t> l;
      for (const auto& d : a.value.items()) l.push_back(d.as_int());
      return IValue(l);
    }
    case K::dtype: {
      auto st = core::scalar_type_of(a.value.as_string());
      if (!st) throw std::runtime_error("unknown dtype '" + a.value.as_string() + "'");
      return IValue(static_cast<int64_t>(*st));
    }
    case K::device: return IValue(c10::Device(c10::DeviceType::CPU));  // replaced per side
    case K::memory_format: {
      const Json* f = a.value.is_string() ? &a.value : nullptr;
      return IValue(static_cast<int64_t>(memory_format_of(f ? f->as_string() : "preserve_format")));
    }
    case K::list: {
      c10::impl::GenericList l(c10::AnyType::get());
      for (const auto& item : a.items) l.push_back(to_ivalue(item, tensors));
      return IValue(l);
    }
    case K::slice: throw std::runtime_error("slice arguments are not supported for replay");
    case K::ellipsis: throw std::runtime_error("Ellipsis arguments are not supported for replay");
    default: throw std::runtime_error("argument of type '" + a.type_name + "' cannot be replayed");
  }
}

c10::ScalarType raised(c10::ScalarType t, bool to64) {
  if (to64) return core::is_float_type(t) ? c10::kDouble : t;
  if (t == c10::kHalf || t == c10::kBFloat16) return c10::kFloat;
  if (t == c10::kFloat) return c10::kDouble;
  return t;
}

// The benchmark's dtype for floating inputs (run-ut.md §3.5): one low-precision dtype raises one
// step, a mix raises to float32; nullopt: no raising.
std::optional<c10::ScalarType> raise_dtype(const std::vector<at::Tensor>& inputs, bool to64) {
  if (to64) return c10::kDouble;
  std::set<c10::ScalarType> seen;
  for (const auto& t : inputs)
    if (t.defined() && (t.scalar_type() == c10::kHalf || t.scalar_type() == c10::kBFloat16 || t.scalar_type() == c10::kFloat))
      seen.insert(t.scalar_type());
  if (seen.empty()) return std::nullopt;
  if (seen.size() == 1) return raised(*seen.begin(), false);
  return c10::kFloat;
}

// Replaces tensors (by identity) and devices in a bound argument.
IValue substitute(const IValue& v, const std::map<const c10::TensorImpl*, at::Tensor>& swap, c10::Device device) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    auto it = swap.find(t.unsafeGetTensorImpl());
    return it == swap.end() ? v : IValue(it->second);
  }
  if (v.isDevice()) return IValue(device);
  if (v.isTensorList()) {
    c10::List<at::Tensor> l;
    for (const at::Tensor t : v.toTensorList()) l.push_back(substitute(IValue(t), swap, device).toTensor());
    return IValue(l);
  }
  if (v.isOptionalTensorList()) {
    c10::List<c10::optional<at::Tensor>> l;
    for (const c10::optional<at::Tensor> t : v.toOptionalTensorList())
      l.push_back(t ? c10::optional<at::Tensor>(substitute(IValue(*t), swap, device).toTensor()) : c10::nullopt);
    return IValue(l);
  }
  return v;
}

// The tensor autograd starts from: the output (or output[grad_index]) of one side.
at::Tensor backward_root(const std::vector<IValue>& results, const std::string& short_api) {
  std::size_t index = kGradIndex.count(short_api) ? kGradIndex.at(short_api) : 0;
  IValue r = results.size() == 1 ? results[0] : IValue();
  if (results.size() == 1 && (r.isTensorList() || r.isList())) {
    auto l = r.toList();
    if (index >= l.size()) throw std::runtime_error("grad_index out of range");
    return l.get(index).toTensor();
  }
  if (results.size() > 1) return results.at(index).toTensor();
  if (!r.isTensor()) throw std::runtime_error("the output is not a tensor; cannot run backward");
  return r.toTensor();
}

// The outputs autograd can start from (those that require grad), in output order, tensor lists
// flattened: the node's inputs, whose gradients the dump's backward entry holds in the same order.
// Every tensor among the results, depth first (undefined ones included: positions match across sides).
std::vector<at::Tensor> output_tensors(const std::vector<IValue>& results) {
  std::vector<at::Tensor> out;
  std::function<void(const IValue&)> walk = [&](const IValue& v) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTensorList() || v.isList()) {
      const auto list = v.toList();
      for (std::size_t k = 0; k < list.size(); ++k) walk(list.get(k));
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) walk(e);
    }
  };
  for (const auto& r : results) walk(r);
  return out;
}

bool multi_output(const std::vector<IValue>& results) {
  return results.size() > 1 || (results.size() == 1 && (results[0].isList() || results[0].isTuple()));
}

// An operator that returns nothing and writes arguments — the in-place foreach family optimizers
// and gradient clipping run (`_foreach_mul_(Tensor(a!)[] self, Tensor other) -> ()`, the default on
// CUDA and NPU) — produces what it wrote: the tensors of those arguments (which share the memory
// the call writes), in schema order with lists flattened, are its results (GradScaler's
// `_amp_foreach_non_finite_check_and_unscale_` writes a list and a flag: one output each tensor).
// Empty for every other operator. Without this the call had no output to compare and passed
// unjudged.
std::vector<IValue> written_arguments(const c10::FunctionSchema& schema, const std::vector<IValue>& stack) {
  std::vector<IValue> written;
  if (!schema.returns().empty()) return written;
  const auto& params = schema.arguments();
  for (std::size_t i = 0; i < params.size() && i < stack.size(); ++i) {
    if (!params[i].alias_info() || !params[i].alias_info()->isWrite()) continue;
    if (stack[i].isTensorList()) {
      for (const at::Tensor t : stack[i].toTensorList()) written.emplace_back(t);
    } else {
      written.push_back(stack[i]);
    }
  }
  return written;
}

IValue results_value(std::vector<IValue> results) {
  if (results.size() == 1) return results[0];
  return IValue(c10::ivalue::Tuple::create(std::move(results)));
}

struct Side {
  std::vector<at::Tensor> inputs;  // by tag; grad-tracking copies where the record requires grad
  std::vector<IValue> results;
};

Side make_side(const std::vector<at::Tensor>& base, const std::vector<bool>& wants_grad, bool need_grad,
               const std::function<at::Tensor(const at::Tensor&)>& convert) {
  Side s;
  for (std::size_t i = 0; i < base.size(); ++i) {
    at::Tensor t = convert(base[i].detach());
    if (need_grad && wants_grad[i] && t.is_floating_point()) {
      at::Tensor leaf = t.detach().requires_grad_(true);
      t = leaf.mul(1).type_as(leaf);
      t.retain_grad();
    }
    s.inputs.push_back(t);
  }
  return s;
}

// -save_error_data (run-ut.md §7.4): every tensor leaf of `values`, depth first, as
// <stem>.<i>.pt (contiguous CPU copies Python's torch.load reads); <i> counts every leaf. Returns
// the first failure ("" when every file was written); it stops there.
std::string save_tensors(const std::string& stem, const std::vector<IValue>& values, const DevicePlugin* device) {
  std::size_t index = 0;
  std::string problem;
  std::function<void(const IValue&)> walk = [&](const IValue& v) {
    if (!problem.empty()) return;
    if (v.isTensorList() || v.isList()) {
      const auto list = v.toList();
      for (std::size_t k = 0; k < list.size(); ++k) walk(list.get(k));
      return;
    }
    if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) walk(e);
      return;
    }
    std::size_t i = index++;
    if (!v.isTensor() || !v.toTensor().defined()) return;
    at::Tensor t = v.toTensor().detach();
    if (device && t.device() != c10::Device(c10::DeviceType::CPU)) t = device->to_cpu(t);
    problem = write_error_data_file(stem + "." + std::to_string(i) + ".pt", core::tensor_file_bytes(t));
  };
  for (const auto& v : values) walk(v);
  return problem;
}

// The comparison half of an API (no LibTorch operator call): every failure inside is its SKIP row.
ApiResult finish_comparison(PendingComparison& p, const MetricContext& metrics) {
  PhaseClock phases;
  try {
    p.widening.run();
    ApiResult result = compare_api(p.outputs, metrics);
    result.operator_seconds = p.operator_seconds;
    phases.mark("compare");
    return result;
  } catch (const std::exception& e) {
    return skip_api(p.api, first_line(e.what()));
  }
}

ReplayedApi replay(const ApiRecord& fwd_in, const ApiRecord* bwd, const ReplayContext& ctx, bool plan_only) {
  const std::string short_api = short_api_name(fwd_in.api);
  ApiRecord fwd = fwd_in;
  // run-ut.md §3.1: cross_entropy targets must be non-negative.
  if (short_api == "cross_entropy" && fwd.args.size() > 1 && fwd.args[1].kind == Argument::Kind::tensor &&
      fwd.args[1].tensor.min.present() && fwd.args[1].tensor.min.value <= 0)
    fwd.args[1].tensor.min.value = 0;
  std::vector<const TensorSpec*> specs;
  std::vector<bool> positional;
  for (auto& a : fwd.args) tag_tensors(a, specs, positional, true);
  for (auto& kw : fwd.kwargs) tag_tensors(kw.second, specs, positional, false);
  bool has_out = false;
  for (const auto& kw : fwd.kwargs) has_out = has_out || kw.first == "out";
  const bool need_grad = !has_out;

  // Inputs, in the record's order, from the entry's own generator.
  PhaseClock phases;
  InputGenerator gen(fwd.api, ctx.real_data_dir, short_api);
  gen.allow_outside_dump = ctx.allow_outside_dump;
  std::vector<at::Tensor> base;
  std::vector<bool> wants_grad;
  for (const TensorSpec* s : specs) {
    if (plan_only) {
      auto st = core::scalar_type_of(s->dtype);
      if (!st) throw std::runtime_error("unknown dtype '" + s->dtype + "'");
      base.push_back(at::empty(s->shape, at::TensorOptions().dtype(*st).device(c10::kMeta)));
    } else {
      base.push_back(gen.tensor(*s));
    }
    wants_grad.push_back(s->requires_grad);
  }

  // Record → operator call.
  ReplayPlan plan;
  BenchFunction bench_function;
  if (!fwd.op_name.empty()) {
    plan.op = fwd.op_name + (fwd.op_overload.empty() ? "" : "." + fwd.op_overload);
    plan.args = fwd.args;
    plan.kwargs = fwd.kwargs;
  } else if (fwd.api.rfind("NPU.", 0) == 0) {
    // Vendor ops (run-ut.md §4): the device runs the vendor's operator; the benchmark runs the
    // device plugin's reference implementation of it (looked up below).
    plan.op = "npu::" + fwd.api.substr(4, fwd.api.rfind('.') - 4);
    plan.args = fwd.args;
    plan.kwargs = fwd.kwargs;
    // msprobe records the optimizer steps' out=(var, m, v) as one list; the schema names them.
    if (plan.op == "npu::npu_apply_adam_w" || plan.op == "npu::npu_apply_adam")
      for (std::size_t i = 0; i < plan.kwargs.size(); ++i)
        if (plan.kwargs[i].first == "out" && plan.kwargs[i].second.kind == Argument::Kind::list && plan.kwargs[i].second.items.size() == 3) {
          auto state = plan.kwargs[i].second.items;
          plan.kwargs.erase(plan.kwargs.begin() + static_cast<std::ptrdiff_t>(i));
          plan.kwargs.emplace_back("var", state[0]);
          plan.kwargs.emplace_back("m", state[1]);
          plan.kwargs.emplace_back("v", state[2]);
          break;
        }
  } else if (fwd.api.rfind("Aten.", 0) == 0) {
    std::string rest = fwd.api.substr(5, fwd.api.rfind('.') - 5);  // "mm" / "add.Tensor"
    plan.op = "aten::" + rest;
    plan.args = fwd.args;
    plan.kwargs = fwd.kwargs;
  } else {
    bool found = false;
    std::string why;
    for (const HookPlugin* h : ctx.planners) {
      if (auto p = h->plan_replay(fwd, why)) {
        plan = std::move(*p);
        found = true;
        break;
      }
      if (!why.empty()) break;
    }
    if (!found) throw std::runtime_error(why.empty() ? "no hook plugin knows how to replay " + fwd.api : why);
  }
  // An operator outside aten with a reference among the device plugin's bench functions (a vendor's
  // fused operator, which has no CPU kernel) runs that reference on the benchmark side, whether the
  // entry comes from msprobe (NPU.<op>) or from our capture (op_name npu::<op>).
  {
    const std::string base_op = plan.op.substr(0, plan.op.find('.', plan.op.find("::")));
    if (base_op.rfind("aten::", 0) != 0) {
      if (auto it = ctx.bench_functions.find(base_op); it != ctx.bench_functions.end()) bench_function = it->second;
      else if (base_op.rfind("npu::", 0) == 0) throw std::runtime_error("There is not bench function " + base_op.substr(5));
    }
  }
  // A random operator's outputs differ from run to run on any device: there is nothing to judge
  // (dropout keeps the reference's zero-count rule; docs/compat.md).
  if (fwd.api.find("dropout") == std::string::npos && draws_random_numbers(plan.op))
    throw std::runtime_error(plan.op.substr(0, plan.op.find('.', plan.op.find("::"))) +
                             " draws random numbers: its outputs differ from run to run, so it is not judged");
  std::vector<IValue> args;
  std::vector<std::pair<std::string, IValue>> kwargs;
  for (const auto& a : plan.args) args.push_back(to_ivalue(a, base));
  for (const auto& [k, a] : plan.kwargs) kwargs.emplace_back(k, to_ivalue(a, base));
  phases.mark("generate");
  BoundCall call = bind_operator(plan.op, args, kwargs);
  restride_reshape_alias(call);
  switch_off_inner_dropout(call);
  if (short_api == "npu_fusion_attention" && !plan_only) expand_compressed_mask(call, base, specs, ctx.real_data_dir);
  phases.mark("bind");
  if (plan_only) {
    ApiResult ok;
    ok.api = fwd.api;
    return ReplayedApi::finished(std::move(ok));
  }

  // The two sides' inputs.
  const bool no_raise = short_api == "type_as";
  const bool keep_fp32 = short_api == "conv1d" || short_api == "conv2d";
  std::optional<c10::ScalarType> bench_dtype = no_raise ? std::nullopt : raise_dtype(base, ctx.bench_float64);
  auto to_bench = [&](const at::Tensor& t) {
    c10::ScalarType st = t.scalar_type();
    bool raise = bench_dtype && (st == c10::kHalf || st == c10::kBFloat16 || st == c10::kFloat ||
                                 (ctx.bench_float64 && st == c10::kDouble));
    if (keep_fp32 && st == c10::kFloat && !ctx.bench_float64) raise = false;
    // float8 inputs run in float32 on the benchmark (run-ut.md §3.5), decoded exactly: LibTorch's
    // cast, not the reference's decoder, whose subnormals come out 2^121 too small (docs/compat.md).
    if (core::is_float8_type(st)) return at::_to_copy(t, at::TensorOptions().dtype(ctx.bench_float64 ? c10::kDouble : c10::kFloat));
    return at::_to_copy(t, at::TensorOptions().dtype(raise ? *bench_dtype : st));
  };
  auto to_device = [&](const at::Tensor& t) { return ctx.device->to_device(t); };  // a copy (device contract)
  phases.mark("bind");
  Side bench = make_side(base, wants_grad, need_grad, to_bench);
  Side device = make_side(base, wants_grad, need_grad, to_device);
  phases.mark("inputs");

  const auto bookkeeping_it = kFloat32Bookkeeping.find(short_api);
  const std::set<std::string>* bookkeeping = bookkeeping_it == kFloat32Bookkeeping.end() ? nullptr : &bookkeeping_it->second;
  auto stack_for = [&](const Side& side, c10::Device where, bool is_bench) {
    std::map<const c10::TensorImpl*, at::Tensor> swap;
    for (std::size_t i = 0; i < base.size(); ++i) swap[base[i].unsafeGetTensorImpl()] = side.inputs[i];
    std::vector<IValue> stack;
    const auto& params = call.op.schema().arguments();
    for (std::size_t i = 0; i < call.stack.size(); ++i) {
      IValue v = substitute(call.stack[i], swap, where);
      if (is_bench && bookkeeping && bookkeeping->count(params[i].name()) && v.isTensor() &&
          v.toTensor().scalar_type() == c10::kDouble)
        v = IValue(v.toTensor().to(c10::kFloat));
      // A dtype argument follows the benchmark's raised precision.
      if (is_bench && bench_dtype && params[i].name() == "dtype" && v.isInt()) {
        auto st = static_cast<c10::ScalarType>(v.toInt());
        if (st == c10::kHalf || st == c10::kBFloat16 || st == c10::kFloat) v = IValue(static_cast<int64_t>(*bench_dtype));
      }
      stack.push_back(std::move(v));
    }
    return stack;
  };
  std::vector<IValue> bench_stack = stack_for(bench, c10::Device(c10::DeviceType::CPU), true);
  using Clock = std::chrono::steady_clock;
  double op_seconds = 0;
  auto timed = [&](const auto& fn) {
    auto t0 = Clock::now();
    fn();
    op_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto t_bench = Clock::now();
  if (bench_function) {
    bench.results = bench_function(bench_stack);
  } else {
    std::vector<IValue> written = written_arguments(call.op.schema(), bench_stack);
    call.op.callBoxed(&bench_stack);
    bench.results = written.empty() ? std::move(bench_stack) : std::move(written);
  }
  op_seconds += std::chrono::duration<double>(Clock::now() - t_bench).count();
  phases.mark("fwd_ops");
  std::vector<IValue> device_stack = stack_for(device, ctx.device->device(), false);
  std::vector<IValue> device_written = written_arguments(call.op.schema(), device_stack);
  timed([&] {
    ctx.device->call_operator(call.op, device_stack);
    ctx.device->synchronize();
  });
  device.results = device_written.empty() ? std::move(device_stack) : std::move(device_written);
  phases.mark("fwd_ops");

  // With -save_error_data the comparison must run here: it decides which tensors to save.
  const bool defer = ctx.error_data_dir.empty();
  auto pending = std::make_shared<PendingComparison>();
  pending->api = fwd.api;
  DeferredWidening* widening = defer ? &pending->widening : nullptr;
  ApiOutputs& out = pending->outputs;
  out.api = fwd.api;
  // run-ut.md §3.5: `is_fp8` when any input is float8 (it picks the standard and its thresholds).
  for (const auto& t : base) out.fp8_input = out.fp8_input || (t.defined() && core::is_float8_type(t.scalar_type()));
  auto cpu = [](const at::Tensor& t) { return t; };
  auto dev_to_cpu = [&](const at::Tensor& t) { return ctx.device->to_cpu(t); };
  // run-ut.md §4: of npu_fusion_attention's results only the attention output is compared (the
  // reference returns three, the device seven; softmax_max/sum are the kernel's own bookkeeping).
  auto compared = [&](const std::vector<IValue>& r) {
    return short_api == "npu_fusion_attention" && r.size() > 1 ? std::vector<IValue>{r[0]} : r;
  };
  out.bench = output_value_of(results_value(compared(bench.results)), cpu, widening);
  out.device = output_value_of(results_value(compared(device.results)), dev_to_cpu, widening);
  phases.mark("widen");

  // Backward (run-ut.md §5).
  at::Tensor seed_for_save;
  auto collect_input_grads = [&] {
    for (std::size_t i = 0; i < base.size(); ++i) {
      if (!positional[i]) continue;
      auto grad_of = [&](const at::Tensor& t, bool on_device) {
        at::Tensor g = t.defined() && t.requires_grad() ? t.grad() : at::Tensor();
        if (!g.defined()) return OutputValue::none();
        return on_device ? output_value_of(IValue(g), dev_to_cpu, widening) : output_value_of(IValue(g), cpu, widening);
      };
      out.bench_grads.push_back(grad_of(bench.inputs[i], false));
      out.device_grads.push_back(grad_of(device.inputs[i], true));
    }
  };
  if (has_out) {
    out.backward_message = "function with out=... arguments don't support automatic differentiation, skip backward.";
  } else if (kNoBackward.count(short_api)) {
    out.backward_message = "This API does not have backward input data, skip backward.";
  } else if (kUnsupportedBackward.count(short_api)) {
    out.backward_message = "This API does not support backward ut, skip backward.";
  } else if (bwd && out.bench.kind != OutputValue::Kind::none) {
    if (multi_output(bench.results) && !kGradIndex.count(short_api)) {
      // Beyond the reference ("Multiple backward is not supported."): every output that requires
      // grad gets the gradient the dump recorded for it (in the node's order), zeros where it got
      // none — native_batch_norm, native_layer_norm, max_pool2d_with_indices, lstm, gru, ...
      // The recorded gradients follow the device's outputs that require grad (the node's inputs, in
      // order). An output is a root where it requires grad on both sides: one that depends on no
      // input requiring grad (rms_norm's rstd when only gamma does) requires none in the reference,
      // however a fused kernel's autograd node marks it.
      const std::vector<at::Tensor> outs_bench = output_tensors(bench.results), outs_device = output_tensors(device.results);
      auto requires_grad = [](const at::Tensor& t) { return t.defined() && t.requires_grad(); };
      std::size_t device_roots = 0;
      for (const auto& t : outs_device) device_roots += requires_grad(t);
      if (bwd->grad_inputs.size() > device_roots)
        throw std::runtime_error(bwd->entry_name() + ": field 'input': " + std::to_string(bwd->grad_inputs.size()) +
                                 " gradients for " + std::to_string(device_roots) + " outputs that require grad");
      std::vector<at::Tensor> roots_bench, roots_device, seeds_bench, seeds_device;
      for (std::size_t i = 0, k = 0; i < outs_device.size(); ++i) {
        if (!requires_grad(outs_device[i])) continue;
        const std::size_t seed_index = k++;
        if (i >= outs_bench.size() || !requires_grad(outs_bench[i])) continue;
        const bool recorded = seed_index < bwd->grad_inputs.size() && bwd->grad_inputs[seed_index].kind == Argument::Kind::tensor;
        at::Tensor seed = recorded ? gen.tensor(bwd->grad_inputs[seed_index].tensor)
                                   : at::zeros(outs_device[i].sizes(), outs_device[i].options().device(c10::kCPU));
        if (roots_bench.empty()) seed_for_save = seed;
        roots_bench.push_back(outs_bench[i]);
        roots_device.push_back(outs_device[i]);
        seeds_bench.push_back(at::_to_copy(seed, at::TensorOptions().dtype(outs_bench[i].scalar_type())));
        seeds_device.push_back(to_device(seed));
      }
      if (roots_bench.empty()) throw std::runtime_error("no output of " + fwd.api + " requires grad on both sides; cannot run backward");
      phases.mark("seed");
      timed([&] { torch::autograd::backward(roots_bench, seeds_bench); });
      timed([&] {
        torch::autograd::backward(roots_device, seeds_device);
        ctx.device->synchronize();
      });
      phases.mark("bwd_ops");
      collect_input_grads();
    } else {
      if (bwd->grad_inputs.empty() || bwd->grad_inputs[0].kind != Argument::Kind::tensor)
        throw std::runtime_error(bwd->entry_name() + ": field 'input': expected the gradient of output 0 (a tensor)");
      at::Tensor seed = gen.tensor(bwd->grad_inputs[0].tensor);
      seed_for_save = seed;
      at::Tensor seed_bench = at::_to_copy(seed, at::TensorOptions().dtype(raised(seed.scalar_type(), ctx.bench_float64)));
      at::Tensor seed_device = to_device(seed);
      at::Tensor root_bench = backward_root(bench.results, short_api), root_device = backward_root(device.results, short_api);
      phases.mark("seed");
      timed([&] { root_bench.backward(seed_bench); });
      timed([&] {
        root_device.backward(seed_device);
        ctx.device->synchronize();
      });
      phases.mark("bwd_ops");
      collect_input_grads();
    }
  }
  phases.mark("widen");
  if (ctx.error_data_dir.empty()) {
    // Free every tensor the comparison does not read before it runs (peak memory): it reads the
    // widened copies, and the contiguous float64 results in place (their values keep them).
    base.clear();
    bench = Side{};
    device = Side{};
    args.clear();
    kwargs.clear();
    call.stack.clear();
  }
  phases.mark("free");
  pending->operator_seconds = op_seconds;
  if (defer) return ReplayedApi::comparison_due(std::move(pending));
  ApiResult result = finish_comparison(*pending, ctx.metrics);
  bool failed = result.forward_status != "pass" || (result.backward_status != "pass" && result.backward_status != " ");
  if (!ctx.error_data_dir.empty() && failed) {
    const std::string stem = ctx.error_data_dir + "/" + error_data_stem(fwd.api);
    std::vector<IValue> grads_bench, grads_device;
    for (std::size_t i = 0; i < base.size(); ++i)
      if (positional[i]) {
        grads_bench.push_back(bench.inputs[i].defined() && bench.inputs[i].requires_grad() ? IValue(bench.inputs[i].grad()) : IValue());
        grads_device.push_back(device.inputs[i].defined() && device.inputs[i].requires_grad() ? IValue(device.inputs[i].grad()) : IValue());
      }
    std::vector<IValue> inputs(base.begin(), base.end());
    // A failure to save is reported on its own: the verdicts computed above stand (issue 25).
    std::string& problem = result.error_data_problem;
    try {
      problem = save_tensors(stem + ".forward.input", inputs, nullptr);
      if (problem.empty()) problem = save_tensors(stem + ".forward.output.bench", bench.results, nullptr);
      if (problem.empty()) problem = save_tensors(stem + ".forward.output.device", device.results, ctx.device);
      if (problem.empty() && seed_for_save.defined())
        problem = save_tensors(stem + ".backward.input", {IValue(seed_for_save)}, nullptr);
      if (problem.empty() && !out.bench_grads.empty()) {
        problem = save_tensors(stem + ".backward.output.bench", grads_bench, nullptr);
        if (problem.empty()) problem = save_tensors(stem + ".backward.output.device", grads_device, ctx.device);
      }
    } catch (const std::exception& e) {
      problem = stem + ".*: " + first_line(e.what());
    }
  }
  return ReplayedApi::finished(std::move(result));
}

}  // namespace

ReplayedApi replay_api_until_comparison(const ApiRecord& forward, const ApiRecord* backward, const ReplayContext& ctx,
                                        bool plan_only) {
  try {
    return replay(forward, backward, ctx, plan_only);
  } catch (const c10::Error& e) {
    return ReplayedApi::finished(skip_api(forward.api, first_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    return ReplayedApi::finished(skip_api(forward.api, first_line(e.what())));
  }
}

namespace {
std::size_t elements_of(const OutputValue& v) {
  std::size_t n = v.data.size();
  for (const auto& item : v.items) n += elements_of(item);
  for (const auto& [name, member] : v.members) n += elements_of(member);
  return n;
}
}  // namespace

std::size_t ReplayedApi::comparison_elements() const {
  if (!pending) return 0;
  const ApiOutputs& o = pending->outputs;
  std::size_t n = elements_of(o.bench) + elements_of(o.device);
  for (const auto& g : o.bench_grads) n += elements_of(g);
  for (const auto& g : o.device_grads) n += elements_of(g);
  return n;
}

ApiResult ReplayedApi::finish(const MetricContext& metrics) {
  if (!result) {
    result = finish_comparison(*pending, metrics);
    pending.reset();  // the outputs' memory goes now, on this thread
  }
  return *result;
}

ApiResult replay_api(const ApiRecord& forward, const ApiRecord* backward, const ReplayContext& ctx, bool plan_only) {
  return replay_api_until_comparison(forward, backward, ctx, plan_only).finish(ctx.metrics);
}

}  // namespace acccheck::replay
