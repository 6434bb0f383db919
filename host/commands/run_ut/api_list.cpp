#include "commands/run_ut/api_list.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <acccheck/csv.hpp>
#include <acccheck/json.hpp>
#include <acccheck/record.hpp>

namespace fs = std::filesystem;

namespace acccheck::host {

namespace {

// Outputs are uninitialised memory (run-ut.md §2 step 8.5). The reference also refuses `to`, as a
// "pure dtype/device move"; acccheck replays it: a cast rounds (float32 → bfloat16), and a cast
// kernel that rounds the wrong way is an accelerator defect like any other (docs/compat.md).
const std::set<std::string> kAlwaysBlack = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
                                            "empty_with_format"};

std::vector<std::string> segments(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '.') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::uint64_t tensor_elements(const Argument& a) {
  std::uint64_t n = 0;
  if (a.kind == Argument::Kind::tensor) {
    std::int64_t e = a.tensor.numel();
    n += e > 0 ? static_cast<std::uint64_t>(e) : 0;
  }
  for (const auto& i : a.items) n += tensor_elements(i);
  for (const auto& m : a.members) n += tensor_elements(m.second);
  return n;
}

// -f (run-ut.md §2 step 4): top-level dict arguments without Max/Min, plus the kwargs.
std::string duplicate_signature(const Json& body) {
  std::string sig;
  if (const Json* args = body.find("input_args"); args && args->is_array())
    for (const auto& a : args->items()) {
      if (!a.is_object()) continue;
      Json trimmed = Json::object();
      for (const auto& m : a.members())
        if (m.first != "Max" && m.first != "Min") trimmed.add(m.first, m.second);
      sig += to_json_text(trimmed) + "|";
    }
  if (const Json* kw = body.find("input_kwargs")) sig += to_json_text(*kw);
  return sig;
}

}  // namespace

ApiList read_api_list(const ApiListOptions& o) {
  ApiList list;
  std::vector<ApiRecord> forwards;
  std::unordered_map<std::string, ApiRecord> backwards;
  std::unordered_set<std::string> bad_apis;
  auto on_record = [&](ApiRecord&& r) {
    // A name holding control characters (a newline, ESC, NUL) is carried escaped everywhere — in
    // messages, in the CSV cells (which compare then reads), in the error data's file names — so
    // it can neither move a terminal's cursor nor cut a CSV record (issue 25).
    if (std::any_of(r.api.begin(), r.api.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      r.api = printable(r.api);
    if (r.direction == Direction::forward) forwards.push_back(std::move(r));
    else backwards.emplace(r.api, std::move(r));
  };
  if (!o.dump_json.empty()) {
    read_dump_json(
        o.dump_json,
        [&](const DumpHeader& h) {
          if (h.dump_data_dir && !h.dump_data_dir->empty())
            list.real_data_dir = (fs::path(o.dump_json).parent_path() / "dump_tensor_data").string();
        },
        on_record,
        [&](const std::string& key, const RecordError& e) {
          list.errors.push_back(e.what());
          ApiRecord r;
          auto dot = key.rfind('.');
          r.api = dot == std::string::npos ? key : key.substr(0, dot);
          if (key.size() > 8 && key.compare(key.size() - 8, 8, ".forward") == 0 && !bad_apis.count(r.api)) {
            bad_apis.insert(r.api);
            r.extra = Json::object();
            r.extra.add("acccheck_error", Json::string(e.what()));
            forwards.push_back(std::move(r));
          }
        });
  } else {
    read_legacy_dump(o.legacy_forward, o.legacy_backward, on_record);
  }

  std::unordered_set<std::string> white(o.white_list.begin(), o.white_list.end());
  std::unordered_set<std::string> black(o.black_list.begin(), o.black_list.end());
  black.insert(kAlwaysBlack.begin(), kAlwaysBlack.end());
  std::unordered_map<std::string, std::unordered_set<std::string>> seen_signatures;
  for (auto& fwd : forwards) {
    ApiJob job;
    job.api = fwd.api;
    if (looks_like_csv_injection(fwd.api)) {
      list.errors.push_back((o.dump_json.empty() ? o.legacy_forward : o.dump_json) + ": entry '" + printable(fwd.api) +
                            "': name looks like a spreadsheet formula (CSV injection); entry left out");
      continue;
    }
    if (const Json* err = fwd.extra.is_object() ? fwd.extra.find("acccheck_error") : nullptr) {
      job.skip_message = err->as_string();
      list.jobs.push_back(std::move(job));
      continue;
    }
    auto seg = segments(fwd.api);
    std::string prefix = seg.front();
    std::string name = seg.size() == 3 ? seg[1] : seg.size() == 4 ? seg[1] + "." + seg[2] : "";
    const Json* replayable = fwd.extra.is_object() ? fwd.extra.find("acccheck_replayable") : nullptr;
    if (prefix == "Distributed" || prefix == "MindSpeed" || name.empty()) {
      job.skip_message = "API " + fwd.api + " not support for run ut. SKIP.";
    } else if (replayable && replayable->is_bool() && !replayable->as_bool()) {
      // acccheck's own dumps: the hook plugin that recorded it says it cannot run as a unit test.
      job.skip_message = "API " + fwd.api + " is recorded but not replayable (hook plugin). SKIP.";
    } else if (black.count(name) || (!white.empty() && !white.count(name))) {
      job.skip_message = "API " + name + " in black list or not in white list. SKIP.";
    }
    // The entry as JSON once: for the -f signature and for the job a worker receives.
    const Json body = job.skip_message.empty() ? record_to_json(fwd) : Json();
    if (o.filter_duplicates && job.skip_message.empty()) {
      std::string base = fwd.api.substr(0, fwd.api.rfind('.'));
      if (!seen_signatures[base].insert(duplicate_signature(body)).second) {
        ++list.dropped_duplicates;
        continue;
      }
    }
    for (const auto& a : fwd.args) job.cost += tensor_elements(a);
    for (const auto& kw : fwd.kwargs) job.cost += tensor_elements(kw.second);
    if (job.skip_message.empty()) {
      job.forward_json = to_json_text(body);
      if (auto it = backwards.find(fwd.api); it != backwards.end()) job.backward_json = to_json_text(record_to_json(it->second));
    }
    list.jobs.push_back(std::move(job));
  }
  return list;
}

std::vector<std::size_t> shard_indices(const std::vector<ApiJob>& jobs, std::size_t index, std::size_t count) {
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].cost > jobs[b].cost; });
  std::vector<std::uint64_t> load(count, 0);
  std::vector<std::size_t> mine;
  for (std::size_t i : order) {
    std::size_t lightest = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += jobs[i].cost;
    if (lightest == index) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

}  // namespace acccheck::host
