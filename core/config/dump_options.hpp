// What `acccheck dump` and the SDK's Debugger capture, and how. One parser for the three ways in:
// the YAML file (msprobe's key names: dump_path, task, step, rank, list, scope, plus acccheck's),
// the launcher's flags, and the environment the launcher hands to the preloaded engine
// (ACCCHECK_DUMP_OPTIONS holds the resolved options as YAML). Torch-free: the host validates a
// config before it starts the program, the engine reads the same text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace acccheck::core {

// Steps or ranks: an explicit list of numbers and ranges; empty means all.
struct IndexSelection {
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  // inclusive
  bool all() const { return ranges.empty(); }
  bool contains(std::int64_t v) const;
  std::optional<std::int64_t> last() const;  // largest selected index; nullopt when all
  std::string text() const;                  // "0,2-4"
};
// "1,2,5-7" or a YAML list's items ("3", "5-7"). Throws "<where>: '<item>': expected ...".
IndexSelection parse_index_selection(const std::vector<std::string>& items, const std::string& where);

// off: no stack.json. python: Python frames only (calls from Python; none otherwise). raw: C++
// return addresses as module+offset. full: Python frames for calls from Python, symbolised C++
// frames otherwise.
enum class StackMode { off, python, raw, full };

struct DumpOptions {
  std::string dump_path;
  std::string task = "statistics";  // statistics | tensor
  IndexSelection steps, ranks;
  std::vector<std::string> list;        // entry names or substrings to keep; empty = all
  std::vector<std::string> black_list;  // entry names or substrings never kept
  std::vector<std::string> scope;       // [first, last] entry names: keep what lies between
  StackMode stack = StackMode::full;
  bool capture_backward_ops = false;    // ops the autograd engine runs become entries too
  bool exit_after_last_step = false;
  bool follow_children = false;         // launcher: child processes are captured too
  bool auto_step = false;               // steps found by the engine (no-code-change mode)
  std::size_t queue_size = 4096;        // records in flight between the program and the writer (a step of a large model: ~1-2 KiB each)
  std::size_t queue_bytes = 256u << 20; // tensor bytes in flight (tensor mode)
  std::vector<std::string> plugin_dirs; // where hook plugins are looked for (before the defaults)

  bool tensor_mode() const { return task == "tensor"; }
};

const char* stack_mode_name(StackMode m);
// "off" | "python" | "raw" | "full"; nullopt for anything else.
std::optional<StackMode> stack_mode_of(const std::string& name);

// Parses a YAML mapping (file contents or ACCCHECK_DUMP_OPTIONS); `source` names it in errors
// ("<source>: line L: ..."). Unknown keys are errors (a typo would silently dump everything).
// msprobe's layout is accepted too: list/scope/black_list inside a `statistics:` or `tensor:`
// section; msprobe-only keys with no meaning here (level, framework, ...) are accepted and ignored.
DumpOptions parse_dump_options(const std::string& yaml_text, const std::string& source,
                               DumpOptions defaults = {});
DumpOptions load_dump_options_file(const std::string& file, DumpOptions defaults = {});
// Checks what every way in needs (a dump path, a known task, a two-name scope, a non-zero queue).
// Throws "<source>: <key>: expected ...".
void validate_dump_options(const DumpOptions& o, const std::string& source);
// The resolved options as YAML that parse_dump_options reads back unchanged.
std::string dump_options_to_yaml(const DumpOptions& o);

}  // namespace acccheck::core
