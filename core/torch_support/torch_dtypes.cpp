#include "torch_support/torch_dtypes.hpp"

#include <torch/version.h>

#include <map>
#include <utility>
#include <vector>

namespace acccheck::core {

namespace {

using S = c10::ScalarType;

// Every dtype with the name Python prints (`str(torch.uint16)` is "torch.uint16", where c10 says
// "UInt16"), first name first; later names are Python's aliases. The dtypes LibTorch 2.x added exist
// only in the versions that have them (LibTorch 1.13 has none of them).
// The tables are never destroyed: the dump's writer thread names dtypes while the program exits,
// after the static destructors registered later than its exit handler have run.
using NameTable = std::vector<std::pair<S, std::vector<const char*>>>;
const NameTable& dtype_names() {
  static const NameTable* t = new NameTable{
      {S::Half, {"torch.float16", "torch.half"}},
      {S::BFloat16, {"torch.bfloat16"}},
      {S::Float, {"torch.float32", "torch.float"}},
      {S::Double, {"torch.float64", "torch.double"}},
      {S::Long, {"torch.int64", "torch.long"}},
      {S::Int, {"torch.int32", "torch.int"}},
      {S::Short, {"torch.int16", "torch.short"}},
      {S::Char, {"torch.int8"}},
      {S::Byte, {"torch.uint8"}},
      {S::Bool, {"torch.bool"}},
      {S::ComplexHalf, {"torch.complex32", "torch.chalf"}},
      {S::ComplexFloat, {"torch.complex64", "torch.cfloat"}},
      {S::ComplexDouble, {"torch.complex128", "torch.cdouble"}},
      {S::QInt8, {"torch.qint8"}},
      {S::QUInt8, {"torch.quint8"}},
      {S::QInt32, {"torch.qint32"}},
      {S::QUInt4x2, {"torch.quint4x2"}},
      {S::QUInt2x4, {"torch.quint2x4"}},
#if TORCH_VERSION_MAJOR >= 2  // float8: LibTorch 2.1; the fnuz variants 2.2; unsigned 16/32/64: 2.3
      {S::Float8_e5m2, {"torch.float8_e5m2"}},
      {S::Float8_e4m3fn, {"torch.float8_e4m3fn"}},
      {S::Float8_e5m2fnuz, {"torch.float8_e5m2fnuz"}},
      {S::Float8_e4m3fnuz, {"torch.float8_e4m3fnuz"}},
      {S::UInt16, {"torch.uint16"}},
      {S::UInt32, {"torch.uint32"}},
      {S::UInt64, {"torch.uint64"}},
#endif
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)  // e8m0: 2.7, float4: 2.8
      {S::Float8_e8m0fnu, {"torch.float8_e8m0fnu"}},
      {S::Float4_e2m1fn_x2, {"torch.float4_e2m1fn_x2"}},
#endif
  };
  return *t;
}

const std::map<std::string, S>& by_name() {
  static const std::map<std::string, S>* m = [] {
    auto* out = new std::map<std::string, S>;
    for (const auto& [type, names] : dtype_names())
      for (const char* n : names) out->emplace(n, type);
    return out;
  }();
  return *m;
}

}  // namespace

std::optional<c10::ScalarType> scalar_type_of(const std::string& torch_dtype) {
  auto it = by_name().find(torch_dtype);
  if (it == by_name().end()) return std::nullopt;
  return it->second;
}

std::string torch_dtype_name(c10::ScalarType t) {
  for (const auto& [type, names] : dtype_names())
    if (type == t) return names.front();
  return std::string("torch.") + c10::toString(t);  // none left that Python can hold in a tensor
}

bool is_float_type(c10::ScalarType t) {
  return t == c10::kHalf || t == c10::kBFloat16 || t == c10::kFloat || t == c10::kDouble;
}

bool is_float8_type(c10::ScalarType t) {
#if TORCH_VERSION_MAJOR >= 2
  return t == S::Float8_e5m2 || t == S::Float8_e4m3fn || t == S::Float8_e5m2fnuz || t == S::Float8_e4m3fnuz;
#else
  (void)t;
  return false;
#endif
}

}  // namespace acccheck::core
