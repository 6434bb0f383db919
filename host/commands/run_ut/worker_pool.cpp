#include "commands/run_ut/worker_pool.hpp"

#include "cli/companion_files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <thread>

#include <acccheck/json.hpp>

extern char** environ;

namespace fs = std::filesystem;

namespace acccheck::host {

using Clock = std::chrono::steady_clock;

struct WorkerPool::Worker {
  pid_t pid = -1;
  int to_worker = -1, from_worker = -1;
  std::string buffer;
  bool ready = false;
  // Jobs sent and not answered yet, in order: the worker runs them one after another, so the
  // first is the one running (started at `started`); the rest wait in its pipe. Keeping a few in
  // flight hides the round trip between host and worker for small APIs.
  std::deque<std::size_t> in_flight;
  Clock::time_point started;
  // Job lines the worker's pipe has not taken yet (from `sent` on). The pipe is written without
  // blocking: a worker writing a long reply waits for this process to read it, and a job line longer
  // than the pipe (a foreach call over hundreds of tensors: 67 KB) written blocking would wait for
  // the worker to read — each waiting on the other for ever.
  std::string outgoing;
  std::size_t sent = 0;
};

namespace {

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

void write_line(int fd, const std::string& line) {
  std::string s = line + "\n";
  std::size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EPIPE: the worker died; its read side reports it
    }
    done += static_cast<std::size_t>(n);
  }
}

// Writes what the worker's pipe (`fd`, non-blocking) takes now of `outgoing` from `sent` on.
void send_some(int fd, std::string& outgoing, std::size_t& sent) {
  while (sent < outgoing.size()) {
    ssize_t n = ::write(fd, outgoing.data() + sent, outgoing.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // full: the rest at the next turn
    if (n < 0) break;  // EPIPE: the worker died; its read side reports it
    sent += static_cast<std::size_t>(n);
  }
  outgoing.clear();
  sent = 0;
}

// Reads what is available; false at end of file.
bool read_some(int fd, std::string& buffer) {
  char buf[65536];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  buffer.append(buf, static_cast<std::size_t>(n));
  return true;
}

std::optional<std::string> take_line(std::string& buffer) {
  auto nl = buffer.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buffer.substr(0, nl);
  buffer.erase(0, nl + 1);
  return line;
}

}  // namespace

std::string WorkerPool::find_executable() {
  if (const char* e = std::getenv("ACCCHECK_REPLAY_WORKER"); e && *e) return e;
  return find_companion({"libexec/acccheck/acccheck-replay", "../libexec/acccheck/acccheck-replay"});
}

WorkerPool::WorkerPool(WorkerSpec spec, std::size_t n) : spec_(std::move(spec)), workers_(n) {
  signal(SIGPIPE, SIG_IGN);
  for (std::size_t i = 0; i < workers_.size(); ++i) start(workers_[i], i);
  // Wait for every worker's first line: "ready", or the fatal reason (the same for all: config).
  auto deadline = Clock::now() + spec_.startup_timeout;
  for (auto& w : workers_) {
    while (!w.ready) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) throw std::runtime_error("the replay worker did not start within " +
                                              std::to_string(spec_.startup_timeout.count()) + " s");
      pollfd p{w.from_worker, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) < 0 && errno != EINTR) throw std::runtime_error("poll failed");
      bool open = read_some(w.from_worker, w.buffer);
      if (auto line = take_line(w.buffer)) {
        Json j = parse_json(*line, "worker reply");
        if (const Json* f = j.find("fatal")) throw std::runtime_error(f->as_string());
        w.ready = true;
      } else if (!open) {
        int status = 0;
        waitpid(w.pid, &status, 0);
        w.pid = -1;
        throw std::runtime_error("the replay worker " + spec_.executable + " died while starting" +
                                 (WIFSIGNALED(status) ? " (" + signal_name(WTERMSIG(status)) + ")" : ""));
      }
    }
  }
}

WorkerPool::~WorkerPool() {
  for (auto& w : workers_) stop(w, false);
}

