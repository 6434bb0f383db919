// The simulated NPU as a device: tensors move to and from it, views alias, in-place ops and
// autograd work, elementwise ops are bit-identical to the CPU, and matmul/conv/reductions round
// differently but with errors of the CPU's own order.
#include <ATen/ATen.h>

#include "device/device_fixture.hpp"

using namespace acccheck;
using acccheck::test::npu_sim;

namespace {

at::Tensor rand_cpu(at::IntArrayRef shape, at::ScalarType dtype, int seed) {
  at::manual_seed(seed);
  return at::randn(shape, at::kDouble).to(dtype);
}

bool bit_identical(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() &&
         at::equal(a.contiguous().view(at::kByte), b.contiguous().view(at::kByte));
}

// ‖x − ref‖ / ‖ref‖ against a float64 reference.
double rel_error(const at::Tensor& x, const at::Tensor& ref64) {
  return (x.to(at::kDouble) - ref64).norm().item<double>() / ref64.norm().item<double>();
}

}  // namespace

TEST(NpuSim, IsAPrivateUse1Device) {
  DevicePlugin& d = npu_sim();
  EXPECT_EQ(d.device().type(), c10::DeviceType::PrivateUse1);
  at::Tensor x = rand_cpu({3, 4}, at::kFloat, 1);
  at::Tensor on = d.to_device(x);
  EXPECT_EQ(on.device().type(), c10::DeviceType::PrivateUse1);
  EXPECT_TRUE(bit_identical(d.to_cpu(on), x));
  EXPECT_THROW(d.initialize({1}), std::runtime_error);
}

TEST(NpuSim, ViewsAliasTheirBase) {
  DevicePlugin& d = npu_sim();
  at::Tensor base = d.to_device(at::zeros({4, 4}));
  at::Tensor row = base.select(0, 1);
  at::Tensor flat = base.view({16});
  row.fill_(3.0);
  flat.narrow(0, 0, 2).add_(1.0);
  at::Tensor back = d.to_cpu(base);
  EXPECT_EQ(back[1][2].item<float>(), 3.0f);
  EXPECT_EQ(back[0][1].item<float>(), 1.0f);
  EXPECT_EQ(back[2][2].item<float>(), 0.0f);
}

TEST(NpuSim, InPlaceAndOutOps) {
  DevicePlugin& d = npu_sim();
  at::Tensor x = rand_cpu({5}, at::kFloat, 2);
  at::Tensor on = d.to_device(x);
  on.mul_(2.0).add_(1.0);
  EXPECT_TRUE(bit_identical(d.to_cpu(on), x * 2.0 + 1.0));
  at::Tensor out = d.to_device(at::empty({0}));
  at::exp_out(out, on);  // resized by the out= path
  EXPECT_TRUE(bit_identical(d.to_cpu(out), at::exp(x * 2.0 + 1.0)));
}

TEST(NpuSim, AutogradRunsOnTheDevice) {
  DevicePlugin& d = npu_sim();
  at::Tensor x = d.to_device(rand_cpu({6}, at::kFloat, 3)).requires_grad_();
  at::Tensor y = (x * x).sum();
  y.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device().type(), c10::DeviceType::PrivateUse1);
  EXPECT_TRUE(at::allclose(d.to_cpu(x.grad()), 2.0 * d.to_cpu(x.detach())));
}

TEST(NpuSim, ElementwiseOpsAreBitIdenticalToTheCpu) {
  DevicePlugin& d = npu_sim();
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    at::Tensor a = rand_cpu({64}, dtype, 4), b = rand_cpu({64}, dtype, 5);
    at::Tensor da = d.to_device(a), db = d.to_device(b);
    EXPECT_TRUE(bit_identical(d.to_cpu(da + db), a + b));
    EXPECT_TRUE(bit_identical(d.to_cpu(da * db), a * b));
    EXPECT_TRUE(bit_identical(d.to_cpu(at::gelu(da)), at::gelu(a)));
    EXPECT_TRUE(bit_identical(d.to_cpu(at::exp(da)), at::exp(a)));
    EXPECT_TRUE(bit_identical(d.to_cpu(at::relu(da)), at::relu(a)));
    EXPECT_TRUE(bit_identical(d.to_cpu(at::sigmoid(da)), at::sigmoid(a)));
  }
}

// The healthy device's error against float64 must be of the CPU's own order (within 4x).
TEST(NpuSim, HealthyErrorIsOfTheCpusOrder) {
  DevicePlugin& d = npu_sim();
  struct Case {
    const char* name;
    std::function<at::Tensor(const std::vector<at::Tensor>&)> f;
    std::vector<std::vector<int64_t>> shapes;
  };
  std::vector<Case> cases = {
      {"mm", [](const auto& t) { return at::mm(t[0], t[1]); }, {{32, 256}, {256, 16}}},
      {"bmm", [](const auto& t) { return at::bmm(t[0], t[1]); }, {{4, 16, 128}, {4, 128, 8}}},
      {"addmm", [](const auto& t) { return at::addmm(t[0], t[1], t[2]); }, {{16}, {8, 96}, {96, 16}}},
      {"linear", [](const auto& t) { return at::linear(t[0], t[1], t[2]); }, {{8, 64}, {16, 64}, {16}}},
      {"conv2d", [](const auto& t) { return at::conv2d(t[0], t[1], t[2]); }, {{2, 8, 10, 10}, {4, 8, 3, 3}, {4}}},
      {"softmax", [](const auto& t) { return at::softmax(t[0], -1); }, {{16, 64}}},
      {"layer_norm", [](const auto& t) { return at::layer_norm(t[0], {64}); }, {{16, 64}}},
      {"sum", [](const auto& t) { return at::sum(t[0], {1}); }, {{16, 512}}},
      {"sum_all", [](const auto& t) { return at::sum(t[0]); }, {{64, 64}}},
      {"mean", [](const auto& t) { return at::mean(t[0], {0}); }, {{512, 8}}},
  };
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    for (const auto& c : cases) {
      std::vector<at::Tensor> cpu, dev, ref;
      int seed = 10;
      for (const auto& shape : c.shapes) {
        cpu.push_back(rand_cpu(shape, dtype, seed++));
        dev.push_back(d.to_device(cpu.back()));
        ref.push_back(cpu.back().to(at::kDouble));
      }
      at::Tensor r64 = c.f(ref), rc = c.f(cpu), rd = d.to_cpu(c.f(dev));
      ASSERT_EQ(rd.scalar_type(), dtype) << c.name;
      double cpu_err = rel_error(rc, r64), dev_err = rel_error(rd, r64);
      EXPECT_LE(dev_err, 4.0 * cpu_err + 1e-12)
          << c.name << " " << at::toString(dtype) << ": npu-sim " << dev_err << " vs cpu " << cpu_err;
    }
  }
}

TEST(NpuSim, MatmulAndReductionsRoundDifferentlyFromTheCpu) {
  DevicePlugin& d = npu_sim();
  at::Tensor a = rand_cpu({32, 256}, at::kFloat, 20), b = rand_cpu({256, 32}, at::kFloat, 21);
  EXPECT_FALSE(bit_identical(d.to_cpu(at::mm(d.to_device(a), d.to_device(b))), at::mm(a, b)));
  at::Tensor x = rand_cpu({4, 4096}, at::kFloat, 22);
  EXPECT_FALSE(bit_identical(d.to_cpu(at::sum(d.to_device(x), {1})), at::sum(x, {1})));
}
