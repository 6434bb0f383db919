// References and device formulas of the fused normalisations, activations and reshapes. The
// references follow msprobe's bench functions step by step (their intermediate casts included:
// they decide the reference's own rounding); the deliberate differences are in docs/compat.md.
#include <ATen/ATen.h>

#include <stdexcept>

#include "fused_formulas.hpp"
#include "named_args.hpp"

namespace acccheck::fused {

at::Tensor widened(const at::Tensor& t) {
  return t.defined() && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16) ? t.to(at::kFloat) : t;
}

namespace {

Values one(const at::Tensor& t) { return {c10::IValue(t)}; }

// ---- npu_rms_norm(x, gamma, epsilon) -> (y, rstd) ----------------------------------------------------
std::pair<at::Tensor, at::Tensor> rms_norm(const at::Tensor& x, const at::Tensor& gamma, double eps) {
  at::Tensor rstd = at::rsqrt(at::mean(at::pow(x, 2), {-1}, true) + eps);
  return {x * rstd * gamma, rstd};
}

// ---- npu_swiglu(x, dim) --------------------------------------------------------------------------------
std::vector<at::Tensor> swiglu_halves(const at::Tensor& x, int64_t dim) {
  const int64_t size = x.dim() > 0 ? x.size(dim) : 0;
  if (size % 2 != 0 || size == 0)
    throw std::runtime_error("npu_swiglu: cannot split a dimension of size " + std::to_string(size) + " in two halves");
  return at::chunk(x, 2, dim);
}

at::Tensor swiglu_reference(const at::Tensor& x, int64_t dim) {
  auto halves = swiglu_halves(x, dim);
  if (x.scalar_type() == at::kFloat) return at::sigmoid(halves[0] * 1.0) * halves[0] * halves[1];
  // msprobe: silu in float32, rounded to the input dtype, times the second half in float32, cast back
  // (float64 inputs take this path too, so the float32 replay's reference is float32 — as msprobe's).
  at::Tensor a = halves[0].to(at::kFloat), b = halves[1].to(at::kFloat);
  return (at::silu(a).to(x.scalar_type()).to(at::kFloat) * b).to(x.scalar_type());
}

// ---- npu_rotary_mul(x, r1, r2[, rotary_mode]) -----------------------------------------------------------
at::Tensor rotate_half(const at::Tensor& x) {
  auto halves = at::chunk(x, 2, -1);
  return at::cat({-halves[1], halves[0]}, -1);
}

void require_half_mode(const NamedArgs& a) {
  std::string mode = a.text("rotary_mode", "half");
  if (mode != "half")
    throw std::runtime_error("npu_rotary_mul: rotary_mode '" + mode + "' has no reference (the reference rotates halves: 'half')");
}

// ---- npu_fast_gelu(x) -----------------------------------------------------------------------------------
at::Tensor fast_gelu(const at::Tensor& x) {
  constexpr double attr = 1.702;
  at::Tensor abs_x = at::abs(x);
  at::Tensor div_down = at::exp(abs_x * -attr) + 1;
  at::Tensor div_up = x * at::exp((x - abs_x) * (attr / 2));
  return div_up * at::reciprocal(div_down);
}

// ---- npu_scaled_masked_softmax(x, mask, scale, fixed_triu_mask) ---------------------------------------
at::Tensor scaled_masked_softmax(const at::Tensor& x_in, at::Tensor mask, double scale, bool fixed_triu_mask) {
  if (fixed_triu_mask) mask = at::triu(at::ones(mask.sizes(), at::TensorOptions().device(mask.device())), 1).to(at::kBool);
  const auto dtype = x_in.scalar_type();
  at::Tensor x = (x_in * scale).masked_fill(mask.to(at::kBool), -10000);
  x = x - std::get<0>(at::max(x, -1, true));
  x = at::exp(x.to(at::kFloat));  // msprobe: x.float(), whatever the input dtype
  return (x / at::sum(x, {-1}, true)).to(dtype);
}

// ---- npu_group_norm_silu(x, gamma, beta, group, eps) -> (y, mean, rstd) --------------------------------
std::tuple<at::Tensor, at::Tensor, at::Tensor> group_norm_silu(const at::Tensor& x, const std::optional<at::Tensor>& gamma,
                                                               const std::optional<at::Tensor>& beta, int64_t group, double eps) {
  if (x.dim() != 4) throw std::runtime_error("npu_group_norm_silu: x must be 4-D (N, C, H, W), got " + std::to_string(x.dim()) + "-D");
  auto [y, mean, rstd] = at::native_group_norm(x, gamma ? c10::optional<at::Tensor>(*gamma) : c10::nullopt,
                                               beta ? c10::optional<at::Tensor>(*beta) : c10::nullopt, x.size(0), x.size(1),
                                               x.size(2) * x.size(3), group, eps);
  return {at::silu(y), mean, rstd};
}

// ---- npu_moe_gating_top_k_softmax(x, finished, k) -> (y, expert_idx, row_idx) ---------------------------
std::tuple<at::Tensor, at::Tensor, at::Tensor> moe_gating(const at::Tensor& x, const std::optional<at::Tensor>& finished, int64_t k,
                                                          c10::ScalarType softmax_dtype) {
  if (x.dim() != 2) throw std::runtime_error("npu_moe_gating_top_k_softmax: x must be 2-D (rows, experts), got " + std::to_string(x.dim()) + "-D");
  const int64_t experts = x.size(-1);
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor e = at::exp(xf - std::get<0>(at::max(xf, -1, true)));
  at::Tensor s = at::sum(e, {-1}, true);
  // msprobe: a zero sum anywhere makes the whole softmax 0.
  at::Tensor softmax = (s == 0).any().item<bool>() ? at::zeros_like(e) : e / s;
  softmax = softmax.to(softmax_dtype);
  at::Tensor order = std::get<1>(at::sort(-softmax, /*stable=*/true, -1, false));  // stable descending
  at::Tensor idx = order.slice(1, 0, k);
  at::Tensor y = at::gather(softmax, -1, idx);
  if (finished) {
    at::Tensor f = finished->view({finished->size(0), 1}).expand({-1, k});
    idx = at::where(f, at::full({}, experts, idx.options()), idx);
  }
  at::Tensor row_idx = at::arange(y.size(0) * y.size(1), idx.options()).reshape({y.size(1), y.size(0)}).t();
  return {y, idx, row_idx};
}

}  // namespace

