// dump.json / stack.json writers in msprobe's layout (json.dump indent=1).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "acccheck/output_file.hpp"
#include "acccheck/record.hpp"

namespace acccheck {

struct DumpJsonWriter::Impl {
  AtomicOutputFile file;
  bool first = true;
  bool finished = false;
  explicit Impl(std::string path) : file(std::move(path), 0640) {}
};

DumpJsonWriter::DumpJsonWriter(std::string path, DumpHeader header) : impl_(new Impl(std::move(path))) {
  Json top = Json::object();
  top.add("task", Json::string(header.task));
  top.add("level", Json::string(header.level));
  if (header.framework) top.add("framework", Json::string(*header.framework));
  top.add("dump_data_dir", header.dump_data_dir ? Json::string(*header.dump_data_dir) : Json());
  std::string head = to_json_text(top, 1);
  head.pop_back();  // drop the closing "\n}" to continue with "data"
  head.pop_back();
  head += ",\n \"data\": {";
  impl_->file.write(head);
}

DumpJsonWriter::~DumpJsonWriter() { delete impl_; }

void DumpJsonWriter::write(const ApiRecord& record) {
  std::string out = impl_->first ? "\n  " : ",\n  ";
  impl_->first = false;
  Json key = Json::string(record.entry_name());
  write_json(out, key, 1, 2);
  out += ": ";
  write_json(out, record_to_json(record), 1, 2);
  impl_->file.write(out);
  impl_->file.flush();
}

void DumpJsonWriter::finish() {
  if (impl_->finished) return;
  impl_->file.write(impl_->first ? "}\n}" : "\n }\n}");
  impl_->file.commit();
  impl_->finished = true;
}

void write_stack_json(const std::string& path, const StackMap& stacks) {
  // De-duplicated layout: identical stacks share one group, groups numbered in first-use order.
  Json top = Json::object();
  std::vector<std::pair<std::vector<std::string>, Json>> groups;  // stack → names
  for (const auto& [entry, lines] : stacks) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == lines; });
    if (it == groups.end()) {
      groups.emplace_back(lines, Json::array());
      it = groups.end() - 1;
    }
    it->second.push_back(Json::string(entry));
  }
  std::size_t n = 0;
  for (auto& [lines, names] : groups) {
    Json pair = Json::array();
    pair.push_back(names);
    Json l = Json::array();
    for (const auto& s : lines) l.push_back(Json::string(s));
    pair.push_back(l);
    top.add(std::to_string(n++), pair);
  }
  AtomicOutputFile file(path, 0640);
  file.write(to_json_text(top, 1));
  file.commit();
}

}  // namespace acccheck
