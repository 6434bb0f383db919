#include "commands/report/report_model.hpp"

#include <acccheck/csv.hpp>
#include <acccheck/record.hpp>

#include <ctime>
#include <filesystem>
#include <map>
#include <unordered_map>

namespace fs = std::filesystem;

namespace acccheck::host {

namespace {

std::string newest(const fs::path& dir, const std::string& prefix) {
  std::string best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".csv") == 0 &&
        name > best)
      best = name;  // the %Y%m%d%H%M%S stamp sorts as text
  }
  return best.empty() ? std::string() : (dir / best).string();
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// `min_fields`: run_ut leaves a pass row's Message out (3 of the 4 fields).
Table read_table(const std::string& path, std::string_view first_column, std::size_t min_fields = 0) {
  Table t;
  try {
    CsvReader reader(path);
    std::vector<std::string> fields;
    while (reader.next(fields)) {
      if (t.header.empty()) {
        if (fields.empty() || fields[0] != first_column)
          throw ReportError(path + ": line 1: expected a header starting with '" + std::string(first_column) + "'");
        t.header = fields;
        continue;
      }
      const std::size_t least = min_fields ? min_fields : t.header.size();
      if (fields.size() < least || fields.size() > t.header.size())
        throw ReportError(path + ": line " + std::to_string(reader.record_line()) + ": expected " +
                          (least == t.header.size() ? std::to_string(least) : std::to_string(least) + " to " + std::to_string(t.header.size())) +
                          " fields, found " + std::to_string(fields.size()));
      t.rows.push_back(fields);
    }
  } catch (const ReportError&) {
    throw;
  } catch (const std::exception& e) {
    throw ReportError(e.what());
  }
  if (t.header.empty()) throw ReportError(path + ": empty file, expected a header line");
  return t;
}

// "Aten.tanh.0.forward.output.0" → ("Aten.tanh.0", "forward"); names without a direction keep
// the whole name as the API.
std::pair<std::string, std::string> api_of_output(const std::string& name) {
  for (const char* dir : {".forward", ".backward"}) {
    auto pos = name.rfind(dir);
    if (pos != std::string::npos && pos > 0) return {name.substr(0, pos), std::string(dir + 1)};
  }
  return {name, ""};
}

// A row's cells as one tab-joined string (report.js splits it): one JSON string per row instead of
// one per cell keeps a 100,000-API report's model a tenth the size. Tabs inside a cell become spaces.
Json joined_cells(const std::vector<std::string>& v, std::size_t from) {
  std::string s;
  for (std::size_t i = from; i < v.size(); ++i) {
    if (i > from) s += '\t';
    for (char c : v[i]) s += c == '\t' ? ' ' : c;
  }
  return Json::string(std::move(s));
}

// Both sides' run_ut metrics are kept for every API that is not a plain pass and for the first
// kSidedApis APIs: beyond that a report would grow by two full details files for rows nobody opens.
constexpr std::size_t kSidedApis = 5000;

Json strings(const std::vector<std::string>& v, std::size_t from = 0) {
  Json a = Json::array();
  for (std::size_t i = from; i < v.size(); ++i) a.push_back(Json::string(v[i]));
  return a;
}

std::string tensor_text(const Argument& a) {
  if (a.kind == Argument::Kind::tensor) {
    std::string dtype = a.tensor.dtype.rfind("torch.", 0) == 0 ? a.tensor.dtype.substr(6) : a.tensor.dtype;
    std::string s = dtype + "[";
    for (std::size_t i = 0; i < a.tensor.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(a.tensor.shape[i]);
    return s + "]";
  }
  if (a.kind == Argument::Kind::list) {
    std::string s = "[";
    for (std::size_t i = 0; i < a.items.size(); ++i) s += (i ? ", " : "") + tensor_text(a.items[i]);
    return s + "]";
  }
  if (a.kind == Argument::Kind::none) return "None";
  return a.value.is_null() ? a.type_name : to_json_text(a.value);
}

struct DumpFacts {
  std::unordered_map<std::string, std::size_t> order;  // api → position among forward entries
  std::unordered_map<std::string, Json> inputs;         // api → ["float32[4, 8]", ...]
  std::unordered_map<std::string, std::vector<std::string>> stacks;
};

DumpFacts read_dump_facts(const std::string& dump_json) {
  DumpFacts f;
  if (dump_json.empty()) return f;
  std::size_t position = 0;
  try {
    read_dump_json(dump_json, [](const DumpHeader&) {}, [&](ApiRecord&& r) {
      if (r.direction != Direction::forward) return;
      f.order.emplace(r.api, position++);
      Json in = Json::array();
      for (const auto& a : r.args) in.push_back(Json::string(tensor_text(a)));
      for (const auto& [k, a] : r.kwargs) in.push_back(Json::string(k + "=" + tensor_text(a)));
      f.inputs.emplace(r.api, std::move(in));
    });
  } catch (const std::exception& e) {
    throw ReportError(e.what());
  }
  fs::path stack = fs::path(dump_json).parent_path() / "stack.json";
  std::error_code ec;
  if (fs::exists(stack, ec)) {
    try {
      for (auto& [entry, lines] : read_stack_json(stack.string())) {
        auto [api, dir] = api_of_output(entry);
        if (dir == "forward") f.stacks.emplace(api, lines);
      }
    } catch (const std::exception& e) {
      throw ReportError(e.what());
    }
  }
  return f;
}

// Rows of a run_ut details file by output name (for the per-API view of both sides).
std::unordered_map<std::string, std::size_t> index_rows(const Table& t) {
  std::unordered_map<std::string, std::size_t> idx;
  for (std::size_t i = 0; i < t.rows.size(); ++i) idx.emplace(t.rows[i][0], i);
  return idx;
}

}  // namespace

