#include "commands/repro/repro_command.hpp"
#include "commands/repro/repro_case.hpp"

#include <acccheck/csv.hpp>
#include <acccheck/number_format.hpp>
#include <acccheck/output_file.hpp>
#include <acccheck/record.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "assets/embedded_assets.hpp"
#include "tensor_file_check.hpp"
#include "build_info.hpp"
#include "cli/companion_files.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "plugin_host/plugin_file_check.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

namespace {

// The device plugin file for a device name ("npu-sim" → acccheck_device_npu_sim.so): a --plugin
// file, else the first of that name in the plugin folders the host searches, found and checked
// the way the host finds plugins (refused folders skipped, an unsafe file refused).
std::string device_plugin_file(const std::string& device, const po::variables_map& vm) {
  std::string stem = "acccheck_device_" + device;
  for (char& c : stem)
    if (c == '-') c = '_';
  core::PluginSearch search = plugin_search_from(vm);
  std::vector<std::string> candidates = search.files;
  for (const auto& d : search.dirs) {
    core::FolderScan scan = core::scan_plugin_folder(d);
    candidates.insert(candidates.end(), scan.files.begin(), scan.files.end());
  }
  for (const auto& f : candidates) {
    if (fs::path(f).stem() != stem) continue;
    if (auto why = core::unsafe_file_reason(f)) throw ReproError(f + ": " + *why);
    return fs::absolute(f).string();
  }
  return {};
}

}  // namespace

void add_repro_options(po::options_description& desc) {
  desc.add_options()
      ("entry", po::value<std::string>(), "the dump entry, e.g. Aten.gelu.0.forward (also the first bare argument)")
      ("dump", po::value<std::string>(), "dump.json holding the entry (an acccheck dump: entries name their operator)")
      ("device", po::value<std::string>()->default_value("npu-sim"),
       "device under test: cpu, cuda, or a device plugin's name (npu-sim, npu, ...)")
      ("out,o", po::value<std::string>(), "folder to write (default repro-<entry>)");
}

namespace {

// 'text' for a POSIX shell (a ' inside becomes '\''): paths printed for the user to paste.
std::string shell_quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The prefix this acccheck is installed in (<P>/bin/acccheck beside <P>/lib*/cmake/acccheck), or "".
std::string installed_prefix() {
  const fs::path prefix = fs::path(executable_folder()).parent_path();
  for (const char* lib : {"lib", "lib64", ACCCHECK_LIBDIR})
    if (fs::exists(prefix / lib / "cmake/acccheck/acccheckConfig.cmake")) return prefix.string();
  return "";
}

// The commands that build the repro, shell-quoted: CMAKE_PREFIX_PATH holds this acccheck's install
// prefix (its package then points find_package(Torch) at the LibTorch it was built against) or,
// when it is not installed, that LibTorch's own prefix (a wheel's; a system LibTorch needs none).
std::string build_command(const fs::path& dir) {
  std::string prefixes = installed_prefix();
  if (prefixes.empty()) prefixes = build_info::torch_prefix_path;
  std::string cmd = "cmake -S " + shell_quoted(dir.string()) + " -B " + shell_quoted((dir / "build").string());
  if (!prefixes.empty()) cmd += " -DCMAKE_PREFIX_PATH=" + shell_quoted(prefixes);
  return cmd + " && cmake --build " + shell_quoted((dir / "build").string());
}

}  // namespace