void WorkerPool::start(Worker& w, std::size_t slot) {
  if (spec_.executable.empty() || !fs::exists(spec_.executable))
    throw std::runtime_error("the replay worker (acccheck-replay) was not found next to acccheck; set "
                             "ACCCHECK_REPLAY_WORKER or rebuild with LibTorch");
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("cannot create pipes");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  char* argv[] = {const_cast<char*>(spec_.executable.c_str()), nullptr};
  std::vector<std::string> extra;
  if (spec_.threads_per_worker > 0)
    for (const char* var : {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"})
      if (!std::getenv(var)) extra.push_back(std::string(var) + "=" + std::to_string(spec_.threads_per_worker));
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  for (auto& e : extra) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, spec_.executable.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    throw std::runtime_error(spec_.executable + ": cannot start: " + strerror(rc));
  }
  w = Worker{};
  w.pid = pid;
  w.to_worker = in[1];
  w.from_worker = out[0];
  write_line(w.to_worker, spec_.config_line_for(slot));
  ::fcntl(w.to_worker, F_SETFL, ::fcntl(w.to_worker, F_GETFL) | O_NONBLOCK);  // jobs: send_some
}

void WorkerPool::stop(Worker& w, bool kill_it) {
  if (w.to_worker >= 0) ::close(w.to_worker);
  if (w.from_worker >= 0) ::close(w.from_worker);
  w.to_worker = w.from_worker = -1;
  if (w.pid > 0) {
    if (kill_it) ::kill(w.pid, SIGKILL);
    int status;
    waitpid(w.pid, &status, 0);
  }
  w.pid = -1;
}

// How the host waits for replies. Blocking in poll() made every reply's write() wake this process
// on the other core — a cross-CPU wake-up the worker paid for (25 µs per reply measured on a VM,
// most of a medium API's reply time). So while replies are expected the host naps instead and
// then takes whatever arrived; no one waits on the pipe, so a worker's write is a plain copy.
// Each worker is kept kNap's worth of work ahead (its window: replies take ≤ kNap to be seen).
constexpr auto kNap = std::chrono::microseconds(1000);
constexpr std::size_t kMinWindow = 4, kMaxWindow = 512;

void WorkerPool::run(const std::vector<std::size_t>& jobs, const std::function<std::string(std::size_t)>& job_line,
                     const std::function<void(const JobOutcome&)>& on_done) {
  std::deque<std::size_t> queue(jobs.begin(), jobs.end());
  std::size_t running = 0;
  // Jobs in flight per worker: 2·kNap over the mean time per job so far (at least kMinWindow).
  double mean_job_seconds = 0;
  std::size_t finished = 0;
  auto window = [&] {
    if (finished == 0 || mean_job_seconds <= 0) return kMinWindow;
    double w = 2.0 * std::chrono::duration<double>(kNap).count() / mean_job_seconds;
    return std::clamp(static_cast<std::size_t>(w) + 1, kMinWindow, kMaxWindow);
  };
  // Jobs to run with nothing else in flight in their worker (sent with "alone": true): after a
  // crash of an overlapping worker, the two it may have been running (the one being compared and
  // the next one's operators).
  std::set<std::size_t> alone;
  auto line_for = [&](std::size_t job) {
    std::string line = job_line(job);
    if (alone.count(job) && !line.empty() && line[0] == '{') line.insert(1, "\"alone\":true,");
    return line;
  };
  auto dispatch = [&](Worker& w) {
    if (!w.ready) return;
    const std::size_t limit = window();
    while (!queue.empty() && w.in_flight.size() < limit) {
      if (w.in_flight.empty()) w.started = Clock::now();
      w.in_flight.push_back(queue.front());
      queue.pop_front();
      ++running;
      w.outgoing += line_for(w.in_flight.back());
      w.outgoing += '\n';
    }
    send_some(w.to_worker, w.outgoing, w.sent);
  };
  auto finish = [&](Worker& w, std::optional<std::string> reply, std::string failure) {
    JobOutcome o;
    o.job = w.in_flight.front();
    o.reply = std::move(reply);
    o.failure = std::move(failure);
    o.seconds = std::chrono::duration<double>(Clock::now() - w.started).count();
    w.in_flight.pop_front();
    w.started = Clock::now();  // the next one starts now
    --running;
    ++finished;
    mean_job_seconds += (o.seconds - mean_job_seconds) / static_cast<double>(std::min<std::size_t>(finished, 64));
    on_done(o);
  };
  // After a crash or time-out the jobs queued behind the failed one go back to the front.
  auto requeue_rest = [&](Worker& w) {
    while (!w.in_flight.empty()) {
      queue.push_front(w.in_flight.back());
      w.in_flight.pop_back();
      --running;
    }
  };
  for (auto& w : workers_) dispatch(w);
  while (running > 0 || !queue.empty()) {
    std::vector<pollfd> fds;
    int wait_ms = 1000;
    for (auto& w : workers_) {
      fds.push_back({w.from_worker, POLLIN, 0});
      if (!w.in_flight.empty()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(w.started + spec_.timeout - Clock::now()).count();
        wait_ms = static_cast<int>(std::max<long long>(0, std::min<long long>(wait_ms, left)));
      }
    }
    int ready = poll(fds.data(), fds.size(), 0);
    if (ready == 0 && running > 0) {
      std::this_thread::sleep_for(std::min<std::chrono::microseconds>(kNap, std::chrono::milliseconds(wait_ms)));
      ready = poll(fds.data(), fds.size(), 0);
    } else if (ready == 0) {
      ready = poll(fds.data(), fds.size(), wait_ms);  // a replacement worker starting: nothing to hurry
    }
    if (ready < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      Worker& w = workers_[i];
      bool open = true;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) open = read_some(w.from_worker, w.buffer);
      while (auto line = take_line(w.buffer)) {
        if (!w.ready) {
          w.ready = true;  // a replacement worker's "ready"
        } else if (!w.in_flight.empty()) {
          finish(w, std::move(*line), "");
        }
      }
      if (!open) {
        // The worker died: the API it was running is the one that killed it. With overlap that is
        // one of the first two in flight; each runs again alone, and the one that dies alone is it.
        int status = 0;
        waitpid(w.pid, &status, 0);
        w.pid = -1;
        std::string why = WIFSIGNALED(status) ? "crashed (" + signal_name(WTERMSIG(status)) + ")"
                                              : "worker exited with status " + std::to_string(WEXITSTATUS(status));
        stop(w, false);
        if (!w.in_flight.empty()) {
          const std::size_t front = w.in_flight.front();
          if (!spec_.overlap || alone.count(front)) {
            finish(w, std::nullopt, why);
          } else {
            for (std::size_t k = 0; k < std::min<std::size_t>(2, w.in_flight.size()); ++k) alone.insert(w.in_flight[k]);
          }
        }
        requeue_rest(w);
        start(w, i);
      } else if (!w.in_flight.empty() && Clock::now() - w.started >= spec_.timeout) {
        stop(w, true);
        finish(w, std::nullopt, "timed out after " + std::to_string(spec_.timeout.count()) + " s");
        requeue_rest(w);
        start(w, i);
      }
      dispatch(w);
    }
  }
}

}  // namespace acccheck::host
