#include "tensor_values.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>

#include <map>

namespace acccheck::replay {

namespace {
const std::map<std::string, c10::ScalarType>& dtype_table() {
  using S = c10::ScalarType;
  static const std::map<std::string, c10::ScalarType> t = {
      {"torch.float16", S::Half},     {"torch.half", S::Half},         {"torch.bfloat16", S::BFloat16},
      {"torch.float32", S::Float},    {"torch.float", S::Float},       {"torch.float64", S::Double},
      {"torch.double", S::Double},    {"torch.int64", S::Long},        {"torch.long", S::Long},
      {"torch.int32", S::Int},        {"torch.int", S::Int},           {"torch.int16", S::Short},
      {"torch.short", S::Short},      {"torch.int8", S::Char},         {"torch.uint8", S::Byte},
      {"torch.bool", S::Bool},        {"torch.complex64", S::ComplexFloat},
      {"torch.complex128", S::ComplexDouble}};
  return t;
}
}  // namespace

std::optional<c10::ScalarType> scalar_type_of(const std::string& torch_dtype) {
  auto it = dtype_table().find(torch_dtype);
  if (it == dtype_table().end()) return std::nullopt;
  return it->second;
}

std::string torch_dtype_name(c10::ScalarType t) {
  using S = c10::ScalarType;
  switch (t) {
    case S::Half: return "torch.float16";
    case S::BFloat16: return "torch.bfloat16";
    case S::Float: return "torch.float32";
    case S::Double: return "torch.float64";
    case S::Long: return "torch.int64";
    case S::Int: return "torch.int32";
    case S::Short: return "torch.int16";
    case S::Char: return "torch.int8";
    case S::Byte: return "torch.uint8";
    case S::Bool: return "torch.bool";
    case S::ComplexFloat: return "torch.complex64";
    case S::ComplexDouble: return "torch.complex128";
    default: return std::string("torch.") + c10::toString(t);
  }
}

bool is_float_type(c10::ScalarType t) {
  return t == c10::kHalf || t == c10::kBFloat16 || t == c10::kFloat || t == c10::kDouble;
}

OutputValue output_value_of(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& to_cpu) {
  if (v.isNone()) return OutputValue::none();
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return OutputValue::none();
    if (t.is_complex()) {
      OutputValue o;
      o.kind = OutputValue::Kind::other;
      o.other_type = "<class 'torch.Tensor'> (complex)";
      return o;
    }
    at::Tensor cpu = to_cpu(t.detach());
    std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
    // Widened straight into the vector: no float64 tensor in between (16M elements = 128 MB saved).
    std::vector<double> values(static_cast<std::size_t>(cpu.numel()));
    if (!values.empty())
      at::from_blob(values.data(), cpu.sizes(), at::TensorOptions().dtype(c10::kDouble)).copy_(cpu);
    return OutputValue::tensor(torch_dtype_name(t.scalar_type()), std::move(shape), std::move(values));
  }
  if (v.isTuple() || v.isList()) {
    std::vector<OutputValue> items;
    if (v.isTuple())
      for (const auto& e : v.toTupleRef().elements()) items.push_back(output_value_of(e, to_cpu));
    else
      for (const c10::IValue e : v.toList()) items.push_back(output_value_of(e, to_cpu));
    return OutputValue::sequence(std::move(items));
  }
  if (v.isBool()) return OutputValue::builtin("bool", v.toBool() ? 1.0 : 0.0);
  if (v.isInt()) return OutputValue::builtin("int", static_cast<double>(v.toInt()));
  if (v.isDouble()) return OutputValue::builtin("float", v.toDouble());
  if (v.isString()) return OutputValue::builtin("str", 0.0, v.toStringRef());
  OutputValue o;
  o.kind = OutputValue::Kind::other;
  o.other_type = "<class '" + v.tagKind() + "'>";
  return o;
}

}  // namespace acccheck::replay
