// LibTorch ↔ the comparison's torch-free model: dtype names as Python prints them, and results
// (tensors, tuples, lists, Python scalars) converted into OutputValue on the CPU.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torch_support/torch_dtypes.hpp"
#include "verdict/output_value.hpp"

namespace acccheck::replay {

// Contiguous float32 results whose widening to double was left for later (run() fills the buffers
// their OutputValues already point to): the worker's comparison thread does it, off the thread that
// runs the next API's operators. No LibTorch call: plain loops over CPU memory.
class DeferredWidening {
 public:
  void add(at::Tensor source, double* target);
  void run();  // once, before anything reads the buffers; releases the sources
  std::size_t elements() const { return elements_; }

 private:
  std::vector<std::pair<at::Tensor, double*>> jobs_;
  std::size_t elements_ = 0;
};

// Moves device tensors to the CPU with `to_cpu` and widens them to double; with `defer`, contiguous
// float32 ones are widened by defer->run() instead of now.
OutputValue output_value_of(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& to_cpu,
                            DeferredWidening* defer = nullptr);

}  // namespace acccheck::replay
