// acccheck-run-model: `acccheck dump --model model.pt --input-shape 4,8 …` runs this. It loads a
// TorchScript module, draws random inputs of the given shapes, and runs forward + backward (the
// sum of the floating outputs as the loss) for each requested step under the dump engine, whose
// options arrive in ACCCHECK_DUMP_OPTIONS as for the preload library.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/script.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "engine/capture_engine.hpp"

namespace {

std::vector<std::int64_t> parse_shape(const std::string& s) {
  std::vector<std::int64_t> shape;
  std::stringstream ss(s);
  for (std::string d; std::getline(ss, d, ',');) {
    char* end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end || v < 0) throw std::runtime_error("--input-shape '" + s + "': expected sizes like 4,8");
    shape.push_back(v);
  }
  return shape;
}

at::Tensor loss_of(const c10::IValue& out) {
  at::Tensor total;
  auto add = [&](const at::Tensor& t) {
    if (!t.defined() || !t.is_floating_point() || !t.requires_grad()) return;
    at::Tensor s = t.sum();
    total = total.defined() ? total + s : s;
  };
  if (out.isTensor()) add(out.toTensor());
  else if (out.isTuple())
    for (const auto& e : out.toTupleRef().elements())
      if (e.isTensor()) add(e.toTensor());
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  // argv: MODEL STEPS DTYPE SHAPE...
  if (argc < 5) {
    std::cerr << "usage: acccheck-run-model MODEL STEPS DTYPE SHAPE... (started by `acccheck dump --model`)\n";
    return 2;
  }
  const char* text = std::getenv("ACCCHECK_DUMP_OPTIONS");
  if (!text) {
    std::cerr << "acccheck-run-model: ACCCHECK_DUMP_OPTIONS is not set (run `acccheck dump --model`)\n";
    return 2;
  }
  std::string model_path = argv[1];
  int steps = std::atoi(argv[2]);
  std::string dtype = argv[3];
  torch::jit::Module module;
  try {
    module = torch::jit::load(model_path);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::cerr << "acccheck dump: " << model_path << ": not a TorchScript model: " << what.substr(0, what.find('\n')) << "\n";
    return 3;
  }
  module.train();
  // Run the graph as written: the optimising executor fuses operators into differentiable
  // subgraphs whose ops have no autograd node of their own (no backward entries).
  torch::jit::setGraphExecutorOptimize(false);
  at::ScalarType st = dtype == "float16" ? at::kHalf : dtype == "bfloat16" ? at::kBFloat16
                      : dtype == "float64" ? at::kDouble : at::kFloat;
  if (st != at::kFloat) module.to(st);
  auto& engine = acccheck::capture::CaptureEngine::instance();
  try {
    engine.configure(acccheck::core::parse_dump_options(text, "ACCCHECK_DUMP_OPTIONS"));
    at::manual_seed(0);
    for (int step = 0; step < steps; ++step) {
      std::vector<c10::IValue> inputs;
      for (int i = 4; i < argc; ++i) inputs.emplace_back(at::randn(parse_shape(argv[i]), at::TensorOptions().dtype(st)));
      engine.start();
      c10::IValue out = module.forward(inputs);
      at::Tensor loss = loss_of(out);
      if (loss.defined()) torch::autograd::backward({loss});
      engine.stop();
      engine.step();
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::cerr << "acccheck dump: " << model_path << ": " << what.substr(0, what.find('\n')) << "\n";
    engine.finish();
    return 3;
  }
  std::cerr << engine.finish() << "\n";
  return 0;
}
