// dump.json's layout (json.dump indent=1), shared by the two writers: the header up to and
// including '"data": {', and one entry with its leading separator.
#pragma once

#include <string>

#include "acccheck/record.hpp"

namespace acccheck::detail {

std::string dump_json_head(const DumpHeader& header);
std::string dump_json_entry(const ApiRecord& record, bool first);

}  // namespace acccheck::detail
