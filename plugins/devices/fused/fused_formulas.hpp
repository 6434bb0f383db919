// The formulas behind fused_ops(): each operator's reference (msprobe's bench function, api-list.md
// §4) and its healthy device formula. One pair per operator; fused_op_table.cpp puts them together.
#pragma once

#include "fused_ops.hpp"

namespace acccheck::fused {

// float16/bfloat16 → float32 (a healthy accelerator's accumulation type); other dtypes unchanged.
at::Tensor widened(const at::Tensor& t);

#define ACCCHECK_FUSED_FORMULAS(op)          \
  Values op##_reference(const Values& args); \
  Values op##_device(const Values& args);

ACCCHECK_FUSED_FORMULAS(rms_norm)
ACCCHECK_FUSED_FORMULAS(swiglu)
ACCCHECK_FUSED_FORMULAS(rotary_mul)
ACCCHECK_FUSED_FORMULAS(fast_gelu)
ACCCHECK_FUSED_FORMULAS(linear)
ACCCHECK_FUSED_FORMULAS(confusion_transpose)
ACCCHECK_FUSED_FORMULAS(scaled_masked_softmax)
ACCCHECK_FUSED_FORMULAS(mish)
ACCCHECK_FUSED_FORMULAS(layer_norm_eval)
ACCCHECK_FUSED_FORMULAS(group_norm_silu)
ACCCHECK_FUSED_FORMULAS(sort_v2)
ACCCHECK_FUSED_FORMULAS(moe_gating_top_k_softmax)
ACCCHECK_FUSED_FORMULAS(apply_adam_w)
ACCCHECK_FUSED_FORMULAS(apply_adam)
ACCCHECK_FUSED_FORMULAS(fusion_attention)

#undef ACCCHECK_FUSED_FORMULAS

}  // namespace acccheck::fused
