// Dumps steps 1 and 2 of a small regression training with acccheck::Debugger, the way msprobe's
// PrecisionDebugger is used: start() before the forward pass, stop() after backward, step() at the
// end of the iteration.   ./train_with_sdk DUMP_DIR
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <acccheck/debugger.hpp>

#include <iostream>

int main(int argc, char** argv) {
  acccheck::DebuggerConfig config;
  config.dump_path = argc > 1 ? argv[1] : "dump";
  config.step = "1-2";
  acccheck::Debugger dbg(config);

  at::manual_seed(0);
  at::Tensor w = at::randn({8, 4}).requires_grad_();
  at::Tensor x = at::randn({16, 8}), y = at::randn({16, 4});
  for (int step = 0; step < 4; ++step) {
    dbg.start();
    at::Tensor loss = at::mse_loss(at::matmul(x, w).sigmoid(), y);
    torch::autograd::backward({loss});
    dbg.stop();
    {
      at::NoGradGuard no_grad;
      w.sub_(w.grad() * 0.1);
      w.mutable_grad().zero_();
    }
    dbg.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
