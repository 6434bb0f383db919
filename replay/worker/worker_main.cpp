// acccheck-replay: the torch-linked worker that `acccheck run_ut` starts (posix_spawn) once per
// worker slot. Protocol, one JSON object per line:
//   host → worker: the configuration, then one job per API {"api", "forward", "backward"}
//                  (+ "alone": true — run it with nothing else in flight, after a crash)
//   worker → host: {"ready": true, "configuration_use": [...]} or {"fatal": "..."}, then one reply
//                  per job {"api", "result": [...], "details": [[...], ...], "seconds": s,
//                  "configuration_use": [[entry, calls matched by this API], ...]}
// The worker keeps the protocol on its own descriptor and points stdout at stderr, so nothing a
// library prints can corrupt a reply. A crash or hang here costs one API: the host sees it.
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <acccheck/json.hpp>
#include <acccheck/record.hpp>

#include "api_replayer.hpp"
#include "reply_stage.hpp"
#include "config/yaml_settings.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "standards/standards_setup.hpp"

using namespace acccheck;

namespace {

FILE* g_protocol = nullptr;

void reply(const Json& j) {
  std::string line = to_json_text(j) + "\n";
  std::fwrite(line.data(), 1, line.size(), g_protocol);
  std::fflush(g_protocol);
}

int fatal(const std::string& why) {
  Json j = Json::object();
  j.add("fatal", Json::string(why));
  reply(j);
  return 1;
}

std::vector<std::string> strings(const Json* j) {
  std::vector<std::string> out;
  if (j && j->is_array())
    for (const auto& s : j->items()) out.push_back(s.as_string());
  return out;
}

std::string text(const Json& config, const char* key) {
  const Json* j = config.find(key);
  return j && j->is_string() ? j->as_string() : std::string();
}

Json row_json(const std::vector<std::string>& cells) {
  Json a = Json::array();
  for (const auto& c : cells) a.push_back(Json::string(c));
  return a;
}

}  // namespace

