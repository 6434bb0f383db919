// `acccheck merge` on one hostile shard: the input is the shard's identity file, its result CSV and
// its details CSV, separated by NUL bytes ("@DIGEST@" in the identity stands for the digest of the
// fixed dump, so that mutations get past that check). Merge must refuse or merge, never crash, and
// write nothing when it refuses.
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>
#include <string>

#include "commands/run_ut/run_ut_command.hpp"
#include "commands/run_ut/shard_identity.hpp"
#include "fuzz_input_file.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string dump = ACCCHECK_FUZZ_MERGE_DUMP;
  static const std::string digest = acccheck::host::dump_digest(dump);
  static const bool quiet = [] { std::cerr.rdbuf(nullptr); std::cout.rdbuf(nullptr); return true; }();
  (void)quiet;
  std::string in(reinterpret_cast<const char*>(data), size), parts[3];
  for (int i = 0, at = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? in.find('\0', at) : std::string::npos;
    parts[i] = in.substr(std::min<std::size_t>(at, in.size()), end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? static_cast<int>(in.size()) : static_cast<int>(end + 1);
  }
  if (auto p = parts[0].find("@DIGEST@"); p != std::string::npos) parts[0].replace(p, 8, digest);
  const std::string root = acccheck::fuzz::scratch_dir(), shard = root + "/shard0of1", out = root + "/merged";
  std::error_code ec;
  fs::remove_all(shard, ec);
  fs::remove_all(out, ec);
  fs::create_directories(shard);
  fs::create_directories(out);
  const std::string names[3] = {"shard0of1/acccheck_shard_20250101000000.json",
                                "shard0of1/accuracy_checking_result_20250101000000.csv",
                                "shard0of1/accuracy_checking_details_20250101000000.csv"};
  for (int i = 0; i < 3; ++i)
    acccheck::fuzz::write_input(names[i], reinterpret_cast<const std::uint8_t*>(parts[i].data()), parts[i].size());

  po::options_description d;
  acccheck::host::add_merge_options(d);
  po::variables_map vm;
  const char* argv[] = {"merge", "--api-info", dump.c_str(), "--from", root.c_str(), "-o", out.c_str(), "--timestamp", "20260101000000"};
  po::store(po::parse_command_line(static_cast<int>(std::size(argv)), argv, d), vm);
  po::notify(vm);
  const int rc = acccheck::host::run_merge(vm);
  if (rc != 0 && !fs::is_empty(out)) __builtin_trap();  // a refused merge wrote something
  return 0;
}
