#include "tensor_values.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>

#include <memory>

#include <acccheck/simd.hpp>

namespace acccheck::replay {

namespace {

// One vectorised loop: LibTorch's copy_ into a from_blob'd double buffer goes through
// TensorIterator's dtype-converting kernel, slower than this for the common case.
ACCCHECK_SIMD_CLONES void widen_float32(const float* in, double* out, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(in[i]);
}

// A CPU tensor's values as doubles: a contiguous float64 tensor is borrowed (kept alive by the
// result), anything else is widened into a buffer of its own.
TensorValues values_of(const at::Tensor& cpu, DeferredWidening* defer) {
  const auto n = static_cast<std::size_t>(cpu.numel());
  if (cpu.scalar_type() == c10::kDouble && cpu.is_contiguous()) {
    auto keep = std::make_shared<const at::Tensor>(cpu);
    return TensorValues::borrowed(keep->data_ptr<double>(), n, keep);
  }
  double* out = nullptr;
  TensorValues values = TensorValues::uninitialized(n, out);
  if (n == 0) return values;
  if (cpu.scalar_type() == c10::kFloat && cpu.is_contiguous()) {
    if (defer) defer->add(cpu, out);
    else widen_float32(cpu.data_ptr<float>(), out, n);
  } else {
    at::from_blob(out, cpu.sizes(), at::TensorOptions().dtype(c10::kDouble)).copy_(cpu);
  }
  return values;
}

}  // namespace

void DeferredWidening::add(at::Tensor source, double* target) {
  elements_ += static_cast<std::size_t>(source.numel());
  jobs_.emplace_back(std::move(source), target);
}

void DeferredWidening::run() {
  for (auto& [source, target] : jobs_) widen_float32(source.data_ptr<float>(), target, static_cast<std::size_t>(source.numel()));
  jobs_.clear();
}

OutputValue output_value_of(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& to_cpu,
                            DeferredWidening* defer) {
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
    // No float64 tensor in between (16M elements = 128 MB saved), and none at all for float64.
    return OutputValue::tensor(core::torch_dtype_name(t.scalar_type()), std::move(shape), values_of(cpu, defer));
  }
  if (v.isTuple() || v.isList()) {
    std::vector<OutputValue> items;
    if (v.isTuple())
      for (const auto& e : v.toTupleRef().elements()) items.push_back(output_value_of(e, to_cpu, defer));
    else
      for (const c10::IValue e : v.toList()) items.push_back(output_value_of(e, to_cpu, defer));
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
