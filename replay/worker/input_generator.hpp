// Builds one API's input tensors from the dump (run-ut.md §3.3-§3.4): uniform random data in
// [Min, Max] with the first element Min and the last Max, drawn from a generator seeded from the
// entry name (so an NPU run and a GPU run on different machines, with any number of workers,
// draw the same inputs), or the real tensors of a tensor-mode dump.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include <acccheck/record.hpp>

namespace acccheck::replay {

struct InputGenerator {
  // Seeds the generator from `entry_name` (FNV-1a of the name).
  InputGenerator(const std::string& entry_name, std::string real_data_dir, std::string short_api);

  // A CPU tensor in the recorded dtype (after the API's dtype conversions).
  at::Tensor tensor(const TensorSpec& spec);

  std::string real_data_dir;  // dump_tensor_data/ beside dump.json; empty: random mode
  bool allow_outside_dump = false;  // run_ut --allow-outside-dump: real data from outside that folder
  std::string short_api;
  at::Generator generator;
};

// FNV-1a 64 of a string: the seed of an entry's inputs.
std::uint64_t entry_seed(const std::string& entry_name);

// Reads a .pt file written by Python's torch.save (or torch::pickle_save) holding one tensor.
at::Tensor load_tensor_file(const std::string& path);
// The same from its bytes (already read; `path` names it in errors), checked before LibTorch sees them.
at::Tensor tensor_from_file_bytes(const std::string& path, const std::vector<char>& bytes);

}  // namespace acccheck::replay
