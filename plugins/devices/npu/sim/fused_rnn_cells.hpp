// The fused recurrent cells LibTorch 2.x sends a PrivateUse1 device (aten::lstm / gru take the
// "fused cell" path for CUDA, XPU and PrivateUse1 tensors: _thnn_fused_lstm_cell and
// _thnn_fused_gru_cell, with their backward kernels), which have no CPU kernel for the fallback to
// run. npu-sim computes them here on host tensors with the cells' own formulas, in float32 for half
// types (as CUDA's kernels compute in their accumulation type), rounding each result once.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <tuple>

namespace acccheck::npusim {

// (hy, cy, workspace = the activated gates i, f, g, o)
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                               const at::Tensor& cx, const std::optional<at::Tensor>& input_bias,
                                                               const std::optional<at::Tensor>& hidden_bias);
// (grad_gates, grad_cx, grad_bias); undefined gradients count as zeros
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(const at::Tensor& grad_hy, const at::Tensor& grad_cy,
                                                                        const at::Tensor& cx, const at::Tensor& cy,
                                                                        const at::Tensor& workspace, bool has_bias);
// (hy, workspace = r, z, n, hx, the hidden candidate gate)
std::tuple<at::Tensor, at::Tensor> fused_gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
                                                  const std::optional<at::Tensor>& input_bias,
                                                  const std::optional<at::Tensor>& hidden_bias);
// (grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias)
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(const at::Tensor& grad_hy,
                                                                                               const at::Tensor& workspace,
                                                                                               bool has_bias);

}  // namespace acccheck::npusim
