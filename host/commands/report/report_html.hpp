// One self-contained HTML file: the template, the report's stylesheet and script, Tabulator and
// Chart.js (embedded in the binary at build time, third_party/report-libs) and the data, inlined.
#pragma once

#include <acccheck/json.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace acccheck::host {

// The page, handed to `sink` part by part (a large run's page is never held whole).
void render_report_html(const Json& model, const std::function<void(std::string_view)>& sink);

// JSON text safe inside <script>: every '<' becomes \u003c, so no data can close the element.
std::string json_for_script(const Json& value);

}  // namespace acccheck::host
