// The writer thread: turns captured records into dump.json / stack.json / dump_tensor_data under
// <dump_path>/step<N>/<rank dir>/, off the training thread. Device statistics are read back and
// stacks symbolised here. A write error (disk full, unwritable folder) is reported once through
// on_error, the dump is marked incomplete on disk (<acccheck/incomplete_dump.hpp>) and the writer
// drops everything after it: the program keeps running.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>

#include "config/dump_options.hpp"
#include "engine/allocator_thresholds.hpp"
#include "engine/captured_record.hpp"
#include "engine/record_queue.hpp"

namespace acccheck::capture {

struct WriterTotals {
  std::size_t entries = 0;
  std::set<std::int64_t> steps;           // steps with at least one entry
  std::size_t late_backward = 0;          // entries (mostly backward) whose step was already closed
  std::string first_late;                 // the first of them
  std::size_t tensor_files = 0;
  std::size_t producer_waits = 0;         // times the program waited for the writer
  std::size_t queue_high_water_bytes = 0;
};

class DumpWriter {
 public:
  DumpWriter(const core::DumpOptions& options, std::string rank_dir,
             std::function<void(const std::string&)> on_error);
  ~DumpWriter();

  // Records go by pointer: a record is 832 bytes (its first values and dimensions inside it), and
  // moving one — out of the spare list, into the queue, out again and back, five to seven times —
  // cost ~250 ns a record when it was 216 bytes of vectors' handles, on a cold queue (perf, dumped
  // gpt: about a tenth of the capture's time); the pointer moves, the record stays put.
  void push(std::unique_ptr<CapturedRecord> record);  // blocks while the queue is full
  // An empty record for the calling thread: one the writer is done with (emptied now, its vectors'
  // memory kept), else a new one. The next one is fetched into the cache meanwhile.
  static std::unique_ptr<CapturedRecord> spare_record();
  // Tops the calling thread's spare records up to `count` new ones, their memory written once:
  // the first dumped step then takes ready records instead of allocating (and faulting in) one per
  // call (engine set-up, on the thread that configures: the one that runs the program's steps).
  static void prepare_spare_records(std::size_t count);
  static std::size_t spare_records_ready();  // the calling thread's
  void end_step(std::int64_t step);  // the files of `step` are finished (in queue order)
  // The pages are faulted in on the writer thread (populate_for_writing, allocator_thresholds.hpp),
  // not on the training thread, which goes on meanwhile.
  void fault_in(const PageRange& pages);
  // Drains the queue, finishes every open step, joins the thread.
  // Steps under dump_path holding a dump.json for this rank that this run did not write (`written`):
  // what an earlier dump into the same folder left, which readers would take for this run's.
  std::vector<std::int64_t> steps_of_earlier_dumps(const std::set<std::int64_t>& written) const;
  WriterTotals finish();
  bool failed() const { return failed_.load(); }
  // For a process about to die (crash signal, _exit): waits until the writer has written what was
  // queued, up to `timeout`, without taking a lock (safe in a signal handler). True when drained.
  bool drain(std::chrono::milliseconds timeout) const;
  // Around fork(): the writer thread is made idle (at most `timeout`) and kept so until
  // resume_after_fork(); a forked child never calls resume (it abandons this writer).
  void pause_for_fork(std::chrono::milliseconds timeout) { queue_.lock_when_idle(timeout); }
  void resume_after_fork() { queue_.unlock_after_fork(); }

 private:
  struct EndStep {
    std::int64_t step;
  };
  using Item = std::variant<std::unique_ptr<CapturedRecord>, EndStep, PageRange>;
  struct StepFiles;

  void run();
  void fail(const std::string& what);  // marks the dump incomplete, reports once, stops writing
  void write_record(CapturedRecord& r);
  void close_step(std::int64_t step);
  StepFiles& files_for(std::int64_t step);
  std::string step_dir(std::int64_t step) const;

  core::DumpOptions options_;
  std::string rank_dir_;
  std::function<void(const std::string&)> on_error_;
  RecordQueue<Item> queue_;
  std::map<std::int64_t, std::unique_ptr<StepFiles>> open_;
  std::set<std::int64_t> closed_;
  // A distinct stack's lines, once, with their stack.json text. Two raw stacks can read the same
  // (frames of LibTorch left out): stack.json groups entries by lines, so lines are interned.
  struct StackLines {
    std::string text;  // the lines (interned_'s key) as stack.json's array at its depth
  };
  const StackLines& intern(const std::vector<std::string>& lines);
  std::unordered_map<std::uint64_t, const StackLines*> described_;  // stack hash → its lines
  std::map<std::vector<std::string>, std::unique_ptr<StackLines>> interned_;
  std::string entry_text_;                 // the record being written, encoded (memory reused)
  std::vector<std::string> tensor_names_;  // its tensors' file names (tensor mode)
  WriterTotals totals_;
  std::atomic<bool> failed_{false};
  std::atomic<std::size_t> in_flight_{0};  // pushed, not yet written
  std::thread thread_;
  bool finished_ = false;
};

std::size_t tensor_bytes(const at::Tensor& t);

}  // namespace acccheck::capture
