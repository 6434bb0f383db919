// Reading run_ut details CSVs for compare: the header and its required columns, rows as RowViews,
// and the GPU side as a compact hash index (name → row) so the NPU file streams past it once.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <acccheck/csv.hpp>
#include <acccheck/metric.hpp>

#include "commands/compare/name_hash_table.hpp"

namespace acccheck::host {

// A problem with an input file: one line naming file, line and what was expected.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Columns api_precision_compare requires in both files (precision-standards.md §6.2).
const std::vector<std::string>& required_details_columns();

struct DetailsHeader {
  std::vector<std::string> columns;
  std::unordered_map<std::string_view, std::size_t> index;  // views into `columns`
  std::optional<std::size_t> find(std::string_view column) const;
  DetailsHeader() = default;
  DetailsHeader(const DetailsHeader&) = delete;  // index points into columns
  DetailsHeader(DetailsHeader&&) = default;      // a vector move keeps its elements in place
};

// Opens a details CSV and validates its header; throws InputError.
DetailsHeader read_details_header(CsvReader& reader);

// One row's cells, looked up by column name.
class DetailsRow final : public RowView {
 public:
  DetailsRow(const DetailsHeader& header, const std::vector<std::string>& cells) : header_(header), cells_(cells) {}
  std::string_view cell(std::string_view column) const override;
  bool has_column(std::string_view column) const override { return header_.find(column).has_value(); }

 private:
  const DetailsHeader& header_;
  const std::vector<std::string>& cells_;
};

// The GPU details file, indexed by API Name. Only the columns a judgement may read are kept — the
// required metric columns plus those the loaded metric plugins name — packed into large blocks
// behind a compact hash table, so a million-API file fits the memory budget.
class GpuIndex {
 public:
  // Throws InputError (duplicate names name both lines, missing columns, short rows).
  void load(const std::string& path, const std::vector<std::string>& extra_columns);
  bool find(std::string_view name, std::vector<std::string_view>& cells) const;
  const std::vector<std::string>& kept_columns() const { return kept_; }
  const std::unordered_map<std::string_view, std::size_t>& positions() const { return positions_; }
  std::size_t size() const { return rows_; }

 private:
  // A stored record: uint32 line, name, '\0', then each kept cell followed by '\0'.
  const char* store(std::string_view bytes);
  const char* lookup(std::string_view name) const;
  std::vector<std::string> kept_;
  std::unordered_map<std::string_view, std::size_t> positions_;  // views into kept_
  std::deque<std::string> blocks_;
  mutable NameHashTable table_;
  std::size_t rows_ = 0;
};

// RowView over the cells GpuIndex::find returned.
class IndexedRow final : public RowView {
 public:
  IndexedRow(const std::unordered_map<std::string_view, std::size_t>& positions,
             const std::vector<std::string_view>& cells)
      : positions_(positions), cells_(cells) {}
  std::string_view cell(std::string_view column) const override;
  bool has_column(std::string_view column) const override { return positions_.count(column) != 0; }

 private:
  const std::unordered_map<std::string_view, std::size_t>& positions_;
  const std::vector<std::string_view>& cells_;
};

}  // namespace acccheck::host
