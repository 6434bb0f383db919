// The fused operators acccheck has a reference for, with torch_npu's schemas (defined only where
// torch_npu is absent: the cpu and npu-sim devices, a program of one's own).
#include "fused_formulas.hpp"

namespace acccheck::fused {

const std::vector<FusedOp>& fused_ops() {
  static const std::vector<FusedOp> ops = {
      {"npu::npu_fusion_attention",
       {"npu_fusion_attention(Tensor query, Tensor key, Tensor value, int head_num, str input_layout, Tensor? pse=None, "
        "Tensor? padding_mask=None, Tensor? atten_mask=None, float scale=1., float keep_prob=1., int pre_tockens=2147483647, "
        "int next_tockens=2147483647, int inner_precise=0, int[]? prefix=None, int[]? actual_seq_qlen=None, "
        "int[]? actual_seq_kvlen=None, int sparse_mode=0, bool gen_mask_parallel=True, bool sync=False) "
        "-> (Tensor, Tensor, Tensor, Tensor, int, int, int)"},
       fusion_attention_reference, fusion_attention_device},
      {"npu::npu_rms_norm", {"npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)"}, rms_norm_reference,
       rms_norm_device},
      {"npu::npu_rotary_mul", {"npu_rotary_mul(Tensor self, Tensor r1, Tensor r2, str rotary_mode='half') -> Tensor"},
       rotary_mul_reference, rotary_mul_device},
      {"npu::npu_swiglu", {"npu_swiglu(Tensor self, int dim=-1) -> Tensor"}, swiglu_reference, swiglu_device},
      {"npu::npu_fast_gelu", {"npu_fast_gelu(Tensor self) -> Tensor"}, fast_gelu_reference, fast_gelu_device},
      // torch_npu also has fast_gelu (same kernel); msprobe's table names only npu_fast_gelu, so its
      // NPU.fast_gelu entries SKIP (api-list.md §3). Here both have the reference.
      {"npu::fast_gelu", {"fast_gelu(Tensor self) -> Tensor"}, fast_gelu_reference, fast_gelu_device},
      {"npu::npu_linear", {"npu_linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"}, linear_reference, linear_device},
      {"npu::npu_confusion_transpose", {"npu_confusion_transpose(Tensor self, int[] perm, int[] shape, bool transpose_first) -> Tensor"},
       confusion_transpose_reference, confusion_transpose_device},
      {"npu::npu_scaled_masked_softmax",
       {"npu_scaled_masked_softmax(Tensor x, Tensor mask, Scalar scale=1, bool fixed_triu_mask=False) -> Tensor"},
       scaled_masked_softmax_reference, scaled_masked_softmax_device},
      {"npu::npu_mish", {"npu_mish(Tensor self) -> Tensor"}, mish_reference, mish_device},
      {"npu::npu_layer_norm_eval",
       {"npu_layer_norm_eval(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor"},
       layer_norm_eval_reference, layer_norm_eval_device},
      {"npu::npu_group_norm_silu",
       {"npu_group_norm_silu(Tensor input, Tensor? weight, Tensor? bias, int group, float eps=1e-05) -> (Tensor, Tensor, Tensor)"},
       group_norm_silu_reference, group_norm_silu_device},
      {"npu::npu_sort_v2",
       {"npu_sort_v2(Tensor self, int dim=-1, bool descending=False) -> Tensor",
        "npu_sort_v2.out(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) out) -> Tensor(a!)"},
       sort_v2_reference, sort_v2_device},
      {"npu::npu_moe_gating_top_k_softmax",
       {"npu_moe_gating_top_k_softmax(Tensor x, Tensor? finished=None, int k=1) -> (Tensor, Tensor, Tensor)"},
       moe_gating_top_k_softmax_reference, moe_gating_top_k_softmax_device},
      {"npu::npu_apply_adam_w",
       {"npu_apply_adam_w(Scalar beta1_power, Scalar beta2_power, Scalar lr, Scalar weight_decay, Scalar beta1, Scalar beta2, "
        "Scalar epsilon, Tensor grad, Tensor? max_grad_norm, bool? amsgrad, bool? maximize) -> (Tensor, Tensor, Tensor)",
        "npu_apply_adam_w.out(Scalar beta1_power, Scalar beta2_power, Scalar lr, Scalar weight_decay, Scalar beta1, Scalar beta2, "
        "Scalar epsilon, Tensor grad, Tensor? max_grad_norm, bool? amsgrad, bool? maximize, *, Tensor(a!) var, Tensor(b!) m, "
        "Tensor(c!) v) -> (Tensor(a!), Tensor(b!), Tensor(c!))"},
       apply_adam_w_reference, apply_adam_w_device},
      {"npu::npu_apply_adam",
       {"npu_apply_adam(Scalar beta1_power, Scalar beta2_power, Scalar lr, Scalar beta1, Scalar beta2, Scalar epsilon, Tensor grad, "
        "bool? use_locking, bool? use_nesterov) -> (Tensor, Tensor, Tensor)",
        "npu_apply_adam.out(Scalar beta1_power, Scalar beta2_power, Scalar lr, Scalar beta1, Scalar beta2, Scalar epsilon, "
        "Tensor grad, bool? use_locking, bool? use_nesterov, *, Tensor(a!) var, Tensor(b!) m, Tensor(c!) v) "
        "-> (Tensor(a!), Tensor(b!), Tensor(c!))"},
       apply_adam_reference, apply_adam_device},
  };
  return ops;
}

const FusedOp* find_fused_op(const std::string& qualified_name) {
  for (const FusedOp& op : fused_ops())
    if (op.name == qualified_name) return &op;
  return nullptr;
}

std::map<std::string, BenchFunction> reference_functions() {
  std::map<std::string, BenchFunction> out;
  for (const FusedOp& op : fused_ops()) out.emplace(op.name, op.reference);
  return out;
}

}  // namespace acccheck::fused
