#include "standards/standard_selector.hpp"

#include <algorithm>
#include <stdexcept>

#include <acccheck/float_formats.hpp>

namespace acccheck::core {

namespace {
std::string required(const Settings& s, const std::string& key) {
  auto v = s.text(key);
  if (!v) throw std::runtime_error("standards: missing key '" + key + "'");
  return *v;
}
}  // namespace

StandardSelector::StandardSelector(const Settings& s) {
  order_ = s.list("selection/order");
  default_ = required(s, "selection/default");
  fp8_output_ = required(s, "selection/fp8_output");
  fp8_input_ = required(s, "selection/fp8_input");
  non_float_ = required(s, "selection/non_float");
  float_dtypes_ = s.list("selection/float_dtypes");
  unsupported_dtypes_ = s.list("selection/unsupported_dtypes");
  if (auto r = s.text("selection/reduced_gradient")) {
    reduced_gradient_ = *r;
    reduced_gradient_of_ = s.list("selection/reduced_gradient_of");
  }
  for (const auto& id : order_)
    for (const auto& api : s.list("standards/" + id + "/apis")) {
      api_names_.push_back(api);
      first_standard_of_api_.emplace(api_names_.back(), id);
    }
  const Settings notes = s.section("notes");
  for (const auto& [api, note] : notes.all()) notes_.emplace(api, note);
}

const std::string& StandardSelector::select(std::string_view short_api, std::string_view dtype,
                                            bool rel_err_filled, bool reduced_gradient) const {
  if (is_fp8(dtype)) return fp8_output_;
  if (rel_err_filled) return fp8_input_;
  if (std::find(float_dtypes_.begin(), float_dtypes_.end(), dtype) == float_dtypes_.end()) return non_float_;
  auto it = first_standard_of_api_.find(short_api);
  const std::string& by_name = it == first_standard_of_api_.end() ? default_ : it->second;
  if (reduced_gradient && !reduced_gradient_.empty() &&
      std::find(reduced_gradient_of_.begin(), reduced_gradient_of_.end(), by_name) != reduced_gradient_of_.end())
    return reduced_gradient_;
  return by_name;
}

std::optional<std::size_t> shape_elements(std::string_view shape) {
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') return std::nullopt;
  std::size_t n = 1;
  std::size_t value = 0;
  bool digits = false;
  for (std::size_t i = 1; i + 1 < shape.size(); ++i) {
    const char c = shape[i];
    if (c >= '0' && c <= '9') {
      value = value * 10 + static_cast<std::size_t>(c - '0');
      digits = true;
    } else if (c == ',') {
      if (!digits) return std::nullopt;
      n *= value;
      value = 0;
      digits = false;
    } else if (c != ' ') {
      return std::nullopt;
    }
  }
  if (digits) n *= value;
  return n;
}

bool StandardSelector::unsupported_dtype(std::string_view dtype) const {
  return std::find(unsupported_dtypes_.begin(), unsupported_dtypes_.end(), dtype) != unsupported_dtypes_.end();
}

std::vector<std::string> StandardSelector::all_standards() const {
  std::vector<std::string> all = order_;
  for (const auto* s : {&default_, &fp8_output_, &fp8_input_, &non_float_, &reduced_gradient_})
    if (!s->empty() && std::find(all.begin(), all.end(), *s) == all.end()) all.push_back(*s);
  return all;
}

const std::string* StandardSelector::note_for(std::string_view short_api) const {
  auto it = notes_.find(std::string(short_api));
  return it == notes_.end() ? nullptr : &it->second;
}

RowName parse_row_name(std::string_view name) {
  std::size_t dots[7];
  std::size_t n = 0;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (name[i] == '.') {
      if (n == 6) return {};  // 8 or more segments
      dots[n++] = i;
    }
  RowName r;
  if (n != 5 && n != 6) return r;  // 6 or 7 segments
  const std::size_t idx_end = dots[n - 3];  // end of the call index segment
  r.api = name.substr(0, idx_end);
  r.short_api = name.substr(dots[0] + 1, dots[n - 4] - dots[0] - 1);
  r.direction = name.substr(dots[n - 3] + 1, dots[n - 2] - dots[n - 3] - 1);
  r.valid = true;
  return r;
}

}  // namespace acccheck::core
