// `acccheck merge`: joins the result/details pairs of shards (run_ut --shard, mpirun, srun, an
// indexed Job) into one pair with the rows in dump order — the files a single run would write.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>

#include "cli/exit_codes.hpp"
#include "cli/output_timestamp.hpp"
#include "commands/run_ut/api_list.hpp"
#include "commands/run_ut/result_files.hpp"
#include "commands/run_ut/run_ut_command.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

void add_merge_options(po::options_description& d) {
  d.add_options()
      ("api-info", po::value<std::string>(), "the dump.json the shards replayed (gives the row order)")
      ("from", po::value<std::vector<std::string>>()->composing()->multitoken(),
       "a shard's output folder (repeatable), or a folder holding shard*of*/ folders")
      ("out,o", po::value<std::string>()->default_value("./"), "where the merged pair is written")
      ("timestamp", po::value<std::string>(), "use this %Y%m%d%H%M%S stamp in the output file names");
}

namespace {

// The result CSVs under `dir`: its own, or those of its shard*of* subfolders.
std::vector<std::string> result_files_under(const std::string& dir) {
  static const std::regex name("^accuracy_checking_result_\\d{14}\\.csv$");
  std::vector<std::string> found;
  std::vector<fs::path> folders{dir};
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("shard", 0) == 0) folders.push_back(e.path());
  for (const auto& f : folders)
    for (const auto& e : fs::directory_iterator(f))
      if (e.is_regular_file() && std::regex_match(e.path().filename().string(), name)) found.push_back(e.path().string());
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

int run_merge(const po::variables_map& vm) {
  const char* me = "acccheck merge";
  if (!vm.count("api-info") || !vm.count("from")) {
    std::cerr << me << ": --api-info DUMP.json and at least one --from DIR are required\n";
    return kExitUsage;
  }
  ApiListOptions lo;
  lo.dump_json = vm["api-info"].as<std::string>();
  std::map<std::string, std::size_t> order;
  try {
    ApiList list = read_api_list(lo);
    for (std::size_t i = 0; i < list.jobs.size(); ++i) order.emplace(list.jobs[i].api, i);
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitInput;
  }
  std::vector<std::pair<std::size_t, ApiRows>> rows;
  std::map<std::string, std::string> seen;  // api → file
  try {
    for (const auto& dir : vm["from"].as<std::vector<std::string>>()) {
      if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a folder");
      auto files = result_files_under(dir);
      if (files.empty()) throw std::runtime_error(dir + ": no accuracy_checking_result_<ts>.csv in it");
      for (const auto& result : files) {
        std::string details = (fs::path(result).parent_path() /
                               std::regex_replace(fs::path(result).filename().string(), std::regex("result"), "details")).string();
        ResultTable t = read_result_table(result, details);
        for (auto& api : t.apis) {
          const std::string& name = api.result.at(0);
          if (auto [it, fresh] = seen.emplace(name, result); !fresh)
            throw std::runtime_error(result + ": API '" + name + "' is also in " + it->second + " (overlapping shards?)");
          auto o = order.find(name);
          rows.emplace_back(o == order.end() ? order.size() + rows.size() : o->second, std::move(api));
        }
      }
    }
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitInput;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  try {
    std::string stamp =
        output_timestamp(vm.count("timestamp") ? std::optional(vm["timestamp"].as<std::string>()) : std::nullopt);
    ResultFiles out = ResultFiles::create(vm["out"].as<std::string>(), stamp);
    for (const auto& [index, api] : rows) out.append(api);
    std::cout << me << ": " << rows.size() << " APIs from " << vm["from"].as<std::vector<std::string>>().size()
              << " folders\n  result:  " << out.result_path() << "\n  details: " << out.details_path() << "\n";
    std::size_t missing = order.size() > rows.size() ? order.size() - rows.size() : 0;
    if (missing) {
      std::cerr << me << ": " << missing << " APIs of the dump are in no shard's output (resume those shards)\n";
      return kExitInput;
    }
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitOutput;
  }
  return kExitOk;
}

}  // namespace acccheck::host
