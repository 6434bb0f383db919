// Is a .pt file one that torch.save (or LibTorch's pickle_save) wrote for one tensor? Checked on the
// bytes, before LibTorch reads them: LibTorch's zip reader and unpickler trust what a file declares
// and are not memory-safe on malformed input (fuzz_tensor_pt found an out-of-bounds read in the
// zip reader, 30 GB allocations from declared lengths, and a bad free inside pickle_load from a
// pickle whose opcodes do not fit the stack). Torch-free, so it is tested and fuzzed on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace acccheck::replay {

// A dump entry's real-data file, read only where and as run_ut reads it (repro reads it the same
// way): `data_name` under `folder` (dump_tensor_data/ beside dump.json). Refused, in one line, before
// a byte of it is read: a name holding a NUL, a name not ending in .pt, a file outside the folder
// (after symbolic links; `allow_outside` — run_ut --allow-outside-dump — permits it), anything but a
// regular file (a FIFO would block, a device never end), a file much larger than the tensor the
// dump describes (`expected_bytes`: its shape times its dtype's size; at most 4 × that + 64 MiB,
// which a saved view of a larger storage stays under). Throws std::runtime_error "<path>: <reason>".
std::vector<char> read_real_data_file(const std::string& folder, const std::string& data_name,
                                      std::uint64_t expected_bytes, bool allow_outside);
// Bytes of one element of a dtype as the dump names it ("torch.bfloat16" → 2; unknown → 8).
std::uint64_t dtype_item_size(const std::string& torch_dtype);
// Bytes of a tensor of this shape and dtype (negative dimensions count as 0): read_real_data_file's
// `expected_bytes` for a dump's tensor.
std::uint64_t tensor_bytes(const std::vector<std::int64_t>& shape, const std::string& torch_dtype);

// Why `bytes` are not a single-tensor file that LibTorch can load safely, or "" if they are:
//  - a well-formed zip archive whose records are stored (torch.save does not compress), each
//    within the file, no two with one name;
//  - <archive>/data.pkl a pickle of only the opcodes and globals torch.save writes for a tensor,
//    each opcode finding on the stack what it takes (simulated: marks, memo, kinds of values);
//  - every storage it names a record at least as large as the storage, and the tensor's sizes,
//    strides and offset inside that storage.
std::string tensor_file_problem(const std::vector<char>& bytes);

// Where a checked file's tensor lies, for the files LibTorch's pickle_load cannot read: torch 2.x
// saves the dtypes that have no typed storage class (uint16/32/64, the float8 variants, complex32)
// as _rebuild_tensor_v3(UntypedStorage, offset, sizes, strides, requires_grad, hooks, dtype), which
// LibTorch (2.13 included) refuses ("Unpickler found unknown type torch._utils._rebuild_tensor_v3").
struct TensorFileLayout {
  bool untyped = false;               // written by _rebuild_tensor_v3: read by acccheck, not LibTorch
  std::string record;                 // the storage's record, e.g. "archive/data/0"
  std::uint64_t record_offset = 0;    // where the record's bytes begin in the file
  std::string dtype;                  // Python's name: "uint16", "float8_e4m3fn"
  std::int64_t item_size = 0;
  std::int64_t storage_offset = 0;    // in elements
  std::vector<std::int64_t> sizes, strides;
};
std::string tensor_file_problem(const std::vector<char>& bytes, TensorFileLayout& layout);

}  // namespace acccheck::replay
