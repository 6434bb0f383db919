#include "engine/dump_writer.hpp"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <filesystem>


#include <acccheck/incomplete_dump.hpp>

#include "engine/capture_mode.hpp"
#include "engine/record_building.hpp"
#include "torch_support/tensor_file_writer.hpp"
#include "engine/tensor_statistics.hpp"

namespace acccheck::capture {

namespace fs = std::filesystem;

std::size_t tensor_bytes(const at::Tensor& t) {
  return t.defined() ? static_cast<std::size_t>(t.numel()) * t.element_size() : 0;
}

namespace {

// mkdir -p that refuses to go through a symbolic link.
void make_dirs(const std::string& dir) {
  fs::path p;
  for (const auto& part : fs::path(dir)) {
    p /= part;
    if (p == p.root_path() || part.empty()) continue;
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) throw std::runtime_error(p.string() + ": refusing to write through a symbolic link");
      if (!S_ISDIR(st.st_mode)) throw std::runtime_error(p.string() + ": exists and is not a folder");
      continue;
    }
    if (::mkdir(p.c_str(), 0750) != 0 && errno != EEXIST)
      throw std::runtime_error(p.string() + ": cannot create the folder: " + std::strerror(errno));
  }
}

void write_new_file(const std::string& path, const char* data, std::size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd < 0) throw std::runtime_error(path + ": " + (errno == ELOOP ? "refusing to write through a symbolic link" : std::strerror(errno)));
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw std::runtime_error(path + ": write failed: " + std::strerror(e));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  ::close(fd);
}

// Temp file + rename, never through a symlink; no fsync (see StreamingDumpJsonWriter::finish).
void write_whole_file(const std::string& path, const std::string& text) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw std::runtime_error(path + ": refusing to write through a symbolic link");
  std::string temp = path + ".tmp-" + std::to_string(::getpid());
  write_new_file(temp, text.data(), text.size());
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error(path + ": " + std::strerror(e));
  }
}

}  // namespace

struct DumpWriter::StepFiles {
  std::string dir;
  std::unique_ptr<StreamingDumpJsonWriter> json;
  // stack.json's groups in first-use order: the lines, the entries that have them.
  std::vector<std::pair<const StackLines*, std::vector<std::string>>> stack_groups;
  std::unordered_map<const StackLines*, std::size_t> group_of;
  bool tensor_dir_made = false;

  // stack.json as the SDK's stack_json_text writes it (json.dump indent=1).
  std::string stack_json() const {
    if (stack_groups.empty()) return "{}";
    std::string out = "{";
    for (std::size_t n = 0; n < stack_groups.size(); ++n) {
      out += n ? ",\n \"" : "\n \"";
      out += std::to_string(n);
      out += "\": [\n  [";
      const auto& names = stack_groups[n].second;
      for (std::size_t k = 0; k < names.size(); ++k) {
        out += k ? ",\n   " : "\n   ";
        append_json_string(out, names[k]);
      }
      out += "\n  ],\n  ";
      out += stack_groups[n].first->text;
      out += "\n ]";
    }
    out += "\n}";
    return out;
  }
};

const DumpWriter::StackLines& DumpWriter::intern(const std::vector<std::string>& lines) {
  auto& slot = interned_[lines];
  if (!slot) {
    slot = std::make_unique<StackLines>();
    std::string& t = slot->text;
    if (lines.empty()) {
      t = "[]";
    } else {
      t = "[";
      for (std::size_t k = 0; k < lines.size(); ++k) {
        t += k ? ",\n   " : "\n   ";
        append_json_string(t, lines[k]);
      }
      t += "\n  ]";
    }
  }
  return *slot;
}

DumpWriter::DumpWriter(const core::DumpOptions& options, std::string rank_dir,
                       std::function<void(const std::string&)> on_error)
    : options_(options),
      rank_dir_(std::move(rank_dir)),
      on_error_(std::move(on_error)),
      queue_(options.queue_size, options.queue_bytes) {
  thread_ = std::thread([this] { run(); });
}

DumpWriter::~DumpWriter() {
  if (!finished_) finish();
}

