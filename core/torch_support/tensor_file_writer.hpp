// The bytes of a .pt file holding one tensor, as Python's torch.save writes it — what the dump's
// tensor mode and run_ut's error data write, and what Python's torch.load (and msprobe) read back.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace acccheck::core {

// LibTorch's pickle_save for most dtypes. The dtypes torch 2.x has no typed storage class for
// (uint16/32/64, float8, complex32) are written as torch.save writes them,
// _rebuild_tensor_v3(UntypedStorage, …, dtype): pickle_save names a storage class such as
// torch.UInt16Storage that Python's torch.load cannot find.
std::vector<char> tensor_file_bytes(const at::Tensor& t);

}  // namespace acccheck::core
