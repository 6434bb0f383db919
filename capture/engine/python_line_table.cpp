#include "engine/python_line_table.hpp"

#include <algorithm>
#include <cstdint>

namespace acccheck::capture {

namespace {

constexpr int kCodeUnitBytes = 2;  // sizeof(_Py_CODEUNIT), 3.11–3.14

// An entry's first byte: bit 7 set, bits 3–6 its kind, bits 0–2 its length in code units minus one.
// The bytes that follow it have bit 7 clear.
constexpr int kNoLocation = 15;  // no line: the range's line is -1
constexpr int kLong = 14;        // signed varint line delta, then end line, columns
constexpr int kNoColumns = 13;   // signed varint line delta
constexpr int kOneLine0 = 10;    // 10, 11, 12: line delta 0, 1, 2, then two column bytes
                                 // 0–9: short forms, same line

// A varint of 6-bit chunks, least significant first, bit 6 meaning "more follows". Stops at `end`.
unsigned read_varint(const std::uint8_t*& p, const std::uint8_t* end) {
  if (p == end) return 0;
  unsigned byte = *p++;
  unsigned value = byte & 63;
  for (unsigned shift = 6; (byte & 64) && p != end && shift < 32; shift += 6) {
    byte = *p++;
    value |= (byte & 63) << shift;
  }
  return value;
}

int read_signed_varint(const std::uint8_t*& p, const std::uint8_t* end) {
  const unsigned v = read_varint(p, end);
  return (v & 1) ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
}

}  // namespace

bool python_line_table_readable(unsigned long py_version_hex) {
  return py_version_hex >= 0x030B0000ul && py_version_hex < 0x030F0000ul;
}

PythonLineTable::PythonLineTable(std::string_view table, int first_line) : first_line_(first_line) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(table.data());
  const auto* const end = p + table.size();
  int line = first_line;
  int offset = 0;
  while (p != end) {
    const std::uint8_t head = *p;
    if (!(head & 0x80)) break;  // not at an entry's first byte: malformed, stop here
    const int kind = (head >> 3) & 15;
    const int units = (head & 7) + 1;
    const std::uint8_t* next = p + 1;
    if (kind == kLong || kind == kNoColumns)
      line += read_signed_varint(next, end);
    else if (kind >= kOneLine0 && kind < kNoColumns)
      line += kind - kOneLine0;
    offset += units * kCodeUnitBytes;
    const int range_line = kind == kNoLocation ? -1 : line;
    if (!ranges_.empty() && ranges_.back().second == range_line)
      ranges_.back().first = offset;  // the same line continues
    else
      ranges_.emplace_back(offset, range_line);
    p = next;
    while (p != end && !(*p & 0x80)) ++p;  // the rest of the entry (columns)
  }
}

int PythonLineTable::line_at(int offset) const {
  if (offset < 0) return first_line_;
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), offset,
                             [](int off, const std::pair<int, int>& r) { return off < r.first; });
  return it == ranges_.end() ? -1 : it->second;
}

}  // namespace acccheck::capture
