#include "common/torch_dtypes.hpp"

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

}  // namespace acccheck::replay
