// -save_error_data's folder, <error_data_path>/ut_error_data<timestamp>: created before anything
// else is written (an unwritable path must not leave a header-only result pair behind), never
// through a symbolic link — a planted ut_error_data<ts> link is refused, not followed — and reused
// only when it is a real folder (a resumed run).
#pragma once

#include <string>

namespace acccheck::host {

// The folder's path; throws std::runtime_error "<path>: <reason>".
std::string prepare_error_data_dir(const std::string& error_data_path, const std::string& timestamp);

// The timestamp of a result file named accuracy_checking_result_<14 digits>.csv ("" otherwise).
std::string timestamp_of_result_file(const std::string& result_csv);

}  // namespace acccheck::host
