#include "input_generator.hpp"

#include <torch/version.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/ops/_to_copy.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <acccheck/number_format.hpp>

#include "tensor_file_check.hpp"
#include "tensor_values.hpp"
#include "torch_rand.hpp"

namespace acccheck::replay {

namespace {

double finite_max_of(c10::ScalarType t) {
  switch (t) {
    case c10::kHalf: return 65504.0;
    case c10::kBFloat16: return 3.3895313892515355e+38;
    case c10::kFloat: return std::numeric_limits<float>::max();
#if TORCH_VERSION_MAJOR >= 2  // float8 dtypes: LibTorch 2.1 and later
    case c10::ScalarType::Float8_e4m3fn: return 448.0;
    case c10::ScalarType::Float8_e5m2: return 57344.0;
    case c10::ScalarType::Float8_e4m3fnuz: return 240.0;
    case c10::ScalarType::Float8_e5m2fnuz: return 57344.0;
#endif
    default: return std::numeric_limits<double>::max();
  }
}

std::string stat_text(const Statistic& s) {
  switch (s.kind) {
    case Statistic::Kind::null: return "None";
    case Statistic::Kind::boolean: return s.value != 0 ? "True" : "False";
    case Statistic::Kind::integer: return std::to_string(static_cast<long long>(s.value));
    case Statistic::Kind::number: return python_float_repr(s.value);
  }
  return "None";
}

// HF32 (run-ut.md §3.2): round the float32 mantissa to 11 bits, half up on the magnitude.
at::Tensor round_to_hf32(const at::Tensor& t) {
  at::Tensor c = t.contiguous().clone();
  auto* bits = reinterpret_cast<std::int32_t*>(c.data_ptr<float>());
  for (std::int64_t i = 0; i < c.numel(); ++i) {
    std::int32_t v = bits[i];
    v = ((v >> 11) + 1) >> 1;
    bits[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) << 12);
  }
  return c;
}

}  // namespace

std::uint64_t entry_seed(const std::string& name) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

InputGenerator::InputGenerator(const std::string& entry_name, std::string real_dir, std::string api)
    : real_data_dir(std::move(real_dir)), short_api(std::move(api)),
      generator(at::make_generator<at::CPUGeneratorImpl>(entry_seed(entry_name))) {}

// The bytes are checked first (tensor_file_check.hpp): LibTorch's reader is not memory-safe on
// malformed files, and a dump's tensor files are input like any other.
namespace {

// A tensor torch 2.x saved through _rebuild_tensor_v3 (uint16/32/64, float8, complex32), which
// LibTorch's pickle_load cannot read: its elements copied out of the storage's record, as the
// checked layout places them.
at::Tensor untyped_tensor(const std::string& path, const std::vector<char>& bytes, const TensorFileLayout& layout) {
  auto st = core::scalar_type_of("torch." + layout.dtype);
  if (!st) throw std::runtime_error(path + ": holds a torch." + layout.dtype + " tensor, a dtype LibTorch " TORCH_VERSION " does not have");
  std::int64_t elements = 1, needed = layout.storage_offset + 1;
  for (std::size_t d = 0; d < layout.sizes.size(); ++d) {
    elements *= layout.sizes[d];
    if (layout.sizes[d] > 0) needed += (layout.sizes[d] - 1) * layout.strides[d];
  }
  if (elements == 0) return at::empty(layout.sizes, at::TensorOptions().dtype(*st));
  at::Tensor raw = at::empty({needed * layout.item_size}, at::TensorOptions().dtype(c10::kByte));
  std::memcpy(raw.data_ptr(), bytes.data() + layout.record_offset, static_cast<std::size_t>(needed * layout.item_size));
  return raw.view(*st).as_strided(layout.sizes, layout.strides, layout.storage_offset).clone();
}

}  // namespace

at::Tensor load_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the tensor file");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return tensor_from_file_bytes(path, bytes);
}

at::Tensor tensor_from_file_bytes(const std::string& path, const std::vector<char>& bytes) {
  TensorFileLayout layout;
  std::string why = tensor_file_problem(bytes, layout);
  if (!why.empty()) throw std::runtime_error(path + ": not a tensor file written by torch.save (" + why + ")");
  if (layout.untyped) return untyped_tensor(path, bytes, layout);
  c10::IValue v;
  try {
    v = torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw std::runtime_error(path + ": not a tensor file written by torch.save (" + what.substr(0, what.find('\n')) + ")");
  }
  if (!v.isTensor()) throw std::runtime_error(path + ": holds a " + v.tagKind() + ", expected one tensor");
  return v.toTensor();
}