Values rms_norm_reference(const Values& args) {
  NamedArgs a("npu::npu_rms_norm", args);
  auto [y, rstd] = rms_norm(a.tensor("self"), a.tensor("gamma"), a.number("epsilon", 1e-6));
  return {y, rstd.to(at::kFloat)};
}
Values rms_norm_device(const Values& args) {
  NamedArgs a("npu::npu_rms_norm", args);
  at::Tensor x = a.tensor("self");
  auto [y, rstd] = rms_norm(widened(x), widened(a.tensor("gamma")), a.number("epsilon", 1e-6));
  return {y.to(x.scalar_type()), rstd.to(at::kFloat)};
}

Values swiglu_reference(const Values& args) {
  NamedArgs a("npu::npu_swiglu", args);
  return one(swiglu_reference(a.tensor("self"), a.integer("dim", -1)));
}
Values swiglu_device(const Values& args) {
  NamedArgs a("npu::npu_swiglu", args);
  at::Tensor x = a.tensor("self");
  auto halves = swiglu_halves(widened(x), a.integer("dim", -1));
  return one((at::silu(halves[0]) * halves[1]).to(x.scalar_type()));
}

Values rotary_mul_reference(const Values& args) {
  NamedArgs a("npu::npu_rotary_mul", args);
  require_half_mode(a);
  at::Tensor x = a.tensor("self");
  return one(a.tensor("r1") * x + a.tensor("r2") * rotate_half(x));
}
Values rotary_mul_device(const Values& args) {
  NamedArgs a("npu::npu_rotary_mul", args);
  require_half_mode(a);
  at::Tensor x = a.tensor("self"), xf = widened(x);
  return one((widened(a.tensor("r1")) * xf + widened(a.tensor("r2")) * rotate_half(xf)).to(x.scalar_type()));
}

Values fast_gelu_reference(const Values& args) { return one(fast_gelu(args.at(0).toTensor())); }
Values fast_gelu_device(const Values& args) {
  at::Tensor x = args.at(0).toTensor();
  return one(fast_gelu(widened(x)).to(x.scalar_type()));
}

Values linear_reference(const Values& args) {
  NamedArgs a("npu::npu_linear", args);
  return one(at::linear(a.tensor("input"), a.tensor("weight"), a.optional_tensor("bias") ? c10::optional<at::Tensor>(*a.optional_tensor("bias")) : c10::nullopt));
}
Values linear_device(const Values& args) {
  NamedArgs a("npu::npu_linear", args);
  at::Tensor x = a.tensor("input");
  auto bias = a.optional_tensor("bias");
  return one(at::linear(widened(x), widened(a.tensor("weight")), bias ? c10::optional<at::Tensor>(widened(*bias)) : c10::nullopt)
                 .to(x.scalar_type()));
}

Values confusion_transpose_reference(const Values& args) {
  NamedArgs a("npu::npu_confusion_transpose", args);
  at::Tensor x = a.tensor("self");
  auto perm = a.integers("perm"), shape = a.integers("shape");
  if (a.flag("transpose_first", false)) return one(x.permute(perm).contiguous().view(shape));
  return one(x.view(shape).permute(perm));
}
// Data movement only: the device's result is the reference's, bit for bit.
Values confusion_transpose_device(const Values& args) { return confusion_transpose_reference(args); }

