#include "commands/run_ut/configuration_use.hpp"

#include <algorithm>

#include <acccheck/csv.hpp>

namespace acccheck::host {

void ConfigurationUseTally::add(const std::vector<std::pair<std::string, std::uint64_t>>& use, bool failed) {
  if (failed) ++failed_apis_;
  for (const auto& one : use) {  // not a structured binding: clang 14 cannot capture one in the lambda
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == one.first; });
    if (it == entries_.end()) entries_.emplace_back(one.first, one.second);
    else it->second += one.second;
  }
}

std::vector<std::string> ConfigurationUseTally::unused_lines(const std::string& device) const {
  std::vector<std::string> lines;
  for (const auto& [entry, calls] : entries_)
    if (calls == 0)
      lines.push_back("warning: " + printable(device) + " " + printable(entry) +
                      " matched no operator call in this run: it planted nothing" +
                      (failed_apis_ ? " (" + std::to_string(failed_apis_) + " API" + (failed_apis_ == 1 ? "" : "s") +
                                          " crashed or timed out; their calls are not counted)"
                                    : std::string()));
  return lines;
}

}  // namespace acccheck::host
