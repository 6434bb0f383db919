// A small ordered JSON value, enough for dump records: object keys keep file order (run_ut
// processes entries in file order) and non-strict numbers (NaN, Infinity) survive a round trip.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace acccheck {

class Json {
 public:
  enum class Type { null, boolean, integer, number, string, array, object };
  using Member = std::pair<std::string, Json>;

  Json() = default;
  static Json boolean(bool b) { Json j; j.type_ = Type::boolean; j.b_ = b; return j; }
  static Json integer(std::int64_t i) { Json j; j.type_ = Type::integer; j.i_ = i; return j; }
  static Json number(double d) { Json j; j.type_ = Type::number; j.d_ = d; return j; }
  // A number that is a float32 value, written with float32's shortest digits (json_float32_repr):
  // the same value to a reader that rounds it to float32, in about half the characters.
  static Json number_float32(float f) { Json j = number(f); j.float32_ = true; return j; }
  static Json string(std::string s) { Json j; j.type_ = Type::string; j.s_ = std::move(s); return j; }
  static Json array() { Json j; j.type_ = Type::array; return j; }
  static Json object() { Json j; j.type_ = Type::object; return j; }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::null; }
  bool is_bool() const { return type_ == Type::boolean; }
  bool is_number() const { return type_ == Type::integer || type_ == Type::number; }
  bool is_integer() const { return type_ == Type::integer; }
  bool is_float32() const { return type_ == Type::number && float32_; }
  bool is_string() const { return type_ == Type::string; }
  bool is_array() const { return type_ == Type::array; }
  bool is_object() const { return type_ == Type::object; }

  bool as_bool() const { return b_; }
  // A double outside int64's range saturates (a cast would be undefined): integers of 2^32 and more
  // are read as doubles, and 9223372036854775807 (a slice's "to the end", INT64_MAX) rounds to 2^63.
  std::int64_t as_int() const {
    if (type_ == Type::integer) return i_;
    if (!(d_ < 9223372036854775808.0)) return d_ != d_ ? 0 : INT64_MAX;
    if (d_ < -9223372036854775808.0) return INT64_MIN;
    return static_cast<std::int64_t>(d_);
  }
  double as_double() const { return type_ == Type::integer ? static_cast<double>(i_) : d_; }
  const std::string& as_string() const { return s_; }

  const std::vector<Json>& items() const { return items_; }
  std::vector<Json>& items() { return items_; }
  const std::vector<Member>& members() const { return members_; }
  std::vector<Member>& members() { return members_; }

  void push_back(Json v) { items_.push_back(std::move(v)); }
  void add(std::string key, Json v) { members_.emplace_back(std::move(key), std::move(v)); }
  // First member with this key, or nullptr.
  const Json* find(std::string_view key) const;

  bool operator==(const Json& other) const;
  bool operator!=(const Json& other) const { return !(*this == other); }

 private:
  Type type_ = Type::null;
  bool b_ = false;
  bool float32_ = false;
  std::int64_t i_ = 0;
  double d_ = 0.0;
  std::string s_;
  std::vector<Json> items_;
  std::vector<Member> members_;
};

// Python json.dumps-compatible text: indent < 0 means compact (", " and ": " separators as Python
// writes them), NaN/Infinity written bare, non-ASCII escaped as \uXXXX (ensure_ascii).
std::string to_json_text(const Json& value, int indent = -1);
void write_json(std::string& out, const Json& value, int indent, int depth);
// One string as write_json writes it, quotes included (for writers that lay out JSON text themselves).
void append_json_string(std::string& out, std::string_view s);

// Parses one complete JSON text (non-strict numbers allowed). Throws std::runtime_error with
// "<what_name>: offset N: <reason>".
Json parse_json(std::string_view text, std::string_view what_name);

}  // namespace acccheck
