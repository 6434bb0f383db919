#include "input_generator.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/ops/_to_copy.h>
#include <ATen/ops/full.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <acccheck/number_format.hpp>

#include "tensor_values.hpp"
#include "torch_rand.hpp"

namespace acccheck::replay {

namespace {

double finite_max_of(c10::ScalarType t) {
  switch (t) {
    case c10::kHalf: return 65504.0;
    case c10::kBFloat16: return 3.3895313892515355e+38;
    case c10::kFloat: return std::numeric_limits<float>::max();
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

namespace {

std::uint32_t le32(const std::vector<char>& b, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}
std::uint16_t le16(const std::vector<char>& b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
}

std::uint64_t le64(const std::vector<char>& b, std::size_t at) {
  return static_cast<std::uint64_t>(le32(b, at)) | static_cast<std::uint64_t>(le32(b, at + 4)) << 32;
}

// The structure of the zip container a .pt file is (torch.save writes zip64 records), checked
// before LibTorch reads it: LibTorch 1.13's zip reader (miniz) reads out of bounds on some
// malformed directories (found by fuzz_tensor_pt), so a corrupt tensor file would crash the
// worker instead of being reported. Returns why the bytes are not a well-formed zip, or "".
// Where the pickle (<stem>/data.pkl, stored uncompressed by torch.save) lies in the archive.
struct PickleRecord {
  std::uint64_t offset = 0, size = 0;
  bool found = false;
};

std::string zip_structure_problem(const std::vector<char>& b, PickleRecord& pickle) {
  const std::uint64_t n = b.size();
  if (n < 22) return "too short for a zip archive";
  std::size_t eocd = std::string::npos;
  for (std::size_t i = static_cast<std::size_t>(n - 22) + 1; i-- > (n > 65557 ? n - 65557 : 0);)
    if (le32(b, i) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) return "no zip end-of-central-directory record";
  std::uint64_t entries = le16(b, eocd + 10), cd_size = le32(b, eocd + 12), cd_offset = le32(b, eocd + 16);
  std::uint64_t cd_limit = eocd;
  if (eocd >= 20 && le32(b, eocd - 20) == 0x07064b50) {  // zip64 locator → zip64 end record
    const std::uint64_t z = le64(b, eocd - 20 + 8);
    if (z + 56 > eocd - 20 || le32(b, static_cast<std::size_t>(z)) != 0x06064b50) return "broken zip64 end record";
    entries = le64(b, static_cast<std::size_t>(z) + 32);
    cd_size = le64(b, static_cast<std::size_t>(z) + 40);
    cd_offset = le64(b, static_cast<std::size_t>(z) + 48);
    cd_limit = z;
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) return "central directory outside the file";
  if (entries > cd_size / 46) return "more entries than the central directory can hold";
  std::uint64_t at = cd_offset;
  const std::uint64_t cd_end = cd_offset + cd_size;
  for (std::uint64_t e = 0; e < entries; ++e) {
    if (at + 46 > cd_end || le32(b, static_cast<std::size_t>(at)) != 0x02014b50)
      return "central directory entry " + std::to_string(e) + " is malformed";
    const std::size_t h = static_cast<std::size_t>(at);
    std::uint64_t compressed = le32(b, h + 20), uncompressed = le32(b, h + 24), local = le32(b, h + 42);
    const std::uint16_t name_len = le16(b, h + 28), extra_len = le16(b, h + 30), comment_len = le16(b, h + 32);
    if (at + 46 + name_len + extra_len + comment_len > cd_end) return "central directory entry " + std::to_string(e) + " overruns it";
    // zip64 extra field (id 1): the 64-bit values of the fields set to 0xffffffff, in order.
    for (std::uint64_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const std::uint16_t id = le16(b, static_cast<std::size_t>(x)), len = le16(b, static_cast<std::size_t>(x) + 2);
      if (x + 4 + len > at + 46 + name_len + extra_len) return "entry " + std::to_string(e) + " has a broken extra field";
      if (id == 1) {
        std::uint64_t p = x + 4, end = x + 4 + len;
        auto take = [&](std::uint64_t& field) {
          if (field != 0xffffffffu) return true;
          if (p + 8 > end) return false;
          field = le64(b, static_cast<std::size_t>(p));
          p += 8;
          return true;
        };
        if (!take(uncompressed) || !take(compressed) || !take(local)) return "entry " + std::to_string(e) + " has a broken zip64 field";
      }
      x += 4 + len;
    }
    // torch.save stores its records uncompressed: LibTorch allocates a record by its declared
    // uncompressed size (fuzz_tensor_pt: 4 GB, then a read past the buffer), so the two must agree.
    if (le16(b, h + 10) != 0) return "entry " + std::to_string(e) + " is compressed (torch.save stores its records)";
    if (uncompressed != compressed)
      return "entry " + std::to_string(e) + " declares " + std::to_string(uncompressed) + " bytes but stores " +
             std::to_string(compressed);
    if (local > cd_offset || cd_offset - local < 30 || le32(b, static_cast<std::size_t>(local)) != 0x04034b50)
      return "entry " + std::to_string(e) + " points outside the file";
    const std::uint64_t data = local + 30 + le16(b, static_cast<std::size_t>(local) + 26) + le16(b, static_cast<std::size_t>(local) + 28);
    if (data > cd_offset || compressed > cd_offset - data) return "entry " + std::to_string(e) + "'s data lies outside the file";
    const std::string name(b.data() + h + 46, name_len);
    if (name.size() >= 8 && name.compare(name.size() - 8, 8, "data.pkl") == 0) {
      pickle.offset = data;
      pickle.size = compressed;
      pickle.found = true;
    }
    at += 46u + name_len + extra_len + comment_len;
  }
  return "";
}

// A pickle torch.save wrote holds one small object graph: every declared length fits in the
// pickle, and every integer (sizes, strides, offsets, the storage's element count) and memo index
// is bounded by the size of the file. LibTorch's unpickler trusts declared lengths and element
// counts (fuzz_tensor_pt: 30 GB allocations), so the opcodes are walked first. Returns why the
// pickle is not one torch.save writes, or "".
std::string pickle_problem(const std::vector<char>& b, const PickleRecord& rec) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(b.data()) + rec.offset;
  const std::uint64_t n = rec.size, bound = b.size();
  std::uint64_t i = 0;
  auto need = [&](std::uint64_t k) { return k <= n - i; };
  auto uint_le = [&](std::uint64_t k) {
    std::uint64_t v = 0;
    for (std::uint64_t j = 0; j < k; ++j) v |= static_cast<std::uint64_t>(p[i + j]) << (8 * j);
    return v;
  };
  auto line = [&]() {  // a newline-terminated argument
    while (i < n && p[i] != '\n') ++i;
    if (i == n) return false;
    ++i;
    return true;
  };
  while (i < n) {
    const unsigned char op = p[i++];
    const std::string at = " at byte " + std::to_string(i - 1) + " of the pickle";
    switch (op) {
      case '.': return "";  // STOP
      case '(': case '0': case '1': case '2': case 'N': case 'R': case 'a': case 'b': case 'd': case '}':
      case 'e': case 'l': case ']': case 'o': case 's': case 't': case ')': case 'u': case 'Q': case 0x81:
      case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8f: case 0x90: case 0x91: case 0x92:
      case 0x93: case 0x94: case 0x97: case 0x98:
        break;
      case 0x80: case 0x82:  // PROTO, EXT1
        if (!need(1)) return "truncated opcode" + at;
        i += 1;
        break;
      case 'K': case 'h': case 'q': case 'M': case 0x83: case 'J': case 'j': case 'r': case 0x84: {
        const std::uint64_t k = (op == 'K' || op == 'h' || op == 'q') ? 1 : (op == 'M' || op == 0x83) ? 2 : 4;
        if (!need(k)) return "truncated opcode" + at;
        std::uint64_t v = uint_le(k);
        if (op == 'J') v = static_cast<std::uint64_t>(std::llabs(static_cast<std::int32_t>(v)));
        if (v > bound) return "an integer or memo index of " + std::to_string(v) + " in a " + std::to_string(bound) + "-byte file" + at;
        i += k;
        break;
      }
      case 'G':
        if (!need(8)) return "truncated float" + at;
        i += 8;
        break;
      case 0x8a: {  // LONG1: an integer of up to 8 bytes here
        if (!need(1)) return "truncated integer" + at;
        const std::uint64_t k = p[i++];
        if (k > 8 || !need(k)) return "an integer of " + std::to_string(k) + " bytes" + at;
        std::uint64_t v = uint_le(k);
        if (k > 0 && (p[i + k - 1] & 0x80))  // negative (two's complement of k bytes): its magnitude
          v = k == 8 ? ~v + 1 : (std::uint64_t{1} << (8 * k)) - v;
        if (v > bound) return "an integer of " + std::to_string(v) + " in a " + std::to_string(bound) + "-byte file" + at;
        i += k;
        break;
      }
      case 'U': case 'C': case 0x8c: {
        if (!need(1)) return "truncated string" + at;
        const std::uint64_t k = p[i++];
        if (!need(k)) return "a string longer than the pickle" + at;
        i += k;
        break;
      }
      case 'T': case 'B': case 'X': case 0x8d: case 0x8e: case 0x96: case 0x95: {
        const std::uint64_t w = (op == 'T' || op == 'B' || op == 'X') ? 4 : 8;
        if (!need(w)) return "truncated length" + at;
        const std::uint64_t k = uint_le(w);
        i += w;
        if (op == 0x95) break;  // FRAME: a length hint only
        if (!need(k)) return "a string of " + std::to_string(k) + " bytes in a " + std::to_string(n) + "-byte pickle" + at;
        i += k;
        break;
      }
      case 'I': case 'L': case 'S': case 'V': case 'F': case 'g': case 'p': case 'P':
        if (!line()) return "unterminated argument" + at;
        break;
      case 'c': case 'i':
        if (!line() || !line()) return "unterminated global" + at;
        break;
      default: return "unknown opcode " + std::to_string(op) + at;
    }
  }
  return "no STOP opcode";
}

}  // namespace

at::Tensor load_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the tensor file");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  PickleRecord pickle;
  std::string why = zip_structure_problem(bytes, pickle);
  if (why.empty()) why = pickle.found ? pickle_problem(bytes, pickle) : "no data.pkl record";
  if (!why.empty()) throw std::runtime_error(path + ": not a tensor file written by torch.save (" + why + ")");
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
    if (path.size() < 3 || path.substr(path.size() - 3) != ".pt")
      throw std::runtime_error(path + ": real data must be a .pt file");
    if (!std::filesystem::exists(path)) throw std::runtime_error(path + ": tensor file missing (named by field 'data_name')");
    t = load_tensor_file(path);
    std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
    if (!spec.shape.empty() || !shape.empty())
      if (shape != spec.shape) throw std::runtime_error(path + ": holds a tensor of another shape than the dump's field 'shape'");
    if (auto st = scalar_type_of(dtype_name); st && *st != t.scalar_type()) t = at::_to_copy(t, at::TensorOptions().dtype(*st));
  } else {
    auto st = scalar_type_of(dtype_name);
    if (!st || *st == c10::kComplexFloat || *st == c10::kComplexDouble)
      throw std::runtime_error("dtype " + spec.dtype + " is not supported for random data generation");
    auto options = at::TensorOptions().dtype(*st);
    std::vector<std::int64_t> shape = spec.shape;
    bool empty = false;
    for (auto d : shape) empty = empty || d == 0;
    Statistic lo_s = spec.min, hi_s = spec.max;
    for (auto d : shape)
      if (d < 0) throw std::runtime_error("field 'shape': expected sizes >= 0, found " + std::to_string(d));
    if (empty) return at::zeros(shape, options);
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
    if (is_float_type(*st)) {
      if (std::isnan(high)) return at::full(shape, std::nan(""), options);
      if (high_origin != 0 && std::isinf(high)) {
        t = at::full(shape, high, options);
        if (!shape.empty()) t.select(0, t.size(0) - 1).fill_(low);
        return t;
      }
      double fmax = finite_max_of(*st);
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
      const bool nan_high = is_float_type(*st) && std::isnan(high_origin);
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
          if (is_float_type(*st) && std::isinf(high_origin)) p[n - 1] = as(high_origin);
          if (is_float_type(*st) && std::isinf(low_origin)) p[0] = as(low_origin);
        }
      });
    }
  }
  if ((short_api == "conv1d" || short_api == "conv2d") && t.scalar_type() == c10::kFloat) t = round_to_hf32(t);
  return t;
}

}  // namespace acccheck::replay
