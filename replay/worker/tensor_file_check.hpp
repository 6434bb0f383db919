// Is a .pt file one that torch.save (or LibTorch's pickle_save) wrote for one tensor? Checked on the
// bytes, before LibTorch reads them: LibTorch's zip reader and unpickler trust what a file declares
// and are not memory-safe on malformed input (fuzz_tensor_pt found an out-of-bounds read in the
// zip reader, 30 GB allocations from declared lengths, and a bad free inside pickle_load from a
// pickle whose opcodes do not fit the stack). Torch-free, so it is tested and fuzzed on its own.
#pragma once

#include <string>
#include <vector>

namespace acccheck::replay {

// Why `bytes` are not a single-tensor file that LibTorch can load safely, or "" if they are:
//  - a well-formed zip archive whose records are stored (torch.save does not compress), each
//    within the file, no two with one name;
//  - <archive>/data.pkl a pickle of only the opcodes and globals torch.save writes for a tensor,
//    each opcode finding on the stack what it takes (simulated: marks, memo, kinds of values);
//  - every storage it names a record at least as large as the storage, and the tensor's sizes,
//    strides and offset inside that storage.
std::string tensor_file_problem(const std::vector<char>& bytes);

}  // namespace acccheck::replay
