// What a run_ut output says about where it came from, so that `acccheck merge` joins only the
// shards of one dump: beside accuracy_checking_result_<ts>.csv run_ut writes
// acccheck_shard_<ts>.json — the dump's digest (FNV-1a 64 of its bytes and its size: it tells
// another dump, or the same file changed, from this one) and the shard's K of N.
#pragma once

#include <cstddef>
#include <string>

namespace acccheck::host {

struct ShardIdentity {
  std::string dump_digest;  // "fnv1a64:<16 hex digits>:<size>"
  std::size_t shard = 0, of = 1;
};

// The digest of a file's bytes (throws std::runtime_error naming the file when it cannot be read).
std::string dump_digest(const std::string& dump_json);
// The identity file beside a result file (the same <ts>).
std::string identity_file_for(const std::string& result_csv);
// Written atomically; read back with each field checked (throws std::runtime_error naming the file).
void write_shard_identity(const std::string& result_csv, const ShardIdentity& id);
ShardIdentity read_shard_identity(const std::string& result_csv);

}  // namespace acccheck::host