namespace {

// Records the writer is done with, kept on the thread that captures (where their memory came
// from) for its next calls: a recycled record's vectors need no allocation. Up to the queue's
// capacity in records: with fewer, a writer that hands back a long step's records at once had the
// surplus destroyed and the next step's records allocated anew (most of a small step's records
// were new ones with a pool of 64).
thread_local std::vector<std::unique_ptr<CapturedRecord>> t_spare_records;

// A new record with room for a typical call, not grown element by element (a reallocation per
// doubling of each vector, on the training thread). `touch`: its memory written once (faulted in).
std::unique_ptr<CapturedRecord> new_record(bool touch) {
  auto room = [touch](auto& v, std::size_t n) {
    if (!touch) return v.reserve(n);
    v.resize(n);  // written: faulted in now
    v.clear();    // the capacity stays
  };
  auto r = std::make_unique<CapturedRecord>();  // values and dims: room for a typical call inside it
  room(r->stack.python, kPythonStackFrames);
  room(r->stack.frames, kRawStackFrames + 1);  // capture_raw_stack's frames and its own
  return r;
}

// Lines fetched for writing. GCC makes __builtin_prefetch(p, 1, ...) a PREFETCHT0 unless the target
// has PRFCHW, which plain x86-64 has not (and a target("prfchw") helper was inlined back into the
// read form): a read prefetch, so the line arrived shared and the first store still waited for
// ownership — a second trip when the writer thread's core held the line, as it does for a record
// it has just read. PREFETCHW asks for the line to write; CPUs without it (CPUID 0x80000001 ECX
// bit 8) get the read prefetch. Paired, gpt's dumped steps: bench/RESULTS.md, session (12).
#if defined(__x86_64__)
bool cpu_has_prefetchw() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW);
}
const bool kHasPrefetchw = cpu_has_prefetchw();
#endif

void prefetch_for_writing(const char* p, std::size_t bytes) {
#if defined(__x86_64__)
  if (kHasPrefetchw) {
    for (std::size_t line = 0; line < bytes; line += 64) asm volatile("prefetchw %0" : : "m"(p[line]));
    return;
  }
#endif
  for (std::size_t line = 0; line < bytes; line += 64) __builtin_prefetch(p + line, 1, 3);
}

}  // namespace

void DumpWriter::prepare_spare_records(std::size_t count) {
  t_spare_records.reserve(count);
  while (t_spare_records.size() < count) t_spare_records.push_back(new_record(true));
}

std::size_t DumpWriter::spare_records_ready() { return t_spare_records.size(); }

std::unique_ptr<CapturedRecord> DumpWriter::spare_record() {
  // Until the writer hands records back, beyond those prepared at set-up, each call makes one.
  if (t_spare_records.empty()) return new_record(false);
  std::unique_ptr<CapturedRecord> r = std::move(t_spare_records.back());
  t_spare_records.pop_back();
  r->clear();  // its lines were fetched while the previous call ran (below)
  // The next call's record, fetched for writing now: a step's records go round the writer and come
  // back evicted, and the lines a record touches were cache misses on the training thread, each in
  // turn (~1-2 % of a dumped step, bench/RESULTS.md). One record ahead is in time and stays in the cache: the
  // next call comes microseconds later; 400 fetched when a step began were evicted again.
  if (!t_spare_records.empty()) {
    prefetch_for_writing(reinterpret_cast<const char*>(t_spare_records.back().get()), sizeof(CapturedRecord));
  }
  return r;
}

void DumpWriter::push(std::unique_ptr<CapturedRecord> record) {
  if (failed_) return;
  std::size_t bytes = 0;
  if (record->side_used)
    for (const auto& t : record->tensors) bytes += tensor_bytes(t.second);
  in_flight_.fetch_add(1);
  thread_local std::vector<Item> retired;
  queue_.push(Item(std::move(record)), bytes, &retired);
  for (auto& item : retired)
    if (auto* r = std::get_if<std::unique_ptr<CapturedRecord>>(&item); r && t_spare_records.size() < options_.queue_size) {
      // Emptied when it is taken again (spare_record), its lines then in the cache — not all of a
      // batch here, cold. Except what holds tensors: freed now, on their thread.
      if ((*r)->side_used) (*r)->clear();
      t_spare_records.push_back(std::move(*r));
    }
  retired.clear();
}