int run_repro(const po::variables_map& vm) {
  auto fail = [](int code, const std::string& what) {
    std::cerr << "acccheck repro: " << what << "\n";
    return code;
  };
  if (!vm.count("entry") || !vm.count("dump"))
    return fail(kExitUsage, "usage: acccheck repro ENTRY --dump DUMP.json [--device NAME] [-o DIR]");
  std::string entry = vm["entry"].as<std::string>();
  const std::string dump = vm["dump"].as<std::string>(), device = vm["device"].as<std::string>();
  if (entry.size() < 8 || (entry.compare(entry.size() - 8, 8, ".forward") != 0 && entry.compare(entry.size() - 9, 9, ".backward") != 0))
    entry += ".forward";
  if (entry.compare(entry.size() - 9, 9, ".backward") == 0)
    return fail(kExitUsage, entry + ": repro rebuilds forward calls; give " + entry.substr(0, entry.size() - 9) +
                                ".forward (its backward is checked by run_ut)");
  DumpHeader header;
  std::optional<ApiRecord> found;
  try {
    read_dump_json(dump, [&](const DumpHeader& h) { header = h; }, [&](ApiRecord&& r) {
      if (!found && r.entry_name() == entry) found = std::move(r);
    });
  } catch (const std::exception& e) {
    return fail(kExitInput, e.what());
  }
  if (!found) return fail(kExitInput, dump + ": no entry '" + entry + "'");
  if (found->op_name.empty())
    return fail(kExitInput, dump + ": entry '" + entry + "' names no dispatcher operator (acccheck_op): repro needs an "
                            "acccheck dump; replay msprobe entries with run_ut --filter-api");

  std::string default_device = device, plugin;
  if (device == "privateuseone" || device == "cpu" || device == "cuda") {
  } else {
    try {
      plugin = device_plugin_file(device, vm);
    } catch (const ReproError& e) {
      return fail(kExitPlugin, e.what());
    }
    if (plugin.empty()) return fail(kExitPlugin, "device '" + device + "': no acccheck_device_*.so of that name in the plugin folders");
    default_device = "cpu";
  }

  ReproCase g;
  try {
    g = generate_repro_case(*found, header, dump, entry, default_device, plugin);
  } catch (const ReproError& e) {
    return fail(kExitInput, e.what());
  }
  std::string program(embedded_asset(Asset::repro_program));
  const std::string marker = "// @REPRO_CASE@";
  program.replace(program.find(marker), marker.size(), g.code);

  const fs::path out = vm.count("out") ? fs::path(vm["out"].as<std::string>()) : fs::path("repro-" + entry);
  try {
    std::error_code ec;
    if (is_symlinked_folder(out.string())) throw std::runtime_error(out.string() + ": is a symbolic link; refusing to write through it");
    fs::create_directories(out / "inputs");
    // The real data, read as run_ut reads it: from dump_tensor_data/ beside dump.json (not the
    // dump's own dump_data_dir, resolved who knows where), inside that folder, a regular file of a
    // plausible size, and a .pt of one tensor that run_ut would accept (issue 25).
    const std::string data_dir = (fs::path(dump).parent_path() / "dump_tensor_data").string();
    for (const auto& f : g.data_files) {
      std::vector<char> bytes;
      try {
        bytes = replay::read_real_data_file(data_dir, f.data_name, f.expected_bytes, false);
      } catch (const std::exception& e) {
        throw ReproError(e.what());
      }
      if (std::string why = replay::tensor_file_problem(bytes); !why.empty())
        throw ReproError((fs::path(data_dir) / f.data_name).string() + ": not a tensor file written by torch.save (" + why + ")");
      AtomicOutputFile copy((out / f.bundled).string(), 0644);
      copy.write(std::string_view(bytes.data(), bytes.size()));
      copy.commit();
    }
    auto write = [&](const std::string& name, const std::string& text) {
      AtomicOutputFile f((out / name).string(), 0644);
      f.write(text);
      f.commit();
    };
    write("repro.cpp", program);
    write("CMakeLists.txt", std::string(embedded_asset(Asset::repro_cmakelists)));
    write("entry.json", to_json_text(record_to_json(*found), 1) + "\n");
    // Texts from the dump or the command line in the README are escaped too (printable: control
    // characters as \n, \x1b), so none can open a line of its own in the shell block below.
    write("README.md", "# " + printable(entry) + " (" + printable(found->op_name) +
                           (found->op_overload.empty() ? "" : "." + printable(found->op_overload)) +
                           ")\n\nWritten by `acccheck repro` from `" + printable(dump) + "`; `entry.json` is the dump entry.\n\n"
                           "```sh\n" + build_command(".") + "\n"
                           "build/repro                      # device: " + printable(device) + "\n"
                           "build/repro --device cpu         # the CPU in the op's dtype\n"
                           "ACCCHECK_NPUSIM_FAULTS=faults.yaml build/repro   # npu-sim with planted defects\n```\n\n"
                           "Inputs are drawn uniformly between each tensor's recorded Min and Max (seed 1234, `--seed N`)" +
                           std::string(g.data_files.empty() ? "" : ", or read from inputs/*.pt (the dump's real tensors)") + ".\n");
  } catch (const ReproError& e) {
    return fail(kExitInput, e.what());
  } catch (const std::exception& e) {
    return fail(kExitOutput, e.what());
  }
  std::cout << "repro: " << (out / "repro.cpp").string() << " (" << found->op_name << ", " << found->args.size() + found->kwargs.size()
            << " arguments" << (g.data_files.empty() ? "" : ", " + std::to_string(g.data_files.size()) + " tensor files") << ")\n"
            << "  build: " << build_command(out) << "\n";
  if (installed_prefix().empty())
    std::cout << "  (this acccheck is not installed: for --plugin DEVICE.so the repro also needs its SDK, "
                 "`cmake --install <acccheck build> --prefix P` and P added to CMAKE_PREFIX_PATH)\n";
  return kExitOk;
}

}  // namespace acccheck::host
