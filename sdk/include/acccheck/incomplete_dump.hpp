// A dump that lost data says so on disk, not only on the program's stderr (which a training job's
// log may bury): when writing fails partway (a full disk, a file-size limit, a folder removed) the
// capture writer leaves a marker file
//   <dump_path>/step<N>/<rank dir>/acccheck_incomplete.txt   beside each dump.json it was writing
//   <dump_path>/acccheck_incomplete.txt                      for `acccheck dump -- PROG` (its exit code)
// holding the one-line reason. run_ut reports a marked dump.json and ends non-zero after judging
// what it kept. A marker is created before its reason is written: on a disk too full for even a
// line of text the empty file still marks the dump.
#pragma once

#include <optional>
#include <string>

namespace acccheck {

inline constexpr const char* kIncompleteMarkerName = "acccheck_incomplete.txt";

// Creates (or overwrites) the marker in `folder` with `reason`; never throws, never follows a link.
// False when not even the empty file could be created.
bool mark_incomplete(const std::string& folder, const std::string& reason) noexcept;

// Removes the marker an earlier dump left in `folder` (never through a link); never throws.
void remove_incomplete_marker(const std::string& folder) noexcept;

// The marker beside a dump.json, as "<marker path>: <reason>" (the reason may be empty: the disk
// was too full to write it); nullopt when the dump.json is not marked.
std::optional<std::string> incomplete_marker_of(const std::string& dump_json);

// The marker in a folder itself (the dump root of `acccheck dump -- PROG`).
std::optional<std::string> incomplete_marker_in(const std::string& folder);

}  // namespace acccheck
