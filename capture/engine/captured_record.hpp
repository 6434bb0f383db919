// What the training thread hands to the writer: a flat record of one call. No strings, no tree of
// ApiRecord/Argument/Json objects, no allocation once a recycled record's vectors have grown — the
// values of the call in pre-order with their statistics, the operator's description, the call
// number. The writer thread turns it into the SDK's ApiRecord (record_building.hpp), names and all:
// building that tree had been most of what capturing a small operator cost the training thread.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <acccheck/record.hpp>

#include "engine/call_stack.hpp"
#include "engine/tensor_statistics.hpp"

namespace acccheck::capture {

// One schema argument as the capture needs it.
struct ArgSlot {
  enum class Meaning { plain, dtype, layout, memory_format };
  std::string name;
  bool kwarg_only = false;
  Meaning meaning = Meaning::plain;
  c10::optional<c10::IValue> default_value;  // the schema's default, if any
  // The call writes this argument's elements where the tensor's version may not move: batch
  // norm's running statistics (no schema of LibTorch 1.13 or 2.13's native_batch_norm says so),
  // or an argument the schema marks written (`Tensor(a!)`) and does not return. Its statistics are
  // read afresh each time and never kept for reuse (fill_statistics).
  bool written_unversioned = false;
};

// A dispatcher operator a hook plugin keeps: made once per operator, never changed or freed while
// the process runs (records in the writer's queue point to it).
struct OpInfo {
  std::string op_name, overload;
  bool kept = false;  // a hook plugin's category claims it
  std::string api_name;          // "Aten.addmm"
  std::size_t api_id = 0;        // index of api_name among the names classified so far
  bool replayable = true;
  bool zeroes_self = false;  // aten::zero_: its output holds only zeros
  std::size_t arguments = 0, returns = 0;  // the schema's: how many values a call has on the stack
  std::vector<ArgSlot> args;               // kept operators only
};

enum class Section : std::uint8_t { args, kwargs, outputs, grad_inputs, grad_outputs };

// One value of a call. A list is followed by its `count` items (each with its own items). 56 bytes:
// a tensor's statistics and a scalar's payload share their bytes (a value is one or the other).
struct FlatValue {
  enum class Kind : std::uint8_t {
    none, tensor, integer, real, boolean, string, dtype, layout, memory_format, device, complex, list
  };
  Kind kind = Kind::none;
  Section section = Section::args;  // top-level values only
  bool requires_grad = false;       // tensor
  c10::ScalarType dtype = c10::ScalarType::Float;  // tensor
  std::uint16_t slot = 0;           // args / kwargs: the schema argument (past the schema: a vararg)
  std::uint32_t count = 0;          // list: items; tensor: dimensions
  std::uint32_t at = 0;             // tensor: first dimension in dims; string: index in strings
  union {
    Statistics stats{};  // tensor (a device tensor's: filled in by the writer)
    struct {
      std::int64_t integer;  // integer, bool, dtype / layout / memory format code, device type
      double real, imag;     // real, complex; device: index (-1: none)
    };
  };
};
static_assert(sizeof(FlatValue) == 56);

// A record's memory is cold when the training thread fills it: a step's records go to the writer
// thread and come back after it, evicted by the step's own work (~0.06x of a dumped gpt step for
// the lines a record touches, bench/RESULTS.md). So the lines a typical record touches are few and
// together: the record starts a line, its header and first values share it, and the values and the
// dimensions of a call with up to kInlineValues values and kInlineDims dimensions lie in the record
// itself (more go to the heap, once per record: the capacity stays). What few calls use — string
// arguments, device statistics, saved tensors, copied stack frames — is cleared only when
// `side_used` says it was used.
constexpr unsigned kInlineValues = 8, kInlineDims = 16;
struct alignas(64) CapturedRecord {
  const OpInfo* op = nullptr;
  std::int64_t step = 0;
  std::int64_t call = 0;  // the API's call number in its step: Aten.addmm.<call>
  std::uint32_t tensor_specs = 0;  // tensors encoded so far: the next one's ordinal
  Direction direction = Direction::forward;
  bool has_stack = false;
  bool side_used = false;  // strings, pending_statistics, tensors or the stack's vectors hold something
  RawStack stack;  // its interned frames' pointer in the first line
  c10::SmallVector<FlatValue, kInlineValues> values;  // sections in order: args, kwargs, outputs, grad_inputs, grad_outputs
  c10::SmallVector<std::int64_t, kInlineDims> dims;
  std::vector<std::string> strings;  // string arguments (rare)
  // Device statistics: (ordinal of the tensor in walk order, 4-element device tensor).
  std::vector<std::pair<std::size_t, at::Tensor>> pending_statistics;
  std::vector<std::pair<std::size_t, at::Tensor>> tensors;  // tensor mode: (ordinal, detached copy)

  std::string api() const { return op->api_name + "." + std::to_string(call); }
  std::string entry_name() const { return api() + (direction == Direction::forward ? ".forward" : ".backward"); }
  // Empty again, its vectors' memory kept for the next call.
  void clear();
};

}  // namespace acccheck::capture
