// dump.json written as the program runs (the dump engine's writer) and the repair of a file whose
// writer died. The layout is exactly DumpJsonWriter's (json.dump indent=1): every entry ends with
// "\n  }" at the entry indentation and JSON strings never hold a raw newline, so the end of the last
// complete entry can be found without parsing the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

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
  write_all(std::string(detail::dump_json_close(entries_ != 0)));
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw std::runtime_error(path_ + ": " + std::strerror(errno));
  }
  fd_ = -1;
}

namespace {

// A dump.json being checked or repaired, read in blocks through pread: a long run's file is
// gigabytes, and the host checks every dump.json of a dump when the program ends. Read whole (the
// previous way) it took twice its size in memory and its full reading time after every run, and a
// repair rewrote it in one write(2), which Linux cuts at ~2 GiB: a larger file was left truncated.
class DumpJsonFile {
 public:
  explicit DumpJsonFile(const std::string& path) : path_(path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) throw error(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw error("not a regular file");
    fd_ = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0) throw error(std::strerror(errno));
    if (::fstat(fd_, &st) != 0) {  // no destructor runs for a constructor that throws
      const int e = errno;
      ::close(fd_);
      throw error(std::strerror(e));
    }
    size_ = static_cast<std::size_t>(st.st_size);
  }
  ~DumpJsonFile() { ::close(fd_); }
  DumpJsonFile(const DumpJsonFile&) = delete;
  DumpJsonFile& operator=(const DumpJsonFile&) = delete;

  std::size_t size() const { return size_; }
  std::runtime_error error(const std::string& what) const { return std::runtime_error(path_ + ": " + what); }

  // Up to n bytes from `offset` (fewer at the end of the file).
  std::string read(std::size_t offset, std::size_t n) const {
    std::string bytes(std::min(n, size_ - std::min(offset, size_)), '\0');
    std::size_t got = 0;
    while (got < bytes.size()) {
      ssize_t r = ::pread(fd_, bytes.data() + got, bytes.size() - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw error(std::string("read failed: ") + std::strerror(errno));
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    bytes.resize(got);
    return bytes;
  }

  // Where the entries begin: just past `"data": {`, which ends the header (its few fields come
  // first; a file whose first kHeadBytes hold no such line is not a dump of ours).
  std::size_t body() const {
    constexpr std::size_t kHeadBytes = 64 * 1024;
    const std::string head = read(0, kHeadBytes);
    const std::size_t data = head.find(kDataOpen);
    if (head.rfind("{\n", 0) != 0 || data == std::string::npos)
      throw error("not a dump.json written by acccheck (no '\"data\": {' after the header)");
    return data + kDataOpen.size();
  }

  // What StreamingDumpJsonWriter::finish() writes last: with entries, or with none.
  bool finished() const {
    const std::string tail = read(size_ - std::min<std::size_t>(size_, 16), 16);
    auto ends_with = [&](std::string_view end) {
      return tail.size() >= end.size() && tail.compare(tail.size() - end.size(), end.size(), end) == 0;
    };
    return ends_with(detail::dump_json_close(true)) ||
           ends_with(std::string(kDataOpen) + std::string(detail::dump_json_close(false)));
  }

  // The complete entries from `body` on, and where the last one ends (`body` if none). One block
  // at a time, the last few bytes of each kept before the next so that an entry's end split
  // between two blocks is found once.
  std::size_t count_entries(std::size_t body, std::size_t* last_end) const {
    std::size_t n = 0, end = body;
    std::string carry;
    for (std::size_t offset = body; offset < size_; offset += kDumpJsonReadBlock) {
      const std::string block = carry + read(offset, kDumpJsonReadBlock);
      const std::size_t origin = offset - carry.size();  // the file offset of block[0]
      for (std::size_t p = block.find(kEntryEnd); p != std::string::npos; p = block.find(kEntryEnd, p + 1)) {
        ++n;
        end = origin + p + kEntryEnd.size();
      }
      carry = block.substr(block.size() - std::min(block.size(), kEntryEnd.size() - 1));
    }
    if (last_end) *last_end = end;
    return n;
  }

  // Cuts the file at `keep` and appends `tail`, through a second descriptor opened for writing
  // (checking a finished file needs no write permission): the kept bytes are never written again,
  // so a repair interrupted in turn leaves a file that can still be repaired.
  void cut_and_append(std::size_t keep, std::string_view tail) const {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw error(std::strerror(errno));
    auto fail = [&](const char* what) {
      const int e = errno;
      ::close(fd);
      return error(std::string(what) + std::strerror(e));
    };
    if (::ftruncate(fd, static_cast<off_t>(keep)) != 0) throw fail("truncate failed: ");
    std::size_t put = 0;
    while (put < tail.size()) {
      ssize_t w = ::pwrite(fd, tail.data() + put, tail.size() - put, static_cast<off_t>(keep + put));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw fail("write failed: ");
      put += static_cast<std::size_t>(w);
    }
    if (::close(fd) != 0) throw error(std::string("write failed: ") + std::strerror(errno));
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::size_t size_ = 0;
};

}  // namespace

bool dump_json_finished(const std::string& path) {
  DumpJsonFile file(path);
  file.body();  // a foreign file is refused, finished or not
  return file.finished();
}

DumpRepair repair_dump_json(const std::string& path) {
  DumpJsonFile file(path);
  const std::size_t body = file.body();
  DumpRepair r;
  if (file.finished()) {  // leave it alone
    r.entries = file.count_entries(body, nullptr);
    return r;
  }
  r.was_unfinished = true;
  std::size_t keep = body;
  r.entries = file.count_entries(body, &keep);
  r.dropped_bytes = file.size() - keep;
  file.cut_and_append(keep, detail::dump_json_close(r.entries != 0));
  return r;
}

}  // namespace acccheck
