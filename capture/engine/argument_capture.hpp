// IValues → the flat record (captured_record.hpp), on the training thread: tensors with their
// statistics, scalars by their Python type, dtype / layout / memory format told apart by the schema
// argument's type, lists and tuples as lists. Nothing here builds a string or a tree: the writer
// thread turns the values into msprobe's element encoding (record_building.hpp). In tensor mode
// every tensor is also copied for dump_tensor_data. The operators it runs for some tensors are
// never entries: the engine runs it with the capture key excluded (capture_mode.hpp, ToolCalls),
// and a profiler's RecordFunction callbacks do not see them either.
#pragma once

#include <ATen/core/ivalue.h>

#include <vector>

#include "engine/captured_record.hpp"

namespace acccheck::capture {

class FlatEncoder {
 public:
  // Ordinals continue from record.tensor_specs (the inputs' when the outputs are encoded).
  FlatEncoder(CapturedRecord& record, bool save_tensors) : record_(record), save_(save_tensors) {}
  // A top-level value and everything in it.
  // `unversioned`: the call writes its elements without (necessarily) moving its version
  // (ArgSlot::written_unversioned): its statistics are read afresh and not kept.
  void value(const c10::IValue& v, ArgSlot::Meaning meaning, Section section, std::size_t slot,
             bool unversioned = false);
  // A top-level tensor (a gradient): undefined → none.
  void tensor(const at::Tensor& t, Section section);
  // The tensors encoded from now on hold only zeros (the outputs of aten::zero_): their statistics
  // are known without reading them (fill_statistics).
  void tensors_are_zeros() { zeros_ = true; }

 private:
  void encode(const c10::IValue& v, ArgSlot::Meaning meaning);
  FlatValue& add(FlatValue::Kind kind);
  void add_tensor(const at::Tensor& t);

  CapturedRecord& record_;
  bool save_;
  bool zeros_ = false;
  bool unversioned_ = false;
};

// Forward inputs: positional schema arguments → args (slot = their place in the schema),
// keyword-only ones → kwargs. Arguments equal to their schema default are left out as a caller
// would leave them out (trailing positional ones, keyword-only ones): the call is the same, the
// entry smaller, and replay fills the defaults back from the schema.
void encode_inputs(c10::ArrayRef<const c10::IValue> inputs, const std::vector<ArgSlot>& slots, FlatEncoder& enc);
void encode_outputs(c10::ArrayRef<const c10::IValue> outputs, FlatEncoder& enc);

}  // namespace acccheck::capture
