// Fault injection on the simulated NPU: every kind, both directions, determinism from the seed,
// and isolation (a fault on one operator changes nothing else, bit for bit).
#include <ATen/ATen.h>

#include <cmath>
#include <csignal>
#include <unistd.h>

#include "device/device_fixture.hpp"

using namespace acccheck;
using acccheck::test::npu_sim;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

Settings fault(const std::string& op, const std::string& kind, const std::string& magnitude,
               const std::string& direction = "any", const std::string& fraction = "1.0", int seed = 11) {
  Settings s;
  s.set("seed", std::to_string(seed));
  s.set("faults/0/op", op);
  s.set("faults/0/kind", kind);
  if (!magnitude.empty()) s.set("faults/0/magnitude", magnitude);
  s.set("faults/0/direction", direction);
  s.set("faults/0/fraction", fraction);
  return s;
}

at::Tensor input(int seed, at::IntArrayRef shape = {256}, at::ScalarType dtype = at::kFloat) {
  at::manual_seed(seed);
  return at::randn(shape, at::kDouble).to(dtype);
}

bool bit_identical(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && at::equal(a.contiguous().view(at::kByte), b.contiguous().view(at::kByte));
}

at::Tensor gelu_on(DevicePlugin& d, const at::Tensor& x) { return d.to_cpu(at::gelu(d.to_device(x))); }

struct ResetFaults : ::testing::Test {
  void TearDown() override { npu_sim(Settings{}); }
};
using NpuSimFaults = ResetFaults;

}  // namespace

TEST_F(NpuSimFaults, RelNoiseStaysWithinItsMagnitude) {
  at::Tensor x = input(1), healthy = at::gelu(x);
  at::Tensor noisy = gelu_on(npu_sim(fault("aten::gelu", "rel_noise", "0.01")), x);
  at::Tensor rel = ((noisy.to(at::kDouble) - healthy.to(at::kDouble)) / healthy.to(at::kDouble)).abs();
  rel = rel.masked_fill(healthy == 0, 0);
  EXPECT_LE(rel.max().item<double>(), 0.01 + 1e-6);
  EXPECT_GT(rel.max().item<double>(), 0.001);  // it did perturb
}

TEST_F(NpuSimFaults, BiasScaleAndZero) {
  at::Tensor x = input(2), healthy = at::gelu(x);
  EXPECT_TRUE(at::allclose(gelu_on(npu_sim(fault("aten::gelu", "bias", "0.001")), x), healthy * 1.001, 1e-6, 0));
  EXPECT_TRUE(bit_identical(gelu_on(npu_sim(fault("aten::gelu", "scale", "2")), x), healthy * 2));
  EXPECT_TRUE(bit_identical(gelu_on(npu_sim(fault("aten::gelu", "zero", "")), x), at::zeros_like(healthy)));
}

TEST_F(NpuSimFaults, UlpShiftMovesByWholeUnitsOfTheOutputDtype) {
  at::Tensor x = input(3), healthy = at::gelu(x);
  at::Tensor shifted = gelu_on(npu_sim(fault("aten::gelu", "ulp_shift", "3")), x);
  for (int64_t i = 0; i < 16; ++i) {
    float h = healthy[i].item<float>(), s = shifted[i].item<float>();
    float expected = h;
    for (int k = 0; k < 3; ++k) expected = std::nextafter(expected, INFINITY);
    if (std::fabs(h) >= std::ldexp(1.0f, -126)) {
      EXPECT_EQ(s, expected) << i;
    }
  }
  at::Tensor xb = input(3, {64}, at::kBFloat16);
  at::Tensor sb = gelu_on(npu_sim(fault("aten::gelu", "ulp_shift", "1")), xb);
  at::Tensor hb = at::gelu(xb);
  // bfloat16: one ULP is 2^-7 of the value's binade
  double h0 = hb[5].item<double>(), s0 = sb[5].item<double>();
  EXPECT_DOUBLE_EQ(s0 - h0, std::ldexp(1.0, static_cast<int>(std::floor(std::log2(std::fabs(h0)))) - 7));
}

