#include "engine/argument_capture.hpp"

#include <ATen/ATen.h>

#include "common/torch_dtypes.hpp"
#include "engine/tensor_statistics.hpp"

namespace acccheck::capture {

namespace {

Argument typed(const char* type, Json value) {
  Argument a;
  a.kind = Argument::Kind::scalar;
  a.type_name = type;
  a.value = std::move(value);
  return a;
}

const char* memory_format_name(std::int64_t v) {
  switch (static_cast<c10::MemoryFormat>(v)) {
    case c10::MemoryFormat::Contiguous: return "contiguous_format";
    case c10::MemoryFormat::ChannelsLast: return "channels_last";
    case c10::MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    default: return "preserve_format";
  }
}

std::string layout_name(std::int64_t v) {
  switch (static_cast<c10::Layout>(v)) {
    case c10::Layout::Strided: return "torch.strided";
    case c10::Layout::Sparse: return "torch.sparse_coo";
    default: return "torch.layout(" + std::to_string(v) + ")";
  }
}

std::string device_name(const c10::Device& d) {
  return c10::DeviceTypeName(d.type(), /*lower_case=*/true) + ":" + (d.has_index() ? std::to_string(d.index()) : "None");
}

Argument encode(const c10::IValue& v, ArgSlot::Meaning meaning, CaptureContext& ctx, const std::string& path) {
  using M = ArgSlot::Meaning;
  if (v.isNone()) return Argument::none();
  if (v.isTensor()) return ctx.tensor(v.toTensor(), path);
  if (v.isInt()) {
    std::int64_t i = v.toInt();
    switch (meaning) {
      case M::dtype: {
        Argument a;
        a.kind = Argument::Kind::dtype;
        a.type_name = "torch.dtype";
        a.value = Json::string(replay::torch_dtype_name(static_cast<c10::ScalarType>(i)));
        return a;
      }
      case M::memory_format: {
        Argument a;
        a.kind = Argument::Kind::memory_format;
        a.type_name = "torch.memory_format";
        a.value = Json::string(memory_format_name(i));
        return a;
      }
      case M::layout: {
        Argument a;
        a.kind = Argument::Kind::opaque;
        a.type_name = "torch.layout";
        Json j = Json::object();
        j.add("type", Json::string("torch.layout"));
        j.add("value", Json::string(layout_name(i)));
        a.value = j;
        return a;
      }
      default: return typed("int", Json::integer(i));
    }
  }
  if (v.isDouble()) return typed("float", Json::number(v.toDouble()));
  if (v.isBool()) return typed("bool", Json::boolean(v.toBool()));
  if (v.isString()) return typed("str", Json::string(v.toStringRef()));
  if (v.isDevice()) {
    Argument a;
    a.kind = Argument::Kind::device;
    a.type_name = "torch.device";
    a.value = Json::string(device_name(v.toDevice()));
    return a;
  }
  if (v.isList() || v.isTuple()) {
    Argument a;
    a.kind = Argument::Kind::list;
    std::size_t i = 0;
    auto add = [&](const c10::IValue& item) {
      std::string item_path = ctx.saving() ? path + "." + std::to_string(i++) : std::string();
      a.items.push_back(encode(item, meaning, ctx, item_path));
    };
    if (v.isTuple()) {
      for (const auto& item : v.toTupleRef().elements()) add(item);
    } else {
      for (const c10::IValue& item : v.toListRef()) add(item);
    }
    return a;
  }
  if (v.isComplexDouble()) {
    auto c = v.toComplexDouble();
    Json j = Json::array();
    j.push_back(Json::number(c.real()));
    j.push_back(Json::number(c.imag()));
    return typed("complex", j);
  }
  return Argument::none();  // generators, objects: msprobe writes null for what it cannot encode
}

}  // namespace

Argument CaptureContext::tensor(const at::Tensor& t, const std::string& data_name) {
  if (!t.defined()) return Argument::none();
  Argument a;
  a.kind = Argument::Kind::tensor;
  TensorSpec& spec = a.tensor;
  spec.dtype = replay::torch_dtype_name(t.scalar_type());
  spec.shape.assign(t.sizes().begin(), t.sizes().end());
  spec.requires_grad = t.requires_grad();
  at::Tensor pending;
  fill_statistics(t, spec, &pending);
  if (pending.defined()) record_.pending_statistics.emplace_back(record_.tensor_specs, pending);
  ++record_.tensor_specs;
  if (save_) {
    spec.data_name = data_name + ".pt";
    // One copy on the training thread; the writer moves it to the host and pickles it.
    record_.tensors.emplace_back(spec.data_name, t.detach().clone());
  }
  return a;
}

Argument encode_tensor(const at::Tensor& t, CaptureContext& ctx, const std::string& data_path) {
  return ctx.tensor(t, data_path);
}

namespace {

bool is_default(const c10::IValue& v, const ArgSlot& slot) {
  if (!slot.default_value || v.isTensor()) return false;
  const c10::IValue& d = *slot.default_value;
  if (v.isNone() || d.isNone()) return v.isNone() && d.isNone();
  try {
    return v == d;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

void encode_inputs(c10::ArrayRef<const c10::IValue> inputs, const std::vector<ArgSlot>& slots, CaptureContext& ctx,
                   ApiRecord& r) {
  // Tensor file names only where tensors are saved: the names cost allocations on every call.
  const std::string entry = ctx.saving() ? r.api + ".forward" : std::string();
  ArgSlot extra;  // an input past the schema's arguments (a vararg op)
  auto slot_of = [&](std::size_t i) -> const ArgSlot& {
    if (i < slots.size()) return slots[i];
    extra = ArgSlot{"arg" + std::to_string(i), false, ArgSlot::Meaning::plain, c10::nullopt};
    return extra;
  };
  // Positional arguments up to the last one that differs from its default.
  std::size_t positional_end = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ArgSlot& slot = slot_of(i);
    if (!slot.kwarg_only && !is_default(inputs[i], slot)) positional_end = i + 1;
  }
  r.args.reserve(positional_end);
  r.arg_names.reserve(positional_end);
  std::size_t positional = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ArgSlot& slot = slot_of(i);
    if (slot.kwarg_only) {
      if (!is_default(inputs[i], slot))
        r.kwargs.emplace_back(slot.name, encode(inputs[i], slot.meaning, ctx,
                                                ctx.saving() ? entry + ".kwargs." + slot.name : std::string()));
    } else if (i < positional_end) {
      r.args.push_back(encode(inputs[i], slot.meaning, ctx,
                              ctx.saving() ? entry + ".input." + std::to_string(positional) : std::string()));
      ++positional;
      r.arg_names.push_back(slot.name);
    }
  }
}

void encode_outputs(const std::vector<c10::IValue>& outputs, CaptureContext& ctx, ApiRecord& r) {
  const std::string entry = ctx.saving() ? r.api + ".forward" : std::string();
  r.outputs.reserve(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i)
    r.outputs.push_back(encode(outputs[i], ArgSlot::Meaning::plain, ctx,
                               ctx.saving() ? entry + ".output." + std::to_string(i) : std::string()));
}

}  // namespace acccheck::capture
