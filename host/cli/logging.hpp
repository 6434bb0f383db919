// spdlog set-up: human-readable lines on stderr; the level comes from --log-level.
#pragma once

#include <string>

namespace acccheck::host {

// Throws std::runtime_error for an unknown level name.
void setup_logging(const std::string& level);

}  // namespace acccheck::host
