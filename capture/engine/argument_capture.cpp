#include "engine/argument_capture.hpp"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include "engine/tensor_statistics.hpp"

namespace acccheck::capture {

void CapturedRecord::clear() {
  op = nullptr;
  step = 0;
  call = 0;
  tensor_specs = 0;
  direction = Direction::forward;
  has_stack = false;
  values.clear();
  dims.clear();
  stack.interned_python = nullptr;
  if (!side_used) return;
  side_used = false;
  stack.frames.clear();
  stack.python.clear();
  strings.clear();
  pending_statistics.clear();
  tensors.clear();
}

FlatValue& FlatEncoder::add(FlatValue::Kind kind) {
  FlatValue& v = record_.values.emplace_back();
  v.kind = kind;
  return v;
}

void FlatEncoder::add_tensor(const at::Tensor& t) {
  if (!t.defined()) {
    add(FlatValue::Kind::none);
    return;
  }
  FlatValue& v = add(FlatValue::Kind::tensor);
  v.dtype = t.scalar_type();
  v.requires_grad = t.requires_grad();
  auto sizes = t.sizes();
  v.at = static_cast<std::uint32_t>(record_.dims.size());
  v.count = static_cast<std::uint32_t>(sizes.size());
  record_.dims.insert(record_.dims.end(), sizes.begin(), sizes.end());
  at::Tensor pending;
  fill_statistics(t, v.stats, &pending, zeros_, unversioned_ ? Reuse::never : Reuse::allowed);
  if (pending.defined()) {
    record_.pending_statistics.emplace_back(record_.tensor_specs, pending);
    record_.side_used = true;
  }
  // One copy on the training thread; the writer moves it to the host and pickles it.
  if (save_) {
    at::RecordFunctionGuard unseen(false);  // the tool's own operator: no profiler sees it
    record_.tensors.emplace_back(record_.tensor_specs, t.detach().clone());
    record_.side_used = true;
  }
  ++record_.tensor_specs;
}

void FlatEncoder::encode(const c10::IValue& v, ArgSlot::Meaning meaning) {
  using M = ArgSlot::Meaning;
  using K = FlatValue::Kind;
  if (v.isNone()) {
    add(K::none);
  } else if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    // A Python number passed for a Tensor parameter (`x * 0.5`, `total_norm + 1e-6`) reaches the
    // dispatcher as a 0-d CPU "wrapped number", which takes no part in type promotion. It is written
    // as the number, as msprobe's dumps hold it: written as a float64 tensor it was replayed as one,
    // and `0-d float32 + 1e-6` came out float64 (SKIP). run_ut binds it back as a wrapped number.
    if (t.defined() && t.unsafeGetTensorImpl()->is_wrapped_number() && t.device().is_cpu() && t.dim() == 0) {
      switch (t.scalar_type()) {
        case at::kDouble: add(K::real).real = *static_cast<const double*>(t.data_ptr()); return;
        case at::kLong: add(K::integer).integer = *static_cast<const std::int64_t*>(t.data_ptr()); return;
        case at::kBool: add(K::boolean).integer = *static_cast<const bool*>(t.data_ptr()) ? 1 : 0; return;
        default: break;  // complex: kept as a tensor
      }
    }
    add_tensor(t);
  } else if (v.isInt()) {
    K kind = meaning == M::dtype ? K::dtype : meaning == M::layout ? K::layout
           : meaning == M::memory_format ? K::memory_format : K::integer;
    add(kind).integer = v.toInt();
  } else if (v.isDouble()) {
    add(K::real).real = v.toDouble();
  } else if (v.isBool()) {
    add(K::boolean).integer = v.toBool() ? 1 : 0;
  } else if (v.isString()) {
    add(K::string).at = static_cast<std::uint32_t>(record_.strings.size());
    record_.strings.push_back(v.toStringRef());
    record_.side_used = true;
  } else if (v.isDevice()) {
    FlatValue& d = add(K::device);
    d.integer = static_cast<std::int64_t>(v.toDevice().type());
    d.real = v.toDevice().has_index() ? v.toDevice().index() : -1;
  } else if (v.isList() || v.isTuple()) {
    std::size_t at = record_.values.size();
    add(K::list);
    std::uint32_t n = 0;
    if (v.isTuple()) {
      for (const auto& item : v.toTupleRef().elements()) encode(item, meaning), ++n;
    } else {
      for (const c10::IValue& item : v.toListRef()) encode(item, meaning), ++n;
    }
    record_.values[at].count = n;  // by index: the items may have moved the vector
  } else if (v.isComplexDouble()) {
    FlatValue& c = add(K::complex);
    c.real = v.toComplexDouble().real();
    c.imag = v.toComplexDouble().imag();
  } else {
    add(K::none);  // generators, objects: msprobe writes null for what it cannot encode
  }
}

void FlatEncoder::value(const c10::IValue& v, ArgSlot::Meaning meaning, Section section, std::size_t slot,
                        bool unversioned) {
  std::size_t at = record_.values.size();
  unversioned_ = unversioned;
  encode(v, meaning);
  unversioned_ = false;
  record_.values[at].section = section;
  record_.values[at].slot = static_cast<std::uint16_t>(slot);
}

void FlatEncoder::tensor(const at::Tensor& t, Section section) {
  std::size_t at = record_.values.size();
  add_tensor(t);
  record_.values[at].section = section;
}

namespace {

bool is_default(const c10::IValue& v, const ArgSlot* slot) {
  if (!slot || !slot->default_value || v.isTensor()) return false;
  const c10::IValue& d = *slot->default_value;
  if (v.isNone() || d.isNone()) return v.isNone() && d.isNone();
  try {
    return v == d;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

void encode_inputs(c10::ArrayRef<const c10::IValue> inputs, const std::vector<ArgSlot>& slots, FlatEncoder& enc) {
  // An input past the schema's arguments (a vararg op) is positional, plain, without default.
  auto slot_of = [&](std::size_t i) -> const ArgSlot* { return i < slots.size() ? &slots[i] : nullptr; };
  // Positional arguments up to the last one that differs from its default.
  std::size_t positional_end = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ArgSlot* slot = slot_of(i);
    if (!(slot && slot->kwarg_only) && !is_default(inputs[i], slot)) positional_end = i + 1;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ArgSlot* slot = slot_of(i);
    auto meaning = slot ? slot->meaning : ArgSlot::Meaning::plain;
    const bool unversioned = slot && slot->written_unversioned;
    if (slot && slot->kwarg_only) {
      if (!is_default(inputs[i], slot)) enc.value(inputs[i], meaning, Section::kwargs, i, unversioned);
    } else if (i < positional_end) {
      enc.value(inputs[i], meaning, Section::args, i, unversioned);
    }
  }
}

void encode_outputs(c10::ArrayRef<const c10::IValue> outputs, FlatEncoder& enc) {
  for (std::size_t i = 0; i < outputs.size(); ++i) enc.value(outputs[i], ArgSlot::Meaning::plain, Section::outputs, i);
}

}  // namespace acccheck::capture
