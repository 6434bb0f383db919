// dtype names as Python prints them, shared by the replay worker and the dump engine.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace acccheck::core {

// "torch.float16" ↔ at::kHalf (also "torch.float", "torch.half", "torch.long", ...).
std::optional<c10::ScalarType> scalar_type_of(const std::string& torch_dtype);
std::string torch_dtype_name(c10::ScalarType t);
bool is_float_type(c10::ScalarType t);   // float16, bfloat16, float32, float64
bool is_float8_type(c10::ScalarType t);  // float8_e4m3fn, float8_e5m2 (and the fnuz variants; LibTorch 2.x)

}  // namespace acccheck::core
