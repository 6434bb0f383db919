#include "commands/compare/details_table.hpp"

#include <acccheck/csv.hpp>

#include <algorithm>
#include <cstring>

namespace acccheck::host {

const std::vector<std::string>& required_details_columns() {
  static const std::vector<std::string> cols = {
      "API Name", "DEVICE Dtype", "小值域错误占比", "均方根误差", "相对误差最大值", "相对误差平均值", "误差均衡性",
      "二进制一致错误率", "inf/nan错误率", "相对误差错误率", "绝对误差错误率", "ULP误差平均值", "ULP误差大于阈值占比",
      "双千指标"};
  return cols;
}

std::optional<std::size_t> DetailsHeader::find(std::string_view column) const {
  auto it = index.find(column);
  if (it == index.end()) return std::nullopt;
  return it->second;
}

DetailsHeader read_details_header(CsvReader& reader) {
  DetailsHeader h;
  try {
    if (!reader.next(h.columns))
      throw InputError(reader.path() + ": empty file, expected the header line of an accuracy_checking_details CSV");
  } catch (const CsvError& e) {
    throw InputError(e.what());
  }
  for (std::size_t i = 0; i < h.columns.size(); ++i) h.index.emplace(h.columns[i], i);
  std::string missing;
  for (const auto& c : required_details_columns())
    if (!h.index.count(std::string_view(c))) missing += (missing.empty() ? "'" : ", '") + c + "'";
  if (!missing.empty())
    throw InputError(reader.path() + ": line 1: missing required column(s) " + missing +
                     " (expected an accuracy_checking_details CSV written by run_ut)");
  return h;
}

std::string_view DetailsRow::cell(std::string_view column) const {
  auto i = header_.find(column);
  if (!i || *i >= cells_.size()) return {};
  return cells_[*i];
}

std::string_view IndexedRow::cell(std::string_view column) const {
  auto it = positions_.find(column);
  return it == positions_.end() ? std::string_view() : cells_[it->second];
}

const char* GpuIndex::store(std::string_view bytes) {
  constexpr std::size_t kBlock = 4 << 20;
  if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < bytes.size()) {
    blocks_.emplace_back();
    blocks_.back().reserve(std::max(kBlock, bytes.size()));
  }
  std::string& b = blocks_.back();
  const char* p = b.data() + b.size();
  b.append(bytes);  // never reallocates: capacity was checked
  return p;
}

namespace {
std::uint32_t record_line(const char* record) {
  std::uint32_t line;
  std::memcpy(&line, record, sizeof line);
  return line;
}
std::string_view record_name(const char* record) { return std::string_view(record + sizeof(std::uint32_t)); }
}  // namespace

const char* GpuIndex::lookup(std::string_view name) const {
  const char* found = nullptr;
  table_.find_or_insert(hash_name(name), 0, false, [&](std::uint64_t payload) {
    const char* record = reinterpret_cast<const char*>(payload);
    if (record_name(record) != name) return false;
    found = record;
    return true;
  });
  return found;
}

void GpuIndex::load(const std::string& path, const std::vector<std::string>& extra_columns) {
  CsvReader reader(path);
  DetailsHeader header = read_details_header(reader);
  std::vector<std::size_t> kept_idx;
  auto keep = [&](const std::string& column) {
    auto i = header.find(column);
    if (!i || column == "API Name" || std::find(kept_.begin(), kept_.end(), column) != kept_.end()) return;
    kept_.push_back(column);
    kept_idx.push_back(*i);
  };
  for (const auto& c : required_details_columns()) keep(c);
  for (const auto& c : extra_columns) keep(c);
  for (std::size_t i = 0; i < kept_.size(); ++i) positions_.emplace(kept_[i], i);
  const std::size_t name_idx = *header.find("API Name");
  std::vector<std::string> fields;
  std::string packed;
  try {
    while (reader.next(fields)) {
      if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
      if (fields.size() != header.columns.size())
        throw InputError(path + ": line " + std::to_string(reader.record_line()) + ": expected " +
                         std::to_string(header.columns.size()) + " fields, found " + std::to_string(fields.size()) +
                         " (truncated or malformed row)");
      const std::string& name = fields[name_idx];
      const std::uint32_t line = static_cast<std::uint32_t>(reader.record_line());
      if (const char* earlier = lookup(name))
        throw InputError(path + ": line " + std::to_string(line) + ": API Name '" + printable(name) +
                         "' already appears on line " + std::to_string(record_line(earlier)) +
                         " (each output row must be unique)");
      packed.assign(reinterpret_cast<const char*>(&line), sizeof line);
      packed += name;
      packed.push_back('\0');
      for (std::size_t i : kept_idx) {
        packed += fields[i];
        packed.push_back('\0');
      }
      const char* record = store(packed);
      table_.find_or_insert(hash_name(name), reinterpret_cast<std::uint64_t>(record), true,
                            [](std::uint64_t) { return false; });
      ++rows_;
    }
  } catch (const CsvError& e) {
    throw InputError(e.what());
  }
}

bool GpuIndex::find(std::string_view name, std::vector<std::string_view>& cells) const {
  const char* record = lookup(name);
  if (!record) return false;
  cells.clear();
  const char* p = record + sizeof(std::uint32_t);
  p += std::strlen(p) + 1;  // skip the name
  for (std::size_t i = 0; i < kept_.size(); ++i) {
    std::string_view c(p);
    cells.push_back(c);
    p += c.size() + 1;
  }
  return true;
}

}  // namespace acccheck::host
