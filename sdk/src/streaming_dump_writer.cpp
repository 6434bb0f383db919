// dump.json written as the program runs (the dump engine's writer) and the repair of a file whose
// writer died. The layout is exactly DumpJsonWriter's (json.dump indent=1): every entry ends with
// "\n  }" at the entry indentation and JSON strings never hold a raw newline, so the end of the last
// complete entry can be found without parsing the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "acccheck/record.hpp"
#include "dump_json_layout.hpp"

namespace acccheck {

namespace {

constexpr std::string_view kDataOpen = "\"data\": {";
constexpr std::string_view kEntryEnd = "\n  }";

}  // namespace

StreamingDumpJsonWriter::StreamingDumpJsonWriter(std::string path, const DumpHeader& header) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd_ < 0) {
    int e = errno;
    throw std::runtime_error(path_ + ": " + (e == ELOOP ? std::string("refusing to write through a symbolic link")
                                                        : std::string(std::strerror(e))));
  }
  write_all(detail::dump_json_head(header));
}

StreamingDumpJsonWriter::~StreamingDumpJsonWriter() {
  if (fd_ < 0) return;
  try {
    flush();
  } catch (const std::exception&) {  // a destructor reports nothing: the file stays repairable
  }
  ::close(fd_);
}

void StreamingDumpJsonWriter::write_all(const std::string& bytes) {
  if (fd_ < 0) throw std::runtime_error(path_ + ": already finished");
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void StreamingDumpJsonWriter::write(const ApiRecord& record) {
  if (fd_ < 0) throw std::runtime_error(path_ + ": already finished");
  pending_ += detail::dump_json_entry(record, entries_ == 0);
  ++entries_;
  if (pending_.size() >= kFlushBytes) flush();
}

void StreamingDumpJsonWriter::write_encoded(std::string_view entry) {
  if (fd_ < 0) throw std::runtime_error(path_ + ": already finished");
  pending_ += entries_ == 0 ? "\n  " : ",\n  ";
  pending_ += entry;
  ++entries_;
  if (pending_.size() >= kFlushBytes) flush();
}

void StreamingDumpJsonWriter::flush() {
  if (pending_.empty()) return;
  std::string bytes;
  bytes.swap(pending_);
  write_all(bytes);
}

void StreamingDumpJsonWriter::finish() {
  if (fd_ < 0) return;
  flush();
  // No fsync: what matters is surviving the program's death, and the kernel has every byte once
  // write() returned (an fsync per step cost milliseconds on the writer thread).
  write_all(entries_ == 0 ? "}\n}" : "\n }\n}");
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw std::runtime_error(path_ + ": " + std::strerror(errno));
  }
  fd_ = -1;
}

DumpRepair repair_dump_json(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + ": not a regular file");
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  DumpRepair r;
  std::size_t data = text.find(kDataOpen);
  if (text.rfind("{\n", 0) != 0 || data == std::string::npos)
    throw std::runtime_error(path + ": not a dump.json written by acccheck (no '\"data\": {' after the header)");
  std::size_t body = data + kDataOpen.size();
  auto ends_with = [&](std::string_view tail) {
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
  };
  auto count_entries = [&](std::size_t* last_end) {
    std::size_t n = 0;
    for (std::size_t p = text.find(kEntryEnd, body); p != std::string::npos; p = text.find(kEntryEnd, p + 1)) {
      ++n;
      if (last_end) *last_end = p + kEntryEnd.size();
    }
    return n;
  };
  if (ends_with("\n }\n}") || ends_with("\"data\": {}\n}")) {  // finished: leave it alone
    r.entries = count_entries(nullptr);
    return r;
  }
  r.was_unfinished = true;
  std::size_t keep = body;
  r.entries = count_entries(&keep);
  r.dropped_bytes = text.size() - keep;
  std::string fixed = text.substr(0, keep) + (r.entries == 0 ? "}\n}" : "\n }\n}");
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  ssize_t n = ::write(fd, fixed.data(), fixed.size());
  int e = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(fixed.size())) throw std::runtime_error(path + ": write failed: " + std::strerror(e));
  return r;
}

}  // namespace acccheck
