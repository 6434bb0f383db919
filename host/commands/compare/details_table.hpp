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
  std::unordered_map<std::string, std::size_t> index;
  std::optional<std::size_t> find(std::string_view column) const;
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

// The GPU details file, indexed by API Name. Only the columns a judgement can read are kept
// (Message, Shape, dtype text of the bench are dropped), packed into large blocks.
class GpuIndex {
 public:
  // Throws InputError (duplicate names name both lines, missing columns, short rows).
  void load(const std::string& path);
  struct Hit {
    std::vector<std::string_view> cells;  // by kept-column position
    std::size_t line;
  };
  bool find(std::string_view name, std::vector<std::string_view>& cells) const;
  const std::vector<std::string>& kept_columns() const { return kept_; }
  std::size_t size() const { return rows_.size(); }

 private:
  struct Entry {
    const char* cells;      // kept cells, each terminated by '\0'
    std::uint32_t line;
  };
  const char* store(std::string_view bytes);
  std::vector<std::string> kept_;
  std::deque<std::string> blocks_;
  std::unordered_map<std::string_view, Entry> rows_;
};

// RowView over the cells GpuIndex::find returned.
class IndexedRow final : public RowView {
 public:
  IndexedRow(const std::vector<std::string>& columns, const std::vector<std::string_view>& cells)
      : columns_(columns), cells_(cells) {}
  std::string_view cell(std::string_view column) const override;
  bool has_column(std::string_view column) const override;

 private:
  const std::vector<std::string>& columns_;
  const std::vector<std::string_view>& cells_;
};

}  // namespace acccheck::host