void find_run_outputs(const std::string& dir, ReportSources& s) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw ReportError(dir + ": not a folder (expected a compare or run_ut output folder)");
  s.result = newest(dir, "api_precision_compare_result_");
  s.details = newest(dir, "api_precision_compare_details_");
  if (s.result.empty() || s.details.empty()) {
    s.result = newest(dir, "accuracy_checking_result_");
    s.details = newest(dir, "accuracy_checking_details_");
  }
  if (s.result.empty() || s.details.empty())
    throw ReportError(dir + ": no api_precision_compare_{result,details}_*.csv nor accuracy_checking_{result,details}_*.csv here");
}

Json build_report_model(const ReportSources& s) {
  const bool compare = fs::path(s.details).filename().string().rfind("api_precision_compare_", 0) == 0;
  Table result = read_table(s.result, compare ? "API Name" : "API name", 3);
  Table details = read_table(s.details, "API Name");
  Table npu, gpu;
  if (compare && !s.npu_details.empty()) npu = read_table(s.npu_details, "API Name");
  if (compare && !s.gpu_details.empty()) gpu = read_table(s.gpu_details, "API Name");
  DumpFacts dump = read_dump_facts(s.dump_json);
  auto npu_rows = index_rows(npu), gpu_rows = index_rows(gpu);

  // Outputs grouped by API, in file order.
  std::map<std::string, std::vector<std::size_t>> outputs_of;
  for (std::size_t i = 0; i < details.rows.size(); ++i) outputs_of[api_of_output(details.rows[i][0]).first].push_back(i);

  Json apis = Json::array();
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    const auto& row = result.rows[i];
    // compare writes an unjudgeable output's row under its full output name.
    const std::string api = api_of_output(row[0]).first;
    Json a = Json::object();
    a.add("name", Json::string(row[0]));
    auto ord = dump.order.find(api);
    a.add("order", Json::integer(static_cast<std::int64_t>(ord != dump.order.end() ? ord->second : i)));
    a.add("forward", Json::string(row[1]));
    a.add("backward", Json::string(row[2]));
    a.add("message", Json::string(row.size() > 3 ? row[3] : ""));
    auto in = dump.inputs.find(api);
    a.add("inputs", in != dump.inputs.end() ? in->second : Json::array());
    auto st = dump.stacks.find(api);
    a.add("stack", st != dump.stacks.end() ? strings(st->second) : Json::array());
    Json outs = Json::array();
    auto rows = outputs_of.find(row[0] == api ? api : row[0]);
    if (rows == outputs_of.end()) rows = outputs_of.find(api);
    if (rows != outputs_of.end()) {
      for (std::size_t r : rows->second) {
        const auto& d = details.rows[r];
        if (row[0] != api && d[0] != row[0]) continue;  // an output-level result row: that output only
        Json o = Json::object();
        o.add("name", Json::string(d[0]));
        o.add("direction", Json::string(api_of_output(d[0]).second));
        o.add("cells", joined_cells(d, 1));
        const bool sided = i < kSidedApis || row[1] != "pass" || (row[2] != "pass" && row[2] != " ");
        auto n = npu_rows.find(d[0]);
        if (sided && n != npu_rows.end()) o.add("npu", joined_cells(npu.rows[n->second], 1));
        auto g = gpu_rows.find(d[0]);
        if (sided && g != gpu_rows.end()) o.add("gpu", joined_cells(gpu.rows[g->second], 1));
        outs.push_back(std::move(o));
      }
    }
    a.add("outputs", std::move(outs));
    apis.push_back(std::move(a));
  }

  Json sources = Json::object();
  sources.add("result", Json::string(s.result));
  sources.add("details", Json::string(s.details));
  if (!s.npu_details.empty()) sources.add("npu", Json::string(s.npu_details));
  if (!s.gpu_details.empty()) sources.add("gpu", Json::string(s.gpu_details));
  if (!s.dump_json.empty()) sources.add("dump", Json::string(s.dump_json));

  Json model = Json::object();
  model.add("mode", Json::string(compare ? "compare" : "run_ut"));
  model.add("title", Json::string(s.title.empty() ? (compare ? "acccheck compare: NPU vs GPU" : "acccheck run_ut: device vs benchmark")
                                                  : s.title));
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  model.add("generated", Json::string(stamp));
  model.add("sources", std::move(sources));
  model.add("columns", strings(details.header, 1));
  model.add("side_columns", strings(!npu.header.empty() ? npu.header : gpu.header, 1));
  model.add("sided_apis", Json::integer(static_cast<std::int64_t>(kSidedApis)));
  model.add("apis", std::move(apis));
  return model;
}

}  // namespace acccheck::host
