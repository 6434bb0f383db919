// One self-contained HTML file: the template, the report's stylesheet and script, Tabulator and
// Chart.js (embedded in the binary at build time, third_party/report-libs) and the data, inlined.
#pragma once

#include <acccheck/json.hpp>

#include <string>

namespace acccheck::host {

std::string render_report_html(const Json& model);

// JSON text safe inside <script>: every '<' becomes \u003c, so no data can close the element.
std::string json_for_script(const Json& value);

}  // namespace acccheck::host
