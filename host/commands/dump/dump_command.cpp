// `acccheck dump`: runs a program (or a TorchScript model) with the dump engine inside it, then
// checks what it left: a program that crashed or called _exit has its streamed dump.json files
// finished here. `--repair DIR` does the same for a dump whose program died under the SDK.
#include "commands/dump/dump_command.hpp"

#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <acccheck/incomplete_dump.hpp>
#include <acccheck/record.hpp>

#include "build_info.hpp"
#include "cli/companion_files.hpp"
#include "cli/exit_codes.hpp"
#include "config/dump_options.hpp"
#include "linkage/libtorch_linkage.hpp"
#include "plugin_host/plugin_registry.hpp"

extern char** environ;

namespace acccheck::host {

namespace fs = std::filesystem;

void add_dump_options(po::options_description& d) {
  d.add_options()
      ("dump-path", po::value<std::string>(), "output root: DIR/step<N>/rank<R>/dump.json")
      ("task", po::value<std::string>(), "statistics (default) or tensor (also save every tensor as .pt)")
      ("step", po::value<std::vector<std::string>>()->multitoken(), "steps to dump: 0 2 5-7 (default: all)")
      ("rank", po::value<std::vector<std::string>>()->multitoken(), "ranks to dump (default: all)")
      ("list", po::value<std::vector<std::string>>()->multitoken(), "entry names or substrings to keep")
      ("black-list", po::value<std::vector<std::string>>()->multitoken(), "entry names or substrings to leave out")
      ("scope", po::value<std::vector<std::string>>()->multitoken(), "FIRST LAST: keep the entries between them")
      ("stack", po::value<std::string>(), "call stacks in stack.json: off, python (Python frames only), raw (C++ addresses) or full (default: Python frames for calls from Python, C++ frames otherwise)")
      ("capture-backward-ops", po::bool_switch(), "record the operators autograd runs as entries too")
      ("exit-after-last-step", po::bool_switch(), "end the program once the last requested step is dumped")
      ("follow-children", po::bool_switch(), "capture the program's child processes too")
      ("queue-size", po::value<std::size_t>(), "records in flight to the writer thread (default 4096)")
      ("model", po::value<std::string>(), "dump forward + backward of this TorchScript model instead of a program")
      ("input-shape", po::value<std::vector<std::string>>()->multitoken(), "--model: one shape per input, e.g. 4,8")
      ("model-dtype", po::value<std::string>()->default_value("float32"), "--model: float32, float16, bfloat16, float64")
      ("model-steps", po::value<int>()->default_value(1), "--model: training steps to run")
      ("repair", po::value<std::string>(), "finish the dump.json files a crashed program left under DIR");
}

namespace {

int fail(int code, const std::string& line) {
  std::cerr << "acccheck dump: " << line << "\n";
  return code;
}

core::DumpOptions options_from(const po::variables_map& vm) {
  core::DumpOptions o;
  if (vm.count("config")) o = core::load_dump_options_file(vm["config"].as<std::string>());
  auto strings = [&](const char* k) { return vm[k].as<std::vector<std::string>>(); };
  if (vm.count("dump-path")) o.dump_path = vm["dump-path"].as<std::string>();
  if (vm.count("task")) o.task = vm["task"].as<std::string>();
  if (vm.count("step")) o.steps = core::parse_index_selection(strings("step"), "--step");
  if (vm.count("rank")) o.ranks = core::parse_index_selection(strings("rank"), "--rank");
  if (vm.count("list")) o.list = strings("list");
  if (vm.count("black-list")) o.black_list = strings("black-list");
  if (vm.count("scope")) o.scope = strings("scope");
  if (vm.count("stack")) {
    std::string s = vm["stack"].as<std::string>();
    if (auto m = core::stack_mode_of(s)) o.stack = *m;
    else throw std::runtime_error("--stack: expected off, python, raw or full, found '" + s + "'");
  }
  if (vm["capture-backward-ops"].as<bool>()) o.capture_backward_ops = true;
  if (vm["exit-after-last-step"].as<bool>()) o.exit_after_last_step = true;
  if (vm["follow-children"].as<bool>()) o.follow_children = true;
  if (vm.count("queue-size")) {
    o.queue_size = vm["queue-size"].as<std::size_t>();
    if (o.queue_size == 0) throw std::runtime_error("--queue-size: expected a whole number > 0");
  }
  // The engine looks for hook plugins where this acccheck does (--plugin-dir, ACCCHECK_PLUGIN_PATH,
  // the built-in folder), whatever the program's own location.
  std::vector<std::string> cli_dirs;
  if (vm.count("plugin-dir"))
    for (const auto& d : strings("plugin-dir")) cli_dirs.push_back(fs::absolute(d).string());
  for (const auto& d : core::plugin_search_dirs(cli_dirs)) o.plugin_dirs.push_back(fs::absolute(d).string());
  core::validate_dump_options(o, vm.count("config") ? vm["config"].as<std::string>() : "acccheck dump");
  o.dump_path = fs::absolute(o.dump_path).lexically_normal().string();
  return o;
}

std::vector<fs::path> dump_files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) && !it->is_symlink(ec) && it->path().filename() == "dump.json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Finishes unfinished dump.json files; returns how many were repaired (throws on a foreign file).
std::size_t repair_all(const fs::path& dir, bool quiet_when_complete) {
  std::size_t repaired = 0;
  for (const auto& f : dump_files_under(dir)) {
    // After every run: a finished file (the usual case) is known from its ends, not read through.
    if (quiet_when_complete && dump_json_finished(f.string())) continue;
    DumpRepair r = repair_dump_json(f.string());
    if (r.was_unfinished) {
      ++repaired;
      std::cerr << "acccheck dump: " << f.string() << ": finished the file: " << r.entries << " complete entr"
                << (r.entries == 1 ? "y" : "ies") << " kept"
                << (r.dropped_bytes ? ", the entry being written (" + std::to_string(r.dropped_bytes) + " bytes) dropped" : "")
                << (fs::exists(f.parent_path() / "stack.json") ? "" : "; stack.json was not written")
                << "\n";
    } else if (!quiet_when_complete) {
      std::cerr << "acccheck dump: " << f.string() << ": complete (" << r.entries << " entries)\n";
    }
  }
  return repaired;
}

int run_repair(const std::string& dir) {
  auto files = dump_files_under(dir);
  if (files.empty()) return fail(kExitInput, dir + ": no dump.json under this folder (expected DIR/step<N>/rank<R>/dump.json)");
  try {
    std::size_t n = repair_all(dir, false);
    std::cerr << "acccheck dump: " << n << " of " << files.size() << " dump.json files needed finishing\n";
  } catch (const std::exception& e) {
    return fail(kExitInput, e.what());
  }
  return kExitOk;
}

// PROG as posix_spawnp finds it ("" when it does not).
std::string program_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (std::size_t i = 0; i <= dirs.size(); ++i)
    if (i == dirs.size() || dirs[i] == ':') {
      fs::path candidate = fs::path(i > start ? dirs.substr(start, i - start) : ".") / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
      start = i + 1;
    }
  return "";
}

