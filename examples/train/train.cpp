// A small LibTorch training program — an MLP or a CNN on random data with SGD — used by the dump
// tests, the overhead benchmark and the demo. Built twice: `acccheck-example-train` knows nothing
// of acccheck (the no-code-change path: `acccheck dump -- ./acccheck-example-train`), and
// `acccheck-example-train-sdk` (ACCCHECK_EXAMPLE_SDK) drives acccheck::Debugger itself.
//
//   acccheck-example-train [--model mlp|cnn] [--steps N] [--batch B] [--hidden H] [--crash-at STEP]
//                          [--exit-at STEP] [--bad-op-at STEP] [--dump-path DIR]   (last: SDK build only)
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

#ifdef ACCCHECK_EXAMPLE_SDK
#include <acccheck/debugger.hpp>
#endif

namespace {

struct Mlp : torch::nn::Module {
  Mlp(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        fc3(register_module("fc3", torch::nn::Linear(hidden, out))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::tanh(fc2->forward(x));
    return fc3->forward(x);
  }
  torch::nn::Linear fc1, fc2, fc3;
};

struct Cnn : torch::nn::Module {
  Cnn()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).padding(1)))),
        fc(register_module("fc", torch::nn::Linear(16 * 4 * 4, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    return fc->forward(x.flatten(1));
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc;
};

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
  torch::manual_seed(0);

  std::shared_ptr<torch::nn::Module> net;
  std::function<torch::Tensor(torch::Tensor)> forward;
  torch::Tensor x, y;
  if (model == "cnn") {
    auto cnn = std::make_shared<Cnn>();
    net = cnn;
    forward = [cnn](torch::Tensor t) { return cnn->forward(t); };
    x = torch::randn({batch, 3, 16, 16});
    y = torch::randint(0, 10, {batch});
  } else if (model == "mlp") {
    auto mlp = std::make_shared<Mlp>(32, hidden, 8);
    net = mlp;
    forward = [mlp](torch::Tensor t) { return mlp->forward(t); };
    x = torch::randn({batch, 32});
    y = torch::randn({batch, 8});
  } else {
    std::cerr << "unknown --model " << model << " (mlp or cnn)\n";
    return 2;
  }
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
    torch::Tensor loss = model == "cnn" ? torch::nll_loss(torch::log_softmax(out, 1), y) : torch::mse_loss(out, y);
    loss.backward();
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
