#include "commands/report/report_html.hpp"

#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "assets/embedded_assets.hpp"
#include "commands/report/script_hash.hpp"

namespace acccheck::host {

namespace {

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Script text inside <script>: "</script" would end the element early.
std::string inline_script(std::string_view code) {
  std::string out(code);
  for (std::size_t p = 0; (p = out.find("</script", p)) != std::string::npos; p += 2) out.replace(p, 2, "<\\/");
  return out;
}

}  // namespace

std::string json_for_script(const Json& value) {
  std::string text = to_json_text(value);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";  // only inside strings: JSON has no '<' elsewhere
    else out += c;
  }
  return out;
}

void render_report_html(const Json& model, const std::function<void(std::string_view)>& sink) {
  const Json* title = model.find("title");
  const std::string data = json_for_script(model);
  const std::string title_text = html_escape(title ? title->as_string() : "acccheck report");
  const std::map<std::string_view, std::string_view> parts = {
      {"TITLE", title_text},
      {"LIB_STYLE", embedded_asset(Asset::tabulator_style)},
      {"STYLE", embedded_asset(Asset::report_style)},
      {"TABULATOR", embedded_asset(Asset::tabulator_script)},
      {"CHART", embedded_asset(Asset::chart_script)},
      {"SCRIPT", embedded_asset(Asset::report_script)},
      {"DATA", data},
      {"SCRIPT_HASHES", ""},
  };
  const std::set<std::string_view> scripts = {"TABULATOR", "CHART", "SCRIPT"};
  // The CSP names each inline script by the hash of its exact text (script_hash.hpp): the assets
  // are fixed, so this is computed once per process.
  static const std::string script_hashes = [&] {
    std::string h;
    for (auto name : scripts) h += (h.empty() ? "" : " ") + csp_script_hash(inline_script(parts.at(name)));
    return h;
  }();
  // One pass over the template: inserted text is never scanned again, so neither a library nor
  // the data can be taken for a marker. Parts go to the sink as they are (no page-sized copy).
  std::string_view tpl = embedded_asset(Asset::report_template);
  std::size_t pos = 0;
  while (true) {
    std::size_t open = tpl.find("{{", pos);
    if (open == std::string_view::npos) break;
    std::size_t close = tpl.find("}}", open);
    if (close == std::string_view::npos) break;
    auto it = parts.find(tpl.substr(open + 2, close - open - 2));
    if (it == parts.end()) throw std::logic_error("report template: unknown marker at byte " + std::to_string(open));
    sink(tpl.substr(pos, open - pos));
    if (scripts.count(it->first)) sink(inline_script(it->second));
    else if (it->first == "SCRIPT_HASHES") sink(script_hashes);
    else sink(it->second);
    pos = close + 2;
  }
  sink(tpl.substr(pos));
}

}  // namespace acccheck::host
