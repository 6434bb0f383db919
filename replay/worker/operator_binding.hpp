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

// Whether an operator draws random numbers, so that its outputs differ from one run to the next and
// cannot be judged: some overload of its name takes a Generator (randn, uniform_, bernoulli_,
// randint, multinomial, rrelu, ...), or it is the `_like` form of such an operator (LibTorch 1.13's
// rand_like/randn_like/randint_like take none). `op` as bind_operator takes it.
bool draws_random_numbers(const std::string& op);

}  // namespace acccheck::replay
