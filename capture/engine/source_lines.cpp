// Source lines for stack.json (source_lines.hpp).
#include "engine/source_lines.hpp"

#include <cstring>

#include "io/regular_file.hpp"

namespace acccheck::capture {

SourceLines::File SourceLines::read(const std::string& path) {
  File f;
  f.text = core::RegularFile(path).read_string(kMaxBytes);  // "" for a FIFO, a folder, a missing file
  // A line starts at 0 and after each '\n' that is not the last byte (as getline reads them).
  for (std::size_t at = 0; at < f.text.size() && f.starts.size() < kMaxLines;) {
    f.starts.push_back(static_cast<std::uint32_t>(at));
    const void* nl = std::memchr(f.text.data() + at, '\n', f.text.size() - at);
    if (!nl) break;
    at = static_cast<std::size_t>(static_cast<const char*>(nl) - f.text.data()) + 1;
  }
  return f;
}

std::string_view SourceLines::File::line(std::size_t n) const {
  const std::size_t begin = starts[n - 1];
  const void* nl = std::memchr(text.data() + begin, '\n', text.size() - begin);
  const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
  return std::string_view(text).substr(begin, end - begin);
}

std::string SourceLines::line(const std::string& file, std::size_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = files_.find(file);
  if (it == files_.end()) it = files_.emplace(file, read(file)).first;
  const File& f = it->second;
  if (n == 0 || n > f.starts.size()) return "";
  const std::string_view l = f.line(n);
  const std::size_t b = l.find_first_not_of(" \t");
  return b == std::string_view::npos ? "" : std::string(l.substr(b));
}

SourceLines& source_lines() {
  static SourceLines* lines = new SourceLines;
  return *lines;
}

}  // namespace acccheck::capture