void DumpWriter::end_step(std::int64_t step) {
  in_flight_.fetch_add(1);
  queue_.push(Item(EndStep{step}), 0);
}

void DumpWriter::fault_in(const PageRange& pages) {
  in_flight_.fetch_add(1);
  queue_.push(Item(pages), 0);
}

bool DumpWriter::drain(std::chrono::milliseconds timeout) const {
  constexpr long kPollNs = 2'000'000;
  for (long waited = 0; in_flight_.load() > 0 && !failed_.load(); waited += kPollNs) {
    if (waited >= timeout.count() * 1'000'000) return false;
    struct timespec ts {0, kPollNs};
    ::nanosleep(&ts, nullptr);  // async-signal-safe
  }
  return true;
}

std::string DumpWriter::step_dir(std::int64_t step) const {
  return (fs::path(options_.dump_path) / ("step" + std::to_string(step)) / rank_dir_).string();
}

std::vector<std::int64_t> DumpWriter::steps_of_earlier_dumps(const std::set<std::int64_t>& written) const {
  std::vector<std::int64_t> older;
  std::error_code ec;
  for (fs::directory_iterator it(options_.dump_path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 5 || name.compare(0, 4, "step") != 0 || name.find_first_not_of("0123456789", 4) != std::string::npos ||
        name.size() > 22)
      continue;
    const std::int64_t step = std::stoll(name.substr(4));
    std::error_code exists;
    if (!written.count(step) && fs::exists(it->path() / rank_dir_ / "dump.json", exists)) older.push_back(step);
  }
  std::sort(older.begin(), older.end());
  return older;
}

DumpWriter::StepFiles& DumpWriter::files_for(std::int64_t step) {
  auto it = open_.find(step);
  if (it != open_.end()) return *it->second;
  auto f = std::make_unique<StepFiles>();
  f->dir = step_dir(step);
  make_dirs(f->dir);
  remove_incomplete_marker(f->dir);  // of an earlier dump into this folder
  DumpHeader header;
  header.task = options_.task;
  header.level = "L1";
  if (options_.tensor_mode()) header.dump_data_dir = fs::absolute(fs::path(f->dir) / "dump_tensor_data").string();
  f->json = std::make_unique<StreamingDumpJsonWriter>((fs::path(f->dir) / "dump.json").string(), header);
  return *open_.emplace(step, std::move(f)).first->second;
}

void DumpWriter::write_record(CapturedRecord& c) {
  if (closed_.count(c.step)) {
    if (totals_.late_backward++ == 0) totals_.first_late = c.entry_name();
    return;
  }
  StepFiles& f = files_for(c.step);
  if (c.side_used && !c.pending_statistics.empty()) {  // device statistics, read back here: into their tensors' values
    std::size_t ordinal = 0, next = 0;
    for (FlatValue& v : c.values) {
      if (v.kind != FlatValue::Kind::tensor) continue;
      if (next < c.pending_statistics.size() && c.pending_statistics[next].first == ordinal)
        apply_pending_statistics(c.pending_statistics[next++].second, v.stats);
      ++ordinal;
    }
  }
  entry_text_.clear();
  tensor_names_.clear();
  append_entry_json(c, options_.tensor_mode(), entry_text_, &tensor_names_);
  if (c.side_used && !c.tensors.empty()) {  // the files before the entry that names them
    std::string tdir = (fs::path(f.dir) / "dump_tensor_data").string();
    if (!f.tensor_dir_made) {
      make_dirs(tdir);
      f.tensor_dir_made = true;
    }
    for (auto& [ordinal, t] : c.tensors) {
      // Python's torch.save layout: a contiguous CPU tensor (dump-format.md §2.6).
      std::vector<char> bytes = core::tensor_file_bytes(t);
      write_new_file((fs::path(tdir) / tensor_names_.at(ordinal)).string(), bytes.data(), bytes.size());
      ++totals_.tensor_files;
    }
    c.tensors.clear();
  }
  f.json->write_encoded(entry_text_);
  ++totals_.entries;
  totals_.steps.insert(c.step);
  if (c.has_stack) {
    auto h = c.stack.hash();
    auto it = described_.find(h);
    if (it == described_.end())
      it = described_.emplace(h, &intern(describe_stack(c.stack, options_.stack == core::StackMode::full))).first;
    auto [group, added] = f.group_of.emplace(it->second, f.stack_groups.size());
    if (added) f.stack_groups.emplace_back(it->second, std::vector<std::string>{});
    f.stack_groups[group->second].second.push_back(c.entry_name());
  }
}

