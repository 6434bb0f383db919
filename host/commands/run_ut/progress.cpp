#include "commands/run_ut/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include <acccheck/csv.hpp>

#include "commands/run_ut/result_files.hpp"

namespace acccheck::host {

using Clock = std::chrono::steady_clock;

namespace {
std::string duration_text(double s) {
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}
}  // namespace

Progress::Progress(std::size_t total, std::FILE* out)
    : total_(total), out_(out), tty_(out && isatty(fileno(out)) != 0), start_(Clock::now()), last_(start_) {}

void Progress::done(std::size_t n) {
  done_ += n;
  draw(false);
}

void Progress::draw(bool force) {
  if (!out_) return;
  auto now = Clock::now();
  double since_last = std::chrono::duration<double>(now - last_).count();
  if (!force && since_last < (tty_ ? 0.1 : 10.0)) return;
  last_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0;
  if (tty_) {
    constexpr int width = 30;
    int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::string bar(static_cast<std::size_t>(filled), '=');
    bar.resize(width, ' ');
    std::fprintf(out_, "\r[%s] %zu/%zu APIs  %.1f/s  ETA %s   ", bar.c_str(), done_, total_, rate,
                 duration_text(eta).c_str());
  } else {
    std::fprintf(out_, "run_ut: %zu/%zu APIs done, %.1f APIs/s, ETA %s\n", done_, total_, rate, duration_text(eta).c_str());
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (!out_) return;
  draw(true);
  if (tty_) std::fputc('\n', out_);
}

void RunSummary::add(const ApiRows& rows, double seconds) {
  const auto& row = rows.result;
  if (row.size() < 3) return;
  if (rows.worker_seconds > 0) {
    ++replayed_;
    operator_seconds_ += rows.operator_seconds;
    worker_seconds_ += rows.worker_seconds;
  }
  ++forward_[row[1]];
  ++backward_[row[2] == " " ? "none" : row[2]];
  if (row[1] == "SKIP" || row[2] == "SKIP") skip_reasons_.add(row[0], row.size() > 3 ? row[3] : "");
  slowest_.emplace_back(seconds, row[0]);
  std::sort(slowest_.begin(), slowest_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (slowest_.size() > 5) slowest_.pop_back();
}

std::size_t RunSummary::count(const std::string& status) const {
  auto it = forward_.find(status);
  return it == forward_.end() ? 0 : it->second;
}

void RunSummary::print(std::FILE* out, const std::string& result_csv, const std::string& details_csv) const {
  auto line = [&](const char* what, const std::map<std::string, std::size_t>& m) {
    std::fprintf(out, "  %-9s", what);
    for (const char* s : {"pass", "Warning", "error", "SKIP", "none"}) {
      auto it = m.find(s);
      if (it != m.end()) std::fprintf(out, "  %s %zu", s, it->second);
    }
    std::fputc('\n', out);
  };
  std::fprintf(out, "run_ut summary:\n");
  line("forward", forward_);
  line("backward", backward_);
  if (!skip_reasons_.empty()) {
    std::ostringstream reasons;
    skip_reasons_.print(reasons);
    std::fputs(reasons.str().c_str(), out);
  }
  if (!slowest_.empty()) {
    std::fprintf(out, "  slowest:");
    for (const auto& [s, api] : slowest_) std::fprintf(out, "  %s %.3fs", printable(api).c_str(), s);
    std::fputc('\n', out);
  }
  if (replayed_ > 0) {
    // Harness time per API: the workers' wall time not spent in operator calls.
    double busy = (wall_ - startup_) * static_cast<double>(workers_);
    std::fprintf(out, "  timing:   %zu APIs replayed in %.2f s (start-up %.2f s, %zu workers); operators %.3f s, "
                 "replay in the workers %.3f s; harness %.1f us per API\n",
                 replayed_, wall_, startup_, workers_, operator_seconds_, worker_seconds_,
                 1e6 * (busy - operator_seconds_) / static_cast<double>(replayed_));
  }
  std::fprintf(out, "  result:  %s\n  details: %s\n", result_csv.c_str(), details_csv.c_str());
}

}  // namespace acccheck::host
