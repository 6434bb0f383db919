#include "plugin_host/device_prober.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <acccheck/device_probe.hpp>

#include "plugin_host/plugin_loader.hpp"
#include "plugin_host/plugin_registry.hpp"

extern char** environ;

namespace acccheck::core {

namespace {

std::string clean(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return out;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "crashed while loading or probing (signal " + std::to_string(sig) + ": " + (name ? name : "?") + ")";
  }
  return "probe process exited with code " + std::to_string(WEXITSTATUS(status)) + " while loading";
}

}  // namespace

int run_probe_child(const std::vector<std::string>& args) {
  std::vector<std::string> files = args;
  if (args.size() == 1 && args[0] == "-") {
    files.clear();
    for (std::string line; std::getline(std::cin, line);)
      if (!line.empty()) files.push_back(line);
  }
  for (const auto& file : files) {
    std::cout << "probing\t" << clean(file) << std::endl;
    auto outcome = load_plugin_file(file, PluginKind::device);
    if (auto* r = std::get_if<Refusal>(&outcome)) {
      std::cout << "refused\t" << clean(file) << "\t" << clean(r->reason) << std::endl;
      continue;
    }
    const auto& p = std::get<LoadedPlugin>(outcome);
    std::string status;
    try {
      auto* device = dynamic_cast<DeviceProbe*>(p.instance.get());
      device->configure(PluginRegistry::sidecar_settings(p));
      Availability a = device->available();
      status = a.available ? "available" : "unavailable: " + a.reason;
    } catch (const std::exception& e) {
      status = std::string("error: ") + e.what();
    }
    std::cout << "loaded\t" << clean(file) << "\t" << to_string(p.kind) << "\t" << clean(p.name) << "\t"
              << clean(p.version) << "\t" << p.abi_major << "." << p.abi_minor << "\t" << clean(p.torch_version) << "\t"
              << clean(p.description) << "\t" << clean(status) << std::endl;
  }
  return 0;
}

std::vector<ProbeResult> probe_devices_in_child(const std::vector<std::string>& files, int timeout_seconds) {
  std::vector<ProbeResult> results;
  std::size_t next = 0;
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  while (next < files.size()) {
    int fds[2], in[2];
    if (::pipe(fds) != 0) break;
    if (::pipe(in) != 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      break;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    // The files go through the child's stdin, one per line: thousands of plugins in a folder
    // would overflow an argument list (E2BIG).
    std::vector<std::string> args = {exe, "plugins", "--log-level", "off", "--probe-devices", "-"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    ::close(in[0]);
    if (rc == 0) {
      std::string list;
      for (std::size_t i = next; i < files.size(); ++i) list += clean(files[i]) + "\n";
      // The child reads the whole list before it writes anything: no deadlock on full pipes.
      for (std::size_t done = 0; done < list.size();) {
        ssize_t n = ::write(in[1], list.data() + done, list.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
    }
    ::close(in[1]);
    if (rc != 0) {
      ::close(fds[0]);
      for (; next < files.size(); ++next) results.push_back({files[next], false, "cannot start the probe process"});
      break;
    }
    std::string buffer, in_progress;
    bool timed_out = false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      pollfd p{fds[0], POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) == 0) continue;
      char chunk[4096];
      ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
        auto f = split_tabs(buffer.substr(0, nl));
        buffer.erase(0, nl + 1);
        if (f[0] == "probing" && f.size() >= 2) {
          in_progress = f[1];
          deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
        } else if (f[0] == "refused" && f.size() >= 3) {
          results.push_back({f[1], false, f[2]});
          in_progress.clear();
          ++next;
        } else if (f[0] == "loaded" && f.size() >= 9) {
          results.push_back({f[1], true, "", f[2], f[3], f[4], f[5], f[6], f[7], f[8]});
          in_progress.clear();
          ++next;
        }
      }
    }
    if (timed_out) ::kill(pid, SIGKILL);
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!in_progress.empty() || (timed_out && next < files.size())) {
      std::string why = timed_out ? "no answer within " + std::to_string(timeout_seconds) +
                                        " s (hung while loading or probing)"
                                  : describe_exit(status);
      results.push_back({files[next], false, why});
      ++next;  // skip the culprit, probe the rest in a fresh child
    } else if (next < files.size()) {
      // The child ended without starting the next file: report it rather than loop.
      results.push_back({files[next], false, describe_exit(status)});
      ++next;
    }
  }
  return results;
}

}  // namespace acccheck::core