Values scaled_masked_softmax_reference(const Values& args) {
  NamedArgs a("npu::npu_scaled_masked_softmax", args);
  return one(scaled_masked_softmax(a.tensor("x"), a.tensor("mask"), a.number("scale", 1.0), a.flag("fixed_triu_mask", false)));
}
Values scaled_masked_softmax_device(const Values& args) {
  NamedArgs a("npu::npu_scaled_masked_softmax", args);
  at::Tensor x = a.tensor("x");
  return one(scaled_masked_softmax(widened(x), a.tensor("mask"), a.number("scale", 1.0), a.flag("fixed_triu_mask", false)).to(x.scalar_type()));
}

Values mish_reference(const Values& args) { return one(at::mish(args.at(0).toTensor())); }
Values mish_device(const Values& args) {
  at::Tensor x = args.at(0).toTensor();
  return one(at::mish(widened(x)).to(x.scalar_type()));
}

// msprobe's reference is F.layer_norm(x, normalized_shape): it drops weight, bias and eps, so every
// call with a weight other than ones fails on a healthy device. Here they are applied (compat.md).
Values layer_norm_eval_reference(const Values& args) {
  NamedArgs a("npu::npu_layer_norm_eval", args);
  auto w = a.optional_tensor("weight"), b = a.optional_tensor("bias");
  return one(at::layer_norm(a.tensor("input"), a.integers("normalized_shape"), w ? c10::optional<at::Tensor>(*w) : c10::nullopt,
                            b ? c10::optional<at::Tensor>(*b) : c10::nullopt, a.number("eps", 1e-5)));
}
Values layer_norm_eval_device(const Values& args) {
  NamedArgs a("npu::npu_layer_norm_eval", args);
  at::Tensor x = a.tensor("input");
  auto w = a.optional_tensor("weight"), b = a.optional_tensor("bias");
  return one(at::layer_norm(widened(x), a.integers("normalized_shape"), w ? c10::optional<at::Tensor>(widened(*w)) : c10::nullopt,
                            b ? c10::optional<at::Tensor>(widened(*b)) : c10::nullopt, a.number("eps", 1e-5))
                 .to(x.scalar_type()));
}

Values group_norm_silu_reference(const Values& args) {
  NamedArgs a("npu::npu_group_norm_silu", args);
  auto [y, mean, rstd] = group_norm_silu(a.tensor("input"), a.optional_tensor("weight"), a.optional_tensor("bias"),
                                         a.integer("group", 1), a.number("eps", 1e-5));
  return {y, mean, rstd};
}
Values group_norm_silu_device(const Values& args) {
  NamedArgs a("npu::npu_group_norm_silu", args);
  at::Tensor x = a.tensor("input");
  auto w = a.optional_tensor("weight"), b = a.optional_tensor("bias");
  auto [y, mean, rstd] = group_norm_silu(widened(x), w ? std::optional<at::Tensor>(widened(*w)) : std::nullopt,
                                         b ? std::optional<at::Tensor>(widened(*b)) : std::nullopt, a.integer("group", 1),
                                         a.number("eps", 1e-5));
  return {y.to(x.scalar_type()), mean.to(x.scalar_type()), rstd.to(x.scalar_type())};
}

Values sort_v2_reference(const Values& args) {
  NamedArgs a("npu::npu_sort_v2", args);
  return one(std::get<0>(at::sort(a.tensor("self"), a.integer("dim", -1), a.flag("descending", false))));
}
Values sort_v2_device(const Values& args) {
  NamedArgs a("npu::npu_sort_v2", args);
  at::Tensor y = std::get<0>(at::sort(a.tensor("self"), a.integer("dim", -1), a.flag("descending", false)));
  if (a.overload() == "out") {
    at::Tensor out = a.tensor("out");
    out.resize_(y.sizes()).copy_(y);
    return one(out);
  }
  return one(y);
}

Values moe_gating_top_k_softmax_reference(const Values& args) {
  NamedArgs a("npu::npu_moe_gating_top_k_softmax", args);
  at::Tensor x = a.tensor("x");
  auto [y, idx, row] = moe_gating(x, a.optional_tensor("finished"), a.integer("k", 1), x.scalar_type());
  return {y, idx, row};
}
// torch_npu returns the indices as int32.
Values moe_gating_top_k_softmax_device(const Values& args) {
  NamedArgs a("npu::npu_moe_gating_top_k_softmax", args);
  at::Tensor x = a.tensor("x");
  auto [y, idx, row] = moe_gating(x, a.optional_tensor("finished"), a.integer("k", 1), x.scalar_type());
  return {y, idx.to(at::kInt), row.to(at::kInt)};
}

}  // namespace acccheck::fused
