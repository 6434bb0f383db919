#include "engine/record_building.hpp"

#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

#include <acccheck/json.hpp>
#include <acccheck/number_format.hpp>

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

// A top-level value's name: its schema argument's, or argN past the schema (a vararg).
std::string slot_name(const OpInfo& op, std::uint16_t slot) {
  return slot < op.args.size() ? op.args[slot].name : "arg" + std::to_string(slot);
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

    switch (top.section) {
      case Section::args:
        r.arg_names.push_back(slot_name(op, top.slot));
        r.args.push_back(b.build(i, stem(".input.", std::to_string(n))));
        break;
      case Section::kwargs: {
        std::string name = slot_name(op, top.slot);
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

// ---- the same encoding, straight to text ------------------------------------------------------------

namespace acccheck::capture {

namespace {

// dump.json's layout: json.dump(indent=1), the entries at depth 2 inside "data".
class EntryText {
 public:
  EntryText(const CapturedRecord& c, bool names, std::string& out, std::vector<std::string>* name_list)
      : c_(c), names_(names), out_(out), name_list_(name_list) {}

  void entry() {
    if (names_ && name_list_) {  // a tensor's name goes to the place of its ordinal (values order)
      std::size_t tensors = 0;
      for (const FlatValue& v : c_.values) tensors += v.kind == FlatValue::Kind::tensor;
      name_list_->assign(tensors, std::string());
    }
    const OpInfo& op = *c_.op;
    const std::string entry = c_.entry_name();
    string(entry);
    out_ += ": {";
    // A section's top-level values, wherever they are among the others (a vararg past the schema is
    // positional, after the keyword ones).
    auto section = [&](const char* key, Section which, bool object, const char* part) {
      member_key(key, 3);
      std::size_t n = 0;  // the section's values so far
      for (std::size_t k = 0; k < c_.values.size();) {
        const FlatValue& top = c_.values[k];
        if (top.section != which) {
          k = skip(k);
          continue;
        }
        out_ += n ? "," : object ? "{" : "[";
        newline(4);
        std::string path;
        if (object) {
          const std::string name = slot_name(op, top.slot);
          string(name);
          out_ += ": ";
          if (names_) path = entry + part + name;
        } else if (names_) {
          path = entry + part + std::to_string(n);
        }
        value(k, 4, path);
        ++n;
      }
      if (n == 0) {
        out_ += object ? "{}" : "[]";
        return;
      }
      newline(3);
      out_.push_back(object ? '}' : ']');
    };
    if (c_.direction == Direction::forward) {
      section("input_args", Section::args, false, ".input.");
      out_.push_back(',');
      section("input_kwargs", Section::kwargs, true, ".kwargs.");
      out_.push_back(',');
      section("output", Section::outputs, false, ".output.");
      out_.push_back(',');
      member_key("acccheck_op", 3);
      std::string text = op.op_name + (op.overload.empty() ? "" : "." + op.overload) + "(";
      bool first = true;
      // The names of input_args, in order: the top-level args values' slots.
      for (std::size_t k = 0; k < c_.values.size(); k = skip(k)) {
        const FlatValue& v = c_.values[k];
        if (v.section != Section::args) continue;
        text += first ? "" : ", ";
        first = false;
        text += slot_name(op, v.slot);
      }
      text += ")";
      string(text);
      if (!op.replayable) {
        out_.push_back(',');
        member_key("acccheck_replayable", 3);
        out_ += "false";
      }
    } else {
      section("input", Section::grad_inputs, false, ".input.");
      out_.push_back(',');
      section("output", Section::grad_outputs, false, ".output.");
    }
    newline(2);
    out_.push_back('}');
  }

 private:
  // The tensor's place among the record's tensors, in the order they were encoded (its ordinal in
  // pending_statistics and tensors).
  std::size_t ordinal_of(const FlatValue& v) const {
    std::size_t n = 0;
    for (const FlatValue* p = c_.values.data(); p != &v; ++p) n += p->kind == FlatValue::Kind::tensor;
    return n;
  }
  // The index past values[k] and its items.
  std::size_t skip(std::size_t k) const {
    std::size_t items = c_.values[k].kind == FlatValue::Kind::list ? c_.values[k].count : 0;
    ++k;
    for (std::size_t n = 0; n < items; ++n) k = skip(k);
    return k;
  }

  void newline(int depth) {
    out_.push_back('\n');
    out_.append(static_cast<std::size_t>(depth), ' ');
  }
  void string(const std::string& s) { append_json_string(out_, s); }
  void member_key(const char* key, int depth) {
    newline(depth);
    out_.push_back('"');
    out_ += key;
    out_ += "\": ";
  }
  void statistic(const Statistic& s) {
    switch (s.kind) {
      case Statistic::Kind::null: out_ += "null"; return;
      case Statistic::Kind::boolean: out_ += s.value != 0.0 ? "true" : "false"; return;
      case Statistic::Kind::integer: out_ += std::to_string(static_cast<std::int64_t>(s.value)); return;
      case Statistic::Kind::number:
        out_ += s.float32 && static_cast<double>(static_cast<float>(s.value)) == s.value
                    ? json_float32_repr(static_cast<float>(s.value))
                    : python_float_repr(s.value);
        return;
    }
  }
  // {"type": <type>, "<key>": <text written by f>} at `depth`.
  template <typename F>
  void typed(int depth, const char* type, const char* key, F&& f) {
    out_.push_back('{');
    member_key("type", depth + 1);
    out_.push_back('"');
    out_ += type;
    out_ += "\",";
    member_key(key, depth + 1);
    f();
    newline(depth);
    out_.push_back('}');
  }

  // values[i] (and its items) at `depth`; i moves past them.
  void value(std::size_t& i, int depth, const std::string& path) {
    using K = FlatValue::Kind;
    const FlatValue& v = c_.values[i++];
    switch (v.kind) {
      case K::none: out_ += "null"; return;
      case K::tensor: return tensor(v, depth, path);
      case K::integer: return typed(depth, "int", "value", [&] { out_ += std::to_string(v.integer); });
      case K::real: return typed(depth, "float", "value", [&] { out_ += python_float_repr(v.real); });
      case K::boolean: return typed(depth, "bool", "value", [&] { out_ += v.integer != 0 ? "true" : "false"; });
      case K::string: return typed(depth, "str", "value", [&] { string(c_.strings.at(v.at)); });
      case K::dtype:
        return typed(depth, "torch.dtype", "value",
                     [&] { string(core::torch_dtype_name(static_cast<c10::ScalarType>(v.integer))); });
      case K::memory_format:
        return typed(depth, "torch.memory_format", "format", [&] { string(memory_format_name(v.integer)); });
      case K::layout: return typed(depth, "torch.layout", "value", [&] { string(layout_name(v.integer)); });
      case K::device: return typed(depth, "torch.device", "value", [&] { string(device_name(v)); });
      case K::complex:
        return typed(depth, "complex", "value", [&] {
          out_.push_back('[');
          newline(depth + 2);
          out_ += python_float_repr(v.real);
          out_.push_back(',');
          newline(depth + 2);
          out_ += python_float_repr(v.imag);
          newline(depth + 1);
          out_.push_back(']');
        });
      case K::list: {
        if (v.count == 0) {
          out_ += "[]";
          return;
        }
        out_.push_back('[');
        for (std::uint32_t k = 0; k < v.count; ++k) {
          if (k) out_.push_back(',');
          newline(depth + 1);
          value(i, depth + 1, names_ ? path + "." + std::to_string(k) : std::string());
        }
        newline(depth);
        out_.push_back(']');
        return;
      }
    }
    out_ += "null";
  }

  void tensor(const FlatValue& v, int depth, const std::string& path) {
    const int d = depth + 1;
    out_.push_back('{');
    member_key("type", d);
    out_ += "\"torch.Tensor\",";
    member_key("dtype", d);
    string(core::torch_dtype_name(v.dtype));
    out_.push_back(',');
    member_key("shape", d);
    if (v.count == 0) {
      out_ += "[]";
    } else {
      out_.push_back('[');
      for (std::uint32_t k = 0; k < v.count; ++k) {
        if (k) out_.push_back(',');
        newline(d + 1);
        out_ += std::to_string(c_.dims[v.at + k]);
      }
      newline(d);
      out_.push_back(']');
    }
    for (const auto& [key, stat] : {std::pair<const char*, const HeldStatistic*>{"Max", &v.stats.max},
                                    {"Min", &v.stats.min}, {"Mean", &v.stats.mean}, {"Norm", &v.stats.norm}}) {
      out_.push_back(',');
      member_key(key, d);
      statistic(*stat);
    }
    out_.push_back(',');
    member_key("requires_grad", d);
    out_ += v.requires_grad ? "true" : "false";
    if (names_) {
      const std::string name = path + ".pt";
      out_.push_back(',');
      member_key("data_name", d);
      string(name);
      if (name_list_) (*name_list_)[ordinal_of(v)] = name;
    }
    newline(depth);
    out_.push_back('}');
  }

  const CapturedRecord& c_;
  bool names_;
  std::string& out_;
  std::vector<std::string>* name_list_;
};

}  // namespace

void append_entry_json(const CapturedRecord& c, bool tensor_names, std::string& out, std::vector<std::string>* names) {
  EntryText(c, tensor_names, out, names).entry();
}

}  // namespace acccheck::capture
