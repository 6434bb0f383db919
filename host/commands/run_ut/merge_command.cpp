// `acccheck merge`: joins the result/details pairs of shards (run_ut --shard, mpirun, srun, an
// indexed Job) into one pair with the rows in dump order — the files a single run would write.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>

#include <acccheck/csv.hpp>

#include "cli/exit_codes.hpp"
#include "cli/output_timestamp.hpp"
#include "commands/run_ut/api_list.hpp"
#include "commands/run_ut/result_files.hpp"
#include "commands/run_ut/run_ut_command.hpp"
#include "commands/run_ut/shard_identity.hpp"

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

// A file whose last line has no line break was cut (the shard's run was killed mid-row).
bool last_line_cut(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  bool cut = false;
  if (std::fseek(f, -1, SEEK_END) == 0) cut = std::fgetc(f) != '\n';
  std::fclose(f);
  return cut;
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
  std::string digest;
  try {
    ApiList list = read_api_list(lo);
    for (std::size_t i = 0; i < list.jobs.size(); ++i) order.emplace(list.jobs[i].api, i);
    digest = dump_digest(lo.dump_json);
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitInput;
  }
  // Everything is read and checked before anything is written: a foreign, repeated, missing or cut
  // shard leaves no merged pair behind (issue 25).
  std::vector<std::pair<std::size_t, ApiRows>> rows;
  std::map<std::string, std::string> seen;    // api → file
  std::map<std::size_t, std::string> shards;  // K → its result file
  std::size_t of = 0;
  try {
    for (const auto& dir : vm["from"].as<std::vector<std::string>>()) {
      if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a folder");
      auto files = result_files_under(dir);
      if (files.empty()) throw std::runtime_error(dir + ": no accuracy_checking_result_<ts>.csv in it");
      for (const auto& result : files) {
        std::string details = (fs::path(result).parent_path() /
                               std::regex_replace(fs::path(result).filename().string(), std::regex("result"), "details")).string();
        const ShardIdentity id = read_shard_identity(result);
        if (id.dump_digest != digest)
          throw std::runtime_error(result + ": a shard of another dump (its dump's digest " + id.dump_digest + ", " +
                                   lo.dump_json + "'s " + digest + ")");
        if (of != 0 && id.of != of)
          throw std::runtime_error(result + ": shard " + std::to_string(id.shard) + " of " + std::to_string(id.of) +
                                   ", the other shards are of " + std::to_string(of));
        of = id.of;
        if (auto [it, fresh] = shards.emplace(id.shard, result); !fresh)
          throw std::runtime_error(result + ": shard " + std::to_string(id.shard) + " of " + std::to_string(of) +
                                   " is also " + it->second);
        for (const auto& f : {result, details})
          if (last_line_cut(f))
            throw std::runtime_error(f + ": its last line is cut (the shard's run was killed): resume it with run_ut -csv_path " + result);
        ResultTable t = read_result_table(result, details);
        for (auto& api : t.apis) {
          const std::string& name = api.result.at(0);
          if (auto [it, fresh] = seen.emplace(name, result); !fresh)
            throw std::runtime_error(result + ": API '" + printable(name) + "' is also in " + it->second + " (overlapping shards?)");
          auto o = order.find(name);
          if (o == order.end())
            throw std::runtime_error(result + ": API '" + printable(name) + "' is not in " + lo.dump_json);
          rows.emplace_back(o->second, std::move(api));
        }
      }
    }
    if (shards.size() != of) {
      std::string missing;
      for (std::size_t k = 0; k < of; ++k)
        if (!shards.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
      throw std::runtime_error("shard " + missing + " of " + std::to_string(of) + " missing: nothing written");
    }
    if (rows.size() < order.size())
      throw std::runtime_error(std::to_string(order.size() - rows.size()) +
                               " APIs of the dump are in no shard's output (resume those shards with run_ut -csv_path): "
                               "nothing written");
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
    write_shard_identity(out.result_path(), {digest, 0, 1});
    std::cout << me << ": " << rows.size() << " APIs from " << of << " shards\n  result:  " << out.result_path()
              << "\n  details: " << out.details_path() << "\n";
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitOutput;
  }
  return kExitOk;
}

}  // namespace acccheck::host
