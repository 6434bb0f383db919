#include "api_comparator.hpp"

#include <cmath>
#include <cstdlib>

#include <acccheck/float_formats.hpp>
#include <acccheck/metric_support.hpp>
#include <acccheck/number_format.hpp>

#include "standards/standard_selector.hpp"
#include "status_ladder.hpp"

namespace acccheck::replay {

namespace {

constexpr const char* kNoneMessage = "Bench output is None, skip this test.";

// numpy's dtype name of a tensor once the reference converted it (bfloat16 → float32).
std::string numpy_dtype(const std::string& torch_dtype) {
  std::string s = torch_dtype.rfind("torch.", 0) == 0 ? torch_dtype.substr(6) : torch_dtype;
  if (s == "bfloat16") return "float32";
  if (s == "float" ) return "float32";
  if (s == "half") return "float16";
  if (s == "double") return "float64";
  if (s == "long") return "int64";
  if (s == "int") return "int32";
  return s;
}
bool is_float_np(const std::string& d) { return d == "float16" || d == "float32" || d == "float64"; }
// float8 outputs reach here widened exactly (LibTorch's cast); the reference's numpy has no float8
// (its .numpy() raises), so acccheck compares them as floats with the ULP standard's fp8 path.
bool is_float8(const std::string& d) { return d.rfind("float8_", 0) == 0; }
bool is_int_np(const std::string& d) {
  return d == "bool" || d == "uint8" || d == "int8" || d == "int16" || d == "uint16" || d == "uint32" ||
         d == "int32" || d == "int64" || d == "uint64";
}
bool compatible(const std::string& b, const std::string& d) {
  auto in = [](const std::string& x, std::initializer_list<const char*> set) {
    for (const char* s : set) if (x == s) return true;
    return false;
  };
  // Beyond the reference: one integer dtype on both sides is comparable (it refuses int16, uint16,
  // uint32 and uint64 outputs even when both sides agree: an error for every such API; compat.md).
  return ((is_float_np(b) || is_float8(b)) && (is_float_np(d) || is_float8(d))) ||
         (in(b, {"bool", "uint8"}) && in(d, {"bool", "uint8"})) || (in(b, {"int32", "int64"}) && in(d, {"int32", "int64"})) ||
         (b == d && is_int_np(b));
}

std::string py_class(const std::string& py_type) { return "<class '" + py_type + "'>"; }

// isinstance(bench, type(device)): bool is an int; a tensor, None, ... only match themselves.
bool same_type(const OutputValue& b, const OutputValue& d) {
  if (b.kind != d.kind) return false;
  if (b.kind != OutputValue::Kind::builtin) return true;
  if (b.py_type == d.py_type) return true;
  return d.py_type == "int" && b.py_type == "bool";
}

void compare_tensor(const std::string& short_api, const OutputValue& b, const OutputValue& d, bool fp8_input,
                    const MetricContext& metrics, DetailsRow& row, std::size_t forward_elements) {
  row.set("Bench Dtype", b.dtype);
  row.set("DEVICE Dtype", d.dtype);
  row.set("Shape", shape_tuple_text(d.shape));
  if (b.shape != d.shape) {
    row.status() = "error";
    row.message() = "The shape of bench" + torch_size_text(b.shape) + " and npu" + torch_size_text(d.shape) + " not equal.";
    return;
  }
  std::string bnp = numpy_dtype(b.dtype), dnp = numpy_dtype(d.dtype);
  if (!compatible(bnp, dnp)) {
    row.status() = "error";
    row.message() = "Bench out dtype is " + bnp + " but npu output dtype is " + dnp + ", cannot compare.";
    return;
  }
  if (b.data.empty()) {
    row.status() = "error";
    row.message() = "There is not bench calculation result.";
    return;
  }
  if (is_int_np(bnp)) {
    std::size_t differ = 0;
    for (std::size_t i = 0; i < b.data.size(); ++i) differ += b.data[i] != d.data[i];
    double rate = static_cast<double>(differ) / static_cast<double>(b.data.size());
    row.set("二进制一致错误率", python_fixed(rate, 14));
    row.status() = differ == 0 ? "pass" : "error";
    row.message() = "Compare algorithm is not supported for " + bnp + " data. Only judged by Error Rate.\n";
    return;
  }
  // The reference compares bfloat16 outputs as float32, and the bench with them.
  OutputPair pair{b.data.data(), d.data.data(), b.data.size(), d.dtype, b.dtype, fp8_input};
  std::string message;
  FloatKind kind = float_kind(d.dtype);
  bool new_standard = kind == FloatKind::float16 || kind == FloatKind::bfloat16 || kind == FloatKind::float32 ||
                      kind == FloatKind::float8_e4m3fn || kind == FloatKind::float8_e5m2;
  if (new_standard && metrics.selector) {
    // A gradient with fewer elements than the forward output is a sum (StandardSelector::select).
    const bool reduced_gradient = forward_elements > 0 && d.data.size() < forward_elements;
    const std::string& standard = metrics.selector->select(short_api, d.dtype, fp8_input, reduced_gradient);
    auto it = metrics.by_standard.find(standard);
    if (it == metrics.by_standard.end())
      throw std::runtime_error("no metric plugin implements standard '" + standard + "'");
    for (const auto& v : it->second->compute(pair)) row.set(v.column, metric_support::format_value(v));
  } else if (!new_standard) {
    message += "The data type " + d.dtype + " is not supported for new precision standard.";
  }
  row.status() = status_ladder(pair, row, message);
  row.message() = message;
}

void compare_element(const std::string& short_api, const OutputValue& b, const OutputValue& d, bool fp8_input,
                     const MetricContext& metrics, DetailsRow& row, std::size_t forward_elements) {
  using K = OutputValue::Kind;
  if (!same_type(b, d)) {
    row.status() = "error";
    row.message() = "bench and npu output type is different.";
  } else if (b.kind == K::dict) {
    bool same_keys = b.members.size() == d.members.size();
    for (std::size_t i = 0; same_keys && i < b.members.size(); ++i) same_keys = b.members[i].first == d.members[i].first;
    row.status() = "error";
    row.message() = same_keys ? "Unexpected output type in compare_core: <class 'list'>"
                              : "bench and npu output dict keys are different.";
  } else if (b.kind == K::tensor) {
    compare_tensor(short_api, b, d, fp8_input, metrics, row, forward_elements);
  } else if (b.kind == K::builtin) {
    row.set("Bench Dtype", py_class(b.py_type));
    row.set("DEVICE Dtype", py_class(d.py_type));
    bool equal = b.py_type == "str" ? b.text == d.text : b.number == d.number;
    row.status() = equal ? "pass" : "error";
    if (equal) row.set("二进制一致错误率", "0");
    row.message() = "";
  } else if (b.kind == K::none) {
    row.status() = "SKIP";
    row.message() = kNoneMessage;
  } else {
    row.status() = "error";
    row.message() = "Unexpected output type in compare_core: " +
                    (b.kind == K::seq ? std::string("<class 'list'>") : b.other_type);
  }
}

std::string aggregate(const std::vector<DetailsRow>& rows, std::size_t from) {
  bool warning = false;
  for (std::size_t i = from; i < rows.size(); ++i) {
    if (rows[i].status() == "error") return "error";
    warning = warning || rows[i].status() == "Warning";
  }
  return warning ? "Warning" : "pass";
}

// The dropout rule (run-ut.md §6.1): outputs are random by design, only the share of zeros counts.
std::string dropout_status(const OutputValue& b, const OutputValue& d) {
  const OutputValue& bt = b.kind == OutputValue::Kind::seq && !b.items.empty() ? b.items[0] : b;
  const OutputValue& dt = d.kind == OutputValue::Kind::seq && !d.items.empty() ? d.items[0] : d;
  if (bt.kind != OutputValue::Kind::tensor || dt.kind != OutputValue::Kind::tensor) return "error";
  std::size_t n = bt.data.size();
  if (n < 100) return "pass";
  std::size_t zb = 0, zd = 0;
  for (double v : bt.data) zb += v == 0.0;
  for (double v : dt.data) zd += v == 0.0;
  double diff = std::fabs(static_cast<double>(zb) - static_cast<double>(zd)) / static_cast<double>(n);
  return diff < 0.1 ? "pass" : "error";
}

// Rows for the pairs (bench[i], device[i]); views, not copies: outputs can hold millions of values.
// forward_elements: for backward rows, the elements of the forward output 0 (0: forward rows).
void add_rows(const std::string& prefix, const std::string& short_api, const std::vector<const OutputValue*>& bench,
              const std::vector<const OutputValue*>& device, bool fp8_input, const MetricContext& metrics,
              std::vector<DetailsRow>& rows, std::size_t forward_elements = 0) {
  if (bench.size() > device.size()) throw std::runtime_error("list index out of range");
  for (std::size_t i = 0; i < bench.size(); ++i) {
    DetailsRow row;
    row.name() = prefix + std::to_string(i);
    compare_element(short_api, *bench[i], *device[i], fp8_input, metrics, row, forward_elements);
    rows.push_back(std::move(row));
  }
}

}  // namespace


std::vector<std::string> ApiResult::result_fields() const {
  std::vector<std::string> f{api, forward_status, backward_status};
  if (forward_status == "SKIP" || backward_status == "SKIP" || replay_failed) f.push_back(message);
  return f;
}

std::string short_api_name(const std::string& api) {
  std::vector<std::string> seg;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= api.size(); ++i)
    if (i == api.size() || api[i] == '.') { seg.push_back(api.substr(start, i - start)); start = i + 1; }
  if (seg.size() == 3) return seg[1];
  if (seg.size() == 4) return seg[1] + "." + seg[2];
  return {};
}

