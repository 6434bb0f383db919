// CSV in the reference's dialect: UTF-8 with BOM, comma, CRLF, fields quoted only when they hold a
// comma, quote or line break (Python csv QUOTE_MINIMAL). The reader streams records, accepts
// quoted line breaks, LF or CRLF, and reports 1-based physical line numbers.
#pragma once

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace acccheck {

class CsvError : public std::runtime_error {
 public:
  CsvError(const std::string& file, std::size_t line, const std::string& what)
      : std::runtime_error(file + ": line " + std::to_string(line) + ": " + what), line_(line) {}
  std::size_t line() const { return line_; }

 private:
  std::size_t line_;
};

class CsvReader {
 public:
  static constexpr std::size_t kMaxRecordBytes = std::size_t{64} << 20;
  // Throws "<path>: cannot open: <reason>" / "<path>: is a directory, expected a CSV file".
  explicit CsvReader(std::string path);
  ~CsvReader();
  // Next record into `fields`; false at end of file. Throws CsvError for an unterminated quote
  // or invalid UTF-8.
  bool next(std::vector<std::string>& fields);
  // Physical line where the last record returned by next() started.
  std::size_t record_line() const { return record_line_; }
  const std::string& path() const { return path_; }

 private:
  bool fill();
  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buf_;
  std::size_t pos_ = 0;
  bool eof_ = false;
  bool first_ = true;
  std::size_t line_ = 1;
  std::size_t record_line_ = 0;
};

// Every record of a (small) CSV file, header included. Throws as CsvReader does.
std::vector<std::vector<std::string>> read_csv_records(const std::string& path);

// Appends one record (with CRLF) to `out`.
void append_csv_record(std::string& out, const std::vector<std::string>& fields);
void append_csv_field(std::string& out, std::string_view field);

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// A cell a spreadsheet would run as a formula: a formula character (+ - = % @, or their
// full-width forms) at its start or after ';', leading white space (space, tab, CR, LF) skipped —
// the reference's pattern ^[＋－＝％＠+\-=%@]|;[＋－＝％＠+\-=%@], hardened.
bool looks_like_csv_injection(std::string_view cell);
// The cell as written to an output CSV: a formula-looking cell copied from an input gets the
// usual guard, a leading single quote, so no spreadsheet runs it.
std::string guard_formula(std::string_view cell);
// Text safe to put in one log/error line: line breaks, tabs, ESC and other control bytes become
// \n, \r, \t, \xNN, so a name cannot forge a second line or colour the terminal.
std::string printable(std::string_view text);

// Validates UTF-8; returns the byte offset of the first invalid sequence or npos.
std::size_t find_invalid_utf8(std::string_view s);

}  // namespace acccheck
