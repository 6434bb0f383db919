// IValues → msprobe's element encoding (dump-format.md §2.4): tensors as specs with statistics,
// Python-typed scalars, dtype / layout / memory format told apart by the schema argument's type,
// lists and tuples as arrays. In tensor mode every tensor is also copied for dump_tensor_data.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "engine/captured_record.hpp"

namespace acccheck::capture {

struct ArgSlot {
  enum class Meaning { plain, dtype, layout, memory_format };
  std::string name;
  bool kwarg_only = false;
  Meaning meaning = Meaning::plain;
  c10::optional<c10::IValue> default_value;  // the schema's default, if any
};

// Where encoded tensors leave their pending device statistics and copies.
class CaptureContext {
 public:
  // Ordinals continue from record.tensor_specs (the inputs' specs when the outputs are encoded), so
  // the record is not walked again on the hot path.
  CaptureContext(CapturedRecord& record, bool save_tensors) : record_(record), save_(save_tensors) {}
  Argument tensor(const at::Tensor& t, const std::string& data_name);  // data_name: only when saving
  bool saving() const { return save_; }

 private:
  CapturedRecord& record_;
  bool save_;
};

// Forward inputs: positional schema arguments → input_args (their names in r.arg_names),
// keyword-only ones → input_kwargs by name. Arguments equal to their schema default are left out
// as a caller would leave them out (trailing positional ones, keyword-only ones): the call is the
// same, the entry smaller, and replay fills the defaults back from the schema.
void encode_inputs(c10::ArrayRef<const c10::IValue> inputs, const std::vector<ArgSlot>& slots, CaptureContext& ctx,
                   ApiRecord& r);
void encode_outputs(const std::vector<c10::IValue>& outputs, CaptureContext& ctx, ApiRecord& r);
Argument encode_tensor(const at::Tensor& t, CaptureContext& ctx, const std::string& data_path);

}  // namespace acccheck::capture
