#include "commands/compare/compare_engine.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>
#include <filesystem>
#include <functional>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include <acccheck/csv.hpp>
#include <acccheck/number_format.hpp>
#include <acccheck/output_file.hpp>

#include "commands/compare/background_writer.hpp"
#include "commands/compare/csv_prefetcher.hpp"
#include "commands/compare/details_table.hpp"
#include "commands/compare/name_hash_table.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

const std::vector<std::string>& compare_details_columns() {
  static const std::vector<std::string> cols = {
      "API Name", "小值域错误比值", "小值域判定结果", "均方根误差比值", "均方根误差判定结果", "相对误差最大值比值",
      "相对误差最大值判定结果", "相对误差平均值比值", "相对误差平均值判定结果", "误差均衡性比值", "误差均衡性判定结果",
      "inf/nan错误率", "inf/nan判定结果", "相对误差错误率", "相对误差判定结果", "绝对误差错误率", "绝对误差判定结果",
      "二进制一致错误率", "二进制一致错误率判定结果", "ULP误差平均值", "ULP误差大于阈值占比", "ULP误差大于阈值占比比值",
      "ULP误差判定结果", "双千指标", "双千指标判定结果", "比对结果", "比对算法", "Message"};
  return cols;
}

namespace {

constexpr const char* kUnsupportedDtypeMessage = "This data type does not support benchmark compare.";
constexpr const char* kNoGpuRowMessage = "no matching GPU row";

// Statuses of one API, gathered over its consecutive rows (precision-standards.md §6.3 step 9).
struct PendingApi {
  std::string api;
  std::string short_api;
  std::vector<Verdict> forward, backward;
  std::string skip_message;         // Message of the last forward row, if it was SKIP
  bool any_supported = false;       // some row had a dtype compare supports
  std::size_t forward_elements = 0;  // of its forward output 0 (Shape), for reduced gradients
  bool active = false;
  std::vector<std::vector<std::string>> queued_rows;  // result rows that must follow this API's
};

std::string aggregate(const std::vector<Verdict>& v) {
  if (v.empty()) return " ";
  if (std::all_of(v.begin(), v.end(), [](Verdict x) { return x == Verdict::skip; })) return "SKIP";
  if (std::any_of(v.begin(), v.end(), [](Verdict x) { return x == Verdict::error; })) return "error";
  if (std::any_of(v.begin(), v.end(), [](Verdict x) { return x == Verdict::warning; })) return "Warning";
  return "pass";
}

bool blank(std::string_view s) { return s.empty() || is_python_space(s); }

class ResultWriter {
 public:
  ResultWriter(const std::string& path, const std::vector<std::string>& header) : file_(path) {
    std::string out(kUtf8Bom);
    append_csv_record(out, header);
    file_.append(out);
  }
  void row(const std::vector<std::string>& fields) {
    buf_.clear();
    append_csv_record(buf_, fields);
    file_.append(buf_);
  }
  void start_commit() { file_.start_commit(); }
  void finish_commit() { file_.finish_commit(); }
  void publish() { file_.publish(); }

