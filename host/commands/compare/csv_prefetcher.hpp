// Reads CSV records on a second thread, a bounded number of chunks ahead of the consumer, so
// parsing the NPU file overlaps with loading the GPU index and with judging (2 cores here).
// Errors are handed over in order: the consumer sees every good record before the error.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <acccheck/csv.hpp>

namespace acccheck::host {

class CsvPrefetcher {
 public:
  struct Record {
    std::vector<std::string> fields;
    std::size_t line = 0;
  };

  explicit CsvPrefetcher(CsvReader& reader, std::size_t chunk_rows = 2048, std::size_t max_chunks = 8);
  ~CsvPrefetcher();
  CsvPrefetcher(const CsvPrefetcher&) = delete;
  CsvPrefetcher& operator=(const CsvPrefetcher&) = delete;

  // The next record, or nullptr at the end; rethrows the reader's error when reached.
  const Record* next();

 private:
  void produce();
  using Chunk = std::vector<Record>;
  CsvReader& reader_;
  const std::size_t chunk_rows_, max_chunks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Chunk> ready_;
  std::vector<Chunk> spare_;  // consumed chunks handed back: their strings keep their buffers
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  Chunk current_;
  std::size_t pos_ = 0;
  std::thread thread_;
};

}  // namespace acccheck::host
