#include "acccheck/csv.hpp"

#include <cstdio>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace acccheck {

CsvReader::CsvReader(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw std::runtime_error(path_ + ": is a directory, expected a CSV file");
  // Inputs are read more than once (duplicate names are re-read from their line) and must end: a
  // pipe, a FIFO (which would block right here) or a device is refused before it is opened.
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw std::runtime_error(path_ + ": not a regular file (a pipe, FIFO or device), expected a CSV file; save it to a file first");
  file_ = std::fopen(path_.c_str(), "rb");
  if (!file_) throw std::runtime_error(path_ + ": cannot open: " + std::strerror(errno));
}

CsvReader::~CsvReader() {
  if (file_) std::fclose(file_);
}

bool CsvReader::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  char chunk[1 << 16];
  std::size_t n = std::fread(chunk, 1, sizeof chunk, file_);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  buf_.append(chunk, n);
  return true;
}

bool CsvReader::next(std::vector<std::string>& fields) {
  // Field strings are reused between records (their capacity survives), so steady-state reading
  // does not allocate.
  std::size_t nfields = 0;
  auto begin_field = [&]() -> std::string& {
    if (nfields == fields.size()) fields.emplace_back();
    std::string& f = fields[nfields++];
    f.clear();
    return f;
  };
  if (pos_ >= buf_.size() && !fill()) {
    fields.clear();
    return false;
  }
  if (first_) {
    first_ = false;
    while (buf_.size() < 3 && fill()) {}
    if (buf_.compare(0, 3, kUtf8Bom) == 0) pos_ = 3;
    if (pos_ >= buf_.size() && !fill()) {
      fields.clear();
      return false;
    }
  }
  record_line_ = line_;
  std::string* field = &begin_field();
  bool in_quotes = false, was_quoted = false;
  std::size_t quote_line = line_;
  bool special = false;  // a byte >= 0x7F or a control byte: checked after the record
  std::size_t record_bytes = 0;
  // One record may not grow without bound (a file without line breaks, a corrupt quote).
  auto check_record_size = [&](std::size_t n) {
    if (n > kMaxRecordBytes)
      throw CsvError(path_, record_line_, "a record longer than " + std::to_string(kMaxRecordBytes >> 20) +
                                              " MiB (a missing line break or an unterminated quote?)");
  };
  auto is_special = [](char ch) {
    auto u = static_cast<unsigned char>(ch);
    return u >= 0x7f || (u < 0x20 && ch != '\n' && ch != '\r');
  };
  while (true) {
    if (pos_ >= buf_.size() && !fill()) {
      if (in_quotes) throw CsvError(path_, quote_line, "unterminated quoted field (file truncated?)");
      break;
    }
    const char* data = buf_.data();
    const std::size_t size = buf_.size();
    if (in_quotes) {
      // Copy the run up to the next quote in one go.
      std::size_t q = buf_.find('"', pos_);
      std::size_t stop = q == std::string::npos ? size : q;
      for (std::size_t i = pos_; i < stop; ++i) {
        if (data[i] == '\n') ++line_;
        special |= is_special(data[i]);
      }
      field->append(data + pos_, stop - pos_);
      record_bytes += stop - pos_;
      pos_ = stop;
      if (q == std::string::npos) {
        check_record_size(record_bytes);
        continue;  // refill
      }
      ++pos_;  // the quote
      if (pos_ >= buf_.size()) fill();
      if (pos_ < buf_.size() && buf_[pos_] == '"') {
        field->push_back('"');
        ++pos_;
      } else {
        in_quotes = false;
      }
      continue;
    }
    // Unquoted: copy the run of ordinary characters.
    std::size_t i = pos_;
    while (i < size) {
      char c = data[i];
      if (c == ',' || c == '\r' || c == '\n' || c == '"') break;
      special |= is_special(c);
      ++i;
    }
    field->append(data + pos_, i - pos_);
    record_bytes += i - pos_;
    pos_ = i;
    if (i == size) {
      check_record_size(record_bytes);
      continue;  // refill
    }
    char c = data[pos_++];
    if (c == '"') {
      if (field->empty() && !was_quoted) {
        in_quotes = was_quoted = true;
        quote_line = line_;
      } else {
        field->push_back('"');
      }
    } else if (c == ',') {
      field = &begin_field();
      was_quoted = false;
    } else {  // line end
      if (c == '\r') {
        if (pos_ >= buf_.size()) fill();
        if (pos_ < buf_.size() && buf_[pos_] == '\n') ++pos_;
      }
      ++line_;
      break;
    }
  }
  fields.resize(nfields);
  if (special) {
    for (std::size_t k = 0; k < fields.size(); ++k) {
      const auto& f = fields[k];
      std::size_t bad = find_invalid_utf8(f);
      if (bad != std::string::npos)
        throw CsvError(path_, record_line_, "invalid UTF-8 (byte offset " + std::to_string(bad) + " in a field)");
      // A control byte (NUL, ESC, ...) is never data in these files; a NUL would also end a cell
      // early in tools that use C strings. Tab, CR and LF (inside quotes) are text.
      for (std::size_t i = 0; i < f.size(); ++i) {
        auto u = static_cast<unsigned char>(f[i]);
        if ((u < 0x20 && u != '\t' && u != '\n' && u != '\r') || u == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02X", u);
          throw CsvError(path_, record_line_, std::string("control byte ") + hex + " in field " + std::to_string(k + 1) +
                                                  " (byte offset " + std::to_string(i) + "); expected text");
        }
      }
    }
  }
  return true;
}

void append_csv_field(std::string& out, std::string_view f) {
  bool quote = false;
  for (char c : f)
    if (c == ',' || c == '"' || c == '\r' || c == '\n') {
      quote = true;
      break;
    }
  if (!quote) {
    out.append(f);
    return;
  }
  out.push_back('"');
  for (char c : f) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

void append_csv_record(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out.push_back(',');
    append_csv_field(out, fields[i]);
  }
  out += "\r\n";
}

std::size_t find_invalid_utf8(std::string_view s) {
  std::size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) { ++i; continue; }
    int len = (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    if (len == 0 || i + len > n) return i;
    for (int k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    i += static_cast<std::size_t>(len);
  }
  return std::string::npos;
}

std::vector<std::vector<std::string>> read_csv_records(const std::string& path) {
  CsvReader r(path);
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> f;
  while (r.next(f)) out.push_back(f);
  return out;
}

namespace {
bool formula_char_at(std::string_view s, std::size_t i) {
  static constexpr std::string_view fullwidth[] = {"＋", "－", "＝", "％", "＠"};
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
  if (i >= s.size()) return false;
  if (s[i] == '+' || s[i] == '-' || s[i] == '=' || s[i] == '%' || s[i] == '@') return true;
  for (auto f : fullwidth)
    if (s.substr(i, f.size()) == f) return true;
  return false;
}
}  // namespace

bool looks_like_csv_injection(std::string_view cell) {
  if (formula_char_at(cell, 0)) return true;
  for (std::size_t i = cell.find(';'); i != std::string_view::npos; i = cell.find(';', i + 1))
    if (formula_char_at(cell, i + 1)) return true;
  return false;
}

std::string guard_formula(std::string_view cell) {
  return looks_like_csv_injection(cell) ? "'" + std::string(cell) : std::string(cell);
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace acccheck
