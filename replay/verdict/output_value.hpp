// A replayed API's result as the comparison sees it, without LibTorch: a tensor (values as
// doubles, exactly representable in its dtype), a Python builtin, None, a sequence or a dict. The
// worker converts at::Tensor / IValue results into this; the golden tests build it from cases.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace acccheck::replay {

// A tensor's values as doubles, row-major: a buffer of their own, or borrowed from memory that
// `keep` keeps alive — a contiguous float64 result is compared where the operator wrote it, with
// no copy (outputs hold millions of values; copying two 65,536-element rows was a tenth of a
// medium API's harness time).
class TensorValues {
 public:
  TensorValues() = default;
  explicit TensorValues(std::vector<double> v) {
    auto owned = std::make_shared<std::vector<double>>(std::move(v));
    data_ = owned->data();
    size_ = owned->size();
    keep_ = std::move(owned);
  }
  // `n` values for the caller to write (not zeroed: every one is written).
  static TensorValues uninitialized(std::size_t n, double*& write) {
    std::shared_ptr<double[]> buffer(new double[n]);
    write = buffer.get();
    TensorValues v;
    v.data_ = buffer.get();
    v.size_ = n;
    v.keep_ = std::move(buffer);
    return v;
  }
  static TensorValues borrowed(const double* data, std::size_t n, std::shared_ptr<const void> keep) {
    TensorValues v;
    v.data_ = data;
    v.size_ = n;
    v.keep_ = std::move(keep);
    return v;
  }
  const double* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  double operator[](std::size_t i) const { return data_[i]; }
  const double* begin() const { return data_; }
  const double* end() const { return data_ + size_; }

 private:
  std::shared_ptr<const void> keep_;
  const double* data_ = nullptr;
  std::size_t size_ = 0;
};

struct OutputValue {
  enum class Kind { none, tensor, builtin, seq, dict, other };
  Kind kind = Kind::none;

  // tensor
  std::string dtype;                 // "torch.float16"
  std::vector<std::int64_t> shape;
  TensorValues data;                 // row-major

  // builtin: Python type name ("int", "float", "bool", "str") and value
  std::string py_type;
  double number = 0.0;
  std::string text;

  std::vector<OutputValue> items;                              // seq
  std::vector<std::pair<std::string, OutputValue>> members;    // dict
  std::string other_type;                                      // other: "<class 'list'>"

  static OutputValue none() { return {}; }
  static OutputValue tensor(std::string dtype, std::vector<std::int64_t> shape, std::vector<double> data) {
    return tensor(std::move(dtype), std::move(shape), TensorValues(std::move(data)));
  }
  static OutputValue tensor(std::string dtype, std::vector<std::int64_t> shape, TensorValues data) {
    OutputValue v;
    v.kind = Kind::tensor;
    v.dtype = std::move(dtype);
    v.shape = std::move(shape);
    v.data = std::move(data);
    return v;
  }
  static OutputValue builtin(std::string py_type, double number, std::string text = {}) {
    OutputValue v;
    v.kind = Kind::builtin;
    v.py_type = std::move(py_type);
    v.number = number;
    v.text = std::move(text);
    return v;
  }
  static OutputValue sequence(std::vector<OutputValue> items) {
    OutputValue v;
    v.kind = Kind::seq;
    v.items = std::move(items);
    return v;
  }
  bool is_none() const { return kind == Kind::none; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }

  // Declared here, defaulted below (as acccheck::Argument in record.hpp): clang 14 with C++20's
  // libstdc++ cannot define the implicit ones while std::pair<std::string, OutputValue> is incomplete.
  OutputValue();
  ~OutputValue();
  OutputValue(const OutputValue&);
  OutputValue(OutputValue&&) noexcept;
  OutputValue& operator=(const OutputValue&);
  OutputValue& operator=(OutputValue&&) noexcept;
};
inline OutputValue::OutputValue() = default;
inline OutputValue::~OutputValue() = default;
inline OutputValue::OutputValue(const OutputValue&) = default;
inline OutputValue::OutputValue(OutputValue&&) noexcept = default;
inline OutputValue& OutputValue::operator=(const OutputValue&) = default;
inline OutputValue& OutputValue::operator=(OutputValue&&) noexcept = default;

// Python's str() of a shape as the details CSV writes it: "(2, 3)", "(5,)", "()".
std::string shape_tuple_text(const std::vector<std::int64_t>& shape);
// "torch.Size([8, 8])"
std::string torch_size_text(const std::vector<std::int64_t>& shape);

}  // namespace acccheck::replay