at::Tensor InputGenerator::tensor(const TensorSpec& spec) {
  auto dtype_name = spec.dtype;
  // convert_type (run-ut.md §3.1): CPU kernels need Long targets / float histc inputs.
  if (short_api == "cross_entropy" && dtype_name == "torch.int32") dtype_name = "torch.int64";
  if (short_api == "histc" && (dtype_name == "torch.int8" || dtype_name == "torch.int32" || dtype_name == "torch.int64"))
    dtype_name = "torch.float32";
  at::Tensor t;
  if (!spec.data_name.empty() && real_data_dir.empty())
    throw std::runtime_error("the dump names the tensor file '" + spec.data_name +
                             "' but has no dump_data_dir (a statistics dump with tensor names?)");
  if (!spec.data_name.empty()) {
    std::string path = (std::filesystem::path(real_data_dir) / spec.data_name).string();
    // Where, what and how large, checked before a byte is read (tensor_file_check.hpp).
    t = tensor_from_file_bytes(path, read_real_data_file(real_data_dir, spec.data_name, tensor_bytes(spec.shape, spec.dtype),
                                                         allow_outside_dump));
    std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
    if (!spec.shape.empty() || !shape.empty())
      if (shape != spec.shape) throw std::runtime_error(path + ": holds a tensor of another shape than the dump's field 'shape'");
    if (auto st = core::scalar_type_of(dtype_name); st && *st != t.scalar_type()) t = at::_to_copy(t, at::TensorOptions().dtype(*st));
  } else {
    auto target = core::scalar_type_of(dtype_name);
    if (!target || !(core::is_float_type(*target) || core::is_float8_type(*target) || at::isIntegralType(*target, true)))
      throw std::runtime_error("dtype " + spec.dtype + " is not supported for random data generation");
    // float8 tensors are made in float32 and cast at the end; the unsigned 16/32/64-bit types (whose
    // kernels LibTorch 2.x leaves out) in int64 (run-ut.md §3.3).
    const bool unsigned_wide = *target != c10::kByte && *target != c10::kBool && at::isIntegralType(*target, false) &&
                               !c10::isSignedType(*target);
    std::optional<c10::ScalarType> st =
        core::is_float8_type(*target) ? c10::kFloat : unsigned_wide ? c10::kLong : *target;
    auto options = at::TensorOptions().dtype(*st);
    std::vector<std::int64_t> shape = spec.shape;
    bool empty = false;
    for (auto d : shape) empty = empty || d == 0;
    Statistic lo_s = spec.min, hi_s = spec.max;
    for (auto d : shape)
      if (d < 0) throw std::runtime_error("field 'shape': expected sizes >= 0, found " + std::to_string(d));
    if (empty) return at::zeros(shape, at::TensorOptions().dtype(*target));
    if (!lo_s.present() || !hi_s.present())
      throw std::runtime_error("Data info Min: " + stat_text(lo_s) + " , Max: " + stat_text(hi_s) +
                               ", info type must be int or float.");
    double low_origin = lo_s.value, high_origin = hi_s.value;
    if (low_origin > high_origin)
      throw std::runtime_error("fields 'Min'/'Max': Min " + stat_text(lo_s) + " is larger than Max " + stat_text(hi_s));
    double low = spec.min_except_inf_nan.value_or(low_origin), high = spec.max_except_inf_nan.value_or(high_origin);
    if (*st == c10::kBool) {
      auto l = static_cast<std::int64_t>(low), h = static_cast<std::int64_t>(high);
      if (l > h) std::swap(l, h);
      return at::randint(l, h + 1, shape, generator, at::TensorOptions().dtype(c10::kLong)).gt(0);
    }
    if (core::is_float_type(*st)) {
      if (std::isnan(high)) return at::full(shape, std::nan(""), options).to(*target);
      if (high_origin != 0 && std::isinf(high)) {
        t = at::full(shape, high, options);
        if (!shape.empty()) t.select(0, t.size(0) - 1).fill_(low);
        return t.to(*target);
      }
      double fmax = finite_max_of(*target);
      double lo_scaled = std::isinf(low) ? (low > 0 ? fmax : -fmax) : low;
      double hi_scaled = std::isinf(high) ? (high > 0 ? fmax : -fmax) : high;
      // rand · (high − low) + low in the tensor's dtype, as the reference computes (torch_rand.hpp).
      t = torch_uniform(shape, generator, *st, lo_scaled, hi_scaled - lo_scaled);
    } else {
      t = at::randint(static_cast<std::int64_t>(low), static_cast<std::int64_t>(high) + 1, shape, generator, options);
    }
    // Pinning: first element Min, last Max (NaN second when Max is NaN), written in place.
    std::int64_t n = t.numel();
    if (n > 0) {
      const bool nan_high = core::is_float_type(*st) && std::isnan(high_origin);
      AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, t.scalar_type(), "pin_bounds", [&] {
        scalar_t* p = t.data_ptr<scalar_t>();
        auto as = [](double v) { return static_cast<scalar_t>(v); };
        if (nan_high) {
          if (n <= 2) {
            p[0] = as(std::nan(""));
            p[n - 1] = as(high);
          } else {
            p[0] = as(low);
            p[1] = as(std::nan(""));
            p[n - 1] = as(high);
          }
        } else {
          p[0] = as(low);
          p[n - 1] = as(high);
          if (core::is_float_type(*st) && std::isinf(high_origin)) p[n - 1] = as(high_origin);
          if (core::is_float_type(*st) && std::isinf(low_origin)) p[0] = as(low_origin);
        }
      });
    }
    if (*st != *target) t = t.to(*target);
  }
  if ((short_api == "conv1d" || short_api == "conv2d") && t.scalar_type() == c10::kFloat) t = round_to_hf32(t);
  return t;
}

}  // namespace acccheck::replay
