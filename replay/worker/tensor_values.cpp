#include "tensor_values.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>


namespace acccheck::replay {

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
