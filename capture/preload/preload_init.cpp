// libacccheck_preload.so: `acccheck dump -- PROG` puts this library in PROG's LD_PRELOAD with the
// resolved options in ACCCHECK_DUMP_OPTIONS. Its initialiser runs before PROG's main(): it checks
// that PROG resolves the same LibTorch as acccheck, hides itself from PROG's children (unless
// --follow-children), and starts the engine with automatic steps. The summary is printed at exit.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include "engine/capture_engine.hpp"
#include "linkage/libtorch_linkage.hpp"

namespace {

namespace fs = std::filesystem;

// Every distinct LibTorch core library in the process. Two means PROG brought its own LibTorch
// next to the one acccheck was built against: callbacks on one would never see the other's ops.
std::set<std::string> loaded_libtorch() {
  std::set<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        std::string base = fs::path(info->dlpi_name).filename().string();
        if (base.rfind("libtorch_cpu.so", 0) == 0) {
          std::error_code ec;
          auto real = fs::canonical(info->dlpi_name, ec);
          static_cast<std::set<std::string>*>(data)->insert(ec ? info->dlpi_name : real.string());
        }
        return 0;
      },
      &found);
  return found;
}

// What the process has loaded, by path and by file name (the dynamic linker reuses an object whose
// name a DT_NEEDED entry gives instead of searching for it).
std::set<std::string> loaded_objects() {
  std::set<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        auto* set = static_cast<std::set<std::string>*>(data);
        set->insert(info->dlpi_name);
        set->insert(fs::path(info->dlpi_name).filename().string());
        return 0;
      },
      &found);
  return found;
}

// The canonical path of the LibTorch acccheck was built against. A function-local static, not a
// global: this file's initialiser runs before or after globals' constructors, unspecified.
std::string& our_torch() {
  static auto* s = new std::string;
  return *s;
}

[[noreturn]] void refuse(const acccheck::core::ForeignLibTorch& theirs) {
  std::string line = acccheck::core::foreign_libtorch_message(theirs, ACCCHECK_BUILD_TORCH_VERSION, our_torch());
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  ::syscall(SYS_exit_group, acccheck::core::kExitForeignLibTorch);
  __builtin_unreachable();
}

// Refuses a process that has loaded another LibTorch than acccheck's (the program was linked
// against it: `acccheck dump` checks PROG's files before starting it, so this is the last resort).
void refuse_foreign_libtorch() {
  const std::string& ours = our_torch();
  if (ours.empty()) return;
  for (const auto& loaded : loaded_libtorch())
    if (loaded != ours) refuse({loaded, acccheck::core::libtorch_version(loaded)});
}

// Refuses a dlopen (Python's `import torch`, ctypes) that would load another LibTorch, before the
// real dlopen maps it: its static initialisers never run.
void refuse_before_loading(const char* file) {
  const std::string& ours = our_torch();
  if (ours.empty() || !file) return;
  if (auto theirs = acccheck::core::foreign_libtorch(file, ours, loaded_objects())) refuse(*theirs);
}

// Removes this library from LD_PRELOAD and the dump variables, so PROG's children run untouched.
void hide_from_children() {
  if (const char* pre = std::getenv("LD_PRELOAD")) {
    std::string kept, item;
    std::string all = pre;
    for (std::size_t i = 0; i <= all.size(); ++i) {
      if (i == all.size() || all[i] == ':' || all[i] == ' ') {
        if (!item.empty() && item.find("libacccheck_preload") == std::string::npos) kept += (kept.empty() ? "" : ":") + item;
        item.clear();
      } else {
        item += all[i];
      }
    }
    if (kept.empty()) ::unsetenv("LD_PRELOAD");
    else ::setenv("LD_PRELOAD", kept.c_str(), 1);
  }
  ::unsetenv("ACCCHECK_DUMP_OPTIONS");
  ::unsetenv("ACCCHECK_DUMP_ROOT_PID");
}

// A crash: let the writer put what is queued on disk (the files stay unfinished; `acccheck dump`
// finishes them), then die the way the program would have.
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[NSIG];

extern "C" void on_crash_signal(int sig) {
  acccheck::capture::CaptureEngine::instance().drain_before_death(3000);
  ::sigaction(sig, &g_previous[sig], nullptr);
  ::raise(sig);
}

// SIGTERM / SIGHUP with no handler of the program's: the dump is finished properly (stack.json
// included) before the signal takes its default action. The handler only writes the signal number
// to a pipe and waits (at most 5 s, lock-free) while a thread of ours, outside signal context,
// finishes the dump; then the signal acts. If that thread cannot finish in time (the interrupted
// thread holds a lock it needs), the signal acts anyway and `acccheck dump` repairs dump.json.
// In a forked child (no such thread) the signal acts at once.
constexpr int kTerminationSignals[] = {SIGTERM, SIGHUP};
int g_term_pipe[2] = {-1, -1};
pid_t g_term_pid = 0;
std::atomic<bool> g_term_done{false};

