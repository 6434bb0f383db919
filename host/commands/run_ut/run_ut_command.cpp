#include "commands/run_ut/run_ut_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <acccheck/csv.hpp>
#include <acccheck/incomplete_dump.hpp>
#include <acccheck/json.hpp>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_timestamp.hpp"
#include "commands/run_ut/api_list.hpp"
#include "commands/run_ut/configuration_use.hpp"
#include "commands/run_ut/error_data_dir.hpp"
#include "commands/run_ut/progress.hpp"
#include "commands/run_ut/result_files.hpp"
#include "commands/run_ut/shard_identity.hpp"
#include "commands/run_ut/shard_selection.hpp"
#include "commands/run_ut/worker_pool.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "verdict/api_comparator.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

void add_run_ut_options(po::options_description& d) {
  d.add_options()
      ("api-info", po::value<std::string>(), "dump.json to replay (msprobe: -api_info)")
      ("forward", po::value<std::string>(), "legacy forward_info_<pid>.json (instead of -api_info)")
      ("backward", po::value<std::string>(), "legacy backward_info_<pid>.json (with --forward)")
      ("real-data-path", po::value<std::string>(), "legacy: folder holding forward_real_data/ and backward_real_data/")
      ("out,o", po::value<std::string>()->default_value("./"), "output folder (msprobe: -o)")
      ("device", po::value<std::string>(), "device plugin under test: cpu, npu-sim, cuda, npu, ...")
      ("device-config", po::value<std::string>(), "YAML settings for the device plugin (e.g. npu-sim faults)")
      ("device-id,d", po::value<std::vector<int>>()->multitoken(), "device ids, spread over the workers (msprobe: -d)")
      ("num-splits,n", po::value<int>()->default_value(1), "worker processes (msprobe: -n)")
      ("timeout", po::value<int>()->default_value(60), "seconds one API may run before it is recorded as error")
      ("threads", po::value<long long>()->default_value(0),
       "intra-op (OpenMP/BLAS) threads per worker; 0: cores / workers, less one for the comparison thread where "
       "that leaves one (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS win)")
      ("overlap", po::value<std::string>()->default_value("auto"),
       "compare each API on a second thread of its worker while the next API's operators run: auto (where "
       "workers x threads leave a core spare, for APIs large enough to gain), on (every API), off")
      ("bench", po::value<std::string>()->default_value("raised"),
       "benchmark precision: raised (fp16/bf16 -> fp32, fp32 -> fp64) or float64 (every float input)")
      ("csv-path", po::value<std::string>(), "resume from this accuracy_checking_result_<ts>.csv")
      ("filter-api,f", po::bool_switch(), "de-duplicate repeated calls (msprobe: -f)")
      ("save-error-data", po::bool_switch(), "save inputs/outputs of APIs that did not pass as .pt files")
      ("jit-compile,j", po::bool_switch(), "passed to device plugins that understand it (NPU jit compile mode)")
      ("msprobe-config", po::value<std::string>(), "msprobe config.json; its run_ut section (msprobe: -config)")
      ("standards", po::value<std::string>(), "YAML overriding the shipped standards.yaml (as for compare)")
      ("shard", po::value<std::string>(), "replay shard K/N of the dump (also read from mpirun/srun/Job variables)")
      ("shard-count", po::value<long long>(), "shards of a Kubernetes Indexed Job (with JOB_COMPLETION_INDEX)")
      ("allow-outside-dump", po::bool_switch(), "read real-data files (data_name) from outside the dump's dump_tensor_data/ folder too")
      ("list-unsupported", po::bool_switch(), "print every entry that cannot be replayed, and why, as far as planning and binding tell without running (a SKIP that appears only when the operator runs is in run_ut's summary); run nothing")
      ("timestamp", po::value<std::string>(), "use this %Y%m%d%H%M%S stamp in the output file names");
}

