#include "details_columns.hpp"

#include "output_value.hpp"

namespace acccheck::replay {

int details_column_index(std::string_view column) {
  for (std::size_t i = 0; i < kDetailsColumns.size(); ++i)
    if (kDetailsColumns[i] == column) return static_cast<int>(i);
  return -1;
}

void DetailsRow::set(std::string_view column, std::string text) {
  int i = details_column_index(column);
  if (i >= 0) cells[static_cast<std::size_t>(i)] = std::move(text);
}

std::string shape_tuple_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string torch_size_text(const std::vector<std::int64_t>& shape) {
  std::string s = "torch.Size([";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "])";
}

}  // namespace acccheck::replay
