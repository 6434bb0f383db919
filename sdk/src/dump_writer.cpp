// dump.json / stack.json writers in msprobe's layout (json.dump indent=1).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "acccheck/output_file.hpp"
#include "acccheck/record.hpp"
#include "dump_json_layout.hpp"

namespace acccheck {

struct DumpJsonWriter::Impl {
  AtomicOutputFile file;
  bool first = true;
  bool finished = false;
  explicit Impl(std::string path) : file(std::move(path), 0640) {}
};

DumpJsonWriter::DumpJsonWriter(std::string path, DumpHeader header) : impl_(new Impl(std::move(path))) {
  impl_->file.write(detail::dump_json_head(header));
}

DumpJsonWriter::~DumpJsonWriter() { delete impl_; }

void DumpJsonWriter::write(const ApiRecord& record) {
  impl_->file.write(detail::dump_json_entry(record, impl_->first));
  impl_->first = false;
  impl_->file.flush();
}

void DumpJsonWriter::finish() {
  if (impl_->finished) return;
  impl_->file.write(std::string(detail::dump_json_close(!impl_->first)));
  impl_->file.commit();
  impl_->finished = true;
}

namespace detail {

std::string dump_json_head(const DumpHeader& header) {
  Json top = Json::object();
  top.add("task", Json::string(header.task));
  top.add("level", Json::string(header.level));
  if (header.framework) top.add("framework", Json::string(*header.framework));
  top.add("dump_data_dir", header.dump_data_dir ? Json::string(*header.dump_data_dir) : Json());
  std::string head = to_json_text(top, 1);
  head.resize(head.size() - 2);  // drop the closing "\n}" to continue with "data"
  return head + ",\n \"data\": {";
}

std::string dump_json_entry(const ApiRecord& record, bool first) {
  std::string out = first ? "\n  " : ",\n  ";
  write_json(out, Json::string(record.entry_name()), 1, 2);
  out += ": ";
  write_json(out, record_to_json(record), 1, 2);
  return out;
}

}  // namespace detail

namespace {

Json legacy_argument(const Argument& a) {
  switch (a.kind) {
    case Argument::Kind::none: {
      Json j = Json::object();
      j.add("type", Json::string("NoneType"));
      j.add("value", Json());
      return j;
    }
    case Argument::Kind::tensor: {
      const TensorSpec& t = a.tensor;
      Json j = Json::object();
      j.add("type", Json::string(t.type));
      if (t.shape.empty() && t.dtype.empty() && !t.data_name.empty()) {  // real-data element
        j.add("datapath", Json::string(t.data_name));
        j.add("requires_grad", Json::boolean(t.requires_grad));
        return j;
      }
      j.add("dtype", Json::string(t.dtype));
      Json shape = Json::array();
      for (auto d : t.shape) shape.push_back(Json::integer(d));
      j.add("shape", shape);
      auto stat = [](const Statistic& st) {
        if (!st.present()) return Json();
        return st.kind == Statistic::Kind::number ? Json::number(st.value) : Json::integer(static_cast<std::int64_t>(st.value));
      };
      j.add("Max", stat(t.max));
      if (t.max_origin) j.add("Max_origin", Json::number(*t.max_origin));
      j.add("Min", stat(t.min));
      if (t.min_origin) j.add("Min_origin", Json::number(*t.min_origin));
      j.add("requires_grad", Json::boolean(t.requires_grad));
      return j;
    }
    case Argument::Kind::list: {
      Json j = Json::array();
      for (const auto& item : a.items) j.push_back(legacy_argument(item));
      return j;
    }
    case Argument::Kind::dict: {
      Json j = Json::object();
      for (const auto& m : a.members) j.add(m.first, legacy_argument(m.second));
      return j;
    }
    default: return argument_to_json(a);
  }
}

void write_compact_object(const std::string& path, const std::vector<Json::Member>& members) {
  // One entry per line, as the legacy dumper appended them.
  std::string out = "{";
  for (std::size_t i = 0; i < members.size(); ++i) {
    out += i ? ",\n" : "\n";
    write_json(out, Json::string(members[i].first), -1, 0);
    out += ": ";
    write_json(out, members[i].second, -1, 0);
  }
  out += "\n}";
  AtomicOutputFile file(path, 0640);
  file.write(out);
  file.commit();
}

}  // namespace

void write_legacy_dump(const std::string& forward_path, const std::string& backward_path,
                       const std::vector<ApiRecord>& records) {
  std::vector<Json::Member> forward, backward;
  for (const auto& r : records) {
    if (r.direction == Direction::forward) {
      Json body = Json::object();
      Json args = Json::array();
      for (const auto& a : r.args) args.push_back(legacy_argument(a));
      body.add("args", args);
      Json kwargs = Json::object();
      for (const auto& [k, v] : r.kwargs) kwargs.add(k, legacy_argument(v));
      body.add("kwargs", kwargs);
      forward.emplace_back(r.api, body);
    } else {
      Json grads = Json::array();
      for (const auto& g : r.grad_inputs) grads.push_back(legacy_argument(g));
      backward.emplace_back(r.api, grads);
    }
  }
  write_compact_object(forward_path, forward);
  if (!backward_path.empty()) write_compact_object(backward_path, backward);
}

std::string stack_json_text(const StackMap& stacks) {
  // De-duplicated layout: identical stacks share one group, groups numbered in first-use order.
  Json top = Json::object();
  std::vector<std::pair<std::vector<std::string>, Json>> groups;  // stack → names
  for (const auto& item : stacks) {
    const std::string& entry = item.first;
    const std::vector<std::string>& lines = item.second;  // not a structured binding: lambdas capture it (C++17)
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
  return to_json_text(top, 1);
}

void write_stack_json(const std::string& path, const StackMap& stacks) {
  AtomicOutputFile file(path, 0640);
  file.write(stack_json_text(stacks));
  file.commit();
}

}  // namespace acccheck
