// How many operator calls each entry of the device's configuration matched over a whole run_ut run
// (npu-sim's planted faults), added up from every worker's replies. An entry that matched nothing
// planted nothing: run_ut says so, rather than let a run with a mistyped or decomposed operator
// pass for a checked device.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace acccheck::host {

class ConfigurationUseTally {
 public:
  // One API's reply (its calls per entry); `failed`: the API crashed or timed out (its calls are lost).
  void add(const std::vector<std::pair<std::string, std::uint64_t>>& use, bool failed);
  // One line per entry that matched no call, naming the device; empty when all matched.
  std::vector<std::string> unused_lines(const std::string& device) const;

 private:
  std::vector<std::pair<std::string, std::uint64_t>> entries_;  // first-seen order
  std::size_t failed_apis_ = 0;
};

}  // namespace acccheck::host
