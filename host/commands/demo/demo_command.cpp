#include "commands/demo/demo_command.hpp"

#include <acccheck/csv.hpp>
#include <acccheck/output_file.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cli/companion_files.hpp"
#include "cli/exit_codes.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace acccheck::host {

namespace {

// A folder the demo made (and may therefore clear on the next run) holds this file.
constexpr const char* kMarker = ".acccheck-demo";
constexpr const char* kStamp = "20260101000000";

void add_options_impl(po::options_description& desc) {
  desc.add_options()
      ("out,o", po::value<std::string>()->default_value("acccheck-demo"), "output folder (created; a previous demo's is replaced)")
      ("model", po::value<std::string>()->default_value("transformer"), "example model: mlp, cnn or transformer")
      ("dtype", po::value<std::string>()->default_value("fp32"), "example model's dtype: fp32 or bf16")
      ("faults", po::value<std::string>(), "npu-sim fault file (default: the bundled demo-faults.yaml)")
      ("workers,n", po::value<int>()->default_value(2), "run_ut worker processes per device");
}

struct Step {
  std::string title;
  std::vector<std::string> argv;
  std::string log;
};

// Runs argv with stdout+stderr into `log`; returns the exit status (128+signal when killed).
int run_logged(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::ofstream(log, std::ios::app) << argv[0] << ": cannot start: " << std::strerror(rc) << "\n";
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string tail_of(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "    " + all[i] + "\n";
  return out;
}

// The demo's folder: created, or emptied of what an earlier demo wrote there; any other
// non-empty folder is refused (the demo never deletes what it did not make).
std::string prepare_out(const std::string& out) {
  std::error_code ec;
  if (is_symlinked_folder(out)) return out + ": is a symbolic link; refusing to write through it";
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec)) return out + ": exists and is not a folder";
    bool empty = fs::is_empty(out, ec);
    if (!empty && !fs::exists(fs::path(out) / kMarker, ec))
      return out + ": not empty and not made by acccheck demo; choose another folder with -o";
    for (const char* sub : {"dump", "npu-sim", "cpu", "compare", "logs"}) fs::remove_all(fs::path(out) / sub, ec);
  }
  fs::create_directories(fs::path(out) / "logs", ec);
  if (ec) return out + ": cannot create: " + ec.message();
  std::ofstream(fs::path(out) / kMarker) << "made by acccheck demo; the next demo run replaces this folder's contents\n";
  return {};
}

// The planted defects, one line each, for the summary.
std::vector<std::string> describe_faults(const std::string& file) {
  std::vector<std::string> lines;
  try {
    YAML::Node root = YAML::LoadFile(file);
    for (const auto& f : root["faults"]) {
      std::ostringstream s;
      s << f["op"].as<std::string>("?") << "  " << f["direction"].as<std::string>("any") << "  "
        << f["kind"].as<std::string>("?");
      if (f["magnitude"]) s << " " << f["magnitude"].as<std::string>();
      if (f["fraction"]) s << " (fraction " << f["fraction"].as<std::string>() << ")";
      lines.push_back(s.str());
    }
  } catch (const std::exception& e) {
    lines.push_back(std::string("(cannot read: ") + e.what() + ")");
  }
  return lines;
}

struct Verdicts {
  std::size_t apis = 0, errors = 0, passes = 0, skips = 0;
  std::vector<std::vector<std::string>> flagged;  // result rows with an error or warning
};

Verdicts read_verdicts(const std::string& result_csv) {
  Verdicts v;
  auto rows = read_csv_records(result_csv);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.size() < 3) continue;
    ++v.apis;
    const bool error = r[1] == "error" || r[2] == "error";
    const bool warning = r[1] == "warning" || r[2] == "warning";
    if (error) ++v.errors;
    else if (r[1] == "SKIP" && (r[2] == "SKIP" || r[2] == " ")) ++v.skips;
    else ++v.passes;
    if (error || warning) v.flagged.push_back(r);
  }
  return v;
}

// The first error metric of each flagged API, from the compare details ("比对算法: 列=值").
std::map<std::string, std::string> deciding_values(const std::string& details_csv) {
  std::map<std::string, std::string> out;
  auto rows = read_csv_records(details_csv);
  if (rows.empty()) return out;
  const auto& header = rows[0];  // CsvReader drops the BOM
  std::size_t algo = std::find(header.begin(), header.end(), "比对算法") - header.begin();
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.size() != header.size()) continue;
    std::string name = r[0];
    std::string api = name.substr(0, std::min(name.find(".forward"), name.find(".backward")));
    if (out.count(api)) continue;
    for (std::size_t c = 1; c < header.size(); ++c) {
      if (header[c].size() > 12 && header[c].compare(header[c].size() - 12, 12, "判定结果") == 0 && r[c] == "error") {
        out[api] = (algo < r.size() ? r[algo] : "") + ": " + name.substr(api.size() + 1) + " " + header[c - 1] + "=" + r[c - 1];
        break;
      }
    }
  }
  return out;
}

}  // namespace

void add_demo_options(po::options_description& desc) { add_options_impl(desc); }