TEST_F(NpuSimFaults, NanWithAFraction) {
  at::Tensor x = input(4, {4000});
  at::Tensor out = gelu_on(npu_sim(fault("aten::gelu", "nan", "", "any", "0.25")), x);
  double share = out.isnan().to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(share, 0.25, 0.03);
  // Elements not chosen keep their healthy values.
  at::Tensor keep = out.isnan().logical_not();
  EXPECT_TRUE(bit_identical(out.masked_select(keep), at::gelu(x).masked_select(keep)));
}

TEST_F(NpuSimFaults, LowPrecisionComputesWithRoundedInputs) {
  at::Tensor a = input(5, {16, 128}), b = input(6, {128, 16});
  DevicePlugin& d = npu_sim(fault("aten::mm", "low_precision", "bfloat16"));
  at::Tensor got = d.to_cpu(at::mm(d.to_device(a), d.to_device(b)));
  at::Tensor ref = at::mm(a.to(at::kDouble), b.to(at::kDouble));
  at::Tensor rounded = at::mm(a.to(at::kBFloat16).to(at::kDouble), b.to(at::kBFloat16).to(at::kDouble));
  double err = (got.to(at::kDouble) - ref).norm().item<double>() / ref.norm().item<double>();
  double healthy = (at::mm(a, b).to(at::kDouble) - ref).norm().item<double>() / ref.norm().item<double>();
  EXPECT_GT(err, 100 * healthy);  // bf16 inputs: a detectable precision gap
  EXPECT_LT((got.to(at::kDouble) - rounded).abs().max().item<double>(), 1e-3);
  at::Tensor t = gelu_on(npu_sim(fault("aten::gelu", "low_precision", "tf32")), input(7));
  EXPECT_FALSE(bit_identical(t, at::gelu(input(7))));
}

TEST_F(NpuSimFaults, ForwardOnlyAndBackwardOnly) {
  at::Tensor x = input(8, {32});
  auto run = [&](DevicePlugin& d) {
    at::Tensor dx = d.to_device(x).requires_grad_();
    at::Tensor y = at::gelu(dx);
    y.backward(d.to_device(at::ones_like(x)));
    return std::make_pair(d.to_cpu(y.detach()), d.to_cpu(dx.grad()));
  };
  auto healthy = run(npu_sim());
  // The forward kernel is aten::gelu; its backward is aten::gelu_backward.
  auto fwd = run(npu_sim(fault("aten::gelu", "scale", "2", "forward")));
  EXPECT_TRUE(bit_identical(fwd.first, healthy.first * 2));
  EXPECT_TRUE(bit_identical(fwd.second, healthy.second));
  // A backward-only fault on an operator the forward also runs: x*x forward is mul, its backward is mul too.
  auto sq = [&](DevicePlugin& d) {
    at::Tensor dx = d.to_device(x).requires_grad_();
    at::Tensor y = dx * dx;
    y.sum().backward();
    return std::make_pair(d.to_cpu(y.detach()), d.to_cpu(dx.grad()));
  };
  auto sq_healthy = sq(npu_sim());
  auto bwd = sq(npu_sim(fault("aten::mul", "scale", "3", "backward")));
  EXPECT_TRUE(bit_identical(bwd.first, sq_healthy.first));      // forward untouched
  EXPECT_FALSE(bit_identical(bwd.second, sq_healthy.second));   // gradient changed
  auto any = sq(npu_sim(fault("aten::mul.Tensor", "scale", "3", "forward")));
  EXPECT_TRUE(bit_identical(any.first, sq_healthy.first * 3));
}