namespace {


std::string absolute(const std::string& p) { return p.empty() ? p : fs::absolute(p).lexically_normal().string(); }

Json strings_json(const std::vector<std::string>& v) {
  Json a = Json::array();
  for (const auto& s : v) a.push_back(Json::string(s));
  return a;
}

// msprobe's config.json: its "run_ut" section (white_list, black_list, error_data_path).
struct MsprobeRunUtConfig {
  std::vector<std::string> white_list, black_list;
  std::string error_data_path = "./";
};
MsprobeRunUtConfig read_msprobe_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  Json j = parse_json(ss.str(), path);
  MsprobeRunUtConfig c;
  const Json* section = j.find("run_ut");
  if (!section) return c;
  if (!section->is_object()) throw std::runtime_error(path + ": field 'run_ut': expected an object");
  auto list = [&](const char* key, std::vector<std::string>& out) {
    if (const Json* l = section->find(key)) {
      if (!l->is_array()) throw std::runtime_error(path + ": field 'run_ut." + std::string(key) + "': expected a list of API names");
      for (const auto& s : l->items()) {
        if (!s.is_string()) throw std::runtime_error(path + ": field 'run_ut." + std::string(key) + "': expected API names as strings");
        out.push_back(s.as_string());
      }
    }
  };
  list("white_list", c.white_list);
  list("black_list", c.black_list);
  if (const Json* e = section->find("error_data_path"); e && e->is_string()) c.error_data_path = e->as_string();
  return c;
}

ApiRows rows_of(const replay::ApiResult& r) {
  ApiRows rows;
  rows.result = r.result_fields();
  for (const auto& d : r.rows) rows.details.push_back(d.cells);
  return rows;
}

// An API name in a message: control characters escaped, a very long name cut (a message is one line).
std::string shown_name(const std::string& api) {
  std::string s = printable(api);
  return s.size() > 160 ? s.substr(0, 150) + "...(" + std::to_string(api.size()) + " bytes)" : s;
}

ApiRows rows_of_reply(const std::string& line) {
  Json j = parse_json(line, "worker reply");
  ApiRows rows;
  for (const auto& f : j.find("result")->items()) rows.result.push_back(f.as_string());
  for (const auto& row : j.find("details")->items()) {
    std::vector<std::string> cells;
    for (const auto& c : row.items()) cells.push_back(c.as_string());
    rows.details.push_back(std::move(cells));
  }
  if (const Json* t = j.find("seconds"); t && t->is_number()) rows.worker_seconds = t->as_double();
  if (const Json* t = j.find("operator_seconds"); t && t->is_number()) rows.operator_seconds = t->as_double();
  if (const Json* use = j.find("configuration_use"); use && use->is_array())
    for (const auto& e : use->items())
      if (e.is_array() && e.items().size() == 2 && e.items()[0].is_string() && e.items()[1].is_integer())
        rows.configuration_use.emplace_back(e.items()[0].as_string(), static_cast<std::uint64_t>(e.items()[1].as_int()));
  if (const Json* p = j.find("error_data_problem"); p && p->is_string()) rows.error_data_problem = p->as_string();
  return rows;
}

std::string job_line(const ApiJob& job, bool plan_only) {
  std::string line = "{\"api\": " + to_json_text(Json::string(job.api)) + ", \"forward\": " + job.forward_json +
                     ", \"backward\": " + (job.backward_json.empty() ? std::string("null") : job.backward_json);
  if (plan_only) line += ", \"plan_only\": true";
  return line + "}";
}

}  // namespace

