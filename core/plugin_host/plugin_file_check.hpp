// A plugin is code: before a file is opened the host checks who could have written it.
#pragma once

#include <optional>
#include <string>

namespace acccheck::core {

// Reason to refuse a plugin folder (world-writable, owned by someone other than the user or root),
// or nullopt when it is acceptable.
std::optional<std::string> unsafe_folder_reason(const std::string& dir);

// Same for a plugin file. A symbolic link is followed: the checks apply to the file it resolves to
// and to that file's folder (and the link's own folder), so a link cannot launder an unsafe file.
std::optional<std::string> unsafe_file_reason(const std::string& path);

}  // namespace acccheck::core
