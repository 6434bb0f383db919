#include "commands/report/report_command.hpp"

#include <acccheck/output_file.hpp>

#include <filesystem>
#include <iostream>

#include "cli/exit_codes.hpp"
#include "commands/report/report_html.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

void add_report_options(po::options_description& desc) {
  desc.add_options()
      ("dir", po::value<std::string>(), "compare or run_ut output folder (also the first bare argument)")
      ("npu", po::value<std::string>(), "compare mode: the NPU run_ut accuracy_checking_details_<ts>.csv (both sides' metrics)")
      ("gpu", po::value<std::string>(), "compare mode: the GPU run_ut accuracy_checking_details_<ts>.csv")
      ("dump", po::value<std::string>(), "dump.json of the run: input dtypes/shapes, call order, stacks (stack.json beside it)")
      ("title", po::value<std::string>(), "the report's title")
      ("out,o", po::value<std::string>(), "the HTML file to write (default DIR/report.html)");
}

std::string write_report(const ReportSources& sources, const std::string& out_file) {
  const Json model = build_report_model(sources);
  AtomicOutputFile out(out_file, 0644);
  render_report_html(model, [&](std::string_view part) { out.write(part); });
  out.commit();
  return out_file;
}

int run_report(const po::variables_map& vm) {
  if (!vm.count("dir")) {
    std::cerr << "acccheck report: a folder is required: acccheck report DIR (see acccheck report --help)\n";
    return kExitUsage;
  }
  const std::string dir = vm["dir"].as<std::string>();
  ReportSources s;
  if (vm.count("npu")) s.npu_details = vm["npu"].as<std::string>();
  if (vm.count("gpu")) s.gpu_details = vm["gpu"].as<std::string>();
  if (vm.count("dump")) s.dump_json = vm["dump"].as<std::string>();
  if (vm.count("title")) s.title = vm["title"].as<std::string>();
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : (fs::path(dir) / "report.html").string();
  try {
    find_run_outputs(dir, s);
    write_report(s, out);
  } catch (const ReportError& e) {
    std::cerr << "acccheck report: " << e.what() << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "acccheck report: " << e.what() << "\n";
    return kExitOutput;
  }
  std::cout << "report: " << out << "\n";
  return kExitOk;
}

}  // namespace acccheck::host
