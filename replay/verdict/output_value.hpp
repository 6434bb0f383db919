// A replayed API's result as the comparison sees it, without LibTorch: a tensor (values widened to
// double, exactly representable in its dtype), a Python builtin, None, a sequence or a dict. The
// worker converts at::Tensor / IValue results into this; the golden tests build it from cases.json.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace acccheck::replay {

struct OutputValue {
  enum class Kind { none, tensor, builtin, seq, dict, other };
  Kind kind = Kind::none;

  // tensor
  std::string dtype;                 // "torch.float16"
  std::vector<std::int64_t> shape;
  std::vector<double> data;          // row-major

  // builtin: Python type name ("int", "float", "bool", "str") and value
  std::string py_type;
  double number = 0.0;
  std::string text;

  std::vector<OutputValue> items;                              // seq
  std::vector<std::pair<std::string, OutputValue>> members;    // dict
  std::string other_type;                                      // other: "<class 'list'>"

  static OutputValue none() { return {}; }
  static OutputValue tensor(std::string dtype, std::vector<std::int64_t> shape, std::vector<double> data) {
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
};

// Python's str() of a shape as the details CSV writes it: "(2, 3)", "(5,)", "()".
std::string shape_tuple_text(const std::vector<std::int64_t>& shape);
// "torch.Size([8, 8])"
std::string torch_size_text(const std::vector<std::int64_t>& shape);

}  // namespace acccheck::replay
