// What the training thread hands to the writer: the record (statistics of CPU tensors already
// filled), device statistics still on the device, tensors to save (tensor mode) and the raw stack.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <acccheck/record.hpp>

#include "engine/call_stack.hpp"

namespace acccheck::capture {

struct CapturedRecord {
  std::int64_t step = 0;
  ApiRecord record;
  // Device statistics: (ordinal of the tensor spec in walk order, 4-element device tensor).
  std::vector<std::pair<std::size_t, at::Tensor>> pending_statistics;
  std::vector<std::pair<std::string, at::Tensor>> tensors;  // data_name → detached copy
  RawStack stack;
  bool has_stack = false;
  std::size_t tensor_specs = 0;  // tensor specs encoded so far: the next one's ordinal
};

// The tensor specs of a record in a fixed order (args, kwargs, outputs, grads; depth first).
template <typename F>
void for_each_tensor_spec(ApiRecord& r, F&& f) {
  std::size_t ordinal = 0;
  auto walk = [&](auto& self, Argument& a) -> void {
    if (a.kind == Argument::Kind::tensor) f(ordinal++, a.tensor);
    for (auto& item : a.items) self(self, item);
    for (auto& m : a.members) self(self, m.second);
  };
  for (auto& a : r.args) walk(walk, a);
  for (auto& kv : r.kwargs) walk(walk, kv.second);
  for (auto& a : r.outputs) walk(walk, a);
  for (auto& a : r.grad_inputs) walk(walk, a);
  for (auto& a : r.grad_outputs) walk(walk, a);
}

}  // namespace acccheck::capture
