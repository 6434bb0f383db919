#include "cli/output_timestamp.hpp"

#include <ctime>
#include <stdexcept>

namespace acccheck::host {

std::string output_timestamp(const std::optional<std::string>& given) {
  if (given) {
    if (given->size() != 14 || given->find_first_not_of("0123456789") != std::string::npos)
      throw std::runtime_error("--timestamp: expected 14 digits (%Y%m%d%H%M%S), found '" + *given + "'");
    return *given;
  }
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

}  // namespace acccheck::host
