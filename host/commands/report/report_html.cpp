#include "commands/report/report_html.hpp"

#include <map>
#include <stdexcept>

#include "assets/embedded_assets.hpp"

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

std::string render_report_html(const Json& model) {
  const Json* title = model.find("title");
  const std::map<std::string_view, std::string> parts = {
      {"TITLE", html_escape(title ? title->as_string() : "acccheck report")},
      {"LIB_STYLE", std::string(embedded_asset(Asset::tabulator_style))},
      {"STYLE", std::string(embedded_asset(Asset::report_style))},
      {"TABULATOR", inline_script(embedded_asset(Asset::tabulator_script))},
      {"CHART", inline_script(embedded_asset(Asset::chart_script))},
      {"SCRIPT", inline_script(embedded_asset(Asset::report_script))},
      {"DATA", json_for_script(model)},
  };
  // One pass over the template: inserted text is never scanned again, so neither a library nor
  // the data can be taken for a marker.
  std::string_view tpl = embedded_asset(Asset::report_template);
  std::string page;
  std::size_t pos = 0;
  while (true) {
    std::size_t open = tpl.find("{{", pos);
    if (open == std::string_view::npos) break;
    std::size_t close = tpl.find("}}", open);
    if (close == std::string_view::npos) break;
    auto it = parts.find(tpl.substr(open + 2, close - open - 2));
    if (it == parts.end()) throw std::logic_error("report template: unknown marker at byte " + std::to_string(open));
    page.append(tpl.substr(pos, open - pos));
    page += it->second;
    pos = close + 2;
  }
  page.append(tpl.substr(pos));
  return page;
}

}  // namespace acccheck::host
