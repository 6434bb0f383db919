// Plugin settings: the thresholds and lists a plugin reads from the YAML shipped with it (and the
// user's --standards override), flattened so a plugin needs neither yaml-cpp nor LibTorch.
// A YAML path becomes a key joined with '/': {rtol: {torch.float16: 0.0009765625}} → "rtol/torch.float16".
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace acccheck {

class Settings {
 public:
  void set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }
  bool has(std::string_view key) const { return values_.find(key) != values_.end(); }
  const std::map<std::string, std::string, std::less<>>& all() const { return values_; }

  std::optional<std::string> text(std::string_view key) const {
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  // "key/<dtype>", then "key/default", then "key"; throws naming the key when none is set.
  double number(std::string_view key, std::string_view dtype = {}) const;
  // A YAML sequence is stored as "key/0", "key/1", ...
  std::vector<std::string> list(std::string_view key) const;
  // The settings under "prefix/", with the prefix removed ({"a/b": 1} .section("a") → {"b": 1}).
  Settings section(std::string_view prefix) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;  // heterogeneous lookup: no key copies
};

}  // namespace acccheck
