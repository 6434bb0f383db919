// Conversion between the ApiRecord model and msprobe's JSON encoding (dump-format.md §2.2–2.5).
#include <cmath>
#include <cstdio>
#include <limits>

#include "acccheck/record.hpp"

namespace acccheck {

RecordError::RecordError(std::string file, std::string entry, std::string field, std::string what)
    : std::runtime_error(file + ": entry '" + entry + "': field '" + field + "': expected " + what),
      file_(std::move(file)), entry_(std::move(entry)), field_(std::move(field)) {}

std::int64_t TensorSpec::numel() const {
  // Saturates: a shape built in code (not read, which refuses an overflowing one) never wraps.
  std::int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<std::int64_t>::max();
  return n;
}

namespace {

Statistic stat_from_json(const Json* j, const std::string& file, const std::string& entry,
                         const std::string& field) {
  if (!j || j->is_null()) return {};
  if (j->is_bool()) return {Statistic::Kind::boolean, j->as_bool() ? 1.0 : 0.0};
  if (j->is_integer()) return {Statistic::Kind::integer, static_cast<double>(j->as_int())};
  if (j->is_number()) return {Statistic::Kind::number, j->as_double()};
  throw RecordError(file, entry, field, "a number, true/false or null");
}

Json stat_to_json(const Statistic& s) {
  switch (s.kind) {
    case Statistic::Kind::null: return Json();
    case Statistic::Kind::boolean: return Json::boolean(s.value != 0.0);
    case Statistic::Kind::integer: return Json::integer(static_cast<std::int64_t>(s.value));
    case Statistic::Kind::number:
      if (s.float32 && static_cast<double>(static_cast<float>(s.value)) == s.value)
        return Json::number_float32(static_cast<float>(s.value));
      return Json::number(s.value);
  }
  return Json();
}

std::optional<double> opt_number(const Json* j, const std::string& file, const std::string& entry,
                                 const std::string& field) {
  if (!j || j->is_null()) return std::nullopt;
  if (j->is_number()) return j->as_double();
  if (j->is_bool()) return j->as_bool() ? 1.0 : 0.0;
  throw RecordError(file, entry, field, "a number");
}

bool is_tensor_type(const std::string& t) {
  return t == "torch.Tensor" || t == "torch.nn.parameter.Parameter" || t == "numpy.ndarray" ||
         t == "torch.distributed.tensor.DTensor" || t == "torch._subclasses.fake_tensor.FakeTensor" ||
         t == "torch.distributed._functional_collectives.AsyncCollectiveTensor" ||
         t == "torch.nested._internal.nested_tensor.NestedTensor";
}

const char* kTensorKeys[] = {"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad",
                             "data_name", "md5", "datapath", "Max_except_inf_nan", "Min_except_inf_nan",
                             "Max_origin", "Min_origin"};

TensorSpec tensor_from_json(const Json& j, const std::string& file, const std::string& entry,
                            const std::string& field) {
  TensorSpec t;
  t.type = j.find("type")->as_string();
  if (const Json* d = j.find("dtype")) {
    if (!d->is_string()) throw RecordError(file, entry, field + ".dtype", "a dtype string such as \"torch.float16\"");
    t.dtype = d->as_string();
  }
  if (const Json* s = j.find("shape")) {
    if (!s->is_array()) throw RecordError(file, entry, field + ".shape", "a list of integers");
    for (const auto& dim : s->items()) {
      // The JSON reader types integers of 2^32 and more as doubles (as RapidJSON does): such a
      // dimension is taken where the double holds it exactly (below 2^53).
      std::int64_t d = -1;
      if (dim.is_integer()) {
        d = dim.as_int();
      } else if (dim.is_number() && dim.as_double() >= 0 && dim.as_double() == std::floor(dim.as_double())) {
        if (dim.as_double() >= 9007199254740992.0) {
          char text[32];
          std::snprintf(text, sizeof text, "%.0f", dim.as_double());
          throw RecordError(file, entry, field + ".shape",
                            std::string("dimensions below 2^53 (") + text + " is larger than any tensor can be)");
        }
        d = static_cast<std::int64_t>(dim.as_double());
      }
      if (d < 0) throw RecordError(file, entry, field + ".shape", "a list of non-negative integers");
      t.shape.push_back(d);
    }
    std::int64_t elements = 1;
    for (auto d : t.shape)
      if (__builtin_mul_overflow(elements, d, &elements)) {
        std::string dims;
        for (auto e : t.shape) dims += (dims.empty() ? "" : ", ") + std::to_string(e);
        throw RecordError(file, entry, field + ".shape",
                          "a shape of fewer than 2^63 elements (the product of [" + dims + "] is larger)");
      }
  } else if (!j.find("datapath")) {
    throw RecordError(file, entry, field + ".shape", "a list of integers (key missing)");
  }
  t.max = stat_from_json(j.find("Max"), file, entry, field + ".Max");
  t.min = stat_from_json(j.find("Min"), file, entry, field + ".Min");
  t.mean = stat_from_json(j.find("Mean"), file, entry, field + ".Mean");
  t.norm = stat_from_json(j.find("Norm"), file, entry, field + ".Norm");
  t.max_except_inf_nan = opt_number(j.find("Max_except_inf_nan"), file, entry, field + ".Max_except_inf_nan");
  t.min_except_inf_nan = opt_number(j.find("Min_except_inf_nan"), file, entry, field + ".Min_except_inf_nan");
  t.max_origin = opt_number(j.find("Max_origin"), file, entry, field + ".Max_origin");
  t.min_origin = opt_number(j.find("Min_origin"), file, entry, field + ".Min_origin");
  if (const Json* rg = j.find("requires_grad")) {
    if (!rg->is_bool()) throw RecordError(file, entry, field + ".requires_grad", "true or false");
    t.requires_grad = rg->as_bool();
  }
  if (const Json* dn = j.find("data_name")) {
    if (!dn->is_string()) throw RecordError(file, entry, field + ".data_name", "a file name string");
    t.data_name = dn->as_string();
  } else if (const Json* dp = j.find("datapath")) {
    if (!dp->is_string()) throw RecordError(file, entry, field + ".datapath", "a path string");
    t.data_name = dp->as_string();
  }
  if (const Json* md5 = j.find("md5"); md5 && md5->is_string()) t.md5 = md5->as_string();
  t.extra = Json::object();
  for (const auto& m : j.members()) {
    bool known = false;
    for (const char* k : kTensorKeys) known = known || m.first == k;
    if (!known) t.extra.add(m.first, m.second);
  }
  return t;
}

Json tensor_to_json(const TensorSpec& t) {
  Json j = Json::object();
  j.add("type", Json::string(t.type));
  j.add("dtype", Json::string(t.dtype));
  Json shape = Json::array();
  for (auto d : t.shape) shape.push_back(Json::integer(d));
  j.add("shape", shape);
  j.add("Max", stat_to_json(t.max));
  if (t.max_origin) j.add("Max_origin", Json::number(*t.max_origin));
  j.add("Min", stat_to_json(t.min));
  if (t.min_origin) j.add("Min_origin", Json::number(*t.min_origin));
  j.add("Mean", stat_to_json(t.mean));
  j.add("Norm", stat_to_json(t.norm));
  j.add("requires_grad", Json::boolean(t.requires_grad));
  if (!t.data_name.empty()) j.add("data_name", Json::string(t.data_name));
  if (!t.md5.empty()) j.add("md5", Json::string(t.md5));
  if (t.max_except_inf_nan) j.add("Max_except_inf_nan", Json::number(*t.max_except_inf_nan));
  if (t.min_except_inf_nan) j.add("Min_except_inf_nan", Json::number(*t.min_except_inf_nan));
  for (const auto& m : t.extra.members()) j.add(m.first, m.second);
  return j;
}

}  // namespace

Argument argument_from_json(const Json& j, const std::string& file, const std::string& entry,
                            const std::string& field) {
  Argument a;
  if (j.is_null()) return a;
  if (j.is_array()) {
    a.kind = Argument::Kind::list;
    std::size_t i = 0;
    for (const auto& item : j.items())
      a.items.push_back(argument_from_json(item, file, entry, field + "[" + std::to_string(i++) + "]"));
    return a;
  }
  if (!j.is_object())
    throw RecordError(file, entry, field, "an object, a list or null (found a bare value)");
  const Json* type = j.find("type");
  if (!type) {
    // dict / namedtuple, or the empty {} written for a positional dtype/device.
    if (j.members().empty()) {
      a.kind = Argument::Kind::opaque;
      a.value = j;
      return a;
    }
    a.kind = Argument::Kind::dict;
    for (const auto& m : j.members())
      a.members.emplace_back(m.first, argument_from_json(m.second, file, entry, field + "." + m.first));
    return a;
  }
  if (!type->is_string()) throw RecordError(file, entry, field + ".type", "a type string");
  a.type_name = type->as_string();
  const std::string& t = a.type_name;
  const Json* value = j.find("value");
  if (is_tensor_type(t)) {
    a.kind = Argument::Kind::tensor;
    a.tensor = tensor_from_json(j, file, entry, field);
  } else if (t == "slice") {
    a.kind = Argument::Kind::slice;
    if (!value || !value->is_array()) throw RecordError(file, entry, field + ".value", "a [start, stop, step] list");
    a.value = *value;
  } else if (t == "ellipsis") {
    a.kind = Argument::Kind::ellipsis;
    a.value = value ? *value : Json::string("...");
  } else if (t == "torch.Size") {
    a.kind = Argument::Kind::size;
    if (!value || !value->is_array()) throw RecordError(file, entry, field + ".value", "a list of sizes");
    a.value = *value;
  } else if (t == "torch.dtype") {
    a.kind = Argument::Kind::dtype;
    if (!value || !value->is_string()) throw RecordError(file, entry, field + ".value", "a dtype string");
    a.value = *value;
  } else if (t == "torch.device") {
    a.kind = Argument::Kind::device;
    a.value = value ? *value : Json();
  } else if (t == "torch.memory_format") {
    a.kind = Argument::Kind::memory_format;
    const Json* f = j.find("format");
    a.value = f ? *f : Json();
  } else if (value && j.members().size() == 2) {
    a.kind = Argument::Kind::scalar;  // int / float / bool / str / numpy scalars / NoneType
    a.value = *value;
  } else {
    a.kind = Argument::Kind::opaque;
    a.value = j;
  }
  return a;
}

Json argument_to_json(const Argument& a) {
  switch (a.kind) {
    case Argument::Kind::none: return Json();
    case Argument::Kind::tensor: return tensor_to_json(a.tensor);
    case Argument::Kind::list: {
      Json j = Json::array();
      for (const auto& item : a.items) j.push_back(argument_to_json(item));
      return j;
    }
    case Argument::Kind::dict: {
      Json j = Json::object();
      for (const auto& m : a.members) j.add(m.first, argument_to_json(m.second));
      return j;
    }
    case Argument::Kind::memory_format: {
      Json j = Json::object();
      j.add("type", Json::string(a.type_name));
      j.add("format", a.value);
      return j;
    }
    case Argument::Kind::opaque: return a.value;
    default: {
      Json j = Json::object();
      j.add("type", Json::string(a.type_name));
      j.add("value", a.value);
      return j;
    }
  }
}

std::optional<std::pair<std::string, Direction>> split_entry_name(std::string_view key, std::string_view file) {
  if (key.find("Module") != std::string_view::npos) return std::nullopt;
  auto ends_with = [&](std::string_view suffix) {
    return key.size() >= suffix.size() && key.substr(key.size() - suffix.size()) == suffix;
  };
  // By the suffix first: aten operators carry the words in their names (Aten.nll_loss2d_forward.0.backward,
  // a segmentation loss's gradient; Aten.convolution_backward.0.forward under --capture-backward-ops),
  // where the reference's substring test alone took a backward entry for a malformed forward one.
  if (ends_with(".forward")) return std::make_pair(std::string(key.substr(0, key.size() - 8)), Direction::forward);
  if (ends_with(".backward")) return std::make_pair(std::string(key.substr(0, key.size() - 9)), Direction::backward);
  // Neither suffix: a key with either word is a malformed entry of that direction (the reference's rule).
  if (key.find("forward") != std::string_view::npos)
    throw RecordError(std::string(file), std::string(key), "<key>", "an entry name ending in \".forward\"");
  if (key.find("backward") != std::string_view::npos)
    throw RecordError(std::string(file), std::string(key), "<key>", "an entry name ending in \".backward\"");
  throw RecordError(std::string(file), std::string(key), "<key>",
                    "an entry name <Prefix>.<api>.<count>.forward|backward (unexpected name structure)");
}

namespace {
std::vector<Argument> list_field(const Json& body, const char* key, const std::string& file,
                                 const std::string& entry, bool* present) {
  std::vector<Argument> out;
  const Json* j = body.find(key);
  *present = j != nullptr;
  if (!j || j->is_null()) return out;
  if (!j->is_array()) throw RecordError(file, entry, key, "a list");
  std::size_t i = 0;
  for (const auto& item : j->items())
    out.push_back(argument_from_json(item, file, entry, std::string(key) + "[" + std::to_string(i++) + "]"));
  return out;
}
}  // namespace

ApiRecord record_from_json(const std::string& key, const Json& body, const std::string& file) {
  auto split = split_entry_name(key, file);
  if (!split) throw RecordError(file, key, "<key>", "an API entry (module entries are not records)");
  ApiRecord r;
  r.api = split->first;
  r.direction = split->second;
  if (!body.is_object()) throw RecordError(file, key, "<entry>", "an object");
  if (r.direction == Direction::forward) {
    r.args = list_field(body, "input_args", file, key, &r.has_args);
    if (const Json* kw = body.find("input_kwargs")) {
      r.has_kwargs = true;
      if (!kw->is_null()) {
        if (!kw->is_object()) throw RecordError(file, key, "input_kwargs", "an object");
        for (const auto& m : kw->members())
          r.kwargs.emplace_back(m.first, argument_from_json(m.second, file, key, "input_kwargs." + m.first));
      }
    }
    r.outputs = list_field(body, "output", file, key, &r.has_outputs);
    if (const Json* rc = body.find("is_recompute"); rc && rc->is_bool()) r.is_recompute = rc->as_bool();
  } else {
    bool present = false;
    r.grad_inputs = list_field(body, "input", file, key, &present);
    r.grad_outputs = list_field(body, "output", file, key, &present);
  }
  static const char* kKnown[] = {"input_args", "input_kwargs", "output", "is_recompute", "input", "acccheck_op"};
  for (const auto& m : body.members()) {
    r.key_order.push_back(m.first);
    bool known = false;
    for (const char* k : kKnown) known = known || m.first == k;
    if (!known) r.extra.add(m.first, m.second);
  }
  if (const Json* op = body.find("acccheck_op"); op && op->is_object()) {
    if (const Json* n = op->find("name"); n && n->is_string()) r.op_name = n->as_string();
    if (const Json* o = op->find("overload"); o && o->is_string()) r.op_overload = o->as_string();
  } else if (op && op->is_string()) {
    // "aten::add_.Tensor(self, other)": operator, overload, names of input_args.
    const std::string& text = op->as_string();
    std::size_t paren = text.find('(');
    std::string full = text.substr(0, paren);
    std::size_t ns = full.find("::");
    std::size_t dot = full.find('.', ns == std::string::npos ? 0 : ns + 2);
    r.op_name = full.substr(0, dot);
    if (dot != std::string::npos) r.op_overload = full.substr(dot + 1);
    if (paren != std::string::npos) {
      std::size_t close = text.find(')', paren);
      if (close == std::string::npos) throw RecordError(file, key, "acccheck_op", "'op.overload(arg, ...)'");
      std::string inner = text.substr(paren + 1, close - paren - 1);
      for (std::size_t b = 0; b < inner.size();) {
        std::size_t e = inner.find(", ", b);
        r.arg_names.push_back(inner.substr(b, e == std::string::npos ? std::string::npos : e - b));
        b = e == std::string::npos ? inner.size() : e + 2;
      }
    }
  } else if (op) {
    throw RecordError(file, key, "acccheck_op", "a string 'op.overload(arg, ...)' or {\"name\", \"overload\"}");
  }
  return r;
}

Json record_to_json(const ApiRecord& r) {
  auto list = [](const std::vector<Argument>& v) {
    Json a = Json::array();
    for (const auto& x : v) a.push_back(argument_to_json(x));
    return a;
  };
  std::vector<Json::Member> fields;
  if (r.direction == Direction::forward) {
    fields.emplace_back("input_args", list(r.args));
    Json kw = Json::object();
    for (const auto& m : r.kwargs) kw.add(m.first, argument_to_json(m.second));
    fields.emplace_back("input_kwargs", kw);
    fields.emplace_back("output", list(r.outputs));
    if (r.is_recompute) fields.emplace_back("is_recompute", Json::boolean(*r.is_recompute));
  } else {
    fields.emplace_back("input", list(r.grad_inputs));
    fields.emplace_back("output", list(r.grad_outputs));
  }
  if (!r.op_name.empty()) {
    // One line: "aten::add_.Tensor(self, other)" — the operator, its overload, the names of input_args.
    std::string op = r.op_name + (r.op_overload.empty() ? "" : "." + r.op_overload);
    if (r.direction == Direction::forward) {
      op += "(";
      for (std::size_t i = 0; i < r.arg_names.size(); ++i) op += (i ? ", " : "") + r.arg_names[i];
      op += ")";
    }
    fields.emplace_back("acccheck_op", Json::string(op));
  }
  for (const auto& m : r.extra.members()) fields.push_back(m);
  // Keys in the order they were read, then any new ones in the default order.
  Json j = Json::object();
  std::vector<bool> used(fields.size(), false);
  for (const auto& key : r.key_order)
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (!used[i] && fields[i].first == key) {
        j.add(fields[i].first, fields[i].second);
        used[i] = true;
      }
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (!used[i]) j.add(fields[i].first, fields[i].second);
  return j;
}

}  // namespace acccheck
