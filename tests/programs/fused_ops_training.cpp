// A training loop for the fused-operator tests: a small transformer block on the simulated NPU whose
// every stage is a vendor fused operator, called through the dispatcher as torch_npu's users call
// them — npu_rms_norm, npu_linear, npu_rotary_mul, npu_fusion_attention (BNSD, causal sparse mode 2
// with the compressed mask), npu_swiglu, npu_fast_gelu — and an npu_apply_adam_w step.
//   fused_ops_training PLUGIN_DIR STEPS [float32|float16|bfloat16]
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>

#include <iostream>
#include <map>

#include "npu_sim_device.hpp"

namespace {

// Calls `name` with the positional arguments given, the named ones, and the schema's defaults.
std::vector<c10::IValue> call(const char* name, const char* overload, std::vector<c10::IValue> positional,
                              const std::map<std::string, c10::IValue>& named = {}) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  const auto& params = op.schema().arguments();
  std::vector<c10::IValue> stack;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i < positional.size()) stack.push_back(positional[i]);
    else if (auto it = named.find(params[i].name()); it != named.end()) stack.push_back(it->second);
    else stack.push_back(params[i].default_value().value());
  }
  op.callBoxed(&stack);
  return stack;
}

at::Tensor first(const std::vector<c10::IValue>& results) { return results.at(0).toTensor(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  acccheck::DevicePlugin* npu = acccheck::test_programs::start_npu_sim(argv[1]);
  if (!npu) return 2;
  const int steps = std::atoi(argv[2]);
  const std::string dtype_name = argc > 3 ? argv[3] : "float32";
  const c10::ScalarType dtype = dtype_name == "float16" ? at::kHalf : dtype_name == "bfloat16" ? at::kBFloat16 : at::kFloat;

  constexpr int64_t B = 2, S = 8, N = 2, D = 16, H = N * D, F = 48;
  at::manual_seed(0);
  auto param = [&](std::vector<int64_t> shape, double scale) {
    return npu->to_device((at::randn(shape) * scale).to(dtype)).requires_grad_();
  };
  std::vector<at::Tensor> params = {param({H}, 0.1) + 1, param({H, H}, 0.15), param({H, H}, 0.15), param({H, H}, 0.15),
                                    param({2 * F, H}, 0.15), param({H, F}, 0.15)};
  for (auto& p : params) p = p.detach().requires_grad_();
  at::Tensor &gamma = params[0], &wq = params[1], &wk = params[2], &wv = params[3], &w_up = params[4], &w_down = params[5];
  std::vector<at::Tensor> m, v;
  for (const auto& p : params) {  // the optimizer's state in float32, as mixed-precision training keeps it
    m.push_back(at::zeros_like(p, p.options().dtype(at::kFloat)));
    v.push_back(at::zeros_like(p, p.options().dtype(at::kFloat)));
  }
  // Rotary tables (cos, sin) for BNSD [1, 1, S, D].
  at::Tensor pos = at::arange(S, at::kFloat).unsqueeze(1) * at::pow(10000.0, -at::arange(D / 2, at::kFloat) / (D / 2));
  at::Tensor angles = at::cat({pos, pos}, 1).reshape({1, 1, S, D});
  at::Tensor r1 = npu->to_device(at::cos(angles).to(dtype)), r2 = npu->to_device(at::sin(angles).to(dtype));
  at::Tensor causal = npu->to_device(at::triu(at::ones({2048, 2048}), 1).to(at::kBool));
  at::Tensor x = npu->to_device(at::randn({B, S, H}).to(dtype));

  for (int s = 0; s < steps; ++s) {
    at::Tensor h = first(call("npu::npu_rms_norm", "", {x, gamma}));
    auto heads = [&](const at::Tensor& w) {
      return first(call("npu::npu_linear", "", {h, w})).view({B, S, N, D}).permute({0, 2, 1, 3});
    };
    at::Tensor q = first(call("npu::npu_rotary_mul", "", {heads(wq), r1, r2}));
    at::Tensor k = first(call("npu::npu_rotary_mul", "", {heads(wk), r1, r2}));
    at::Tensor attn = first(call("npu::npu_fusion_attention", "", {q, k, heads(wv), N, std::string("BNSD")},
                                 {{"atten_mask", causal}, {"scale", 1.0 / std::sqrt(double(D))}, {"sparse_mode", int64_t{2}}}));
    at::Tensor y = attn.permute({0, 2, 1, 3}).reshape({B, S, H}) + x;
    at::Tensor up = first(call("npu::npu_linear", "", {y, w_up}));
    at::Tensor act = first(call("npu::npu_fast_gelu", "", {first(call("npu::npu_swiglu", "", {up, int64_t{-1}}))}));
    at::Tensor out = first(call("npu::npu_linear", "", {act, w_down})) + y;
    at::Tensor loss = out.to(at::kFloat).pow(2).mean();
    torch::autograd::backward({loss});
    {
      at::NoGradGuard no_grad;
      const double beta1 = 0.9, beta2 = 0.999;
      for (std::size_t i = 0; i < params.size(); ++i) {
        call("npu::npu_apply_adam_w", "out",
             {std::pow(beta1, s), std::pow(beta2, s), 1e-3, 0.01, beta1, beta2, 1e-8, params[i].grad(), c10::IValue(), false, false,
              params[i], m[i], v[i]});
        params[i].mutable_grad().zero_();
      }
    }
    // Read back after the last step only: the dumped steps stay the block's own operators.
    if (s + 1 == steps) std::cout << "loss after " << steps << " steps: " << loss.cpu().item<float>() << "\n";
  }
  return 0;
}
