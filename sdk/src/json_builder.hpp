// RapidJSON SAX handler that builds acccheck::Json values. With a sink set, the members of one
// chosen object (e.g. dump.json's "data") are handed over one by one instead of being kept, so a
// multi-gigabyte dump is read with the memory of its largest entry.
#pragma once

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "acccheck/json.hpp"

namespace acccheck::detail {

// Real dumps contain bare NaN / Infinity / -Infinity (Python's json): accept them. Numbers are
// handed over as text (RapidJSON still checks their syntax and refuses the ones too big for a
// double) and converted by std::from_chars, correctly rounded ("0.1" is the nearest double):
// RapidJSON 1.1's own full-precision strtod has undefined behaviour on a long zero significand
// ("0.000…0", clz(0) and a negative shift; found by fuzz_run_ut_dump, fuzz/README.md).
// Iterative: the recursive parser overflowed the stack at 10,000 nesting levels (SIGSEGV).
constexpr unsigned kDumpParseFlags = rapidjson::kParseNanAndInfFlag | rapidjson::kParseNumbersAsStringsFlag |
                                     rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseIterativeFlag;
// Deeper documents are refused (msprobe itself writes at most 400 levels of containers).
constexpr std::size_t kMaxJsonDepth = 512;

class JsonBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, JsonBuilder> {
 public:
  using MemberSink = std::function<void(std::string&& key, Json&& value)>;
  // Members of the object found under top-level key `streamed_key` go to `sink`.
  void stream_member(std::string streamed_key, MemberSink sink) {
    streamed_key_ = std::move(streamed_key);
    sink_ = std::move(sink);
  }
  // Called when the streamed object's opening brace is seen (before its first member).
  std::function<void(const Json& top_so_far)> on_stream_start;
  // The parser's offset in the text, when the caller can tell it (RapidJSON's stream Tell()).
  std::function<std::size_t()> position;
  // The offset just past the key of the member last handed to the sink (0 without `position`).
  std::size_t streamed_key_offset() const { return streamed_key_offset_; }

  bool Null() { return value(Json()); }
  bool Bool(bool b) { return value(Json::boolean(b)); }
  bool Int(int i) { return value(Json::integer(i)); }
  bool Uint(unsigned u) { return value(Json::integer(u)); }
  bool Int64(int64_t i) { return value(Json::integer(i)); }
  bool Uint64(uint64_t u) { return value(Json::number(static_cast<double>(u))); }
  bool Double(double d) { return value(Json::number(d)); }
  // A number's text (kParseNumbersAsStringsFlag), as RapidJSON's own conversion would type it: an
  // integer when it fits int64 and is negative or below 2^32, else a double (RapidJSON's Uint64
  // event, kept as a double here, and integers beyond 64 bits); NaN / ±Infinity; a value below the
  // smallest subnormal is ±0 (from_chars reports it out of range; RapidJSON made it 0).
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    const char* end = s + n;
    const std::string_view text(s, n);
    if (text == "NaN" || text == "-NaN") return value(Json::number(std::numeric_limits<double>::quiet_NaN()));
    if (text == "Infinity") return value(Json::number(std::numeric_limits<double>::infinity()));
    if (text == "-Infinity") return value(Json::number(-std::numeric_limits<double>::infinity()));
    if (text.find_first_of(".eE") == std::string_view::npos) {
      std::int64_t i = 0;
      auto [p, ec] = std::from_chars(s, end, i);
      if (ec == std::errc() && p == end && (i < 0 || i <= 0xFFFFFFFFll)) return value(Json::integer(i));
    }
    double d = 0;
    auto [p, ec] = std::from_chars(s, end, d);
    if (ec == std::errc::result_out_of_range) d = text.front() == '-' ? -0.0 : 0.0;  // RapidJSON refused overflow
    else if (ec != std::errc() || p != end) return false;
    return value(Json::number(d));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) { return value(Json::string(std::string(s, n))); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    keys_.emplace_back(s, n);
    // A member of the streamed object: where its key is (for errors that name the member's line).
    if (streaming_depth_ != 0 && stack_.size() == streaming_depth_ && position) streamed_key_offset_ = position();
    return true;
  }
  bool StartObject() {
    if (stack_.size() >= kMaxJsonDepth) return too_deep_ = true, false;
    stack_.push_back(Json::object());
    bool streaming = sink_ && stack_.size() == 2 && !keys_.empty() && keys_.back() == streamed_key_;
    if (streaming) {
      streaming_depth_ = stack_.size();
      if (on_stream_start) on_stream_start(stack_.front());
    }
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() {
    if (stack_.size() >= kMaxJsonDepth) return too_deep_ = true, false;
    stack_.push_back(Json::array());
    keys_.emplace_back();  // placeholder so key bookkeeping stays aligned
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    keys_.pop_back();
    return close();
  }

  Json take() { return std::move(root_); }
  bool too_deep() const { return too_deep_; }
  std::size_t depth() const { return stack_.size(); }

 private:
  bool close() {
    Json done = std::move(stack_.back());
    stack_.pop_back();
    if (streaming_depth_ != 0 && stack_.size() + 1 == streaming_depth_) streaming_depth_ = 0;
    return value(std::move(done));
  }
  bool value(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Json& parent = stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
    } else {
      std::string key = std::move(keys_.back());
      keys_.pop_back();
      if (streaming_depth_ != 0 && stack_.size() == streaming_depth_) {
        sink_(std::move(key), std::move(v));
      } else {
        parent.add(std::move(key), std::move(v));
      }
    }
    return true;
  }

  std::vector<Json> stack_;
  std::vector<std::string> keys_;
  Json root_;
  std::string streamed_key_;
  MemberSink sink_;
  std::size_t streaming_depth_ = 0;
  std::size_t streamed_key_offset_ = 0;
  bool too_deep_ = false;
};

// "<file>: line L, column C: <RapidJSON message>"
inline std::string describe_parse_error(const std::string& file, std::string_view text,
                                        const rapidjson::ParseResult& r) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < r.Offset() && i < text.size(); ++i) {
    if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
  }
  return file + ": line " + std::to_string(line) + ", column " + std::to_string(col) +
         ": invalid JSON: " + rapidjson::GetParseError_En(r.Code());
}

}  // namespace acccheck::detail