int run_run_ut(const po::variables_map& vm) {
  const char* me = "acccheck run_ut";
  if (!vm.count("api-info") && !vm.count("forward")) {
    std::cerr << me << ": -api_info DUMP.json (or the legacy --forward FILE) is required\n";
    return kExitUsage;
  }
  if (!vm.count("device")) {
    std::cerr << me << ": --device NAME is required (see `acccheck plugins` for the devices available here)\n";
    return kExitUsage;
  }
  std::string bench = vm["bench"].as<std::string>();
  if (bench != "raised" && bench != "float64") {
    std::cerr << me << ": --bench: expected raised or float64, found '" << bench << "'\n";
    return kExitUsage;
  }
  const std::string overlap = vm["overlap"].as<std::string>();
  if (overlap != "auto" && overlap != "on" && overlap != "off") {
    std::cerr << me << ": --overlap: expected auto, on or off, found '" << overlap << "'\n";
    return kExitUsage;
  }
  int workers = vm["num-splits"].as<int>();
  if (workers < 1 || workers > 64) {
    std::cerr << me << ": -n: expected 1..64 worker processes, found " << workers << "\n";
    return kExitUsage;
  }
  int timeout = vm["timeout"].as<int>();
  if (timeout < 1) {
    std::cerr << me << ": --timeout: expected seconds >= 1, found " << timeout << "\n";
    return kExitUsage;
  }
  std::string stamp;
  try {
    stamp = output_timestamp(vm.count("timestamp") ? std::optional(vm["timestamp"].as<std::string>()) : std::nullopt);
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitUsage;
  }
  const bool list_only = vm["list-unsupported"].as<bool>();
  // Unsigned options parse "-1" as a huge number: read signed, check the range.
  if (vm["threads"].as<long long>() < 0 || vm["threads"].as<long long>() > 1024) {
    std::cerr << me << ": --threads: expected 0..1024, found " << vm["threads"].as<long long>() << "\n";
    return kExitUsage;
  }
  if (vm.count("shard-count") && vm["shard-count"].as<long long>() < 1) {
    std::cerr << me << ": --shard-count: expected a whole number >= 1, found " << vm["shard-count"].as<long long>() << "\n";
    return kExitUsage;
  }

  // 1. What to run.
  ApiListOptions lo;
  MsprobeRunUtConfig mcfg;
  try {
    if (vm.count("msprobe-config")) mcfg = read_msprobe_config(vm["msprobe-config"].as<std::string>());
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitUsage;
  }
  lo.white_list = mcfg.white_list;
  lo.black_list = mcfg.black_list;
  lo.filter_duplicates = vm["filter-api"].as<bool>();
  std::string input_file;
  if (vm.count("api-info")) {
    lo.dump_json = input_file = vm["api-info"].as<std::string>();
  } else {
    lo.legacy_forward = input_file = vm["forward"].as<std::string>();
    if (vm.count("backward")) lo.legacy_backward = vm["backward"].as<std::string>();
  }
  if (!fs::is_regular_file(input_file)) {
    std::cerr << me << ": " << input_file << ": " << (fs::exists(input_file) ? "not a regular file" : "no such file")
              << ", expected a dump.json\n";
    return kExitInput;
  }
  ApiList list;
  try {
    list = read_api_list(lo);
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitInput;
  }
  for (const auto& e : list.errors) std::cerr << me << ": " << e << "\n";
  // A dump whose writing failed partway (incomplete_dump.hpp): what it kept is judged, and said so.
  const std::optional<std::string> incomplete = incomplete_marker_of(input_file);
  if (incomplete)
    std::cerr << me << ": " << input_file << ": the dump is incomplete (" << *incomplete
              << "): the entries it kept are judged, the calls it lost are not\n";
  std::string real_data_dir = list.real_data_dir;
  if (vm.count("real-data-path")) real_data_dir = vm["real-data-path"].as<std::string>();

  // 2. Which part is ours.
  Shard shard;
  try {
    shard = select_shard(vm.count("shard") ? std::optional(vm["shard"].as<std::string>()) : std::nullopt,
                         vm.count("shard-count") ? std::optional(static_cast<std::size_t>(vm["shard-count"].as<long long>()))
                                                 : std::nullopt);
  } catch (const std::exception& e) {
    std::cerr << me << ": " << e.what() << "\n";
    return kExitUsage;
  }
  std::vector<std::size_t> mine = shard_indices(list.jobs, shard.index, shard.count);

  // 3. Where rows go.
  std::string out_dir = vm["out"].as<std::string>();
  if (shard.count > 1) out_dir = (fs::path(out_dir) / ("shard" + std::to_string(shard.index) + "of" + std::to_string(shard.count))).string();
  std::optional<ResultFiles> files;
  std::string error_dir;
  if (!list_only && vm["save-error-data"].as<bool>()) {
    // Before the result files: a folder that cannot be made leaves nothing behind.
    try {
      const std::string ts = vm.count("csv-path") ? timestamp_of_result_file(vm["csv-path"].as<std::string>()) : stamp;
      error_dir = prepare_error_data_dir(mcfg.error_data_path, ts.empty() ? stamp : ts);
    } catch (const std::exception& e) {
      std::cerr << me << ": " << e.what() << "\n";
      return kExitOutput;
    }
  }
  if (!list_only) {
    try {
      files.emplace(vm.count("csv-path") ? ResultFiles::resume(vm["csv-path"].as<std::string>())
                                         : ResultFiles::create(out_dir, stamp));
    } catch (const std::exception& e) {
      std::cerr << me << ": " << e.what() << "\n";
      return vm.count("csv-path") ? kExitInput : kExitOutput;
    }
    // Which dump and which shard these files are of, for `acccheck merge` (shard_identity.hpp).
    try {
      write_shard_identity(files->result_path(),
                           {dump_digest(lo.dump_json.empty() ? lo.legacy_forward : lo.dump_json), shard.index, shard.count});
    } catch (const std::exception& e) {
      std::cerr << me << ": " << e.what() << "\n";
      return kExitOutput;
    }
    // Done APIs (resume) are neither replayed nor written again.
    mine.erase(std::remove_if(mine.begin(), mine.end(), [&](std::size_t i) { return files->done().count(list.jobs[i].api) > 0; }),
               mine.end());
  }
  if (shard.count > 1)
    std::cerr << me << ": shard " << shard.index << " of " << shard.count << " (" << shard.source << "): " << mine.size()
              << " APIs\n";

  // 4. Workers.
  std::vector<int> ids = vm.count("device-id") ? vm["device-id"].as<std::vector<int>>() : std::vector<int>{0};
  core::PluginSearch search = plugin_search_from(vm);
  for (auto& d : search.dirs) d = absolute(d);
  for (auto& f : search.files) f = absolute(f);
  std::string worker_overlap = "off";  // what the workers are told, once their threads are known
  auto config_for = [&](std::size_t worker) {
    Json c = Json::object();
    c.add("overlap", Json::string(worker_overlap));
    c.add("device", Json::string(vm["device"].as<std::string>()));
    c.add("allow_outside_dump", Json::boolean(vm["allow-outside-dump"].as<bool>()));
    c.add("device_config", Json::string(vm.count("device-config") ? absolute(vm["device-config"].as<std::string>()) : ""));
    Json d = Json::array();
    d.push_back(Json::integer(ids[worker % ids.size()]));
    c.add("device_ids", d);
    c.add("plugin_dirs", strings_json(search.dirs));
    c.add("plugin_files", strings_json(search.files));
    c.add("standards", Json::string(vm.count("standards") ? absolute(vm["standards"].as<std::string>()) : ""));
    c.add("bench", Json::string(bench));
    c.add("real_data_dir", Json::string(absolute(real_data_dir)));
    c.add("error_data_dir", Json::string(absolute(error_dir)));
    c.add("jit_compile", Json::boolean(vm["jit-compile"].as<bool>()));
    return to_json_text(c);
  };

  // Host-decided SKIPs need no worker; the rest are replayed.
  std::vector<std::size_t> to_replay;
  for (std::size_t i : mine)
    if (list.jobs[i].skip_message.empty()) to_replay.push_back(i);
  std::size_t n_workers = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(workers), to_replay.size()));

  std::map<std::size_t, ApiRows> ready;  // finished, waiting for their turn (rows go out in dump order)
  std::map<std::size_t, double> seconds;
  std::size_t next = 0;
  RunSummary summary;
  ConfigurationUseTally configuration_use;
  std::size_t error_data_failures = 0;  // -save_error_data could not write an API's tensors
  // --list-unsupported prints its lines on stdout as it goes: no progress line between them.
  Progress progress(mine.size(), list_only ? nullptr : stderr);
  auto flush_in_order = [&] {
    while (next < mine.size()) {
      std::size_t i = mine[next];
      auto it = ready.find(i);
      if (it == ready.end()) {
        if (!list.jobs[i].skip_message.empty()) {
          it = ready.emplace(i, rows_of(replay::skip_api(list.jobs[i].api, list.jobs[i].skip_message))).first;
        } else {
          break;
        }
      }
      if (list_only) {
        const auto& r = it->second.result;
        if (r.size() >= 2 && r[1] == "SKIP") std::cout << r[0] << ": " << (r.size() > 3 ? r[3] : "") << "\n";
      } else {
        files->append(it->second);
        summary.add(it->second, seconds.count(i) ? seconds[i] : 0.0);
      }
      ready.erase(it);
      ++next;
      progress.done();
    }
  };
  const bool fresh_files = files && !vm.count("csv-path");
  const auto run_start = std::chrono::steady_clock::now();
  try {
    std::optional<WorkerPool> pool;
    if (!to_replay.empty()) {
      WorkerSpec spec;
      spec.executable = WorkerPool::find_executable();
      spec.config_line_for = config_for;
      spec.timeout = std::chrono::seconds(timeout);
      unsigned threads = static_cast<unsigned>(vm["threads"].as<long long>());
      // Default: the worker's share of the cores, less one for its comparison thread where the share
      // has one to spare and overlap is not off (on this 2-core VM, -n 1 with two operator threads
      // ran the medium bench dump in 23 s, with one and the comparison beside it in 14 s).
      const unsigned share = std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(n_workers));
      spec.threads_per_worker = threads ? threads : (overlap != "off" && share >= 2 ? share - 1 : share);
      // auto: only where the workers' operator threads leave a core for the comparison threads.
      worker_overlap = overlap;
      if (overlap == "auto" && n_workers * (spec.threads_per_worker + 1) > std::thread::hardware_concurrency())
        worker_overlap = "off";
      spec.overlap = worker_overlap != "off";
      try {
        pool.emplace(spec, n_workers);
        summary.set_startup(std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count());
      } catch (const std::exception& e) {
        // Nothing was replayed: leave no empty output pair behind.
        if (fresh_files) {
          fs::remove(files->result_path());
          fs::remove(files->details_path());
          fs::remove(identity_file_for(files->result_path()));
        }
        std::cerr << me << ": " << e.what() << "\n";
        return kExitPlugin;
      }
    }
    flush_in_order();
    if (pool) {
      pool->run(
          to_replay, [&](std::size_t i) { return job_line(list.jobs[i], list_only); },
          [&](const JobOutcome& o) {
            const ApiJob& job = list.jobs[o.job];
            ApiRows rows;
            try {
              rows = o.reply ? rows_of_reply(*o.reply)
                             : rows_of(replay::failed_api(job.api, o.failure, !job.backward_json.empty()));
            } catch (const std::exception& e) {
              rows = rows_of(replay::failed_api(job.api, std::string("unreadable worker reply: ") + e.what(),
                                                !job.backward_json.empty()));
            }
            if (!o.reply) std::cerr << "\n" << me << ": " << shown_name(job.api) << ": " << o.failure << "; worker replaced\n";
            // The worker's own clock where it replied: the host reads replies in bursts (it naps
            // between looks at the pipes), so its clock is that of the burst, not of the API.
            seconds[o.job] = o.reply && rows.worker_seconds > 0 ? rows.worker_seconds : o.seconds;
            configuration_use.add(rows.configuration_use, !o.reply);
            if (!rows.error_data_problem.empty()) {
              ++error_data_failures;
              std::cerr << "\n" << me << ": " << shown_name(job.api) << ": error data not saved: "
                        << printable(rows.error_data_problem) << " (its verdicts stand)\n";
            }
            ready.emplace(o.job, std::move(rows));
            flush_in_order();
          });
    }
  } catch (const OutputFailure& e) {
    std::cerr << "\n" << me << ": " << e.what() << " (rows written so far are kept; resume with -csv_path)\n";
    return kExitOutput;
  } catch (const std::exception& e) {
    std::cerr << "\n" << me << ": " << e.what() << "\n";
    return kExitInternal;
  }
  progress.finish();
  if (list_only) return kExitOk;
  summary.set_wall(std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count(), n_workers);
  summary.print(stdout, files->result_path(), files->details_path());
  for (const auto& line : configuration_use.unused_lines(vm["device"].as<std::string>()))
    std::cerr << me << ": " << line << "\n";
  if (list.dropped_duplicates) std::cout << "  -f: " << list.dropped_duplicates << " repeated calls not replayed\n";
  if (!list.errors.empty()) {
    std::cerr << me << ": " << list.errors.size() << " dump entries could not be read (reported SKIP above)\n";
    return kExitInput;
  }
  if (incomplete) {
    std::cerr << me << ": " << input_file << ": judged an incomplete dump (see above); the result files are complete\n";
    return kExitInput;
  }
  if (error_data_failures) {
    std::cerr << me << ": the error data of " << error_data_failures << " API" << (error_data_failures == 1 ? "" : "s")
              << " could not be saved (see above); the result files are complete\n";
    return kExitOutput;
  }
  return kExitOk;
}

}  // namespace acccheck::host
