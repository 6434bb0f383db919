#include "acccheck/settings.hpp"

#include "acccheck/number_format.hpp"

#include <cstring>

namespace acccheck {

double Settings::number(std::string_view key, std::string_view dtype) const {
  // Called per judged row: keys are composed in a stack buffer, looked up without allocating.
  char buf[256];
  auto compose = [&](std::string_view suffix) -> std::string_view {
    if (suffix.empty()) return key;
    std::size_t n = key.size() + 1 + suffix.size();
    if (n > sizeof buf) return {};
    std::memcpy(buf, key.data(), key.size());
    buf[key.size()] = '/';
    std::memcpy(buf + key.size() + 1, suffix.data(), suffix.size());
    return std::string_view(buf, n);
  };
  const std::string_view suffixes[] = {dtype, "default", ""};
  for (std::size_t i = dtype.empty() ? 1 : 0; i < 3; ++i) {
    std::string_view k = compose(suffixes[i]);
    if (k.empty()) continue;
    auto it = values_.find(k);
    if (it == values_.end()) continue;
    auto v = parse_python_float(it->second);
    if (!v) throw std::runtime_error("setting '" + std::string(k) + "': expected a number, found '" + it->second + "'");
    return *v;
  }
  throw std::runtime_error("setting '" + std::string(key) + "' is missing" +
                           (dtype.empty() ? std::string() : " (also for dtype " + std::string(dtype) + ")"));
}

std::vector<std::string> Settings::list(std::string_view key) const {
  std::vector<std::string> out;
  for (std::size_t i = 0;; ++i) {
    auto it = values_.find(std::string(key) + "/" + std::to_string(i));  // configure-time only
    if (it == values_.end()) break;
    out.push_back(it->second);
  }
  return out;
}

Settings Settings::section(std::string_view prefix) const {
  Settings out;
  const std::string start = std::string(prefix) + "/";
  for (auto it = values_.lower_bound(start); it != values_.end() && it->first.compare(0, start.size(), start) == 0; ++it)
    out.set(it->first.substr(start.size()), it->second);
  return out;
}

}  // namespace acccheck