int run_demo(const po::variables_map& vm) {
  auto fail = [](int code, const std::string& what) {
    std::cerr << "acccheck demo: " << what << "\n";
    return code;
  };
  const std::string out = vm["out"].as<std::string>();
  const std::string model = vm["model"].as<std::string>();
  const std::string dtype = vm["dtype"].as<std::string>();
  const int workers = vm["workers"].as<int>();
  if (model != "mlp" && model != "cnn" && model != "transformer")
    return fail(kExitUsage, "--model: expected mlp, cnn or transformer, found '" + model + "'");
  if (dtype != "fp32" && dtype != "bf16") return fail(kExitUsage, "--dtype: expected fp32 or bf16, found '" + dtype + "'");
  if (workers < 1) return fail(kExitUsage, "--workers: expected a whole number > 0");

  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return fail(kExitInternal, "cannot find the acccheck executable: " + ec.message());
  const std::string train = find_companion({"examples/acccheck-example-train", "../libexec/acccheck/acccheck-example-train"});
  if (train.empty()) return fail(kExitPlugin, "the example program acccheck-example-train was not found next to acccheck (built without LibTorch?)");
  std::string faults = vm.count("faults") ? vm["faults"].as<std::string>()
                                          : find_companion({"share/acccheck/demo/demo-faults.yaml", "../share/acccheck/demo/demo-faults.yaml"});
  if (faults.empty()) return fail(kExitInput, "the bundled demo-faults.yaml was not found next to acccheck");
  if (!fs::is_regular_file(faults, ec)) return fail(kExitInput, faults + ": not a file (expected an npu-sim fault file)");
  faults = fs::absolute(faults).string();

  if (std::string why = prepare_out(out); !why.empty()) return fail(kExitOutput, why);
  const fs::path o = fs::absolute(out);
  const std::string dump_json = (o / "dump/step1/rank/dump.json").string();
  const std::string n = std::to_string(workers);
  const std::string npu_details = (o / "npu-sim" / ("accuracy_checking_details_" + std::string(kStamp) + ".csv")).string();
  const std::string cpu_details = (o / "cpu" / ("accuracy_checking_details_" + std::string(kStamp) + ".csv")).string();

  const std::vector<Step> steps = {
      {"dump one training step of the example " + model + " (" + dtype + "), no code change",
       {self, "dump", "--dump-path", (o / "dump").string(), "--step", "1", "--", train, "--model", model, "--dtype", dtype,
        "--steps", "2"},
       (o / "logs/1-dump.log").string()},
      {"run_ut on npu-sim with the planted defects",
       {self, "run_ut", "-api_info", dump_json, "--device", "npu-sim", "--device-config", faults, "-n", n, "-o",
        (o / "npu-sim").string(), "--timestamp", kStamp},
       (o / "logs/2-run_ut-npu-sim.log").string()},
      {"run_ut on cpu (the reference side)",
       {self, "run_ut", "-api_info", dump_json, "--device", "cpu", "-n", n, "-o", (o / "cpu").string(), "--timestamp", kStamp},
       (o / "logs/3-run_ut-cpu.log").string()},
      {"compare npu-sim against cpu, write the HTML report",
       {self, "compare", "-npu", npu_details, "-gpu", cpu_details, "-o", (o / "compare").string(), "--timestamp", kStamp,
        "--html", "--dump", dump_json},
       (o / "logs/4-compare.log").string()},
  };
  std::cout << "acccheck demo: the whole pipeline on the bundled example, in " << out << "/\n";
  const auto t_all = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    std::cout << "[" << i + 1 << "/" << steps.size() << "] " << s.title << " ..." << std::flush;
    const auto t0 = std::chrono::steady_clock::now();
    int rc = run_logged(s.argv, s.log);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc != 0) {
      std::cout << " failed (exit " << rc << ")\n";
      std::cerr << "acccheck demo: step " << i + 1 << " failed; the end of " << s.log << ":\n" << tail_of(s.log, 12);
      return rc == kExitGateFailed ? kExitInternal : (rc > 0 && rc < 128 ? rc : kExitInternal);
    }
    std::cout << " " << std::fixed << std::setprecision(1) << secs << " s\n";
  }

  const std::string result = (o / "compare" / ("api_precision_compare_result_" + std::string(kStamp) + ".csv")).string();
  const std::string details = (o / "compare" / ("api_precision_compare_details_" + std::string(kStamp) + ".csv")).string();
  Verdicts v;
  std::map<std::string, std::string> why;
  try {
    v = read_verdicts(result);
    why = deciding_values(details);
  } catch (const std::exception& e) {
    return fail(kExitInput, e.what());
  }
  std::cout << "\nplanted defects (" << faults << "):\n";
  for (const auto& l : describe_faults(faults)) std::cout << "  " << l << "\n";
  std::cout << "\nverdicts: " << v.apis << " APIs: " << v.errors << " error, " << v.passes << " pass, " << v.skips
            << " SKIP\n";
  if (!v.flagged.empty()) {
    std::size_t w = 8;
    for (const auto& r : v.flagged) w = std::max(w, r[0].size());
    std::cout << "  " << std::left << std::setw(static_cast<int>(w)) << "API" << "  forward  backward  deciding value\n";
    for (const auto& r : v.flagged) {
      auto d = why.find(r[0]);
      std::cout << "  " << std::left << std::setw(static_cast<int>(w)) << r[0] << "  " << std::setw(7) << r[1] << "  "
                << std::setw(8) << r[2] << "  " << (d != why.end() ? d->second : "") << "\n";
    }
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
  std::cout << "\nreport:  " << (o / "compare/report.html").string() << "\n"
            << "compare: " << result << "\n"
            << "logs:    " << (o / "logs").string() << "/   (" << std::fixed << std::setprecision(1) << total << " s in all)\n";
  return kExitOk;
}

}  // namespace acccheck::host
