// The vendor fused operators' references (plugins/devices/fused) through the device contract:
// msprobe's own bench functions' outputs reproduced (tests/fixtures/fused/msprobe_bench_vectors.json,
// made by make_msprobe_bench_vectors.py from msprobe's Python), hand-computed cases, the deliberate
// differences from msprobe, and the fused operators' autograd on the cpu device and on npu-sim.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>

#include <acccheck/json.hpp>

#include "device/device_fixture.hpp"

namespace acccheck::test {
namespace {

DevicePlugin& cpu_device() {
  DevicePlugin& d = device_plugin("cpu");
  d.initialize({0});  // defines the fused operators' schemas this process lacks
  return d;
}

BenchFunction reference(const std::string& op) {
  auto fns = cpu_device().bench_functions();
  auto it = fns.find(op);
  if (it == fns.end()) throw std::runtime_error("no reference for " + op);
  return it->second;
}

c10::ScalarType dtype_named(const std::string& name) {
  static const std::map<std::string, c10::ScalarType> names = {{"float16", at::kHalf}, {"bfloat16", at::kBFloat16},
                                                               {"float32", at::kFloat}, {"float64", at::kDouble},
                                                               {"bool", at::kBool},    {"int64", at::kLong},
                                                               {"int32", at::kInt}};
  return names.at(name);
}

at::Tensor tensor_of(const Json& j) {
  std::vector<double> data;
  for (const Json& v : j.find("data")->items()) data.push_back(v.as_double());
  std::vector<int64_t> shape;
  for (const Json& v : j.find("shape")->items()) shape.push_back(v.as_int());
  return at::tensor(data, at::kDouble).reshape(shape).to(dtype_named(j.find("dtype")->as_string()));
}

c10::TypePtr without_optional(c10::TypePtr t) {
  if (auto o = t->cast<c10::OptionalType>()) return o->getElementType();
  return t;
}

// The case's named arguments bound to the overload that has them all, defaults filled in.
std::vector<c10::IValue> stack_for(const std::string& op, const Json& named) {
  cpu_device();  // the schemas: each test may run in a process of its own (ctest)
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const char* overload : {"", "out"}) {
    auto handle = dispatcher.findSchema({op, overload});
    if (!handle) continue;
    const auto& params = handle->schema().arguments();
    bool all = true;
    for (const auto& [key, value] : named.members()) {
      bool found = false;
      for (const auto& p : params) found = found || p.name() == key;
      all = all && found;
    }
    if (!all) continue;
    std::vector<c10::IValue> stack;
    for (const auto& p : params) {
      const Json* v = named.find(p.name());
      if (!v) {  // the schema's default; None where there is none (the caller puts a tensor there)
        stack.push_back(p.default_value() ? *p.default_value() : c10::IValue());
      } else if (v->is_null()) {
        stack.emplace_back();
      } else if (v->is_object() && v->find("triu2048")) {
        stack.emplace_back(at::triu(at::ones({2048, 2048}), 1).to(at::kBool));
      } else if (v->is_object()) {
        stack.emplace_back(tensor_of(*v));
      } else if (v->is_array()) {
        std::vector<int64_t> ints;
        for (const Json& i : v->items()) ints.push_back(i.as_int());
        stack.emplace_back(ints);
      } else if (v->is_bool()) {
        stack.emplace_back(v->as_bool());
      } else if (v->is_string()) {
        stack.emplace_back(v->as_string());
      } else if (without_optional(p.type())->kind() == c10::TypeKind::IntType) {
        stack.emplace_back(v->as_int());
      } else {
        stack.emplace_back(v->as_double());
      }
    }
    return stack;
  }
  throw std::runtime_error(op + ": no overload takes the case's arguments");
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.scalar_type(), want.scalar_type()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  if (!at::isFloatingType(want.scalar_type())) {
    EXPECT_TRUE(at::equal(got, want)) << what << "\n got " << got << "\n want " << want;
    return;
  }
  const double rtol = want.scalar_type() == at::kDouble ? 1e-12 : want.scalar_type() == at::kFloat ? 2e-6 : 1e-3;
  at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
  // Relative to each element and to the output's scale: where a value comes out of a cancellation
  // (x - mean, silu near 0) its own magnitude says nothing of the precision it can have, and LibTorch
  // 1.13's and 2.x's CPU kernels sum in different orders (group_norm_silu: 4.8e-7 apart, outputs up to ~4.7).
  const double scale = w.numel() ? w.abs().max().item<double>() : 0.0;
  at::Tensor err = (g - w).abs(), bound = w.abs() * rtol + rtol * (scale + 1e-3);
  EXPECT_TRUE((err <= bound).all().item<bool>()) << what << ": largest error " << err.max().item<double>() << "\n got " << g
                                                 << "\n want " << w;
}

TEST(FusedReferences, ReproduceMsprobesOwnBenchFunctions) {
  Json vectors = parse_json(read_file(fixture("fused/msprobe_bench_vectors.json")), "msprobe_bench_vectors.json");
  std::set<std::string> covered;
  int n = 0;
  for (const Json& c : vectors.find("cases")->items()) {
    const std::string op = c.find("op")->as_string();
    const std::string what = op + " case " + std::to_string(n++) + " (" + c.find("note")->as_string() + ")";
    std::vector<c10::IValue> results = reference(op)(stack_for(op, *c.find("args")));
    const auto& want = c.find("outputs")->items();
    ASSERT_EQ(results.size(), want.size()) << what;
    for (std::size_t i = 0; i < want.size(); ++i) expect_close(results[i].toTensor(), tensor_of(want[i]), what + " output " + std::to_string(i));
    covered.insert(op);
  }
  // Every reference msprobe has (api-list.md §4), except gpu_fusion_attention (flash_attn on CUDA).
  EXPECT_EQ(covered.size(), 15u);
}

std::vector<c10::IValue> call(const std::string& op, std::vector<c10::IValue> stack) { return reference(op)(stack); }

TEST(FusedReferences, HandComputedCases) {
  // rms_norm of [1, 2, 3, 4], eps 0: mean of squares 7.5, rstd 1/sqrt(7.5).
  auto rms = call("npu::npu_rms_norm", {at::tensor({1.0, 2.0, 3.0, 4.0}, at::kDouble), at::tensor({1.0, 1.0, 1.0, 2.0}, at::kDouble), 0.0});
  expect_close(rms[0].toTensor(), at::tensor({0.36514837167011072, 0.73029674334022144, 1.0954451150103322, 2.9211869733608858}, at::kDouble), "rms_norm y");
  expect_close(rms[1].toTensor(), at::tensor({0.36514837167011072}, at::kFloat), "rms_norm rstd (float32, as msprobe's .float())");
  // fast_gelu(1) = 1 / (1 + exp(-1.702)); fast_gelu(-1) = -exp(-1.702) / (1 + exp(-1.702)).
  auto gelu = call("npu::npu_fast_gelu", {at::tensor({1.0, -1.0}, at::kDouble)});
  const double d = 1 + std::exp(-1.702);
  expect_close(gelu[0].toTensor(), at::tensor({1 / d, -std::exp(-1.702) / d}, at::kDouble), "fast_gelu");
  // rotary: x = [1, 2 | 3, 4], r1 = 1, r2 = 2 → x + 2·[-3, -4, 1, 2].
  auto rot = call("npu::npu_rotary_mul", {at::tensor({1.0, 2.0, 3.0, 4.0}, at::kDouble).reshape({1, 1, 1, 4}),
                                          at::ones({1, 1, 1, 4}, at::kDouble), at::full({1, 1, 1, 4}, 2.0, at::kDouble), std::string("half")});
  expect_close(rot[0].toTensor(), at::tensor({-5.0, -6.0, 5.0, 8.0}, at::kDouble).reshape({1, 1, 1, 4}), "rotary_mul");
  // swiglu of [a | b] = [0, 2 | 3, 5]: silu(0)·3 = 0, silu(2)·5 = 2·5/(1+e^-2).
  auto glu = call("npu::npu_swiglu", {at::tensor({0.0f, 2.0f, 3.0f, 5.0f}), int64_t{-1}});
  expect_close(glu[0].toTensor(), at::tensor({0.0f, 8.8079707797788231f}), "swiglu");
  // attention, one head of size 1: logits [1, 0] and [2, 0] (k = [1, 0]); v = [10, 20].
  at::Tensor q = at::tensor({1.0f, 2.0f}).reshape({1, 1, 2, 1}), k = at::tensor({1.0f, 0.0f}).reshape({1, 1, 2, 1});
  at::Tensor v = at::tensor({10.0f, 20.0f}).reshape({1, 1, 2, 1});
  std::vector<c10::IValue> fa_args = stack_for("npu::npu_fusion_attention", parse_json(R"({"head_num": 1, "input_layout": "BNSD", "scale": 1.0})", "case"));
  fa_args[0] = q;
  fa_args[1] = k;
  fa_args[2] = v;
  auto fa = reference("npu::npu_fusion_attention")(fa_args);
  const double e = std::exp(1.0), e2 = std::exp(2.0);
  expect_close(fa[0].toTensor(), at::tensor({10 + 10 / (e + 1), 10 + 10 / (e2 + 1)}, at::kDouble).reshape({1, 1, 2, 1}), "attention out (float64)");
  expect_close(fa[1].toTensor(), at::tensor({1.0, 2.0}, at::kDouble).reshape({1, 1, 2, 1}).repeat({1, 1, 1, 8}), "softmax_max x8");
  expect_close(fa[2].toTensor(), at::tensor({1 + 1 / e, 1 + 1 / e2}, at::kDouble).reshape({1, 1, 2, 1}).repeat({1, 1, 1, 8}), "softmax_sum x8");
}

TEST(FusedReferences, DeliberateDifferencesFromMsprobe) {
  // fixed_triu_mask: msprobe's reference raises (torch.triu has no 'k'); the causal mask it meant.
  auto sm = call("npu::npu_scaled_masked_softmax", {at::zeros({2, 2}), at::zeros({2, 2}, at::kBool), 1.0, true});
  expect_close(sm[0].toTensor(), at::tensor({1.0f, 0.0f, 0.5f, 0.5f}).reshape({2, 2}), "scaled_masked_softmax, fixed causal mask");
  // layer_norm_eval applies weight, bias and eps (msprobe's drops them): [1, 2, 3], w 2, b 1.
  auto ln = call("npu::npu_layer_norm_eval", {at::tensor({1.0, 2.0, 3.0}, at::kDouble), std::vector<int64_t>{3},
                                              at::full({3}, 2.0, at::kDouble), at::ones({3}, at::kDouble), 1e-5});
  const double r = 1 / std::sqrt(2.0 / 3 + 1e-5);
  expect_close(ln[0].toTensor(), at::tensor({1 - 2 * r, 1.0, 1 + 2 * r}, at::kDouble), "layer_norm_eval with weight and bias");
  // amsgrad uses the call's max_grad_norm (msprobe draws a random one): var 1, m 0, v 0, grad 1.
  auto t = [](double x) { return at::full({1}, x, at::kDouble); };
  std::vector<c10::IValue> adam = stack_for("npu::npu_apply_adam_w", parse_json(R"({"beta1_power": 0.9, "beta2_power": 0.999, "lr": 0.1,
      "weight_decay": 0.0, "beta1": 0.9, "beta2": 0.999, "epsilon": 0.0, "amsgrad": true, "maximize": false,
      "grad": {"dtype": "float64", "shape": [1], "data": [1]}, "max_grad_norm": {"dtype": "float64", "shape": [1], "data": [4]},
      "var": {"dtype": "float64", "shape": [1], "data": [1]}, "m": {"dtype": "float64", "shape": [1], "data": [0]},
      "v": {"dtype": "float64", "shape": [1], "data": [0]}})", "case"));
  auto step = reference("npu::npu_apply_adam_w")(adam);
  const double denom = std::sqrt(4 / (1 - 0.999 * 0.999));
  expect_close(step[0].toTensor(), t(1 - 0.1 * 0.1 / (1 - 0.81) / denom), "adam_w var with amsgrad");
  expect_close(step[1].toTensor(), t(0.1), "adam_w m");
  expect_close(step[2].toTensor(), t(0.001), "adam_w v");
  // npu_fusion_attention without scale: the kernel's default 1.0 (msprobe's reference takes 1/√d).
  // d = 4, q = k rows [1,1,1,1] and [0,0,0,0]: logits of row 0 are [4, 0]; v = [[1..], [0..]].
  at::Tensor q = at::cat({at::ones({1, 1, 1, 4}), at::zeros({1, 1, 1, 4})}, 2).to(at::kDouble);
  std::vector<c10::IValue> fa = stack_for("npu::npu_fusion_attention", parse_json(R"({"head_num": 1, "input_layout": "BNSD"})", "case"));
  fa[0] = fa[1] = fa[2] = q;
  auto out = reference("npu::npu_fusion_attention")(fa)[0].toTensor();
  EXPECT_NEAR(out[0][0][0][0].item<double>(), 1 / (1 + std::exp(-4.0)), 1e-12) << "scale 1.0 (1/sqrt(d) would give 1/(1+e^-2))";
}

TEST(FusedReferences, WhatHasNoReferenceSaysWhy) {
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  at::Tensor x = at::rand({1, 2, 4});
  std::vector<c10::IValue> fa = stack_for("npu::npu_fusion_attention", parse_json(R"({"head_num": 1, "input_layout": "TND"})", "case"));
  fa[0] = fa[1] = fa[2] = x;
  EXPECT_EQ(message([&] { reference("npu::npu_fusion_attention")(fa); }), "npu_fusion_attention: input_layout TND has no reference (msprobe's neither)");
  fa[4] = std::string("BSH");
  fa[9] = 0.9;  // keep_prob
  EXPECT_EQ(message([&] { reference("npu::npu_fusion_attention")(fa); }),
            "npu_fusion_attention: keep_prob 0.900000 drops attention weights at random: its outputs differ from run to run, so it is not judged");
  EXPECT_EQ(message([&] { call("npu::npu_rotary_mul", {x, x, x, std::string("interleave")}); }),
            "npu_rotary_mul: rotary_mode 'interleave' has no reference (the reference rotates halves: 'half')");
  EXPECT_EQ(message([&] { call("npu::npu_swiglu", {at::rand({3}), int64_t{0}}); }),
            "npu_swiglu: cannot split a dimension of size 3 in two halves");
}

at::Tensor rms_norm_via_dispatcher(const at::Tensor& x, const at::Tensor& g) {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("npu::npu_rms_norm", "");
  std::vector<c10::IValue> stack{x, g, 1e-6};
  op.callBoxed(&stack);
  return stack[0].toTensor();
}

// The cpu device runs a fused operator by its device formula, with a backward that differentiates it.
TEST(FusedOperators, RunOnTheCpuDeviceWithTheirGradient) {
  // The autograd engine sizes its per-device queues at its first backward pass: npu-sim registers
  // itself before, as run_ut's worker and a program on the device do.
  npu_sim({});
  cpu_device();
  at::manual_seed(3);
  at::Tensor x = at::randn({4, 8}).requires_grad_(), g = at::randn({8}).requires_grad_();
  at::Tensor y = rms_norm_via_dispatcher(x, g);
  ASSERT_TRUE(y.requires_grad());
  at::Tensor seed = at::randn({4, 8});
  auto grads = torch::autograd::grad({y}, {x, g}, {seed});
  at::Tensor x2 = x.detach().requires_grad_(), g2 = g.detach().requires_grad_();
  at::Tensor rstd = at::rsqrt(x2.pow(2).mean(-1, true) + 1e-6);
  auto want = torch::autograd::grad({x2 * rstd * g2}, {x2, g2}, {seed});
  expect_close(grads[0], want[0], "grad x");
  expect_close(grads[1], want[1], "grad gamma");
}

// npu-sim: the device formula on the simulated device, close to the reference, faults applied to the
// fused operator itself — forward and backward — and not to the operators inside it.
TEST(FusedOperators, RunOnNpuSimUnderItsFaultFile) {
  at::manual_seed(4);
  at::Tensor x = at::randn({4, 64}), g = at::randn({64}), seed = at::randn({4, 64});
  auto run = [&](const Settings& faults) {
    DevicePlugin& npu = npu_sim(faults);
    at::Tensor xd = npu.to_device(x).requires_grad_(), gd = npu.to_device(g);
    at::Tensor y = rms_norm_via_dispatcher(xd, gd);
    auto gx = torch::autograd::grad({y}, {xd}, {npu.to_device(seed)});
    return std::make_pair(npu.to_cpu(y), npu.to_cpu(gx[0]));
  };
  auto [y, gx] = run({});
  auto ref = reference("npu::npu_rms_norm")({x.to(at::kDouble), g.to(at::kDouble), 1e-6});
  EXPECT_LT((y.to(at::kDouble) - ref[0].toTensor()).abs().max().item<double>(), 1e-5);
  Settings forward;
  forward.set("faults/0/op", "npu::npu_rms_norm");
  forward.set("faults/0/direction", "forward");
  forward.set("faults/0/kind", "scale");
  forward.set("faults/0/magnitude", "1.01");
  auto [yf, gxf] = run(forward);
  expect_close(yf, y * 1.01f, "forward fault scales the output");
  EXPECT_TRUE(at::equal(gxf, gx)) << "a forward fault leaves the gradient alone";
  Settings backward = forward;
  backward.set("faults/0/direction", "backward");
  auto [yb, gxb] = run(backward);
  EXPECT_TRUE(at::equal(yb, y));
  expect_close(gxb, gx * 1.01f, "backward fault scales the gradient");
  Settings inner;  // a fault on an operator the fused kernel uses inside
  inner.set("faults/0/op", "aten::mean");
  inner.set("faults/0/kind", "scale");
  inner.set("faults/0/magnitude", "2");
  auto [yi, gxi] = run(inner);
  EXPECT_TRUE(at::equal(yi, y) && at::equal(gxi, gx)) << "a fault on aten::mean does not reach npu_rms_norm";
  npu_sim({});
}

}  // namespace
}  // namespace acccheck::test