// A program linked against another LibTorch than acccheck's is refused before it starts: with the
// engine preloaded, two LibTorches' static initialisers would run in one process. (Python loads
// its torch later: the preloaded engine checks each dlopen.)
std::optional<std::string> foreign_libtorch_of(const std::string& program) {
  std::string ours = build_info::torch_cpu_library;
  std::string path = program_path(program);
  if (ours.empty() || path.empty()) return std::nullopt;
  std::error_code ec;
  auto canonical = fs::canonical(ours, ec);
  if (!ec) ours = canonical.string();
  auto theirs = core::foreign_libtorch(path, ours, {});
  if (!theirs) return std::nullopt;
  return core::foreign_libtorch_message(*theirs, build_info::torch_full_version, ours);
}

int status_of(int wait_status, const std::string& program) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  int sig = WTERMSIG(wait_status);
  std::cerr << "acccheck dump: " << program << " was killed by signal " << sig << " (" << strsignal(sig) << ")\n";
  return 128 + sig;
}

}  // namespace

int run_dump(const po::variables_map& vm, const std::vector<std::string>& program_args) {
  if (vm.count("repair")) return run_repair(vm["repair"].as<std::string>());
  core::DumpOptions o;
  try {
    o = options_from(vm);
  } catch (const std::exception& e) {
    return fail(kExitUsage, e.what());
  }
  std::vector<std::string> argv;
  if (vm.count("model")) {
    if (!program_args.empty()) return fail(kExitUsage, "give either --model or -- PROGRAM, not both");
    std::string runner = find_companion({"libexec/acccheck/acccheck-run-model", "../libexec/acccheck/acccheck-run-model"});
    if (runner.empty()) return fail(kExitPlugin, "acccheck-run-model was not found next to acccheck (built without LibTorch?)");
    if (!vm.count("input-shape")) return fail(kExitUsage, "--model needs --input-shape (one per model input, e.g. 4,8)");
    int steps = vm["model-steps"].as<int>();
    if (steps < 1) return fail(kExitUsage, "--model-steps: expected a whole number > 0");
    argv = {runner, vm["model"].as<std::string>(), std::to_string(steps), vm["model-dtype"].as<std::string>()};
    for (const auto& s : vm["input-shape"].as<std::vector<std::string>>()) argv.push_back(s);
  } else {
    if (program_args.empty()) return fail(kExitUsage, "nothing to run: expected -- PROGRAM [ARGS...], --model FILE or --repair DIR");
    argv = program_args;
    if (auto refused = foreign_libtorch_of(argv[0])) {
      std::cerr << *refused << "\n";
      return core::kExitForeignLibTorch;
    }
  }
  std::string preload = find_companion({"libacccheck_preload.so", "../" ACCCHECK_LIBDIR "/libacccheck_preload.so"});
  if (preload.empty()) return fail(kExitPlugin, "libacccheck_preload.so was not found next to acccheck (built without LibTorch?)");

  // Only the target gets the variables; the preloaded engine removes them from its own
  // environment before the program starts children (unless --follow-children).
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("ACCCHECK_DUMP_", 0) == 0) continue;
    if (kv.rfind("LD_PRELOAD=", 0) == 0) continue;
    env_storage.push_back(kv);
  }
  const char* old_preload = std::getenv("LD_PRELOAD");
  if (!vm.count("model"))
    env_storage.push_back("LD_PRELOAD=" + preload + (old_preload && *old_preload ? ":" + std::string(old_preload) : ""));
  else if (old_preload)
    env_storage.push_back("LD_PRELOAD=" + std::string(old_preload));
  env_storage.push_back("ACCCHECK_DUMP_OPTIONS=" + core::dump_options_to_yaml(o));
  std::vector<char*> envp, args;
  for (auto& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : argv) args.push_back(s.data());
  args.push_back(nullptr);

  // A marker left by an earlier run into this folder is not this run's (incomplete_dump.hpp).
  remove_incomplete_marker(o.dump_path);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0].c_str(), nullptr, nullptr, args.data(), envp.data());
  if (rc != 0) return fail(kExitUsage, argv[0] + ": cannot start: " + strerror(rc));
  // The program owns the terminal's signals (Ctrl-C reaches it directly); we wait and report.
  struct sigaction ignore {}, old_int {}, old_term {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGTERM, &ignore, &old_term);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  int code = status_of(wstatus, argv[0]);
  // A program that crashed or called _exit never finished its files: finish them now.
  try {
    if (std::size_t n = repair_all(o.dump_path, true))
      std::cerr << "acccheck dump: the program ended without finishing the dump; " << n << " file"
                << (n == 1 ? "" : "s") << " finished (everything recorded before the end is kept)\n";
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << e.what() << "\n";
  }
  // Data lost to a write error: the program may well have succeeded, the dump did not.
  if (auto marker = incomplete_marker_in(o.dump_path)) {
    std::cerr << "acccheck dump: the dump is incomplete: " << *marker << "\n";
    if (code == 0) code = kExitOutput;
  }
  return code;
}

}  // namespace acccheck::host
