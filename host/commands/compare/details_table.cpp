#include "commands/compare/details_table.hpp"

#include <algorithm>

namespace acccheck::host {

const std::vector<std::string>& required_details_columns() {
  static const std::vector<std::string> cols = {
      "API Name", "DEVICE Dtype", "小值域错误占比", "均方根误差", "相对误差最大值", "相对误差平均值", "误差均衡性",
      "二进制一致错误率", "inf/nan错误率", "相对误差错误率", "绝对误差错误率", "ULP误差平均值", "ULP误差大于阈值占比",
      "双千指标"};
  return cols;
}

std::optional<std::size_t> DetailsHeader::find(std::string_view column) const {
  auto it = index.find(std::string(column));
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
    if (!h.index.count(c)) missing += (missing.empty() ? "'" : ", '") + c + "'";
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
  for (std::size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i] == column) return cells_[i];
  return {};
}

bool IndexedRow::has_column(std::string_view column) const {
  return std::find(columns_.begin(), columns_.end(), column) != columns_.end();
}

const char* GpuIndex::store(std::string_view bytes) {
  constexpr std::size_t kBlock = 1 << 20;
  if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < bytes.size()) {
    blocks_.emplace_back();
    blocks_.back().reserve(std::max(kBlock, bytes.size()));
  }
  std::string& b = blocks_.back();
  const char* p = b.data() + b.size();
  b.append(bytes);  // never reallocates: capacity was checked
  return p;
}

void GpuIndex::load(const std::string& path) {
  CsvReader reader(path);
  DetailsHeader header = read_details_header(reader);
  static const char* dropped[] = {"Message", "Shape", "Bench Dtype", "Status", "API Name"};
  std::vector<std::size_t> kept_idx;
  for (std::size_t i = 0; i < header.columns.size(); ++i) {
    bool drop = std::any_of(std::begin(dropped), std::end(dropped), [&](const char* d) { return header.columns[i] == d; });
    if (!drop) {
      kept_.push_back(header.columns[i]);
      kept_idx.push_back(i);
    }
  }
  const std::size_t name_idx = header.index.at("API Name");
  std::vector<std::string> fields;
  std::string packed;
  try {
    while (reader.next(fields)) {
      if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
      if (fields.size() != header.columns.size())
        throw InputError(path + ": line " + std::to_string(reader.record_line()) + ": expected " +
                         std::to_string(header.columns.size()) + " fields, found " + std::to_string(fields.size()) +
                         " (truncated or malformed row)");
      packed.clear();
      for (std::size_t i : kept_idx) {
        packed += fields[i];
        packed.push_back('\0');
      }
      const char* cells = store(packed);
      const std::string& name = fields[name_idx];
      std::string key = name;
      key.push_back('\0');
      const char* key_ptr = store(key);
      auto [it, inserted] = rows_.emplace(std::string_view(key_ptr, name.size()),
                                          Entry{cells, static_cast<std::uint32_t>(reader.record_line())});
      if (!inserted)
        throw InputError(path + ": line " + std::to_string(reader.record_line()) + ": API Name '" + name +
                         "' already appears on line " + std::to_string(it->second.line) +
                         " (each output row must be unique)");
    }
  } catch (const CsvError& e) {
    throw InputError(e.what());
  }
}

bool GpuIndex::find(std::string_view name, std::vector<std::string_view>& cells) const {
  auto it = rows_.find(name);
  if (it == rows_.end()) return false;
  cells.clear();
  const char* p = it->second.cells;
  for (std::size_t i = 0; i < kept_.size(); ++i) {
    std::string_view c(p);
    cells.push_back(c);
    p += c.size() + 1;
  }
  return true;
}

}  // namespace acccheck::host
