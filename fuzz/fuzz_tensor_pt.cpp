// The .pt reader run_ut uses for real-data dumps (torch::jit::pickle_load behind load_tensor_file):
// any bytes end in a tensor or one exception naming the file. Built only where LibTorch is found;
// LibTorch itself is not instrumented, so coverage guidance comes from the wrapper only.
#include <exception>

#include "fuzz_input_file.hpp"
#include "worker/input_generator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = acccheck::fuzz::write_input("tensor.pt", data, size);
  try {
    at::Tensor t = acccheck::replay::load_tensor_file(path);
    (void)t.numel();
  } catch (const std::exception&) {
  }
  return 0;
}
