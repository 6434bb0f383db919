// A training loop for `acccheck dump` tests that exercises what the example program does not: the
// model lives on the simulated NPU (PrivateUse1), so backward runs on the device's autograd thread
// and statistics are computed on the device; meanwhile a "data loader" thread runs CPU operators.
//   threaded_device_training PLUGIN_DIR STEPS
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "npu_sim_device.hpp"

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  acccheck::DevicePlugin* npu = acccheck::test_programs::start_npu_sim(argv[1]);
  if (!npu) return 2;
  int steps = std::atoi(argv[2]);

  std::atomic<bool> done{false};
  std::atomic<int> batches{0};
  std::thread loader([&] {  // CPU work on another thread, as a data loader does
    while (!done) {
      at::Tensor b = at::rand({32, 16}).mul(2.0).sub(1.0);
      (void)b;
      ++batches;
    }
  });

  at::manual_seed(0);
  at::Tensor w = npu->to_device(at::randn({16, 8}) * 0.1).requires_grad_();
  at::Tensor x = npu->to_device(at::randn({32, 16}));
  at::Tensor y = npu->to_device(at::randn({32, 8}));
  for (int s = 0; s < steps; ++s) {
    at::Tensor loss = at::mse_loss(at::tanh(at::mm(x, w)), y);
    torch::autograd::backward({loss});
    {
      at::NoGradGuard no_grad;
      w.sub_(w.grad() * 0.1);
      w.mutable_grad().zero_();
    }
    std::cout << "step " << s << " loss " << loss.cpu().item<float>() << "\n";
  }
  done = true;
  loader.join();
  std::cout << "loader batches: " << (batches > 0 ? "some" : "none") << "\n";
  return 0;
}
