// Chooses the precision standard for one output row (precision-standards.md §2), from the lists
// and rules of the (merged) standards YAML.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <acccheck/settings.hpp>

namespace acccheck::core {

class StandardSelector {
 public:
  // `standards` is the flattened, merged standards YAML. Throws naming the missing key.
  explicit StandardSelector(const Settings& standards);

  // short_api: "matmul" / "linalg.vector_norm"; output_dtype: the NPU DEVICE Dtype;
  // rel_err_filled: the NPU row's 相对误差错误率 cell is not blank (the reference then treats the
  // input dtype as fp8, which routes the row to the fp8-input standard).
  // reduced_gradient: a backward row whose gradient has fewer elements than the API's forward
  // output 0 — the gradient of an input that was broadcast (a bias, a position embedding, an SE
  // block's scale), a sum over the broadcast dimensions. An API whose standard by name expects no
  // accumulation (absolute threshold, binary consistency) has such rows judged by the standard for
  // reductions (`selection/reduced_gradient`; acccheck's, docs/compat.md). Both stages decide it
  // from the shapes: run_ut from its tensors, compare from the rows' Shape column.
  const std::string& select(std::string_view short_api, std::string_view output_dtype, bool rel_err_filled,
                            bool reduced_gradient = false) const;

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
  std::string reduced_gradient_;                         // "" when the standards file names none
  std::vector<std::string> reduced_gradient_of_;
  std::unordered_map<std::string, std::string> notes_;
};

// Elements of a details row's Shape cell, "(2, 3)" → 6, "()" → 1; nullopt when it is not a shape.
std::optional<std::size_t> shape_elements(std::string_view shape);

// Short API name of a details row name: 6 segments → segment 1; 7 → segments 1.2; else empty.
// Also returns the API key (type.name.idx) and the direction ("forward"/"backward").
struct RowName {  // views into the parsed name
  std::string_view api;        // "Torch.matmul.0"
  std::string_view short_api;  // "matmul"
  std::string_view direction;  // "forward" / "backward"
  bool valid = false;
};
RowName parse_row_name(std::string_view name);

}  // namespace acccheck::core
