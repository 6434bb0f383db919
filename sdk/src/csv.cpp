#include "acccheck/csv.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace acccheck {

CsvReader::CsvReader(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw std::runtime_error(path_ + ": is a directory, expected a CSV file");
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
  fields.clear();
  if (pos_ >= buf_.size() && !fill()) return false;
  if (first_) {
    first_ = false;
    while (buf_.size() < 3 && fill()) {}
    if (buf_.compare(0, 3, kUtf8Bom) == 0) pos_ = 3;
    if (pos_ >= buf_.size() && !fill()) return false;
  }
  record_line_ = line_;
  std::string field;
  bool in_quotes = false, was_quoted = false, any = false;
  std::size_t quote_line = line_;
  while (true) {
    if (pos_ >= buf_.size() && !fill()) {
      if (in_quotes) throw CsvError(path_, quote_line, "unterminated quoted field (file truncated?)");
      break;
    }
    char c = buf_[pos_++];
    any = true;
    if (in_quotes) {
      if (c == '"') {
        if (pos_ >= buf_.size()) fill();
        if (pos_ < buf_.size() && buf_[pos_] == '"') {
          field.push_back('"');
          ++pos_;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line_;
        field.push_back(c);
      }
      continue;
    }
    if (c == '"' && field.empty() && !was_quoted) {
      in_quotes = was_quoted = true;
      quote_line = line_;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r') {
        if (pos_ >= buf_.size()) fill();
        if (pos_ < buf_.size() && buf_[pos_] == '\n') ++pos_;
      }
      ++line_;
      break;
    } else {
      field.push_back(c);
    }
  }
  if (!any) return false;
  fields.push_back(std::move(field));
  for (const auto& f : fields) {
    std::size_t bad = find_invalid_utf8(f);
    if (bad != std::string::npos)
      throw CsvError(path_, record_line_, "invalid UTF-8 (byte offset " + std::to_string(bad) + " in a field)");
  }
  return true;
}

void append_csv_field(std::string& out, std::string_view f) {
  bool quote = f.find_first_of(",\"\r\n") != std::string_view::npos;
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

}  // namespace acccheck
