#include "commands/compare/background_writer.hpp"

namespace acccheck::host {

namespace {
constexpr std::size_t kHandOffBytes = 1 << 20;

[[noreturn]] void rethrow_as_write_error(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    throw WriteError(x.what());
  }
}
}  // namespace

BackgroundWriter::BackgroundWriter(std::string path) : file_(std::move(path)), thread_([this] { run(); }) {
  filling_.reserve(kHandOffBytes + 4096);
}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundWriter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return has_work_ || stop_; });
    if (!has_work_) return;
    lock.unlock();
    try {
      file_.write(writing_);
      file_.flush();
      if (commit_requested_) file_.prepare();  // fsync here; publish() renames once every file is ready
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      has_work_ = false;
      changed_.notify_all();
      continue;
    }
    writing_.clear();
    lock.lock();
    has_work_ = false;
    changed_.notify_all();
  }
}

void BackgroundWriter::hand_off() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !has_work_; });
  if (error_) rethrow_as_write_error(error_);
  writing_.swap(filling_);
  has_work_ = true;
  changed_.notify_all();
}

void BackgroundWriter::append(std::string_view bytes) {
  filling_.append(bytes);
  if (filling_.size() >= kHandOffBytes) hand_off();
}

void BackgroundWriter::start_commit() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !has_work_; });
    if (error_) rethrow_as_write_error(error_);
    commit_requested_ = true;  // read by the thread only after it sees the work below
  }
  hand_off();
}

void BackgroundWriter::finish_commit() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !has_work_; });
  if (error_) rethrow_as_write_error(error_);
}

void BackgroundWriter::publish() { file_.publish(); }

}  // namespace acccheck::host
