// The source lines stack.json shows under each frame ("File f.py, line 9, in g, \n loss = model(x)"),
// read once per file. Torch-free.
//
// A file is read whole into one string with an index of where its lines start: the first dumped
// step of a Python program meets its modules' sources (a dumped gpt step: 14 files, ~12,000 lines,
// torch/nn/functional.py alone 5,186) on the writer thread, and reading them a line at a time, one
// string each, was most of the ~46 µs a new stack cost the writer there — time in which the
// training thread's records were not handed back (bench/RESULTS.md, session (11)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace acccheck::capture {

class SourceLines {
 public:
  // At most this many lines of a file are shown, and this many bytes read (a source file is far
  // smaller: a line past them shows as none).
  static constexpr std::size_t kMaxLines = 200000;
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

  // Line n (from 1) of `file` without its leading blanks (spaces and tabs; the rest as written, a
  // '\r' of a CRLF file included); "" for line 0, a line past the end, or a file that is not a
  // regular file that can be read (never waits on a FIFO or a device). Any thread.
  std::string line(const std::string& file, std::size_t n);

 private:
  struct File {
    std::string text;
    std::vector<std::uint32_t> starts;  // where each line begins in text
    std::string_view line(std::size_t n) const;  // n from 1, without its '\n'
  };
  static File read(const std::string& path);

  std::mutex mutex_;
  std::unordered_map<std::string, File> files_;
};

// The process's cache (never destroyed: the writer thread may still describe stacks in an exit
// handler, after function-local statics created later than that handler's registration are gone).
SourceLines& source_lines();

}  // namespace acccheck::capture
