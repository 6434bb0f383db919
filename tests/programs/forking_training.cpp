// A training loop for `acccheck dump` tests that forks worker processes the way a data loader does,
// right after each step's backward pass, while the dump's writer thread still has the step's records
// to write. Each child runs a few operators (a "collate": select + stack) and ends, half of them
// with _exit (as Python's multiprocessing does), half with exit. The parent waits for every child
// with a deadline: a child that hangs (a lock inherited from a thread it does not have) is killed
// and reported, and the program fails.
//   forking_training STEPS CHILDREN_PER_STEP
#include <ATen/ATen.h>
#include <signal.h>
#include <sys/wait.h>
#include <torch/csrc/autograd/autograd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void run_child(int index) {
  std::vector<at::Tensor> rows;
  at::Tensor data = at::arange(64, at::kFloat).reshape({8, 8});
  for (int i = 0; i < 4; ++i) rows.push_back(data.select(0, (index + i) % 8));
  at::Tensor batch = at::stack(rows);
  int code = batch.sum().item<float>() > 0 ? 0 : 4;
  if (index % 2 == 0) ::_exit(code);
  std::exit(code);
}

// True when the child ended with status 0 within the deadline; a hung child is killed.
bool wait_for(pid_t pid, std::chrono::seconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  std::cerr << "child " << pid << " hung: killed after " << deadline.count() << " s\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int steps = std::atoi(argv[1]), children = std::atoi(argv[2]);
  at::manual_seed(0);
  at::Tensor w1 = (at::randn({32, 64}) * 0.1).requires_grad_();
  at::Tensor w2 = (at::randn({64, 8}) * 0.1).requires_grad_();
  at::Tensor x = at::randn({16, 32}), y = at::randn({16, 8});
  int forked = 0, failed = 0;
  for (int s = 0; s < steps; ++s) {
    at::Tensor h = x;
    for (int layer = 0; layer < 8; ++layer) h = at::tanh(at::mm(h, w1.narrow(1, 0, 32)) + 0.1);  // many small ops
    at::Tensor loss = at::mse_loss(at::mm(at::relu(at::mm(h, w1)), w2), y);
    torch::autograd::backward({loss});
    std::vector<pid_t> pids;
    for (int c = 0; c < children; ++c) {
      pid_t pid = ::fork();
      if (pid < 0) return 3;
      if (pid == 0) run_child(forked);
      pids.push_back(pid);
      ++forked;
    }
    for (pid_t pid : pids) failed += !wait_for(pid, std::chrono::seconds(60));
    {
      at::NoGradGuard no_grad;
      for (at::Tensor* w : {&w1, &w2}) {
        w->sub_(w->grad() * 0.1);
        w->mutable_grad().zero_();
      }
    }
    std::cout << "step " << s << " loss " << loss.item<float>() << "\n";
  }
  std::cout << "children: " << forked << " forked, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
