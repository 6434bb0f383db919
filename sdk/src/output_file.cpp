#include "acccheck/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>

namespace acccheck {

namespace {

// Temporary paths of open outputs, for the signal handler (which may only unlink): fixed slots,
// written under a mutex, read by the handler without one.
constexpr int kSlots = 64;
char g_temp_paths[kSlots][4096];
std::atomic<bool> g_slot_used[kSlots];
std::mutex g_slots_mutex;

extern "C" void remove_temporaries_and_reraise(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_used[i].load(std::memory_order_relaxed)) ::unlink(g_temp_paths[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_signal_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (old.sa_handler != SIG_DFL) continue;  // the program handles it already: leave it
      struct sigaction sa {};
      sa.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

int register_temporary(const std::string& path) {
  install_signal_cleanup();
  if (path.size() >= sizeof g_temp_paths[0]) return -1;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (int i = 0; i < kSlots; ++i)
    if (!g_slot_used[i].load()) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      g_slot_used[i].store(true);
      return i;
    }
  return -1;
}

// 12 characters from [0-9a-z]: a collision with another temporary is left to O_EXCL.
std::string random_suffix() {
  thread_local std::mt19937_64 engine{std::random_device{}() ^
                                      (static_cast<std::uint64_t>(::getpid()) << 32)};
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string suffix(12, '0');
  for (char& c : suffix) c = kDigits[engine() % 36];
  return suffix;
}

void unregister_temporary(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  g_slot_used[slot].store(false);
}

}  // namespace

bool is_symlinked_folder(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

void refuse_symlink_destination(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw std::runtime_error(path + ": refusing to write through a symbolic link");
  if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw std::runtime_error(path + ": is a directory, expected a file path to write");
}

AtomicOutputFile::AtomicOutputFile(std::string path, unsigned mode) : path_(std::move(path)) {
  refuse_symlink_destination(path_);
  // The name is registered with the signal handler before the file exists (mkstemp would create it
  // first): a SIGTERM between creating and registering left the temporary behind.
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp_path_ = path_ + ".tmp-" + random_suffix();
    slot_ = register_temporary(temp_path_);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ >= 0) break;
    int error = errno;
    unregister_temporary(slot_);
    slot_ = -1;
    if (error != EEXIST)
      throw std::runtime_error(path_ + ": cannot create output file: " + std::strerror(error));
  }
  if (fd_ < 0) throw std::runtime_error(path_ + ": cannot create output file: no free temporary name");
  ::fchmod(fd_, static_cast<mode_t>(mode));
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  unregister_temporary(slot_);
}

void AtomicOutputFile::write(std::string_view bytes) {
  buffer_.append(bytes);
  if (buffer_.size() >= (1u << 20)) flush();
}

void AtomicOutputFile::flush() {
  const char* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void AtomicOutputFile::commit() {
  prepare();
  publish();
}

void AtomicOutputFile::prepare() {
  if (fd_ < 0) return;
  flush();
  // Data on disk before the rename makes it visible (metadata comes with the rename).
  if (::fdatasync(fd_) != 0 && errno != EINVAL)
    throw std::runtime_error(path_ + ": fdatasync failed: " + std::strerror(errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw std::runtime_error(path_ + ": close failed: " + std::strerror(errno));
  }
  fd_ = -1;
}

void AtomicOutputFile::publish() {
  prepare();
  refuse_symlink_destination(path_);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error(path_ + ": cannot move output into place: " + std::strerror(errno));
  committed_ = true;
  unregister_temporary(slot_);
  slot_ = -1;
}

}  // namespace acccheck
