// npu_apply_adam_w and npu_apply_adam: one optimizer step on (var, m, v), given as out=(var, m, v)
// (the `.out` overloads; the functional overloads have no state to update and no reference).
#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>

#include "fused_formulas.hpp"
#include "named_args.hpp"

namespace acccheck::fused {

namespace {

struct State {
  at::Tensor var, m, v;
};

State state_of(const NamedArgs& a, const char* op) {
  if (a.overload() != "out")
    throw std::runtime_error(std::string(op) + " without out=(var, m, v) has no reference (nothing to update)");
  return {a.tensor("var"), a.tensor("m"), a.tensor("v")};
}

// msprobe's npu_apply_adam_w, except amsgrad: msprobe draws a random max_grad_norm there (its result
// can never match); here the call's own max_grad_norm is used (docs/compat.md).
Values adam_w(const NamedArgs& a, const State& s, const at::Tensor& grad) {
  const double beta1_power = a.number("beta1_power", 0), beta2_power = a.number("beta2_power", 0);
  const double lr = a.number("lr", 0), weight_decay = a.number("weight_decay", 0);
  const double beta1 = a.number("beta1", 0), beta2 = a.number("beta2", 0), eps = a.number("epsilon", 0);
  const bool amsgrad = a.flag("amsgrad", false), maximize = a.flag("maximize", false);
  double beta1_power_out = beta1_power * beta1, beta2_power_out = beta2_power * beta2;
  at::Tensor var_t = s.var * (1 + (-lr * weight_decay));
  at::Tensor gt = maximize ? -grad : grad;
  at::Tensor m_out = s.m * beta1 - (beta1 + (-1)) * gt;
  at::Tensor v_out = s.v * beta2 - (beta2 + (-1)) * gt * gt;
  at::Tensor denom;
  if (amsgrad) {
    auto max_grad_norm = a.optional_tensor("max_grad_norm");
    if (!max_grad_norm) throw std::runtime_error("npu_apply_adam_w: amsgrad=True needs max_grad_norm");
    if (1 - beta2_power_out == 0) beta2_power_out -= eps;
    denom = at::sqrt(at::maximum(max_grad_norm->to(v_out.scalar_type()), v_out) / (1 - beta2_power_out)) + eps;
  } else {
    denom = at::sqrt(v_out / (1 - beta2_power_out)) + eps;
  }
  if (1 - beta1_power_out == 0) beta1_power_out -= eps;
  at::Tensor var_out = var_t + ((-lr * m_out) / (1 - beta1_power_out)) / denom;
  return {var_out, m_out, v_out};
}

Values adam(const NamedArgs& a, const State& s, const at::Tensor& grad) {
  const double beta1_power = a.number("beta1_power", 0), beta2_power = a.number("beta2_power", 0);
  const double lr = a.number("lr", 0), beta1 = a.number("beta1", 0), beta2 = a.number("beta2", 0);
  const double eps = a.number("epsilon", 0);
  at::Tensor m_t = s.m + (beta1 - 1) * (s.m - grad);
  at::Tensor v_t = s.v + (beta2 - 1) * (s.v - grad * grad);
  const double lr_t = lr * std::sqrt(1 - beta2_power) / (1 - beta1_power);
  at::Tensor denom = at::sqrt(v_t) + eps;
  at::Tensor var_t = a.flag("use_nesterov", false) ? s.var - lr_t * (m_t * beta1 + (1 - beta1) * grad) / denom
                                                   : s.var - lr_t * m_t / denom;
  return {var_t, m_t, v_t};
}

// The device updates var, m and v in place (out=) and returns them.
Values write_back(const State& s, const Values& r) {
  s.var.copy_(r[0].toTensor());
  s.m.copy_(r[1].toTensor());
  s.v.copy_(r[2].toTensor());
  return {s.var, s.m, s.v};
}

// The device computes the step in float32 whatever the dtypes of var, m, v and grad: a float16 grad²
// underflows (below 6e-8), and an Adam step divided by ε instead of √v is a blow-up, not rounding.
State widened_state(const State& s) { return {widened(s.var), widened(s.m), widened(s.v)}; }

}  // namespace

Values apply_adam_w_reference(const Values& args) {
  NamedArgs a("npu::npu_apply_adam_w", args);
  return adam_w(a, state_of(a, "npu_apply_adam_w"), a.tensor("grad"));
}
Values apply_adam_w_device(const Values& args) {
  NamedArgs a("npu::npu_apply_adam_w", args);
  State s = state_of(a, "npu_apply_adam_w");
  return write_back(s, adam_w(a, widened_state(s), widened(a.tensor("grad"))));
}

Values apply_adam_reference(const Values& args) {
  NamedArgs a("npu::npu_apply_adam", args);
  return adam(a, state_of(a, "npu_apply_adam"), a.tensor("grad"));
}
Values apply_adam_device(const Values& args) {
  NamedArgs a("npu::npu_apply_adam", args);
  State s = state_of(a, "npu_apply_adam");
  return write_back(s, adam(a, widened_state(s), widened(a.tensor("grad"))));
}

}  // namespace acccheck::fused
