// Chooses the precision standard for one output row (precision-standards.md §2), from the lists
// and rules of the (merged) standards YAML.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <acccheck/settings.hpp>

namespace acccheck::host {

class StandardSelector {
 public:
  // `standards` is the flattened, merged standards YAML. Throws naming the missing key.
  explicit StandardSelector(const Settings& standards);

  // short_api: "matmul" / "linalg.vector_norm"; output_dtype: the NPU DEVICE Dtype;
  // rel_err_filled: the NPU row's 相对误差错误率 cell is not blank (the reference then treats the
  // input dtype as fp8, which routes the row to the fp8-input standard).
  const std::string& select(std::string_view short_api, std::string_view output_dtype, bool rel_err_filled) const;

  bool unsupported_dtype(std::string_view dtype) const;
  // Every standard id the selector can return, for checking plugins up front.
  std::vector<std::string> all_standards() const;
  // A note appended to an API's result message when its forward verdict is error (e.g. topk).
  const std::string* note_for(std::string_view short_api) const;

 private:
  std::vector<std::string> order_;
  std::deque<std::string> api_names_;  // owns the keys below
  std::unordered_map<std::string_view, std::string> first_standard_of_api_;
  std::string default_, fp8_output_, fp8_input_, non_float_;
  std::vector<std::string> float_dtypes_, unsupported_dtypes_;
  std::unordered_map<std::string, std::string> notes_;
};

// Short API name of a details row name: 6 segments → segment 1; 7 → segments 1.2; else empty.
// Also returns the API key (type.name.idx) and the direction ("forward"/"backward").
struct RowName {  // views into the parsed name
  std::string_view api;        // "Torch.matmul.0"
  std::string_view short_api;  // "matmul"
  std::string_view direction;  // "forward" / "backward"
  bool valid = false;
};
RowName parse_row_name(std::string_view name);

}  // namespace acccheck::host
