#include "torch_support/tensor_file_writer.hpp"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/version.h>

#include <cstring>
#include <string>

#include "torch_support/torch_dtypes.hpp"

namespace acccheck::core {

namespace {

bool saved_untyped(c10::ScalarType t) {
#if TORCH_VERSION_MAJOR >= 2  // none of these dtypes exists in LibTorch 1.13 as a tensor torch.save writes
  return is_float8_type(t) || t == c10::ScalarType::UInt16 || t == c10::ScalarType::UInt32 ||
         t == c10::ScalarType::UInt64 || t == c10::ScalarType::ComplexHalf;
#else
  (void)t;
  return false;
#endif
}

// Pickle protocol 2, the opcodes torch.save uses (tensor_file_check.cpp accepts exactly these).
class Pickle {
 public:
  Pickle() { bytes_ = {'\x80', '\x02'}; }
  void global(const std::string& module, const std::string& name) { bytes_ += "c" + module + "\n" + name + "\n"; }
  void mark() { bytes_ += '('; }
  void tuple() { bytes_ += 't'; }
  void string(const std::string& s) {
    bytes_ += 'X';
    le(s.size(), 4);
    bytes_ += s;
  }
  void integer(std::int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {
      bytes_ += 'J';
      le(static_cast<std::uint64_t>(static_cast<std::uint32_t>(static_cast<std::int32_t>(v))), 4);
    } else {
      bytes_ += "\x8a\x08";
      le(static_cast<std::uint64_t>(v), 8);
    }
  }
  void integers(c10::IntArrayRef values) {
    mark();
    for (auto v : values) integer(v);
    tuple();
  }
  void op(char c) { bytes_ += c; }
  const std::string& bytes() const { return bytes_; }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  std::string bytes_;
};

std::vector<char> untyped_file(const at::Tensor& source) {
  const at::Tensor t = source.to(at::kCPU).contiguous();
  const std::string dtype = torch_dtype_name(t.scalar_type()).substr(6);  // "torch.uint16" → "uint16"
  const std::int64_t nbytes = t.numel() * static_cast<std::int64_t>(t.element_size());
  Pickle p;
  p.global("torch._utils", "_rebuild_tensor_v3");
  p.mark();
  p.mark();  // the persistent id: ('storage', UntypedStorage, key, location, bytes)
  p.string("storage");
  p.global("torch.storage", "UntypedStorage");
  p.string("0");
  p.string("cpu");
  p.integer(nbytes);
  p.tuple();
  p.op('Q');
  p.integer(0);
  p.integers(t.sizes());
  p.integers(t.strides());
  p.op('\x89');  // requires_grad: False
  p.global("collections", "OrderedDict");
  p.op(')');
  p.op('R');
  p.global("torch", dtype);
  p.tuple();
  p.op('R');
  p.op('.');
  std::vector<char> out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    out.insert(out.end(), static_cast<const char*>(data), static_cast<const char*>(data) + size);
    return size;
  });
  writer.writeRecord("data.pkl", p.bytes().data(), p.bytes().size());
  writer.writeRecord("byteorder", "little", 6);
  writer.writeRecord("data/0", t.data_ptr(), static_cast<std::size_t>(nbytes));
  writer.writeEndOfFile();
  return out;
}

}  // namespace

std::vector<char> tensor_file_bytes(const at::Tensor& t) {
  if (saved_untyped(t.scalar_type())) return untyped_file(t);
  return torch::jit::pickle_save(t.to(at::kCPU).contiguous());
}

}  // namespace acccheck::core