extern "C" void on_termination_signal(int sig) {
  unsigned char b = static_cast<unsigned char>(sig);
  if (::getpid() == g_term_pid && ::write(g_term_pipe[1], &b, 1) == 1) {
    for (int waited_ms = 0; !g_term_done.load() && waited_ms < 5000; waited_ms += 2) {
      struct timespec ts {0, 2'000'000};
      ::nanosleep(&ts, nullptr);
    }
  }
  ::sigaction(sig, &g_previous[sig], nullptr);
  ::raise(sig);
}

void finish_for_termination() {
  sigset_t term;
  sigemptyset(&term);
  for (int sig : kTerminationSignals) sigaddset(&term, sig);
  ::pthread_sigmask(SIG_BLOCK, &term, nullptr);  // delivered to the program's threads, not this one
  unsigned char b = 0;
  while (::read(g_term_pipe[0], &b, 1) < 0 && errno == EINTR) {
  }
  try {
    std::string summary = acccheck::capture::CaptureEngine::instance().finish();
    if (!summary.empty()) std::cerr << summary << "\n";
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << e.what() << "\n";
  }
  g_term_done.store(true);
}

void install_crash_handlers() {
  if (::pipe2(g_term_pipe, O_CLOEXEC) == 0) {
    g_term_pid = ::getpid();
    std::thread(finish_for_termination).detach();
    for (int sig : kTerminationSignals) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = on_termination_signal;
      sa.sa_flags = SA_NODEFER;  // the handler re-raises the signal itself
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, &g_previous[sig]);
    }
  }
  for (int sig : kCrashSignals) {
    struct sigaction sa {};
    sa.sa_handler = on_crash_signal;
    sa.sa_flags = SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, &g_previous[sig]);
  }
}

void finish_at_exit() {
  try {
    std::string s = acccheck::capture::CaptureEngine::instance().finish();
    if (!s.empty()) std::cerr << s << "\n";
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << e.what() << "\n";
  }
}

__attribute__((constructor)) void acccheck_preload_start() {
  const char* text = std::getenv("ACCCHECK_DUMP_OPTIONS");
  if (!text) return;
  // The LibTorch acccheck was built against, as the build found it. A program linked against another
  // one is refused by `acccheck dump` before it starts (and here, before main(), if that was missed);
  // one that loads it later (Python importing another torch) before its dlopen loads anything.
  std::error_code ec;
  our_torch() = fs::canonical(ACCCHECK_BUILD_TORCH_LIB, ec).string();
  if (ec) our_torch().clear();
  refuse_foreign_libtorch();
  acccheck::core::DumpOptions o;
  try {
    o = acccheck::core::parse_dump_options(text, "ACCCHECK_DUMP_OPTIONS");
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << e.what() << "\n";
    std::_Exit(2);
  }
  o.auto_step = true;
  // A followed child without a rank of its own dumps beside the target, in its own folder.
  const char* root = std::getenv("ACCCHECK_DUMP_ROOT_PID");
  bool is_root = !root || std::to_string(::getpid()) == root;
  bool ranked = std::getenv("RANK") || std::getenv("OMPI_COMM_WORLD_RANK") || std::getenv("PMI_RANK") ||
                std::getenv("SLURM_PROCID");
  if (!is_root && !ranked) o.dump_path = acccheck::capture::CaptureEngine::child_dump_path(o.dump_path);
  if (!root) ::setenv("ACCCHECK_DUMP_ROOT_PID", std::to_string(::getpid()).c_str(), 1);
  if (!o.follow_children) hide_from_children();
  try {
    auto& engine = acccheck::capture::CaptureEngine::instance();
    engine.configure(o);
    engine.start();
    std::atexit(finish_at_exit);
    install_crash_handlers();
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << e.what() << "; the program runs without dumping\n";
  }
}

}  // namespace

// _exit and _Exit skip exit handlers: the preloaded engine interposes them to finish the dump first
// (only in the process that owns the engine; a forked child just exits).
extern "C" {
__attribute__((visibility("default"))) [[noreturn]] void _exit(int status) {
  auto& engine = acccheck::capture::CaptureEngine::instance();
  if (engine.owned_by_this_process() && !engine.finished()) {
    std::string s = engine.finish();
    if (!s.empty()) std::fprintf(stderr, "%s\n", s.c_str());
  }
  ::syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
__attribute__((visibility("default"))) [[noreturn]] void _Exit(int status) noexcept { _exit(status); }

// Libraries loaded later (Python's `import torch`) are checked for a foreign LibTorch before they
// load, and the process again after (a library the check could not read).
__attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  using Real = void* (*)(const char*, int);
  static Real real = reinterpret_cast<Real>(::dlsym(RTLD_NEXT, "dlopen"));
  if (!(mode & RTLD_NOLOAD)) refuse_before_loading(file);
  void* handle = real(file, mode);
  if (handle) refuse_foreign_libtorch();
  return handle;
}
}