void DumpWriter::close_step(std::int64_t step) {
  closed_.insert(step);
  auto it = open_.find(step);
  if (it == open_.end()) return;
  StepFiles& f = *it->second;
  f.json->finish();
  if (options_.stack != core::StackMode::off) write_whole_file((fs::path(f.dir) / "stack.json").string(), f.stack_json());
  // Module structure is empty at API level (msprobe writes "{}" at L1).
  write_whole_file((fs::path(f.dir) / "construct.json").string(), "{}");
  open_.erase(it);
}

void DumpWriter::fail(const std::string& what) {
  failed_ = true;
  // The dump lost data: every step still being written, and the dump's root, say so on disk
  // (incomplete_dump.hpp). Steps already finished are whole and stay unmarked.
  const std::string reason = "writing the dump failed, entries after this point are missing: " + what;
  for (const auto& [step, files] : open_) mark_incomplete(files->dir, reason);
  mark_incomplete(options_.dump_path, reason);
  on_error_(what);
}

void DumpWriter::run() {
  // Termination signals go to the program's threads, never to the writer: their handler waits for
  // the dump to be finished, which joins this thread.
  sigset_t term;
  sigemptyset(&term);
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) sigaddset(&term, sig);
  ::pthread_sigmask(SIG_BLOCK, &term, nullptr);
  // Named, so that `top -H`, gdb and perf tell it from the program's own threads.
  ::pthread_setname_np(::pthread_self(), "acccheck-writer");
  // Everything the writer runs (statistics read-back, .pt pickling) stays out of the dump: its calls
  // are not captured (it was started by a thread whose calls may be) and no profiler sees them.
  capture_calls_on_this_thread(false);
  at::RecordFunctionGuard no_record(false);  // RecordFunction off on this thread
  std::vector<Item> batch;
  while (queue_.pop_all(batch)) {
    for (auto& item : batch) {
      if (!failed_) {
        try {
          if (auto* r = std::get_if<std::unique_ptr<CapturedRecord>>(&item)) write_record(**r);
          else if (auto* e = std::get_if<EndStep>(&item)) close_step(e->step);
          else populate_for_writing(std::get<PageRange>(item));
          // The entries reach the files whenever the writer has caught up (nothing else in flight:
          // a producer counts an item before it queues it): one write per batch while the program
          // is faster than the writer (a short step's dozens of records had made one system call
          // each, and the writer the bottleneck). When in_flight_ drops to zero — what drain()
          // waits for — every entry written so far is in the files.
          if (in_flight_.load() == 1)
            for (auto& [step, files] : open_) files->json->flush();
        } catch (const std::exception& e) {
          fail(e.what());
        }
      }  // after an error the queue is drained without writing
      in_flight_.fetch_sub(1);
    }
    queue_.retire(batch);
  }
}

WriterTotals DumpWriter::finish() {
  if (finished_) return totals_;
  finished_ = true;
  queue_.close();
  if (thread_.joinable()) thread_.join();
  if (!failed_) {
    try {
      std::vector<std::int64_t> left;
      for (const auto& kv : open_) left.push_back(kv.first);
      for (auto s : left) close_step(s);
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }
  totals_.producer_waits = queue_.producer_waits();
  totals_.queue_high_water_bytes = queue_.high_water_bytes();
  return totals_;
}

}  // namespace acccheck::capture