int main() {
  // Every API allocates and frees buffers of the same sizes again: keep freed memory in the heap
  // instead of returning it to the kernel and faulting it back in (measured: most of the system
  // time of a run of medium-sized APIs).
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  std::ios::sync_with_stdio(false);  // jobs are read with getline: no per-character stdio locking
  // Protocol on a private duplicate of stdout; stdout itself goes to stderr.
  int proto_fd = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  g_protocol = fdopen(proto_fd, "w");
  if (!g_protocol) return 2;

  std::string line;
  if (!std::getline(std::cin, line)) return fatal("no configuration received");
  Json config;
  try {
    config = parse_json(line, "worker configuration");
  } catch (const std::exception& e) {
    return fatal(e.what());
  }

  core::PluginRegistry registry;
  core::PluginSearch search;
  search.dirs = strings(config.find("plugin_dirs"));
  search.files = strings(config.find("plugin_files"));
  registry.load(search, {PluginKind::device, PluginKind::metric, PluginKind::hook});
  if (!registry.explicit_refused().empty()) return fatal("--plugin " + registry.explicit_refused().front().line());

  replay::ReplayContext ctx;
  std::uint32_t device_abi_minor = 0;  // configuration_use exists since ABI 1.2, begin_api since 1.3
  core::Standards standards;
  try {
    std::string device_name = text(config, "device");
    for (const auto& [info, probe] : registry.devices())
      if (probe->device_name() == device_name) {
        ctx.device = dynamic_cast<DevicePlugin*>(probe);
        device_abi_minor = info->abi_minor;
        Settings s = core::PluginRegistry::sidecar_settings(*info);
        if (std::string file = text(config, "device_config"); !file.empty()) {
          const Settings user = core::load_yaml_settings(file);  // named: all() of a temporary dangles
          for (const auto& [k, v] : user.all()) s.set(k, v);
        }
        // -j: for device plugins that understand it (the NPU's jit compile mode).
        if (const Json* j = config.find("jit_compile"); j && j->is_bool() && j->as_bool()) s.set("jit_compile", "true");
        ctx.device->configure(s);
        if (auto a = ctx.device->available(); !a.available)
          return fatal("device '" + device_name + "' is not available: " + a.reason);
        std::vector<int> ids;
        if (const Json* d = config.find("device_ids"))
          for (const auto& id : d->items()) ids.push_back(static_cast<int>(id.as_int()));
        if (ids.empty()) ids.push_back(0);
        ctx.device->initialize(ids);
        ctx.bench_functions = ctx.device->bench_functions();
      }
    if (!ctx.device) {
      std::string names;
      for (const auto& [info, probe] : registry.devices()) {
        Availability a;
        try {
          probe->configure(core::PluginRegistry::sidecar_settings(*info));
          a = probe->available();
        } catch (const std::exception& e) {
          a.reason = e.what();
        }
        names += (names.empty() ? "" : ", ") + std::string(probe->device_name()) +
                 (a.available ? "" : " (unavailable: " + a.reason + ")");
      }
      for (const auto& r : registry.refused())
        if (r.file.find("acccheck_device_") != std::string::npos) names += (names.empty() ? "" : ", ") + ("refused: " + r.line());
      return fatal("unknown device '" + device_name + "'; available devices: " + (names.empty() ? "none" : names));
    }
    std::string user_standards = text(config, "standards");
    standards = core::load_standards(registry, search,
                                     user_standards.empty() ? std::nullopt : std::optional(user_standards));
  } catch (const std::exception& e) {
    return fatal(e.what());
  }
  ctx.metrics.selector = standards.selector.get();
  for (const auto& [id, m] : standards.by_standard) ctx.metrics.by_standard[id] = m;
  for (const auto& [info, hook] : registry.hooks()) {
    if (info->abi_minor < 1) continue;  // plan_replay exists since ABI 1.1
    try {
      hook->configure(core::PluginRegistry::sidecar_settings(*info));
    } catch (const std::exception& e) {
      return fatal("hook plugin '" + info->name + "' (" + info->file + "): " + e.what());
    }
    ctx.planners.push_back(hook);
  }
  ctx.bench_float64 = text(config, "bench") == "float64";
  ctx.real_data_dir = text(config, "real_data_dir");
  if (const Json* a = config.find("allow_outside_dump"); a && a->is_bool()) ctx.allow_outside_dump = a->as_bool();
  ctx.error_data_dir = text(config, "error_data_dir");
  if (const Json* threads = config.find("threads"); threads && threads->is_integer() && threads->as_int() > 0)
    at::set_num_threads(static_cast<int>(threads->as_int()));

  // The device configuration's entries (npu-sim's faults) and the calls each matched: every reply
  // carries what the API it answers added (run_ut sums them over its workers and names the entries
  // that matched nothing). Read on this thread right after the API's operators ran.
  const bool reports_use = device_abi_minor >= 2;
  std::vector<std::uint64_t> matched_before;
  auto use_since_last = [&]() {
    Json use = Json::array();
    if (!reports_use) return use;
    const auto now = ctx.device->configuration_use();
    matched_before.resize(now.size(), 0);
    for (std::size_t i = 0; i < now.size(); ++i) {
      Json entry = Json::array();
      entry.push_back(Json::string(now[i].entry));
      entry.push_back(Json::integer(static_cast<std::int64_t>(now[i].matched - matched_before[i])));
      matched_before[i] = now[i].matched;
      use.push_back(std::move(entry));
    }
    return use;
  };

  Json ready = Json::object();
  ready.add("ready", Json::boolean(true));
  ready.add("configuration_use", use_since_last());
  reply(ready);

  // --overlap: a replayed API's comparison runs on the comparison thread while the next API's
  // operators run here. "on" overlaps every API; "auto" (the host's choice where a core is spare)
  // only those whose comparison reads enough elements to be worth a hand-over, and none so large
  // that holding two APIs' outputs at once would cost much memory.
  const std::string overlap = text(config, "overlap");
  auto overlaps = [&](const replay::ReplayedApi& r) {
    if (!r.pending || overlap.empty() || overlap == "off") return false;
    if (overlap == "on") return true;
    const std::size_t n = r.comparison_elements();
    return n >= (std::size_t{1} << 14) && n <= (std::size_t{1} << 23);
  };
  replay::ReplyStage replies([](const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), g_protocol);
    std::fflush(g_protocol);
  });
  // For tests: each comparison first waits this long, so that a crash lands while an API is being
  // compared on the comparison thread (the case the host must untangle).
  const char* delay_env = std::getenv("ACCCHECK_REPLAY_COMPARE_DELAY_MS");
  const auto compare_delay = std::chrono::milliseconds(delay_env ? std::atoi(delay_env) : 0);
  using Clock = std::chrono::steady_clock;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    auto start = Clock::now();
    std::string api;
    bool alone = false;
    replay::ReplayedApi replayed;
    try {
      Json job = parse_json(line, "job");
      api = job.find("api")->as_string();
      // After a crash the host cannot tell which of two overlapped APIs killed the worker: it sends
      // both again "alone", run with nothing before or after them in flight.
      const Json* a = job.find("alone");
      alone = a && a->is_bool() && a->as_bool();
      if (alone) replies.drain();
      ApiRecord fwd = record_from_json(api + ".forward", *job.find("forward"), "job");
      const Json* b = job.find("backward");
      std::optional<ApiRecord> bwd;
      if (b && !b->is_null()) bwd = record_from_json(api + ".backward", *b, "job");
      const Json* plan_only = job.find("plan_only");
      if (ctx.device && device_abi_minor >= 3) ctx.device->begin_api(api);
      replayed = replay::replay_api_until_comparison(fwd, bwd ? &*bwd : nullptr, ctx,
                                                     plan_only && plan_only->is_bool() && plan_only->as_bool());
    } catch (const std::exception& e) {
      replayed = replay::ReplayedApi::finished(replay::skip_api(api, e.what()));
    }
    const double job_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const bool overlapped = !alone && overlaps(replayed);
    Json use = use_since_last();
    auto make_line = [api, job_seconds, &ctx, compare_delay, use = std::move(use), replayed = std::move(replayed)]() mutable {
      if (compare_delay.count() > 0) std::this_thread::sleep_for(compare_delay);
      auto t0 = Clock::now();
      replay::ApiResult result = replayed.finish(ctx.metrics);  // frees the API's outputs here
      // The API's own time: its job here plus its comparison, wherever that ran.
      double seconds = job_seconds + std::chrono::duration<double>(Clock::now() - t0).count();
      Json out = Json::object();
      out.add("api", Json::string(api));
      out.add("result", row_json(result.result_fields()));
      Json details = Json::array();
      for (const auto& row : result.rows) details.push_back(row_json(row.cells));
      out.add("details", details);
      out.add("seconds", Json::number(seconds));
      out.add("operator_seconds", Json::number(result.operator_seconds));
      if (!use.items().empty()) out.add("configuration_use", std::move(use));
      if (!result.error_data_problem.empty()) out.add("error_data_problem", Json::string(result.error_data_problem));
      return to_json_text(out) + "\n";
    };
    replies.submit(std::move(make_line), overlapped);
    if (alone) replies.drain();
  }
  replies.drain();
  // End of the jobs: leave without running LibTorch's and the plugins' static destructors (67 ms
  // measured, which the host waited for at the end of every run); every reply is already written.
  std::fflush(nullptr);
  std::quick_exit(0);
}