 private:
  BackgroundWriter file_;
  std::string buf_;
};

void prepare_out_dir(const std::string& dir) {
  if (is_symlinked_folder(dir)) throw OutputError(dir + ": output folder is a symbolic link; refusing to write through it");
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    // Outputs never go through a symbolic link, the folder included: give the real path.
    if (S_ISLNK(st.st_mode)) throw OutputError(dir + ": output folder is a symbolic link; refusing to write through it");
    if (!S_ISDIR(st.st_mode)) throw OutputError(dir + ": exists and is not a folder");
    return;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(dir + ": cannot create output folder: " + ec.message());
}

// The API Name on a given line of a details CSV (rare path: confirming a hash match).
std::string name_on_line(const std::string& path, std::size_t name_idx, std::size_t line) {
  CsvReader reader(path);
  std::vector<std::string> fields;
  while (reader.next(fields))
    if (reader.record_line() == line) return name_idx < fields.size() ? fields[name_idx] : std::string();
  return {};
}

// The run_ut result file beside a details file (accuracy_checking_details_<ts>.csv →
// accuracy_checking_result_<ts>.csv); "" when the details file is not named that way.
std::string result_file_beside(const std::string& details) {
  const std::string name = fs::path(details).filename().string(), prefix = "accuracy_checking_details_";
  if (name.rfind(prefix, 0) != 0) return "";
  return (fs::path(details).parent_path() / ("accuracy_checking_result_" + name.substr(prefix.size()))).string();
}

// APIs run_ut judged whole, without details rows (the dropout rule: only the share of zeros is
// compared), have no row for compare to judge: the reference leaves them out of its result. Here
// each gets a result row with the NPU run's own verdict and says so (docs/compat.md).
void add_apis_without_details(const std::string& npu_details, const std::unordered_set<std::string>& with_rows,
                              const std::function<void(const std::vector<std::string>&)>& write_result) {
  const std::string path = result_file_beside(npu_details);
  if (path.empty()) return;  // not named as run_ut names its files: no result file to look for
  if (!fs::is_regular_file(path)) {
    spdlog::warn("no run_ut result file beside {}: an API without details rows (dropout) cannot be listed",
                 printable(npu_details));
    return;
  }
  CsvReader reader(path);
  std::vector<std::string> fields;
  if (!reader.next(fields) || fields.size() < 3)
    throw InputError(path + ": line 1: expected the header API name, Forward Test Success, Backward Test Success, Message");
  while (reader.next(fields)) {
    if (fields.size() == 1 && fields[0].empty()) continue;
    if (fields.size() < 3)
      throw InputError(path + ": line " + std::to_string(reader.record_line()) + ": expected at least 3 fields, found " +
                       std::to_string(fields.size()));
    if (with_rows.count(fields[0]) || looks_like_csv_injection(fields[0])) continue;
    std::string message = "no details rows to compare with the GPU run: the NPU run's own run_ut verdict";
    if (fields.size() > 3 && !blank(fields[3])) message += " (" + fields[3] + ")";
    write_result({fields[0], fields[1], fields[2], message});
  }
}

}  // namespace

CompareEngine::CompareEngine(const core::StandardSelector& selector, std::map<std::string, MetricPlugin*> plugins)
    : selector_(selector), plugins_(std::move(plugins)) {}

