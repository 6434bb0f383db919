#include "commands/run_ut/shard_identity.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <acccheck/fnv1a.hpp>
#include <acccheck/json.hpp>
#include <acccheck/output_file.hpp>

namespace acccheck::host {

namespace fs = std::filesystem;

std::string dump_digest(const std::string& dump_json) {
  std::FILE* f = std::fopen(dump_json.c_str(), "rb");
  if (!f) throw std::runtime_error(dump_json + ": cannot open: " + std::strerror(errno));
  std::uint64_t h = kFnv1a64Offset, size = 0;
  unsigned char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
    size += n;
    h = fnv1a64(buf, n, h);
  }
  std::fclose(f);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return "fnv1a64:" + std::string(hex) + ":" + std::to_string(size);
}

std::string identity_file_for(const std::string& result_csv) {
  std::string name = fs::path(result_csv).filename().string();
  const std::string prefix = "accuracy_checking_result_";
  std::string ts = name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
  if (ts.size() > 4 && ts.compare(ts.size() - 4, 4, ".csv") == 0) ts.resize(ts.size() - 4);
  return (fs::path(result_csv).parent_path() / ("acccheck_shard_" + ts + ".json")).string();
}

void write_shard_identity(const std::string& result_csv, const ShardIdentity& id) {
  Json j = Json::object();
  j.add("dump_digest", Json::string(id.dump_digest));
  j.add("shard", Json::integer(static_cast<std::int64_t>(id.shard)));
  j.add("of", Json::integer(static_cast<std::int64_t>(id.of)));
  AtomicOutputFile out(identity_file_for(result_csv), 0644);
  out.write(to_json_text(j, 1) + "\n");
  out.commit();
}

ShardIdentity read_shard_identity(const std::string& result_csv) {
  const std::string path = identity_file_for(result_csv);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw std::runtime_error(path + ": missing: " + result_csv + " does not say which dump and shard it is (not a run_ut output, or one older than this acccheck)");
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 4096) throw std::runtime_error(path + ": " + std::to_string(text.size()) + " bytes, expected a small shard identity");
  Json j;
  try {
    j = parse_json(text, path);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()));
  }
  const Json* d = j.is_object() ? j.find("dump_digest") : nullptr;
  const Json* k = j.is_object() ? j.find("shard") : nullptr;
  const Json* n = j.is_object() ? j.find("of") : nullptr;
  if (!d || !d->is_string() || !k || !k->is_integer() || !n || !n->is_integer() || n->as_int() < 1 || k->as_int() < 0 ||
      k->as_int() >= n->as_int())
    throw std::runtime_error(path + ": expected {\"dump_digest\": text, \"shard\": K, \"of\": N} with 0 <= K < N");
  return {d->as_string(), static_cast<std::size_t>(k->as_int()), static_cast<std::size_t>(n->as_int())};
}

}  // namespace acccheck::host
