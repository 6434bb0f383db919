// An output file whose bytes are written by a second thread while the caller keeps producing:
// the caller fills one buffer while the previous one is written (double buffering). Still
// atomic: the file appears under its name only on commit().
#pragma once

#include <stdexcept>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <acccheck/output_file.hpp>

namespace acccheck::host {

// Writing or syncing failed (disk full, I/O error); what() names the file.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class BackgroundWriter {
 public:
  explicit BackgroundWriter(std::string path);  // throws like AtomicOutputFile
  ~BackgroundWriter();                          // without commit(): the temporary file is removed
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  void append(std::string_view bytes);
  // Commit in two steps so several files sync to disk concurrently: start_commit() hands the last
  // bytes and the commit (fsync + rename) to the thread; finish_commit() waits and rethrows any
  // write error from the background thread.
  void start_commit();
  void finish_commit();  // the file is prepared (synced), not yet visible
  void publish();        // rename into place: call once every file of the set finished its commit

 private:
  void hand_off();  // waits until the writer is idle, gives it the filled buffer
  void run();
  AtomicOutputFile file_;
  std::string filling_, writing_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool has_work_ = false, stop_ = false, commit_requested_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace acccheck::host
