#include "commands/repro/repro_command.hpp"

#include <acccheck/csv.hpp>
#include <acccheck/number_format.hpp>
#include <acccheck/output_file.hpp>
#include <acccheck/record.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "assets/embedded_assets.hpp"
#include "build_info.hpp"
#include "cli/companion_files.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "plugin_host/plugin_file_check.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

namespace {

class ReproError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const std::map<std::string, std::string>& aten_dtypes() {
  static const std::map<std::string, std::string> m = {
      {"torch.float32", "at::kFloat"}, {"torch.float64", "at::kDouble"}, {"torch.float16", "at::kHalf"},
      {"torch.bfloat16", "at::kBFloat16"}, {"torch.int64", "at::kLong"}, {"torch.int32", "at::kInt"},
      {"torch.int16", "at::kShort"}, {"torch.int8", "at::kChar"}, {"torch.uint8", "at::kByte"},
      {"torch.bool", "at::kBool"}};
  return m;
}

std::string cxx_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A double as C++ source. NaN and the infinities have no literal: "nan" would not compile and the
// stream's text turned into value(nan) resolves to another overload (a bool: the replay then
// multiplied by 1); they are written through the <cmath> macros.
std::string number(double v) {
  if (std::isnan(v)) return "static_cast<double>(NAN)";
  if (std::isinf(v)) return v > 0 ? "static_cast<double>(INFINITY)" : "-static_cast<double>(INFINITY)";
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

struct Generated {
  std::string code;
  std::vector<std::pair<std::string, std::string>> data_files;  // dump file → folder-relative name
};

std::string argument_code(const Argument& a, const std::string& where, const DumpHeader& header, Generated& g) {
  auto unsupported = [&](const std::string& what) {
    return ReproError(where + ": " + what + " is not supported by repro (use run_ut --filter-api for this entry)");
  };
  switch (a.kind) {
    case Argument::Kind::none: return "value(c10::IValue())";
    case Argument::Kind::tensor: {
      auto dt = aten_dtypes().find(a.tensor.dtype);
      if (dt == aten_dtypes().end()) throw unsupported("tensor dtype " + a.tensor.dtype);
      std::string shape = "{";
      for (std::size_t i = 0; i < a.tensor.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(a.tensor.shape[i]);
      shape += "}";
      double lo = a.tensor.min.present() ? a.tensor.min.value : -1.0, hi = a.tensor.max.present() ? a.tensor.max.value : 1.0;
      if (!std::isfinite(lo)) lo = -1.0;
      if (!std::isfinite(hi)) hi = 1.0;
      std::string file;
      if (!a.tensor.data_name.empty() && header.dump_data_dir) {
        file = "inputs/" + fs::path(a.tensor.data_name).filename().string();
        g.data_files.emplace_back((fs::path(*header.dump_data_dir) / a.tensor.data_name).string(), file);
      }
      return "tensor(" + shape + ", " + dt->second + ", " + number(lo) + ", " + number(hi) +
             (file.empty() ? "" : ", " + cxx_string(file)) + ")";
    }
    case Argument::Kind::scalar: {
      const Json& v = a.value;
      if (a.type_name == "bool" || v.is_bool()) return std::string("value(") + (v.as_bool() ? "true" : "false") + ")";
      if (a.type_name == "int" || v.is_integer()) return "value(static_cast<int64_t>(" + std::to_string(v.as_int()) + "))";
      if (a.type_name == "float" || v.is_number()) return "value(" + number(v.as_double()) + ")";
      if (v.is_string()) return "value(std::string(" + cxx_string(v.as_string()) + "))";
      throw unsupported("scalar of type " + a.type_name);
    }
    case Argument::Kind::dtype: {
      auto dt = aten_dtypes().find(a.value.is_string() ? a.value.as_string() : "");
      if (dt == aten_dtypes().end()) throw unsupported("dtype value");
      return "value(" + dt->second + ")";
    }
    case Argument::Kind::size:
    case Argument::Kind::list: {
      // torch.Size keeps its numbers in `value`; a list holds scalar arguments.
      std::string joined;
      bool ints = true, floats = true;
      auto add = [&](const Json& v, bool integer) {
        joined += (joined.empty() ? "" : ", ") + (integer ? std::to_string(v.as_int()) : number(v.as_double()));
        ints = ints && integer;
        floats = floats && v.is_number();
      };
      if (a.kind == Argument::Kind::size && a.value.is_array()) {
        for (const auto& i : a.value.items()) add(i, true);
      } else {
        for (const auto& i : a.items) {
          if (i.kind != Argument::Kind::scalar) throw unsupported("a list of " + i.type_name);
          add(i.value, i.type_name == "int" || i.value.is_integer());
        }
      }
      if (ints) return "value(std::vector<int64_t>{" + joined + "})";
      if (floats) return "value(std::vector<double>{" + joined + "})";
      throw unsupported("a mixed list");
    }
    default: throw unsupported("an argument of type " + a.type_name);
  }
}

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
  if (prefixes.empty()) prefixes = ACCCHECK_BUILT_TORCH_PREFIX_PATH;
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

  Generated g;
  std::string args;
  try {
    for (std::size_t i = 0; i < found->args.size(); ++i) {
      std::string code = argument_code(found->args[i], entry + ": input_args[" + std::to_string(i) + "]", header, g);
      if (i < found->arg_names.size()) code = "named(" + cxx_string(found->arg_names[i]) + ", " + code + ")";
      args += "      " + code + ",\n";
    }
    for (const auto& [k, a] : found->kwargs)
      args += "      named(" + cxx_string(k) + ", " + argument_code(a, entry + ": input_kwargs." + k, header, g) + "),\n";
  } catch (const ReproError& e) {
    return fail(kExitInput, e.what());
  }
  std::string case_code =
      // Every text from the command line or the dump reaches the program as an escaped string
      // literal, never raw (a path with a newline must not become code).
      "// The case, from the dump kDump names.\n"
      "const char* kDump = " + cxx_string(dump) + ";\n"
      "const char* kEntry = " + cxx_string(entry) + ";\n"
      "const char* kOperator = " + cxx_string(found->op_name) + ";\n"
      "const char* kOverload = " + cxx_string(found->op_overload) + ";\n"
      "const char* kDefaultDevice = " + cxx_string(default_device) + ";\n"
      "const char* kDefaultPlugin = " + cxx_string(plugin) + ";  // acccheck device plugin (needs its SDK)\n"
      "std::vector<Arg> case_arguments() {\n  return {\n" + args + "  };\n}\n";

  std::string program(embedded_asset(Asset::repro_program));
  const std::string marker = "// @REPRO_CASE@";
  program.replace(program.find(marker), marker.size(), case_code);

  const fs::path out = vm.count("out") ? fs::path(vm["out"].as<std::string>()) : fs::path("repro-" + entry);
  try {
    std::error_code ec;
    if (fs::is_symlink(out, ec)) throw std::runtime_error(out.string() + ": is a symbolic link; refusing to write through it");
    fs::create_directories(out / "inputs");
    for (const auto& [from, to] : g.data_files) {
      if (!fs::is_regular_file(from, ec)) throw ReproError(from + ": the entry's tensor file is missing");
      refuse_symlink_destination((out / to).string());
      fs::copy_file(from, out / to, fs::copy_options::overwrite_existing);
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
