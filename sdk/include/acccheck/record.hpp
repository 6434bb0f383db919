// The data model of one captured API call, and readers/writers for the two on-disk layouts
// (spec/dump-format.md): msprobe's dump.json (+ stack.json) and the legacy forward_info /
// backward_info / stack_info files. Readers stream: one entry is parsed, handed over, dropped.
// Every error names the file, the entry and the field.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "acccheck/json.hpp"

namespace acccheck {

// A statistic as the dump stores it: null, true/false (bool tensors), an int (0-d int tensor) or
// a double (possibly NaN / ±inf). Kept as written so a record round-trips byte for byte.
struct Statistic {
  enum class Kind { null, boolean, integer, number } kind = Kind::null;
  double value = 0.0;
  // A float32 value (our capture's statistics are reduced in float32 or rounded to it): written
  // with float32's shortest digits. Statistics read from a file keep the digits they had.
  bool float32 = false;
  bool present() const { return kind != Kind::null; }
  static Statistic of(double v) { return {Kind::number, v}; }
  static Statistic of_float32(float v) { return {Kind::number, v, true}; }
};

struct TensorSpec {
  std::string type = "torch.Tensor";
  std::string dtype;                 // "torch.float16"
  std::vector<std::int64_t> shape;
  Statistic max, min, mean, norm;
  std::optional<double> max_except_inf_nan, min_except_inf_nan;  // intermediate msprobe format
  std::optional<double> max_origin, min_origin;                  // legacy format
  bool requires_grad = false;
  std::string data_name;             // file under dump_tensor_data/ (current) or datapath (legacy)
  std::string md5;
  Json extra;                        // keys we do not model (device_mesh, placements, ...), kept

  std::int64_t numel() const;
};

// One argument or output. Containers nest; values we do not model are kept as raw JSON.
struct Argument {
  enum class Kind {
    none,       // JSON null
    tensor,
    scalar,     // {"type": "int"|"float"|"bool"|"str"|numpy scalar, "value": v}
    slice,      // {"type": "slice", "value": [a, b, c]}
    ellipsis,
    size,       // torch.Size
    dtype,      // {"type": "torch.dtype", "value": "torch.float16"}
    device,     // {"type": "torch.device", "value": "npu:0"}
    memory_format,
    list,       // JSON array
    dict,       // JSON object without "type" (dict / namedtuple)
    opaque,     // anything else, kept verbatim (ProcessGroup, {} for positional dtype, ...)
  };
  Kind kind = Kind::none;
  TensorSpec tensor;
  std::string type_name;   // the "type" string as written
  Json value;              // scalar value, slice/size list, dtype/device string, memory format, opaque
  std::vector<Argument> items;                             // list
  std::vector<std::pair<std::string, Argument>> members;   // dict

