// npu_fusion_attention: softmax((q·kᵀ (+ pse))·scale + mask·(−40000))·v over the layouts BSH, SBH,
// BSND and BNSD, K/V heads repeated for grouped-query attention, the sparse modes' masks rebuilt as
// msprobe's bench function does (api-list.md §4, run-ut.md §3.2). The reference computes in float64
// whatever the inputs (msprobe's GTYPE) and returns (out, softmax_max ×8, softmax_sum ×8); the device
// formula computes in float32 and returns torch_npu's seven results.
#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>

#include "fused_formulas.hpp"
#include "named_args.hpp"

namespace acccheck::fused {

namespace {

constexpr int64_t kCompressedMask = 2048;  // sparse modes 2-4 take a 2048×2048 upper-triangular mask

struct Dims {
  int64_t b = 0, s1 = 0, s2 = 0, n1 = 0, n2 = 0, d = 0;
};

Dims dims_of(const at::Tensor& q, const at::Tensor& k, int64_t head_num, const std::string& layout) {
  auto need = [&](const at::Tensor& t, int64_t rank) {
    if (t.dim() != rank)
      throw std::runtime_error("npu_fusion_attention: input_layout " + layout + " needs " + std::to_string(rank) +
                               "-D query and key, got " + std::to_string(t.dim()) + "-D");
  };
  Dims d;
  d.n1 = head_num;
  if (layout == "BSH" || layout == "SBH") {
    need(q, 3);
    need(k, 3);
    if (head_num <= 0) throw std::runtime_error("npu_fusion_attention: head_num must be positive, got " + std::to_string(head_num));
    const bool bsh = layout == "BSH";
    d.b = q.size(bsh ? 0 : 1);
    d.s1 = q.size(bsh ? 1 : 0);
    d.s2 = k.size(bsh ? 1 : 0);
    d.d = q.size(2) / head_num;
    if (d.d == 0) throw std::runtime_error("npu_fusion_attention: head dimension is 0 (H " + std::to_string(q.size(2)) + ", head_num " + std::to_string(head_num) + ")");
    d.n2 = k.size(2) / d.d;
  } else if (layout == "BSND" || layout == "BNSD") {
    need(q, 4);
    need(k, 4);
    const bool bsnd = layout == "BSND";
    d.b = q.size(0);
    d.s1 = q.size(bsnd ? 1 : 2);
    d.s2 = k.size(bsnd ? 1 : 2);
    d.n1 = q.size(bsnd ? 2 : 1);
    d.n2 = k.size(bsnd ? 2 : 1);
    d.d = q.size(3);
  } else if (layout == "TND") {
    throw std::runtime_error("npu_fusion_attention: input_layout TND has no reference (msprobe's neither)");
  } else {
    throw std::runtime_error("npu_fusion_attention: input_layout '" + layout + "' is not one of BSH, SBH, BSND, BNSD, TND");
  }
  if (d.n2 <= 0 || d.n1 % d.n2 != 0 || d.n1 < d.n2)
    throw std::runtime_error("npu_fusion_attention: query heads " + std::to_string(d.n1) + " are not a multiple of key heads " + std::to_string(d.n2));
  return d;
}

at::Tensor to_bnsd(const at::Tensor& t, int64_t n, const std::string& layout) {
  if (layout == "BSH") return t.view({t.size(0), t.size(1), n, t.size(2) / n}).permute({0, 2, 1, 3});
  if (layout == "SBH") return t.view({t.size(0), t.size(1), n, t.size(2) / n}).permute({1, 2, 0, 3});
  if (layout == "BSND") return t.permute({0, 2, 1, 3});
  return t;
}

at::Tensor from_bnsd(const at::Tensor& t, const std::string& layout) {
  const int64_t b = t.size(0), n = t.size(1), s = t.size(2), d = t.size(3);
  if (layout == "BSH") return t.permute({0, 2, 1, 3}).reshape({b, s, n * d}).contiguous();
  if (layout == "SBH") return t.permute({2, 0, 1, 3}).reshape({s, b, n * d}).contiguous();
  if (layout == "BSND") return t.permute({0, 2, 1, 3}).contiguous();
  return t;
}

at::Tensor ones(int64_t s1, int64_t s2, const at::Tensor& like) {
  return at::ones({s1, s2}, at::TensorOptions().dtype(at::kDouble).device(like.device()));
}

// The band of sparse modes 0 and 4: masked above next_tokens and below pre_tokens.
at::Tensor band_mask(int64_t s1, int64_t s2, int64_t pre, int64_t next, const at::Tensor& like) {
  return at::triu(ones(s1, s2, like), next + 1) + at::tril(ones(s1, s2, like), -pre - 1);
}

// msprobe's generate_atten_mask: a given mask is used as it is, except the compressed 2048×2048
// causal mask of sparse modes 2-4, which is expanded back to S1×S2; without a mask, the sparse mode
// builds one.
at::Tensor attention_mask(const std::optional<at::Tensor>& given, int64_t sparse_mode, const Dims& d, int64_t pre, int64_t next,
                          c10::ScalarType dtype, const at::Tensor& like) {
  if (given) {
    const at::Tensor& m = *given;
    if ((sparse_mode == 2 || sparse_mode == 3 || sparse_mode == 4) && m.dim() == 2 && m.size(0) == kCompressedMask &&
        m.size(1) == kCompressedMask &&
        at::equal(m.to(at::kDouble), at::triu(ones(kCompressedMask, kCompressedMask, m), 1))) {
      if (sparse_mode == 2) return at::triu(ones(d.s1, d.s2, like), 1).to(dtype);
      if (sparse_mode == 3) return at::triu(ones(d.s1, d.s2, like), d.s2 - d.s1 + 1).to(dtype);
      return band_mask(d.s1, d.s2, pre, next, like).to(dtype);
    }
    return m.to(dtype);
  }
  switch (sparse_mode) {
    case 1: return at::zeros({d.s1, d.s2}, at::TensorOptions().dtype(dtype).device(like.device()));
    case 2: return at::triu(ones(d.s1, d.s2, like), 1).to(dtype);
    case 3: return at::triu(ones(d.s1, d.s2, like), d.s2 - d.s1 + 1).to(dtype);
    default: return band_mask(d.s1, d.s2, pre, next, like).to(dtype);  // 0, 4 (5+ always come with a mask)
  }
}

struct Attention {
  at::Tensor out, softmax_max, softmax_sum;
};

Attention attention(const Values& args, c10::ScalarType compute) {
  NamedArgs a("npu::npu_fusion_attention", args);
  at::Tensor q = a.tensor("query"), k = a.tensor("key"), v = a.tensor("value");
  const std::string layout = a.text("input_layout", "BSH");
  const double keep_prob = a.number("keep_prob", 1.0);
  if (keep_prob != 1.0)
    throw std::runtime_error("npu_fusion_attention: keep_prob " + std::to_string(keep_prob) +
                             " drops attention weights at random: its outputs differ from run to run, so it is not judged");
  if (a.has("actual_seq_qlen") || a.has("actual_seq_kvlen"))
    throw std::runtime_error("npu_fusion_attention: actual_seq_qlen/actual_seq_kvlen (variable-length TND) have no reference");
  Dims d = dims_of(q, k, a.integer("head_num", 1), layout);
  const int64_t pre = a.integer("pre_tockens", 2147483647), next = a.integer("next_tockens", 2147483647);
  at::Tensor mask = attention_mask(a.optional_tensor("atten_mask"), a.integer("sparse_mode", 0), d, pre, next, q.scalar_type(), q);
  at::Tensor qb = to_bnsd(q, d.n1, layout).to(compute), kb = to_bnsd(k, d.n2, layout).to(compute), vb = to_bnsd(v, d.n2, layout).to(compute);
  if (d.n1 != d.n2) {  // grouped-query attention: each K/V head serves n1/n2 query heads
    kb = kb.repeat_interleave(d.n1 / d.n2, 1);
    vb = vb.repeat_interleave(d.n1 / d.n2, 1);
  }
  at::Tensor qk = at::matmul(qb, kb.transpose(2, 3));
  if (auto pse = a.optional_tensor("pse"); pse && pse->dim() > 0) qk = qk + pse->to(compute);
  qk = qk * a.number("scale", 1.0);
  if (mask.dim() > 0) qk = qk + mask.to(at::kBool).to(compute) * -40000.0;
  at::Tensor qk_max = std::get<0>(at::max(qk, -1, true));
  at::Tensor e = at::exp(qk - qk_max);
  at::Tensor e_sum = at::sum(e, {-1}, true);
  at::Tensor y = at::matmul(e / e_sum, vb);
  return {from_bnsd(y, layout), qk_max.repeat({1, 1, 1, 8}), e_sum.repeat({1, 1, 1, 8})};
}

}  // namespace

Values fusion_attention_reference(const Values& args) {
  Attention r = attention(args, at::kDouble);
  return {r.out, r.softmax_max, r.softmax_sum};
}

Values fusion_attention_device(const Values& args) {
  const at::Tensor q = args.at(0).toTensor();
  const c10::ScalarType compute = q.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  Attention r = attention(args, compute);
  at::Tensor softmax_out = at::empty({0}, q.options());
  return {r.out.to(q.scalar_type()), r.softmax_max.to(at::kFloat), r.softmax_sum.to(at::kFloat), softmax_out,
          c10::IValue(int64_t{0}), c10::IValue(int64_t{0}), c10::IValue(int64_t{0})};
}

}  // namespace acccheck::fused
