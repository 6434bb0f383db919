// Why APIs were SKIP, counted for a summary: run_ut and compare print the commonest reasons, so a
// summary of "SKIP 72" says what to look at. The API's own name is taken out of each message so that
// one reason shared by many APIs is counted once.
#pragma once

#include <cstddef>
#include <map>
#include <ostream>
#include <string>

namespace acccheck::host {

class SkipReasons {
 public:
  void add(const std::string& api, const std::string& message);
  bool empty() const { return counts_.empty(); }
  // "  SKIP reasons (the 5 commonest of 9):" and one line per reason with its count.
  void print(std::ostream& os, std::size_t top = 5) const;

 private:
  std::map<std::string, std::size_t> counts_;
};

}  // namespace acccheck::host
