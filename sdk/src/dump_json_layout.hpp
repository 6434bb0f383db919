// dump.json's layout (json.dump indent=1), shared by the two writers and the repair: the header
// up to and including '"data": {', one entry with its leading separator, and the file's end.
#pragma once

#include <string>
#include <string_view>

#include "acccheck/record.hpp"

namespace acccheck::detail {

std::string dump_json_head(const DumpHeader& header);
std::string dump_json_entry(const ApiRecord& record, bool first);
// What closes the data object and the file, after the last entry or right after '"data": {'.
constexpr std::string_view dump_json_close(bool has_entries) { return has_entries ? "\n }\n}" : "}\n}"; }

}  // namespace acccheck::detail
