// Files the executable carries, embedded at build time (embedded_assets.cpp.in, .incbin): the HTML
// report's template, script, style and libraries, and the repro program's source template.
#pragma once

#include <string_view>

namespace acccheck::host {

enum class Asset {
  report_template, report_script, report_style, tabulator_script, tabulator_style, chart_script,
  repro_program, repro_cmakelists,
};

std::string_view embedded_asset(Asset asset);

}  // namespace acccheck::host
