// dtype names as Python prints them, shared by the replay worker and the dump engine.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace acccheck::replay {

// "torch.float16" ↔ at::kHalf (also "torch.float", "torch.half", "torch.long", ...).
std::optional<c10::ScalarType> scalar_type_of(const std::string& torch_dtype);
std::string torch_dtype_name(c10::ScalarType t);
bool is_float_type(c10::ScalarType t);

}  // namespace acccheck::replay
