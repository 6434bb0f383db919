#include "commands/compare/csv_prefetcher.hpp"

namespace acccheck::host {

CsvPrefetcher::CsvPrefetcher(CsvReader& reader, std::size_t chunk_rows, std::size_t max_chunks)
    : reader_(reader), chunk_rows_(chunk_rows), max_chunks_(max_chunks), thread_([this] { produce(); }) {}

CsvPrefetcher::~CsvPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CsvPrefetcher::produce() {
  try {
    while (true) {
      Chunk chunk;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!spare_.empty()) {
          chunk = std::move(spare_.back());
          spare_.pop_back();
        }
      }
      chunk.resize(chunk_rows_);
      std::size_t n = 0;
      while (n < chunk_rows_ && reader_.next(chunk[n].fields)) {
        chunk[n].line = reader_.record_line();
        ++n;
      }
      chunk.resize(n);
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < max_chunks_; });
      if (stop_) return;
      if (n > 0) ready_.push_back(std::move(chunk));
      if (n < chunk_rows_) {
        done_ = true;
        changed_.notify_all();
        return;
      }
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    done_ = true;
    changed_.notify_all();
  }
}

const CsvPrefetcher::Record* CsvPrefetcher::next() {
  if (pos_ < current_.size()) return &current_[pos_++];
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || done_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return nullptr;
  }
  if (!current_.empty()) spare_.push_back(std::move(current_));
  current_ = std::move(ready_.front());
  ready_.pop_front();
  pos_ = 0;
  changed_.notify_all();
  return &current_[pos_++];
}

}  // namespace acccheck::host
