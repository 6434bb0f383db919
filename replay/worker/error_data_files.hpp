// -save_error_data's files (run-ut.md §7.4), torch-free so that they are tested and fuzzed on
// their own: the file stem an entry name gets, and the one way such a file is written.
#pragma once

#include <string>
#include <vector>

namespace acccheck::replay {

// The entry name where it is one plain file name (letters, digits, '.', '_', '-'; what every real
// entry is, up to 160 bytes), else "entry_" + its plain characters (others as '_', cut to 160) +
// "-" + a 64-bit hash of the whole name: never a '/', a NUL, a control character or a name of dots
// only, and two different names never share a stem. Everything lands flat in the error folder.
std::string error_data_stem(const std::string& api);

// Creates `path` new and writes `bytes`: never through a symbolic link, never over an existing
// file (O_EXCL; what an interrupted run left at `path` is unlinked first, the link itself and not
// its target), as the result CSVs are written. A failed write (a full disk) removes the partial
// file. Returns "" or "<path>: <reason>".
std::string write_error_data_file(const std::string& path, const std::vector<char>& bytes);

}  // namespace acccheck::replay
