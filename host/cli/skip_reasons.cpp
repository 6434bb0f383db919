#include "cli/skip_reasons.hpp"

#include <algorithm>
#include <iomanip>
#include <vector>

#include <acccheck/csv.hpp>

namespace acccheck::host {

void SkipReasons::add(const std::string& api, const std::string& raw) {
  std::string message = raw.substr(0, raw.find('\n'));
  for (std::size_t at; !api.empty() && (at = message.find(api)) != std::string::npos;) message.replace(at, api.size(), "<API>");
  message = printable(message);  // control bytes escaped: a summary never moves the cursor
  if (message.size() > 150) message = message.substr(0, 147) + "...";
  if (message.find_first_not_of(' ') == std::string::npos) message = "(no message)";
  ++counts_[message];
}

void SkipReasons::print(std::ostream& os, std::size_t top) const {
  if (counts_.empty()) return;
  std::vector<std::pair<std::size_t, std::string>> reasons;
  for (const auto& [reason, n] : counts_) reasons.emplace_back(n, reason);
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  os << "  SKIP reasons";
  if (reasons.size() > top) os << " (the " << top << " commonest of " << reasons.size() << ")";
  os << ":\n";
  for (std::size_t i = 0; i < reasons.size() && i < top; ++i)
    os << "    " << std::setw(5) << reasons[i].first << "  " << reasons[i].second << "\n";
}

}  // namespace acccheck::host