CompareOutputs CompareEngine::run(const CompareInputs& in, CompareSummary& summary) {
  std::unique_ptr<CsvReader> npu_reader;
  try {
    npu_reader = std::make_unique<CsvReader>(in.npu_details);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  DetailsHeader npu_header = read_details_header(*npu_reader);
  // The NPU file is parsed ahead on a second thread while the GPU index loads and rows are judged.
  CsvPrefetcher npu_rows_ahead(*npu_reader);

  GpuIndex gpu;
  std::vector<std::string> plugin_columns;
  for (const auto& [id, plugin] : plugins_)
    for (const auto& c : plugin->details_columns()) plugin_columns.push_back(c);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    gpu.load(in.gpu_details, plugin_columns);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  spdlog::debug("GPU index: {} rows from {} in {:.3f} s", gpu.size(), in.gpu_details,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  // Columns of user metric plugins that are not among the reference's 28 go after Message.
  std::vector<std::string> columns = compare_details_columns();
  for (const auto& [id, plugin] : plugins_)
    for (const auto& c : plugin->compare_columns())
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  std::unordered_map<std::string, std::size_t> column_pos;
  for (std::size_t i = 0; i < columns.size(); ++i) column_pos.emplace(columns[i], i);
  const std::size_t kResultCol = column_pos.at("比对结果"), kAlgoCol = column_pos.at("比对算法"),
                    kMessageCol = column_pos.at("Message");

  CompareOutputs outputs;
  prepare_out_dir(in.out_dir);
  outputs.details_path = (fs::path(in.out_dir) / ("api_precision_compare_details_" + in.timestamp + ".csv")).string();
  outputs.result_path = (fs::path(in.out_dir) / ("api_precision_compare_result_" + in.timestamp + ".csv")).string();
  std::unique_ptr<ResultWriter> details, results;
  try {
    details = std::make_unique<ResultWriter>(outputs.details_path, columns);
    results = std::make_unique<ResultWriter>(outputs.result_path,
                                             std::vector<std::string>{"API Name", "Forward Test Success",
                                                                      "Backward Test Success", "Message"});
  } catch (const std::exception& e) {
    throw OutputError(e.what());
  }

  // Every API with a details row: the NPU run's APIs that have none are added from its result file
  // at the end.
  std::unordered_set<std::string> apis_with_rows;
  auto write_result = [&](const std::vector<std::string>& row) {
    results->row(row);
    summary.add_api(row[0], row[1], row[2], row.size() > 3 ? row[3] : "");
  };
  PendingApi pending;
  auto emit_pending = [&]() {
    if (!pending.active) return;
    std::vector<std::string> row;
    if (!pending.any_supported) {
      row = {pending.api, "SKIP", "SKIP", kUnsupportedDtypeMessage};
    } else {
      std::string fwd = aggregate(pending.forward), bwd = aggregate(pending.backward);
      std::string message;
      if (fwd == "error")
        if (const std::string* note = selector_.note_for(pending.short_api)) message += *note;
      if (fwd == "SKIP") message += pending.skip_message;
      row = {pending.api, fwd, bwd, message};
    }
    write_result(row);
    for (const auto& q : pending.queued_rows) write_result(q);
    pending = PendingApi{};
  };
  // A result row of its own (invalid name, unjudgeable row): after the API being gathered, so
  // result rows keep input order.
  auto standalone_result = [&](std::vector<std::string> row) {
    if (pending.active) {
      pending.queued_rows.push_back(std::move(row));
    } else {
      write_result(row);
    }
  };

  const std::size_t name_idx = *npu_header.find("API Name");
  const std::size_t dtype_idx = *npu_header.find("DEVICE Dtype");
  const auto shape_idx = npu_header.find("Shape");
  const auto message_idx = npu_header.find("Message");
  // Duplicate detection: hash → line; a hash match is confirmed by re-reading that line's name.
  NameHashTable npu_lines;
  std::size_t npu_rows = 0;
  std::vector<std::string_view> gpu_cells;
  std::vector<std::string> out(columns.size());
  const std::size_t expected_fields = npu_header.columns.size();

  try {
    while (const CsvPrefetcher::Record* record = npu_rows_ahead.next()) {
      const std::vector<std::string>& fields = record->fields;
      if (fields.size() == 1 && fields[0].empty()) continue;
      const std::size_t line = record->line;
      if (fields.size() != expected_fields)
        throw InputError(in.npu_details + ": line " + std::to_string(line) + ": expected " +
                         std::to_string(expected_fields) + " fields, found " + std::to_string(fields.size()) +
                         " (truncated or malformed row)");
      const std::string& name = fields[name_idx];
      if (looks_like_csv_injection(name))
        throw InputError(in.npu_details + ": line " + std::to_string(line) + ": API Name '" + printable(name) +
                         "' starts with a formula character (+ - = % @); refusing it (CSV injection)");
      std::size_t earlier = 0;
      npu_lines.find_or_insert(hash_name(name), line, true, [&](std::uint64_t other_line) {
        if (name_on_line(in.npu_details, name_idx, other_line) != name) return false;
        earlier = other_line;
        return true;
      });
      if (earlier)
        throw InputError(in.npu_details + ": line " + std::to_string(line) + ": API Name '" + printable(name) +
                         "' already appears on line " + std::to_string(earlier) + " (each output row must be unique)");
      ++npu_rows;

      static const std::string kNoMessage;
      // Copied into the output: guarded like any cell that came from an input (a copy only then).
      const std::string& raw_message = message_idx ? fields[*message_idx] : kNoMessage;
      std::string guarded_message;
      if (looks_like_csv_injection(raw_message)) guarded_message = guard_formula(raw_message);
      const std::string& npu_message = guarded_message.empty() ? raw_message : guarded_message;
      for (auto& cell : out) cell.assign(1, ' ');  // keeps each cell's buffer: no allocation per row
      out[0] = name;
      core::RowName rn = core::parse_row_name(name);
      if (!rn.valid) {
        std::string msg = "The API name " + name + " is invalid.";
        out[kResultCol] = "SKIP";
        out[kMessageCol] = msg;
        details->row(out);
        summary.add_row(name, "", Verdict::skip, "", 0.0);
        standalone_result({name, "SKIP", "SKIP", msg});
        continue;
      }

      if (pending.active && pending.api != rn.api) emit_pending();
      apis_with_rows.insert(std::string(rn.api));

      DetailsRow npu_row(npu_header, fields);
      const std::string& dtype = fields[dtype_idx];
      Verdict verdict = Verdict::skip;
      std::string message;
      std::string standard;
      bool unsupported = false;
      bool row_is_own_result = false;
      Judgement judgement;

      if (!gpu.find(name, gpu_cells)) {
        message = kNoGpuRowMessage;  // the reference silently drops such rows (docs/compat.md a)
        summary.count_unmatched_row();
        out[kResultCol] = "SKIP";
        out[kMessageCol] = message;
      } else if (blank(dtype) || selector_.unsupported_dtype(dtype) || (shape_idx && fields[*shape_idx] == "(0,)")) {
        unsupported = !blank(dtype) && selector_.unsupported_dtype(dtype);
        message = npu_message;
        out[kResultCol] = "SKIP";
        out[kMessageCol] = message;
      } else {
        // A backward row with fewer elements than the forward output 0 is a sum (core::StandardSelector).
        std::optional<std::size_t> elements = shape_idx ? core::shape_elements(fields[*shape_idx]) : std::nullopt;
        const bool reduced_gradient = rn.direction == "backward" && elements && pending.active &&
                                      pending.api == rn.api && *elements < pending.forward_elements;
        standard = selector_.select(rn.short_api, dtype, !blank(npu_row.cell("相对误差错误率")), reduced_gradient);
        MetricPlugin* plugin = plugins_.at(standard);
        IndexedRow gpu_row(gpu.positions(), gpu_cells);
        try {
          judgement = plugin->judge(JudgeInput{npu_row, gpu_row, dtype});
          verdict = judgement.verdict;
          message = judgement.message;
          for (const auto& [col, text] : judgement.cells) {
            auto pos = column_pos.find(col);
            if (pos != column_pos.end()) out[pos->second] = text;
          }
          out[kResultCol] = verdict_text(verdict);
          out[kAlgoCol] = std::string(plugin->algorithm_name());
          out[kMessageCol] = message;
        } catch (const UnjudgeableRow& e) {
          for (std::size_t c = 1; c < out.size(); ++c) out[c].assign(1, ' ');
          message = e.what();
          out[kResultCol] = "SKIP";
          out[kMessageCol] = message;
          row_is_own_result = true;
        } catch (const std::exception& e) {
          throw PluginFailure("metric plugin '" + standard + "' failed on " + in.npu_details + " line " +
                              std::to_string(line) + " (" + printable(name) + "): " + e.what());
        } catch (...) {
          throw PluginFailure("metric plugin '" + standard + "' failed on " + in.npu_details + " line " +
                              std::to_string(line) + " (" + printable(name) + ") with a non-standard exception");
        }
      }
      details->row(out);
      summary.add_row(name, standard, verdict, judgement.deciding_metric, judgement.severity);
      if (row_is_own_result) {
        standalone_result({name, "SKIP", "SKIP", message});
        continue;
      }

      if (!pending.active) {
        pending.active = true;
        pending.api = std::string(rn.api);
        pending.short_api = std::string(rn.short_api);
      }
      if (rn.direction == "forward" && pending.forward.empty() && shape_idx)
        pending.forward_elements = core::shape_elements(fields[*shape_idx]).value_or(0);
      if (unsupported) {
        // Decided per row (docs/compat.md e): the row counts as SKIP in its direction.
        message = kUnsupportedDtypeMessage;
      } else {
        pending.any_supported = true;
      }
      auto& list = rn.direction == "forward" ? pending.forward : pending.backward;
      list.push_back(verdict);
      if (rn.direction == "forward") pending.skip_message = verdict == Verdict::skip ? message : std::string();
    }
    emit_pending();
    add_apis_without_details(in.npu_details, apis_with_rows, write_result);
  } catch (const CsvError& e) {
    throw InputError(e.what());
  } catch (const WriteError& e) {
    throw OutputError(e.what());
  }
  spdlog::debug("judged {} NPU rows in {:.3f} s", npu_rows,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (npu_rows == 0) throw InputError(in.npu_details + ": no data rows (only a header)");
  try {
    details->start_commit();  // both files sync to disk at the same time
    results->start_commit();
    details->finish_commit();
    results->finish_commit();
    // Both synced: only now do they appear, together (a full disk leaves neither).
    details->publish();
    results->publish();
  } catch (const std::exception& e) {
    throw OutputError(e.what());
  }
  return outputs;
}

}  // namespace acccheck::host
