#include "fused_rnn_cells.hpp"

#include <ATen/ATen.h>

namespace acccheck::npusim {

namespace {

// The accumulation type: float32 for float16/bfloat16, the dtype otherwise.
at::Tensor acc(const at::Tensor& t) {
  return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16 ? t.to(at::kFloat) : t;
}

at::Tensor zeros_if_undefined(const at::Tensor& g, const at::Tensor& like) {
  return g.defined() ? acc(g) : at::zeros_like(acc(like));
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                               const at::Tensor& cx, const std::optional<at::Tensor>& input_bias,
                                                               const std::optional<at::Tensor>& hidden_bias) {
  const auto dtype = input_gates.scalar_type();
  at::Tensor gates = acc(input_gates) + acc(hidden_gates);
  if (input_bias && input_bias->defined()) gates = gates + acc(*input_bias);
  if (hidden_bias && hidden_bias->defined()) gates = gates + acc(*hidden_bias);
  auto chunks = gates.chunk(4, 1);
  at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid(), g = chunks[2].tanh(), o = chunks[3].sigmoid();
  at::Tensor cy = f * acc(cx) + i * g;
  at::Tensor hy = o * cy.tanh();
  return {hy.to(dtype), cy.to(dtype), at::cat({i, f, g, o}, 1).to(dtype)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(const at::Tensor& grad_hy, const at::Tensor& grad_cy,
                                                                        const at::Tensor& cx, const at::Tensor& cy,
                                                                        const at::Tensor& workspace, bool has_bias) {
  const auto dtype = workspace.scalar_type();
  auto gates = acc(workspace).chunk(4, 1);
  const at::Tensor &i = gates[0], &f = gates[1], &g = gates[2], &o = gates[3];
  at::Tensor ghy = zeros_if_undefined(grad_hy, cy), gcy = zeros_if_undefined(grad_cy, cy);
  at::Tensor tanh_cy = acc(cy).tanh();
  at::Tensor gc = gcy + ghy * o * (1 - tanh_cy * tanh_cy);
  at::Tensor gi = gc * g * i * (1 - i);
  at::Tensor gf = gc * acc(cx) * f * (1 - f);
  at::Tensor gg = gc * i * (1 - g * g);
  at::Tensor go = ghy * tanh_cy * o * (1 - o);
  at::Tensor grad_gates = at::cat({gi, gf, gg, go}, 1);
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0).to(dtype) : at::Tensor();
  return {grad_gates.to(dtype), (gc * f).to(dtype), grad_bias};
}

std::tuple<at::Tensor, at::Tensor> fused_gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
                                                  const std::optional<at::Tensor>& input_bias,
                                                  const std::optional<at::Tensor>& hidden_bias) {
  const auto dtype = input_gates.scalar_type();
  at::Tensor ig = acc(input_gates), hg = acc(hidden_gates), h = acc(hx);
  if (input_bias && input_bias->defined()) ig = ig + acc(*input_bias);
  if (hidden_bias && hidden_bias->defined()) hg = hg + acc(*hidden_bias);
  auto ic = ig.chunk(3, 1), hc = hg.chunk(3, 1);
  at::Tensor r = (ic[0] + hc[0]).sigmoid(), z = (ic[1] + hc[1]).sigmoid();
  at::Tensor n = (ic[2] + r * hc[2]).tanh();
  at::Tensor hy = n + z * (h - n);
  return {hy.to(dtype), at::cat({r, z, n, h, hc[2]}, 1).to(dtype)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(const at::Tensor& grad_hy,
                                                                                               const at::Tensor& workspace,
                                                                                               bool has_bias) {
  const auto dtype = workspace.scalar_type();
  auto w = acc(workspace).chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hx = w[3], &hn = w[4];
  at::Tensor ghy = acc(grad_hy);
  at::Tensor gz = ghy * (hx - n) * z * (1 - z);
  at::Tensor gn = ghy * (1 - z) * (1 - n * n);
  at::Tensor gr = gn * hn * r * (1 - r);
  at::Tensor grad_input_gates = at::cat({gr, gz, gn}, 1);
  at::Tensor grad_hidden_gates = at::cat({gr, gz, gn * r}, 1);
  at::Tensor grad_hx = ghy * z;
  at::Tensor gib = has_bias ? grad_input_gates.sum(0).to(dtype) : at::Tensor();
  at::Tensor ghb = has_bias ? grad_hidden_gates.sum(0).to(dtype) : at::Tensor();
  return {grad_input_gates.to(dtype), grad_hidden_gates.to(dtype), grad_hx.to(dtype), gib, ghb};
}

}  // namespace acccheck::npusim
