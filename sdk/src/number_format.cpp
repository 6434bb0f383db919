#include "acccheck/number_format.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace acccheck {

namespace {
// Lays out shortest digits the way Python's float_repr_style 'short' does.
std::string layout_shortest(const char* sci, std::size_t len) {
  // sci is "[-]d[.ddd]e[+-]XX" from to_chars(scientific)
  std::string s(sci, len);
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.erase(0, 1);
  auto epos = s.find('e');
  std::string mant = s.substr(0, epos);
  int exp = std::atoi(s.c_str() + epos + 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits.push_back(c);
  std::string out;
  int decpt = exp + 1;  // position of the decimal point relative to digits
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char buf[16];
    std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += buf;
  } else if (decpt <= 0) {
    out = "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
  } else if (static_cast<std::size_t>(decpt) >= digits.size()) {
    out = digits + std::string(static_cast<std::size_t>(decpt) - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<std::size_t>(decpt)) + "." + digits.substr(static_cast<std::size_t>(decpt));
  }
  return neg ? "-" + out : out;
}
}  // namespace

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  return layout_shortest(buf, static_cast<std::size_t>(r.ptr - buf));
}

std::string numpy_float32_repr(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  return layout_shortest(buf, static_cast<std::size_t>(r.ptr - buf));
}

std::string json_float32_repr(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return numpy_float32_repr(v);
}

std::string python_fixed(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[400];
  // to_chars is exact (correctly rounded, like Python's formatting) and much faster than printf.
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (r.ec != std::errc()) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
  }
  return std::string(buf, r.ptr);
}

bool is_python_space(std::string_view t) {
  if (t.empty()) return false;
  for (unsigned char c : t)
    if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')) return false;
  return true;
}

std::optional<double> parse_python_float(std::string_view t) {
  auto is_ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  while (!t.empty() && is_ws(t.front())) t.remove_prefix(1);
  while (!t.empty() && is_ws(t.back())) t.remove_suffix(1);
  if (t.empty()) return std::nullopt;
  bool neg = false;
  std::string_view body = t;
  if (body.front() == '+' || body.front() == '-') {
    neg = body.front() == '-';
    body.remove_prefix(1);
  }
  char first = static_cast<char>(std::tolower(static_cast<unsigned char>(body.front())));
  if (first == 'n' || first == 'i') {
    std::string lower;
    for (char c : body) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (lower == "nan") return std::nan("");
    if (lower == "inf" || lower == "infinity") return neg ? -INFINITY : INFINITY;
    return std::nullopt;
  }
  // from_chars is correctly rounded; it rejects a leading '+', handled above.
  double v = 0;
  auto r = std::from_chars(body.data(), body.data() + body.size(), v, std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow → ±inf, underflow → ±0, as Python does.
    std::string tmp(body);
    v = std::strtod(tmp.c_str(), nullptr);
  } else if (r.ec != std::errc() || r.ptr != body.data() + body.size()) {
    return std::nullopt;
  }
  // Python accepts "1." and ".5"; from_chars accepts both too.
  return neg ? -v : v;
}

}  // namespace acccheck
