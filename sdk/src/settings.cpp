#include "acccheck/settings.hpp"

#include "acccheck/number_format.hpp"

namespace acccheck {

double Settings::number(std::string_view key, std::string_view dtype) const {
  std::string k(key);
  std::vector<std::string> tries;
  if (!dtype.empty()) tries.push_back(k + "/" + std::string(dtype));
  tries.push_back(k + "/default");
  tries.push_back(k);
  for (const auto& t : tries) {
    auto it = values_.find(t);
    if (it == values_.end()) continue;
    auto v = parse_python_float(it->second);
    if (!v) throw std::runtime_error("setting '" + t + "': expected a number, found '" + it->second + "'");
    return *v;
  }
  throw std::runtime_error("setting '" + k + "' is missing" +
                           (dtype.empty() ? std::string() : " (also for dtype " + std::string(dtype) + ")"));
}

std::vector<std::string> Settings::list(std::string_view key) const {
  std::vector<std::string> out;
  for (std::size_t i = 0;; ++i) {
    auto it = values_.find(std::string(key) + "/" + std::to_string(i));
    if (it == values_.end()) break;
    out.push_back(it->second);
  }
  return out;
}

}  // namespace acccheck