TEST_F(NpuSimFaults, AFaultOnOneOpChangesNothingElse) {
  auto run_all = [](DevicePlugin& d) {
    std::vector<at::Tensor> outs;
    at::Tensor a = d.to_device(input(9, {16, 32})), b = d.to_device(input(10, {32, 16}));
    outs.push_back(at::mm(a, b));
    outs.push_back(at::gelu(a));
    outs.push_back(at::softmax(a, -1));
    outs.push_back(at::relu(a) + 1);
    outs.push_back(at::sum(a, {0}));
    outs.push_back(at::layer_norm(a, {32}));
    outs.push_back(at::gelu(b));
    for (auto& o : outs) o = d.to_cpu(o);
    return outs;
  };
  auto healthy = run_all(npu_sim());
  auto faulty = run_all(npu_sim(fault("aten::gelu", "rel_noise", "0.05")));
  for (std::size_t i = 0; i < healthy.size(); ++i) {
    bool is_gelu = i == 1 || i == 6;
    EXPECT_EQ(bit_identical(healthy[i], faulty[i]), !is_gelu) << "output " << i;
  }
}

TEST_F(NpuSimFaults, DeterministicFromTheSeed) {
  at::Tensor x = input(11);
  at::Tensor a = gelu_on(npu_sim(fault("aten::gelu", "rel_noise", "0.01", "any", "0.5", 7)), x);
  at::Tensor b = gelu_on(npu_sim(fault("aten::gelu", "rel_noise", "0.01", "any", "0.5", 7)), x);
  at::Tensor c = gelu_on(npu_sim(fault("aten::gelu", "rel_noise", "0.01", "any", "0.5", 8)), x);
  EXPECT_TRUE(bit_identical(a, b));
  EXPECT_FALSE(bit_identical(a, c));
}

TEST_F(NpuSimFaults, FaultFileFromTheEnvironment) {
  TempDir dir;
  write_file(dir / "faults.yaml",
             "seed: 11\nfaults:\n  - op: \"aten::gelu\"\n    direction: forward\n    kind: scale\n    magnitude: 4\n");
  ::setenv("ACCCHECK_NPUSIM_FAULTS", (dir / "faults.yaml").c_str(), 1);
  at::Tensor x = input(12);
  at::Tensor out = gelu_on(npu_sim(), x);
  ::unsetenv("ACCCHECK_NPUSIM_FAULTS");
  EXPECT_TRUE(bit_identical(out, at::gelu(x) * 4));
}

TEST_F(NpuSimFaults, BadFaultSpecsAreRefusedWithTheReason) {
  DevicePlugin& d = acccheck::test::device_plugin("npu-sim");
  auto error_of = [&](const Settings& s) {
    try {
      d.configure(s);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(error_of(fault("aten::gelu", "wobble", "1")),
            "npu-sim faults: fault 0: unknown kind 'wobble' (expected rel_noise, bias, scale, ulp_shift, "
            "low_precision, nan, zero, crash or hang)");
  EXPECT_EQ(error_of(fault("gelu", "bias", "1")),
            "npu-sim faults: fault 0: 'op' must name a dispatcher operator such as \"aten::gelu\"");
  EXPECT_EQ(error_of(fault("aten::mm", "low_precision", "float8")),
            "npu-sim faults: fault 0: low_precision needs magnitude float16, bfloat16 or tf32, found 'float8'");
  EXPECT_EQ(error_of(fault("aten::mm", "bias", "1", "sideways")),
            "npu-sim faults: fault 0: direction 'sideways' (expected forward, backward or any)");
  EXPECT_EQ(error_of(fault("aten::mm", "rel_noise", "")), "npu-sim faults: fault 0: kind 'rel_noise' needs a magnitude");
}

// crash and hang kill the process: run them in a re-executed child (threadsafe death tests).
TEST(NpuSimFaultsDeath, CrashRaisesSigsegv) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        DevicePlugin& d = npu_sim(fault("aten::gelu", "crash", ""));
        at::gelu(d.to_device(input(13)));
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(NpuSimFaultsDeath, HangNeverReturns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        DevicePlugin& d = npu_sim(fault("aten::gelu", "hang", ""));
        ::alarm(1);  // still inside the call after a second: killed by SIGALRM
        at::gelu(d.to_device(input(14)));
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGALRM), "");
}
