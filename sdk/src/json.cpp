// Ordered JSON value, its Python-compatible writer, and a whole-text parser (RapidJSON SAX with
// NaN/Infinity allowed). The streaming dump reader builds on the same SAX builder.
#include "acccheck/json.hpp"

#include <cmath>
#include <stdexcept>

#include "acccheck/number_format.hpp"
#include "json_builder.hpp"

namespace acccheck {

const Json* Json::find(std::string_view key) const {
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

bool Json::operator==(const Json& o) const {
  if (type_ != o.type_) {
    // 1 and 1.0 are the same number for equality purposes.
    if (is_number() && o.is_number()) return as_double() == o.as_double();
    return false;
  }
  switch (type_) {
    case Type::null: return true;
    case Type::boolean: return b_ == o.b_;
    case Type::integer: return i_ == o.i_;
    case Type::number: return (std::isnan(d_) && std::isnan(o.d_)) || d_ == o.d_;
    case Type::string: return s_ == o.s_;
    case Type::array: return items_ == o.items_;
    case Type::object: return members_ == o.members_;
  }
  return false;
}

namespace {
void write_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  // Plain printable ASCII (keys, names, dtypes: nearly every string) is copied in one go.
  std::size_t plain = 0;
  while (plain < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[plain]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
    ++plain;
  }
  out.push_back('"');
  out.append(s.data(), plain);
  if (plain == s.size()) {
    out.push_back('"');
    return;
  }
  s.remove_prefix(plain);
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20) {
            out += "\\u00";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // Decode UTF-8 and escape as Python's ensure_ascii does (surrogate pairs above the BMP).
    std::uint32_t cp = 0;
    int len = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : (c >= 0xC0) ? 2 : 1;
    cp = (len == 4) ? (c & 0x07) : (len == 3) ? (c & 0x0F) : (len == 2) ? (c & 0x1F) : c;
    for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    auto put = [&](std::uint32_t u) {
      out += "\\u";
      for (int sh = 12; sh >= 0; sh -= 4) out.push_back(hex[(u >> sh) & 15]);
    };
    if (cp >= 0x10000) {
      cp -= 0x10000;
      put(0xD800 + (cp >> 10));
      put(0xDC00 + (cp & 0x3FF));
    } else {
      put(cp);
    }
  }
  out.push_back('"');
}

void newline(std::string& out, int indent, int depth) {
  out.push_back('\n');
  out.append(static_cast<std::size_t>(indent * depth), ' ');
}
}  // namespace

void write_json(std::string& out, const Json& v, int indent, int depth) {
  switch (v.type()) {
    case Json::Type::null: out += "null"; return;
    case Json::Type::boolean: out += v.as_bool() ? "true" : "false"; return;
    case Json::Type::integer: out += std::to_string(v.as_int()); return;
    case Json::Type::number:
      out += v.is_float32() ? json_float32_repr(static_cast<float>(v.as_double())) : python_float_repr(v.as_double());
      return;
    case Json::Type::string: write_string(out, v.as_string()); return;
    case Json::Type::array: {
      if (v.items().empty()) { out += "[]"; return; }
      out.push_back('[');
      bool first = true;
      for (const auto& item : v.items()) {
        if (!first) out += indent >= 0 ? "," : ", ";
        first = false;
        if (indent >= 0) newline(out, indent, depth + 1);
        write_json(out, item, indent, depth + 1);
      }
      if (indent >= 0) newline(out, indent, depth);
      out.push_back(']');
      return;
    }
    case Json::Type::object: {
      if (v.members().empty()) { out += "{}"; return; }
      out.push_back('{');
      bool first = true;
      for (const auto& m : v.members()) {
        if (!first) out += indent >= 0 ? "," : ", ";
        first = false;
        if (indent >= 0) newline(out, indent, depth + 1);
        write_string(out, m.first);
        out += ": ";
        write_json(out, m.second, indent, depth + 1);
      }
      if (indent >= 0) newline(out, indent, depth);
      out.push_back('}');
      return;
    }
  }
}

void append_json_string(std::string& out, std::string_view s) { write_string(out, s); }

std::string to_json_text(const Json& value, int indent) {
  std::string out;
  write_json(out, value, indent, 0);
  return out;
}

Json parse_json(std::string_view text, std::string_view what_name) {
  detail::JsonBuilder builder;
  rapidjson::MemoryStream ms(text.data(), text.size());
  rapidjson::Reader reader;
  auto result = reader.Parse<detail::kDumpParseFlags>(ms, builder);
  if (result.IsError()) {
    if (builder.too_deep())
      throw std::runtime_error(std::string(what_name) + ": offset " + std::to_string(result.Offset()) +
                               ": nesting deeper than " + std::to_string(detail::kMaxJsonDepth) + " levels (expected at most " +
                               std::to_string(detail::kMaxJsonDepth) + ")");
    throw std::runtime_error(detail::describe_parse_error(std::string(what_name), text, result));
  }
  return builder.take();
}

}  // namespace acccheck
