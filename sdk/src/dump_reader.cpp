// Streaming readers for dump.json (msprobe) and the legacy forward_info/backward_info files.
#include <rapidjson/filereadstream.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "acccheck/csv.hpp"
#include "acccheck/record.hpp"

#include <sys/stat.h>
#include "json_builder.hpp"

namespace acccheck {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { if (f) std::fclose(f); }
};

std::unique_ptr<std::FILE, FileCloser> open_for_reading(const std::string& path) {
  // A pipe, FIFO or device is refused before it is opened (a FIFO would block, /dev/zero never ends).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw std::runtime_error(path + ": is a directory, expected a JSON file");
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw std::runtime_error(path + ": not a regular file (a pipe, FIFO or device), expected a JSON file; save it to a file first");
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  return f;
}

std::string read_prefix(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

// The line (from 1) holding the byte at `offset` (rare path: an error naming a line).
std::size_t line_of(const std::string& path, std::size_t offset) {
  std::ifstream in(path, std::ios::binary);
  std::size_t line = 1;
  char buf[1 << 16];
  while (offset > 0 && in) {
    in.read(buf, static_cast<std::streamsize>(std::min(offset, sizeof buf)));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    line += static_cast<std::size_t>(std::count(buf, buf + got, '\n'));
    offset -= got;
  }
  return line;
}

// Parses `path` with the builder; members of top-level `streamed_key` go to the sink.
Json parse_file(const std::string& path, detail::JsonBuilder& builder) {
  auto f = open_for_reading(path);
  char buffer[1 << 16];
  rapidjson::FileReadStream stream(f.get(), buffer, sizeof buffer);
  builder.position = [&stream] { return stream.Tell(); };
  rapidjson::Reader reader;
  auto result = reader.Parse<detail::kDumpParseFlags>(stream, builder);
  builder.position = nullptr;
  if (result.IsError()) {
    if (builder.too_deep())
      throw std::runtime_error(path + ": offset " + std::to_string(result.Offset()) + ": nesting deeper than " +
                               std::to_string(detail::kMaxJsonDepth) + " levels (expected at most " +
                               std::to_string(detail::kMaxJsonDepth) + ")");
    std::string prefix = read_prefix(path, result.Offset() + 1);
    throw std::runtime_error(detail::describe_parse_error(path, prefix, result));
  }
  return builder.take();
}

DumpHeader header_from(const Json& top, const std::string& path) {
  DumpHeader h;
  if (!top.is_object()) throw RecordError(path, "<top>", "<document>", "a JSON object");
  if (const Json* t = top.find("task"); t && t->is_string()) h.task = t->as_string();
  if (const Json* l = top.find("level"); l && l->is_string()) h.level = l->as_string();
  if (const Json* fw = top.find("framework")) {
    h.framework = fw->is_string() ? std::optional<std::string>(fw->as_string()) : std::nullopt;
  } else {
    h.framework = std::nullopt;
  }
  if (const Json* d = top.find("dump_data_dir"); d && d->is_string()) h.dump_data_dir = d->as_string();
  return h;
}

std::string normalise_legacy_name(std::string name) {
  for (auto& c : name)
    if (c == '*') c = '.';
  return name;
}

}  // namespace

void read_dump_json(const std::string& path, const std::function<void(const DumpHeader&)>& on_header,
                    const std::function<void(ApiRecord&&)>& on_record) {
  read_dump_json(path, on_header, on_record, nullptr);
}

void read_dump_json(const std::string& path, const std::function<void(const DumpHeader&)>& on_header,
                    const std::function<void(ApiRecord&&)>& on_record,
                    const std::function<void(const std::string&, const RecordError&)>& on_bad_entry) {
  detail::JsonBuilder builder;
  bool header_sent = false;
  builder.on_stream_start = [&](const Json& top_so_far) {
    on_header(header_from(top_so_far, path));
    header_sent = true;
  };
  // Each entry once: a repeated key (JSON allows it, a dump never has it) would be replayed twice.
  std::unordered_map<std::string, std::size_t> seen;  // key → the offset just past it
  builder.stream_member("data", [&](std::string&& key, Json&& body) {
    const std::size_t at = builder.streamed_key_offset();
    if (auto [it, fresh] = seen.emplace(key, at); !fresh)
      throw std::runtime_error(path + ": entry '" + printable(key) + "' appears twice in 'data', on lines " +
                               std::to_string(line_of(path, it->second)) + " and " + std::to_string(line_of(path, at)) +
                               " (each entry once)");
    ApiRecord record;
    try {
      auto split = split_entry_name(key, path);
      if (!split) return;  // Module entries (level mix) are not API records.
      record = record_from_json(key, body, path);
    } catch (const RecordError& e) {
      if (!on_bad_entry) throw;
      on_bad_entry(key, e);
      return;
    }
    on_record(std::move(record));
  });
  Json top = parse_file(path, builder);
  if (!top.is_object()) throw RecordError(path, "<top>", "<document>", "a JSON object");
  const Json* data = top.find("data");
  if (!data || !data->is_object())
    throw RecordError(path, "<top>", "data", "an object of API entries (key missing or null)");
  if (!header_sent) on_header(header_from(top, path));
}

