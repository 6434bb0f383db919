// Binds arguments to a dispatcher operator: the overload is chosen by schema matching (every
// overload of the name is tried; the one that binds with the fewest defaults filled wins), and
// the stack is completed with the schema's defaults (a boxed call needs every argument).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <utility>
#include <vector>

namespace acccheck::replay {

struct BoundCall {
  c10::OperatorHandle op;
  std::vector<c10::IValue> stack;  // one value per schema argument, in order
};

// `op`: "aten::add" (any overload) or "aten::add.Tensor" (that one). Throws std::runtime_error
// naming the operator and why no overload fits.
BoundCall bind_operator(const std::string& op, const std::vector<c10::IValue>& args,
                        const std::vector<std::pair<std::string, c10::IValue>>& kwargs);

}  // namespace acccheck::replay
