// LibTorch ↔ the comparison's torch-free model: dtype names as Python prints them, and results
// (tensors, tuples, lists, Python scalars) converted into OutputValue on the CPU.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include <functional>
#include <optional>
#include <string>

#include "common/torch_dtypes.hpp"
#include "verdict/output_value.hpp"

namespace acccheck::replay {

// Moves device tensors to the CPU with `to_cpu` and widens them to double.
OutputValue output_value_of(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& to_cpu);

}  // namespace acccheck::replay