  static Argument none();
  // Declared here, defaulted below the class: clang 14 with C++20's libstdc++ (constexpr vector)
  // defines the implicit ones where the class closes, when std::pair<std::string, Argument> of
  // `members` is still incomplete, and stops ("arithmetic on a pointer to an incomplete type").
  // The same inline functions as the implicit ones: no ABI change.
  Argument();
  ~Argument();
  Argument(const Argument&);
  Argument(Argument&&) noexcept;
  Argument& operator=(const Argument&);
  Argument& operator=(Argument&&) noexcept;
};
inline Argument::Argument() = default;
inline Argument::~Argument() = default;
inline Argument::Argument(const Argument&) = default;
inline Argument::Argument(Argument&&) noexcept = default;
inline Argument& Argument::operator=(const Argument&) = default;
inline Argument& Argument::operator=(Argument&&) noexcept = default;
inline Argument Argument::none() { return Argument{}; }

enum class Direction { forward, backward };

// One entry of dump.json. A forward entry has args/kwargs/outputs; a backward entry has the
// gradients flowing into the API (grads w.r.t. its outputs) and those it produced.
struct ApiRecord {
  std::string api;         // "Functional.linear.0" (entry name without the direction)
  Direction direction = Direction::forward;
  // Where acccheck itself dumped the call: the dispatcher operator; empty for msprobe dumps.
  std::string op_name;     // "aten::addmm"
  std::string op_overload; // "" / "out"
  std::vector<Argument> args;                               // forward: input_args
  std::vector<std::pair<std::string, Argument>> kwargs;     // forward: input_kwargs
  std::vector<Argument> outputs;                            // forward: output
  std::vector<Argument> grad_inputs;                        // backward: input
  std::vector<Argument> grad_outputs;                       // backward: output
  bool has_args = false, has_kwargs = false, has_outputs = false;
  std::optional<bool> is_recompute;
  // Call stack lines, innermost user frame first. Stored in stack.json, not dump.json: filled by
  // attach_stacks(), written by write_stack_json().
  std::vector<std::string> stack;
  // Keys of the entry as they appeared (the dumper writes in-place ops' "output" after
  // "is_recompute"); the writer follows it so a record round-trips byte for byte. Keys acccheck
  // does not model are kept in `extra`.
  std::vector<std::string> key_order;
  Json extra = Json::object();
  // acccheck's own dumps: the schema names of `args` (written with op_name in "acccheck_op").
  // Last member on purpose: the fields above keep their place for plugins built earlier.
  std::vector<std::string> arg_names;

  std::string entry_name() const { return api + (direction == Direction::forward ? ".forward" : ".backward"); }
};

struct DumpHeader {
  std::string task = "statistics";
  std::string level = "L1";
  std::optional<std::string> framework = std::string("pytorch");
  std::optional<std::string> dump_data_dir;  // null in statistics mode
};

// Raised by readers: "<file>: entry '<entry>': field '<field>': expected <what>".
class RecordError : public std::runtime_error {
 public:
  RecordError(std::string file, std::string entry, std::string field, std::string what);
  const std::string& file() const { return file_; }
  const std::string& entry() const { return entry_; }
  const std::string& field() const { return field_; }

 private:
  std::string file_, entry_, field_;
};

// Splits an entry key into (api, direction) with the reference's rules (dump-format.md §2.1):
// keys containing "Module" return nullopt (skipped); "forward"/"backward" keys must end with it.
// The suffix decides first: an aten operator's name may hold the other word
// (Aten.nll_loss2d_forward.0.backward is a backward entry).
std::optional<std::pair<std::string, Direction>> split_entry_name(std::string_view key,
                                                                   std::string_view file);

// Streams dump.json: on_header once (before the first entry), then on_record per API entry in
// file order. Module entries are skipped. Throws RecordError / std::runtime_error.
void read_dump_json(const std::string& path, const std::function<void(const DumpHeader&)>& on_header,
                    const std::function<void(ApiRecord&&)>& on_record);
// The same, but an entry that does not parse (wrong field type, unknown structure) is handed to
// on_bad_entry with its key and reading goes on; only a file that is not JSON at all still throws.
void read_dump_json(const std::string& path, const std::function<void(const DumpHeader&)>& on_header,
                    const std::function<void(ApiRecord&&)>& on_record,
                    const std::function<void(const std::string& key, const RecordError&)>& on_bad_entry);

// Legacy layout: forward_info_<pid>.json (+ optional backward_info_<pid>.json). Entries are
// normalised ("Functional*silu*0" → "Functional.silu.0"); backward lists become grad_inputs.
void read_legacy_dump(const std::string& forward_path, const std::string& backward_path,
                      const std::function<void(ApiRecord&&)>& on_record);

// Writes the legacy layout (dump-format.md §5): forward_info with {"args", "kwargs"} per entry,
// backward_info with the list of output gradients; compact JSON as the legacy dumper wrote it,
// tensors as {type, dtype, shape, Max, Max_origin, Min, Min_origin, requires_grad}, None kwargs
// as {"type": "NoneType", "value": null}. Files appear only when complete (temp + rename).
void write_legacy_dump(const std::string& forward_path, const std::string& backward_path,
                       const std::vector<ApiRecord>& records);

// Conversions between the model and msprobe's JSON encoding (used by the writer and tests).
Argument argument_from_json(const Json& j, const std::string& file, const std::string& entry,
                            const std::string& field);
Json argument_to_json(const Argument& a);
ApiRecord record_from_json(const std::string& key, const Json& body, const std::string& file);
Json record_to_json(const ApiRecord& r);

// Writes dump.json the way msprobe does (json.dump indent=1, key order preserved). Appending
// writer: entries are written as they come and flushed, the closing braces on finish(); the file
// appears under its final name only when finished (temp + rename).
class DumpJsonWriter {
 public:
  DumpJsonWriter(std::string path, DumpHeader header);
  ~DumpJsonWriter();
  void write(const ApiRecord& record);
  void finish();

