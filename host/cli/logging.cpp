#include "cli/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace acccheck::host {

void setup_logging(const std::string& level) {
  static const char* names[] = {"trace", "debug", "info", "warn", "error", "off"};
  bool known = false;
  for (const char* n : names) known = known || level == n;
  if (!known) throw std::runtime_error("--log-level: unknown level '" + level + "' (trace, debug, info, warn, error, off)");
  auto logger = spdlog::stderr_logger_st("acccheck");
  logger->set_pattern("acccheck: %l: %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

}  // namespace acccheck::host