ApiResult compare_api(const ApiOutputs& in, const MetricContext& metrics) {
  ApiResult r;
  r.api = in.api;
  if (in.api.find("dropout") != std::string::npos) {
    r.forward_status = dropout_status(in.bench, in.device);
    if (!in.bench_grads.empty() && !in.device_grads.empty())
      r.backward_status = dropout_status(in.bench_grads[0], in.device_grads[0]);
    return r;
  }
  std::string short_api = short_api_name(in.api);
  try {
    auto as_list = [](const OutputValue& v) {
      std::vector<const OutputValue*> l;
      if (v.kind == OutputValue::Kind::seq)
        for (const auto& item : v.items) l.push_back(&item);
      else
        l.push_back(&v);
      return l;
    };
    auto grads = [](const std::vector<OutputValue>& v) {
      std::vector<const OutputValue*> l;
      for (const auto& item : v) l.push_back(&item);
      return l;
    };
    std::vector<const OutputValue*> bench = as_list(in.bench), device = as_list(in.device);
    add_rows(in.api + ".forward.output.", short_api, bench, device, in.fp8_input, metrics, r.rows);
    // No output at all (an empty result list, or an operator that returns nothing and writes no
    // argument): the reference counts it a pass, all() of nothing; nothing was compared.
    if (r.rows.empty()) return skip_api(in.api, "nothing to compare: the call returned no output and wrote none of its arguments");
    r.forward_status = aggregate(r.rows, 0);
    std::size_t first_backward = r.rows.size();
    if (!in.backward_message.empty()) {
      DetailsRow row;
      row.name() = in.api + ".backward.output.0";
      row.status() = "SKIP";
      row.message() = in.backward_message;
      r.rows.push_back(std::move(row));
      r.backward_status = "SKIP";
      r.message = in.backward_message;
    } else if (!in.bench_grads.empty() && !in.device_grads.empty()) {
      const std::size_t forward_elements =
          !device.empty() && device[0]->kind == OutputValue::Kind::tensor ? device[0]->data.size() : 0;
      add_rows(in.api + ".backward.output.", short_api, grads(in.bench_grads), grads(in.device_grads), in.fp8_input,
               metrics, r.rows, forward_elements);
      r.backward_status = aggregate(r.rows, first_backward);
    }
  } catch (const std::exception& e) {
    return skip_api(in.api, e.what());
  }
  return r;
}

namespace {
// An API decided before any comparison: one forward details row carrying the message.
ApiResult one_row_result(const std::string& api, const std::string& status, const std::string& backward_status,
                         const std::string& message) {
  ApiResult r;
  r.api = api;
  r.forward_status = status;
  r.backward_status = backward_status;
  r.message = message;
  DetailsRow row;
  row.name() = api + ".forward.output.0";
  row.status() = status;
  row.message() = message;
  r.rows.push_back(std::move(row));
  return r;
}
}  // namespace

ApiResult skip_api(const std::string& api, const std::string& message) {
  return one_row_result(api, "SKIP", "SKIP", message);
}

ApiResult failed_api(const std::string& api, const std::string& message, bool has_backward) {
  ApiResult r = one_row_result(api, "error", has_backward ? "error" : " ", message);
  r.replay_failed = true;
  return r;
}

}  // namespace acccheck::replay