 private:
  struct Impl;
  Impl* impl_;
};

// The dump engine's writer: dump.json is written under its final name as entries come, one
// write(2) per entry, so a program that crashes or calls _exit leaves every entry before the one in
// flight; finish() closes the braces. repair_dump_json() finishes a file the writer never finished.
// Opening refuses a symbolic link (O_NOFOLLOW). Throws std::runtime_error "<path>: <reason>".
class StreamingDumpJsonWriter {
 public:
  StreamingDumpJsonWriter(std::string path, const DumpHeader& header);
  ~StreamingDumpJsonWriter();  // flushes and closes without finishing: the file stays repairable
  StreamingDumpJsonWriter(const StreamingDumpJsonWriter&) = delete;
  StreamingDumpJsonWriter& operator=(const StreamingDumpJsonWriter&) = delete;
  // Appends the entry to the bytes not yet written; they reach the file at flush() (or once they
  // exceed kFlushBytes): the caller decides how many records one write() system call carries.
  void write(const ApiRecord& record);
  // The same for an entry already encoded: `"<entry>": {...}` laid out as write() lays it out (the
  // dump engine's writer encodes its records straight to text).
  void write_encoded(std::string_view entry);
  void flush();
  void finish();  // flushes, closes the braces and the file
  static constexpr std::size_t kFlushBytes = 1 << 20;
  std::size_t entries() const { return entries_; }
  const std::string& path() const { return path_; }

 private:
  void write_all(const std::string& bytes);
  std::string path_;
  int fd_ = -1;
  std::size_t entries_ = 0;
  std::string pending_;
};

// Outcome of repair_dump_json on one file.
struct DumpRepair {
  bool was_unfinished = false;  // false: the file was complete and left untouched
  std::size_t entries = 0;      // complete entries the file holds now
  std::size_t dropped_bytes = 0;  // bytes of the entry that was in flight, removed
};
// Finishes a dump.json that StreamingDumpJsonWriter left unfinished: cuts the entry that was being
// written, closes the braces. Throws "<path>: <reason>" for a file that is not such a dump. The
// file is read in blocks of kDumpJsonReadBlock (never held whole), and the entries it keeps are
// never rewritten: the file is cut after the last complete one and the braces appended.
DumpRepair repair_dump_json(const std::string& path);
// Whether StreamingDumpJsonWriter finished this dump.json, from its header and its last bytes
// alone: a finished file of any size is recognised without being read through (the host checks
// every dump.json of a dump when the program ends). Throws as repair_dump_json does.
bool dump_json_finished(const std::string& path);
inline constexpr std::size_t kDumpJsonReadBlock = std::size_t{1} << 20;

// stack.json in the current de-duplicated layout; reads both layouts.
using StackMap = std::vector<std::pair<std::string, std::vector<std::string>>>;  // entry → lines
StackMap read_stack_json(const std::string& path);
// Sets record.stack for forward records whose entry name appears in `stacks`.
void attach_stacks(std::vector<ApiRecord>& records, const StackMap& stacks);
void write_stack_json(const std::string& path, const StackMap& stacks);
std::string stack_json_text(const StackMap& stacks);  // what write_stack_json writes

}  // namespace acccheck
