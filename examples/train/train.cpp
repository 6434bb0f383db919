// A small LibTorch training program — an MLP, a CNN or a tiny transformer (models.hpp) on random
// data with SGD, in float32 or bfloat16 — used by the dump tests, the overhead benchmark, the
// detection suite and `acccheck demo`. Built twice: `acccheck-example-train` knows nothing
// of acccheck (the no-code-change path: `acccheck dump -- ./acccheck-example-train`), and
// `acccheck-example-train-sdk` (ACCCHECK_EXAMPLE_SDK) drives acccheck::Debugger itself.
//
//   acccheck-example-train [--model mlp|cnn|transformer] [--dtype fp32|bf16] [--steps N] [--batch B]
//                          [--hidden H] [--crash-at STEP]
//                          [--exit-at STEP] [--bad-op-at STEP] [--bad-backward-at STEP]
//                          [--dump-path DIR]   (last: SDK build only)
// Prints one line per step ("step 3: 4.21 ms") and the median step time.
#include <torch/nn.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#include "models.hpp"

#ifdef ACCCHECK_EXAMPLE_SDK
#include <acccheck/debugger.hpp>
#endif

namespace {

const char* arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = arg(argc, argv, "--model", "mlp");
  int steps = std::atoi(arg(argc, argv, "--steps", "3"));
  int64_t batch = std::atoll(arg(argc, argv, "--batch", "16"));
  int64_t hidden = std::atoll(arg(argc, argv, "--hidden", "64"));
  int crash_at = std::atoi(arg(argc, argv, "--crash-at", "-1"));
  int exit_at = std::atoi(arg(argc, argv, "--exit-at", "-1"));
  int bad_op_at = std::atoi(arg(argc, argv, "--bad-op-at", "-1"));
  int bad_backward_at = std::atoi(arg(argc, argv, "--bad-backward-at", "-1"));
  torch::manual_seed(0);

  std::string dtype_name = arg(argc, argv, "--dtype", "fp32");
  if (dtype_name != "fp32" && dtype_name != "bf16") {
    std::cerr << "unknown --dtype " << dtype_name << " (fp32 or bf16)\n";
    return 2;
  }
  const torch::Dtype dtype = dtype_name == "bf16" ? torch::kBFloat16 : torch::kFloat32;

  std::shared_ptr<torch::nn::Module> net;
  std::function<torch::Tensor(torch::Tensor)> forward;
  std::function<torch::Tensor(torch::Tensor)> loss_of;
  torch::Tensor x, y;
  if (model == "cnn") {
    auto cnn = std::make_shared<example::Cnn>();
    net = cnn;
    forward = [cnn](torch::Tensor t) { return cnn->forward(t); };
    x = torch::randn({batch, 3, 16, 16});
    y = torch::randint(0, 10, {batch});
    // Cross entropy as log_softmax + nll_loss: F::cross_entropy adds a no-op `to` call that a dump
    // records and run_ut cannot replay.
    loss_of = [&y](torch::Tensor out) { return torch::nll_loss(torch::log_softmax(out, 1), y); };
  } else if (model == "mlp") {
    auto mlp = std::make_shared<example::Mlp>(32, hidden, 8);
    net = mlp;
    forward = [mlp](torch::Tensor t) { return mlp->forward(t); };
    x = torch::randn({batch, 32});
    y = torch::randn({batch, 8});
    // LibTorch 1.13 has no bfloat16 mse_loss on the CPU: the same loss from elementwise pieces.
    loss_of = [&y](torch::Tensor out) {
      return out.scalar_type() == torch::kBFloat16 ? (out - y).pow(2).mean() : torch::mse_loss(out, y);
    };
  } else if (model == "transformer") {
    const int64_t vocab = 64, seq = 8;
    auto tf = std::make_shared<example::TinyTransformer>(vocab, seq, hidden / 2, 2);
    net = tf;
    forward = [tf](torch::Tensor t) { return tf->forward(t); };
    x = torch::randint(0, vocab, {batch / 4 > 0 ? batch / 4 : 1, seq});  // token ids: never cast
    y = torch::randint(0, vocab, {x.size(0) * seq});
    loss_of = [&y, vocab](torch::Tensor out) { return torch::nll_loss(torch::log_softmax(out.reshape({-1, vocab}), 1), y); };
  } else {
    std::cerr << "unknown --model " << model << " (mlp, cnn or transformer)\n";
    return 2;
  }
  net->to(dtype);
  if (x.is_floating_point()) x = x.to(dtype);
  if (y.is_floating_point()) y = y.to(dtype);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));

#ifdef ACCCHECK_EXAMPLE_SDK
  acccheck::DebuggerConfig config;
  config.dump_path = arg(argc, argv, "--dump-path", "sdk-dump");
  config.task = arg(argc, argv, "--task", "statistics");
  config.step = arg(argc, argv, "--dump-step", "");
  acccheck::Debugger dbg(config);
#endif

  std::vector<double> times;
  for (int step = 0; step < steps; ++step) {
    if (step == crash_at) std::raise(SIGSEGV);
    if (step == exit_at) _exit(7);
    auto t0 = std::chrono::steady_clock::now();
#ifdef ACCCHECK_EXAMPLE_SDK
    dbg.start();
#endif
    opt.zero_grad();
    if (step == bad_op_at) {
      try {  // an operator that throws inside the training loop, caught by the program
        (void)torch::mm(x, x);
      } catch (const c10::Error& e) {
        std::string what = e.what_without_backtrace();
        std::cout << "caught: " << what.substr(0, what.find('\n')) << "\n";
      }
    }
    torch::Tensor out = forward(x);
    torch::Tensor loss = loss_of(out);
    if (step == bad_backward_at) {
      // A backward pass that fails in the engine (a hook that throws, as an out-of-memory error
      // or an anomaly check would), caught by the program, which skips the batch.
      out.register_hook([](torch::Tensor) -> torch::Tensor { throw std::runtime_error("a backward hook failed"); });
      try {
        loss.backward();
      } catch (const std::exception& e) {
        std::string what = e.what();
        std::cout << "caught in backward: " << what.substr(0, what.find('\n')) << "\n";
      }
    } else {
      loss.backward();
    }
#ifdef ACCCHECK_EXAMPLE_SDK
    dbg.stop();
#endif
    opt.step();
#ifdef ACCCHECK_EXAMPLE_SDK
    dbg.step();
#endif
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    times.push_back(ms);
    std::cout << "step " << step << ": " << ms << " ms, loss " << loss.item<float>() << "\n";
  }
  std::sort(times.begin(), times.end());
  if (!times.empty()) std::cout << "median step: " << times[times.size() / 2] << " ms\n";
  return 0;
}
