// The %Y%m%d%H%M%S stamp in output file names (accuracy_checking_result_<ts>.csv, ...): the
// current local time, or the --timestamp a user gave, checked. Shared by every command that writes.
#pragma once

#include <optional>
#include <string>

namespace acccheck::host {

// `given` (from --timestamp) if set, else now. Throws std::runtime_error "--timestamp: expected 14
// digits (%Y%m%d%H%M%S), found '...'" for a malformed one.
std::string output_timestamp(const std::optional<std::string>& given);

}  // namespace acccheck::host
