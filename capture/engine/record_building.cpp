#include "engine/record_building.hpp"

#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

#include "torch_support/torch_dtypes.hpp"

namespace acccheck::capture {

namespace {

Argument typed(const char* type, Json value) {
  Argument a;
  a.kind = Argument::Kind::scalar;
  a.type_name = type;
  a.value = std::move(value);
  return a;
}

Argument named(Argument::Kind kind, const char* type, Json value) {
  Argument a = typed(type, std::move(value));
  a.kind = kind;
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

std::string device_name(const FlatValue& v) {
  auto type = static_cast<c10::DeviceType>(v.integer);
  return c10::DeviceTypeName(type, /*lower_case=*/true) + ":" +
         (v.real >= 0 ? std::to_string(static_cast<int>(v.real)) : std::string("None"));
}

class Builder {
 public:
  Builder(const CapturedRecord& c, bool names) : c_(c), names_(names) {}
  bool names() const { return names_; }

  // The value at values[i] and its items; i moves past them. `path`: the tensor file name's stem
  // (only when names are wanted).
  Argument build(std::size_t& i, const std::string& path) {
    using K = FlatValue::Kind;
    const FlatValue& v = c_.values[i++];
    switch (v.kind) {
      case K::none: return Argument::none();
      case K::tensor: return tensor(v, path);
      case K::integer: return typed("int", Json::integer(v.integer));
      case K::real: return typed("float", Json::number(v.real));
      case K::boolean: return typed("bool", Json::boolean(v.integer != 0));
      case K::string: return typed("str", Json::string(c_.strings.at(v.at)));
      case K::dtype:
        return named(Argument::Kind::dtype, "torch.dtype",
                     Json::string(core::torch_dtype_name(static_cast<c10::ScalarType>(v.integer))));
      case K::memory_format:
        return named(Argument::Kind::memory_format, "torch.memory_format", Json::string(memory_format_name(v.integer)));
      case K::layout: {
        Json j = Json::object();
        j.add("type", Json::string("torch.layout"));
        j.add("value", Json::string(layout_name(v.integer)));
        return named(Argument::Kind::opaque, "torch.layout", std::move(j));
      }
      case K::device: return named(Argument::Kind::device, "torch.device", Json::string(device_name(v)));
      case K::complex: {
        Json j = Json::array();
        j.push_back(Json::number(v.real));
        j.push_back(Json::number(v.imag));
        return typed("complex", std::move(j));
      }
      case K::list: {
        Argument a;
        a.kind = Argument::Kind::list;
        a.items.reserve(v.count);
        for (std::uint32_t k = 0; k < v.count; ++k)
          a.items.push_back(build(i, names_ ? path + "." + std::to_string(k) : std::string()));
        return a;
      }
    }
    return Argument::none();
  }

 private:
  Argument tensor(const FlatValue& v, const std::string& path) {
    Argument a;
    a.kind = Argument::Kind::tensor;
    TensorSpec& spec = a.tensor;
    spec.dtype = core::torch_dtype_name(v.dtype);
    spec.shape.assign(c_.dims.begin() + v.at, c_.dims.begin() + v.at + v.count);
    spec.requires_grad = v.requires_grad;
    spec.max = v.stats.max;
    spec.min = v.stats.min;
    spec.mean = v.stats.mean;
    spec.norm = v.stats.norm;
    if (names_) spec.data_name = path + ".pt";
    return a;
  }

  const CapturedRecord& c_;
  bool names_;
};

}  // namespace

ApiRecord build_api_record(const CapturedRecord& c, bool tensor_names) {
  const OpInfo& op = *c.op;
  ApiRecord r;
  r.api = c.api();
  r.direction = c.direction;
  if (c.direction == Direction::forward) {  // a backward entry: replay takes the operator from its forward
    r.op_name = op.op_name;
    r.op_overload = op.overload;
    r.has_args = r.has_kwargs = r.has_outputs = true;
    if (!op.replayable) r.extra.add("acccheck_replayable", Json::boolean(false));
  }
  Builder b(c, tensor_names);
  const std::string entry = tensor_names ? r.entry_name() : std::string();
  auto stem = [&](const char* part, const std::string& which) { return tensor_names ? entry + part + which : std::string(); };
  std::size_t counts[5] = {};  // values so far per section
  for (std::size_t i = 0; i < c.values.size();) {
    const FlatValue& top = c.values[i];
    std::size_t n = counts[static_cast<int>(top.section)]++;
    auto slot_name = [&] { return top.slot < op.args.size() ? op.args[top.slot].name : "arg" + std::to_string(top.slot); };
    switch (top.section) {
      case Section::args:
        r.arg_names.push_back(slot_name());
        r.args.push_back(b.build(i, stem(".input.", std::to_string(n))));
        break;
      case Section::kwargs: {
        std::string name = slot_name();
        Argument a = b.build(i, stem(".kwargs.", name));
        r.kwargs.emplace_back(std::move(name), std::move(a));
        break;
      }
      case Section::outputs: r.outputs.push_back(b.build(i, stem(".output.", std::to_string(n)))); break;
      case Section::grad_inputs: r.grad_inputs.push_back(b.build(i, stem(".input.", std::to_string(n)))); break;
      case Section::grad_outputs: r.grad_outputs.push_back(b.build(i, stem(".output.", std::to_string(n)))); break;
    }
  }
  return r;
}

}  // namespace acccheck::capture