void read_legacy_dump(const std::string& forward_path, const std::string& backward_path,
                      const std::function<void(ApiRecord&&)>& on_record) {
  detail::JsonBuilder builder;
  Json fwd = parse_file(forward_path, builder);
  if (!fwd.is_object()) throw RecordError(forward_path, "<top>", "<document>", "a JSON object");
  Json bwd = Json::object();
  if (!backward_path.empty()) {
    detail::JsonBuilder b2;
    bwd = parse_file(backward_path, b2);
    if (!bwd.is_object()) throw RecordError(backward_path, "<top>", "<document>", "a JSON object");
  }
  for (const auto& m : fwd.members()) {
    ApiRecord r;
    r.api = normalise_legacy_name(m.first);
    r.direction = Direction::forward;
    const Json& body = m.second;
    if (!body.is_object()) throw RecordError(forward_path, m.first, "<entry>", "an object with args/kwargs");
    const Json* args = body.find("args");
    if (!args || !args->is_array()) throw RecordError(forward_path, m.first, "args", "a list");
    r.has_args = true;
    std::size_t i = 0;
    for (const auto& a : args->items())
      r.args.push_back(argument_from_json(a, forward_path, m.first, "args[" + std::to_string(i++) + "]"));
    if (const Json* kw = body.find("kwargs")) {
      if (!kw->is_object()) throw RecordError(forward_path, m.first, "kwargs", "an object");
      r.has_kwargs = true;
      for (const auto& k : kw->members()) {
        Argument arg = argument_from_json(k.second, forward_path, m.first, "kwargs." + k.first);
        if (arg.kind == Argument::Kind::scalar && arg.type_name == "NoneType") arg = Argument::none();
        r.kwargs.emplace_back(k.first, std::move(arg));
      }
    }
    on_record(std::move(r));
  }
  for (const auto& m : bwd.members()) {
    ApiRecord r;
    r.api = normalise_legacy_name(m.first);
    r.direction = Direction::backward;
    if (!m.second.is_array()) throw RecordError(backward_path, m.first, "<entry>", "a list of gradients");
    std::size_t i = 0;
    for (const auto& g : m.second.items())
      r.grad_inputs.push_back(argument_from_json(g, backward_path, m.first, "[" + std::to_string(i++) + "]"));
    on_record(std::move(r));
  }
}

StackMap read_stack_json(const std::string& path) {
  detail::JsonBuilder builder;
  Json top = parse_file(path, builder);
  if (!top.is_object()) throw RecordError(path, "<top>", "<document>", "a JSON object");
  StackMap out;
  auto lines_of = [&](const Json& j, const std::string& key) {
    if (!j.is_array()) throw RecordError(path, key, "<stack>", "a list of stack lines");
    std::vector<std::string> lines;
    for (const auto& l : j.items()) {
      if (!l.is_string()) throw RecordError(path, key, "<stack>", "stack lines as strings");
      lines.push_back(l.as_string());
    }
    return lines;
  };
  if (top.find("0")) {  // current layout: "N": [[entry names], [stack lines]]
    for (const auto& m : top.members()) {
      const Json& v = m.second;
      if (!v.is_array() || v.items().size() != 2 || !v.items()[0].is_array())
        throw RecordError(path, m.first, "<group>", "[[entry names], [stack lines]]");
      auto lines = lines_of(v.items()[1], m.first);
      for (const auto& name : v.items()[0].items()) {
        if (!name.is_string()) throw RecordError(path, m.first, "<names>", "entry names as strings");
        out.emplace_back(name.as_string(), lines);
      }
    }
  } else {
    for (const auto& m : top.members()) out.emplace_back(m.first, lines_of(m.second, m.first));
  }
  return out;
}

void attach_stacks(std::vector<ApiRecord>& records, const StackMap& stacks) {
  std::unordered_map<std::string, const std::vector<std::string>*> by_entry;
  for (const auto& [entry, lines] : stacks) by_entry.emplace(entry, &lines);
  for (auto& r : records) {
    auto it = by_entry.find(r.entry_name());
    if (it != by_entry.end()) r.stack = *it->second;
  }
}

}  // namespace acccheck
