// torch's fused transformer ops (its inference fast path), for every device (kComposite), on dense
// tensors. torch 1.13's nn.MultiheadAttention and nn.TransformerEncoderLayer call them in
// inference, and their scripted code (torch.jit.save archives) calls them by name; here they are
// the same math as the layers' other path, in the order torch's CPU kernels do it
// (aten/src/ATen/native/transformers/attention.cpp and transformer.cpp):
//   attention: q, k, v = split(x @ qkv_weight.T + qkv_bias); q /= sqrt(head_dim);
//              p = masked_softmax(q @ k.T); out = merge_heads(p @ v) @ proj_weight.T + proj_bias
//   encoder layer: x = src + attention(ln1(src) or src), then x + ffn(ln2(x) or x), with the
//              norms after the sums unless norm_first; ffn = linear2(gelu or relu(linear1))
// Masks are torch's: bool, True where a position is masked out; mask_type 1 a key padding mask
// (batch, source), otherwise an attention mask (target, source) or (batch, heads, target, source).
// A row whose keys are all masked gets zero weights, as torch's masked softmax gives. Nested
// tensors are not supported (_nested_tensor_from_mask: ampjit has none).
#include <cmath>

#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit {
namespace {

using IntList = std::vector<int64_t>;

// (B, T, E) -> (B, H, T, E/H)
Tensor split_heads(const Tensor& x, int64_t heads) {
  const int64_t b = x.size(0), t = x.size(1), e = x.size(2);
  return x.reshape(std::vector<int64_t>{b, t, heads, e / heads}).transpose(1, 2);
}

std::tuple<Tensor, Tensor> native_mha_k(const Tensor& query, const Tensor& key, const Tensor& value,
                                        int64_t embed_dim, int64_t num_head,
                                        const Tensor& qkv_weight, const Tensor& qkv_bias,
                                        const Tensor& proj_weight, const Tensor& proj_bias,
                                        const std::optional<Tensor>& mask, bool need_weights,
                                        bool average_attn_weights,
                                        std::optional<int64_t> mask_type) {
  AMPJIT_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3,
               "_native_multi_head_attention: expected 3-D (batch, sequence, embedding) inputs, "
               "got {}-D, {}-D and {}-D",
               query.dim(), key.dim(), value.dim());
  AMPJIT_CHECK(num_head > 0 && embed_dim % num_head == 0 && query.size(2) == embed_dim,
               "_native_multi_head_attention: embed_dim {} must divide into {} heads and match "
               "the query's last dimension {}",
               embed_dim, num_head, query.size(2));
  AMPJIT_CHECK(qkv_weight.dim() == 2 && qkv_weight.size(0) == 3 * embed_dim,
               "_native_multi_head_attention: qkv_weight must be (3 * embed_dim, embed_dim)");
  const int64_t e = embed_dim;
  Tensor q = ops::linear(query, qkv_weight.narrow(0, 0, e), qkv_bias.narrow(0, 0, e));
  Tensor k = ops::linear(key, qkv_weight.narrow(0, e, e), qkv_bias.narrow(0, e, e));
  Tensor v = ops::linear(value, qkv_weight.narrow(0, 2 * e, e), qkv_bias.narrow(0, 2 * e, e));
  q = ops::div_Scalar(split_heads(q, num_head),
                      Scalar(std::sqrt(static_cast<double>(e / num_head))));
  k = split_heads(k, num_head);
  v = split_heads(v, num_head);
  Tensor scores = ops::matmul(q, k.transpose(2, 3)).tensor();  // (B, H, T, S)
  std::optional<Tensor> masked;
  if (mask && mask->defined()) {
    Tensor m = *mask;
    AMPJIT_CHECK(m.dtype() == ScalarType::Bool,
                 "_native_multi_head_attention: expected a bool mask, got {}",
                 dtype_name(m.dtype()));
    if (mask_type && *mask_type == 1) {  // key padding: (B, S) -> (B, 1, 1, S)
      AMPJIT_CHECK(m.dim() == 2, "_native_multi_head_attention: a key padding mask is 2-D");
      m = m.unsqueeze(1).unsqueeze(2);
    }
    masked = ops::expand(m, scores.sizes()).tensor();
    scores = ops::masked_fill_Scalar(scores, *masked, Scalar(-INFINITY));
  }
  Tensor p = ops::softmax_int(scores, -1, std::nullopt);
  if (masked)  // fully masked rows: zeros, not NaN
    p = ops::masked_fill_Scalar(p, *masked, Scalar(0.0));
  Tensor ctx = ops::matmul(p, v).tensor().transpose(1, 2);  // (B, T, H, D)
  ctx = ctx.reshape(std::vector<int64_t>{ctx.size(0), ctx.size(1), e});
  Tensor out = ops::linear(ctx, proj_weight, proj_bias);
  if (!need_weights) return {out, Tensor::empty(std::vector<int64_t>{0}, out.dtype())};
  if (average_attn_weights)
    p = ops::div_Scalar(ops::sum_dim_IntList(p, IntList{1}, false, std::nullopt), Scalar(num_head));
  return {out, p};
}

Tensor encoder_layer_k(const Tensor& src, int64_t embed_dim, int64_t num_heads,
                       const Tensor& qkv_weight, const Tensor& qkv_bias, const Tensor& proj_weight,
                       const Tensor& proj_bias, bool use_gelu, bool norm_first, double eps,
                       const Tensor& norm_weight_1, const Tensor& norm_bias_1,
                       const Tensor& norm_weight_2, const Tensor& norm_bias_2,
                       const Tensor& ffn_weight_1, const Tensor& ffn_bias_1,
                       const Tensor& ffn_weight_2, const Tensor& ffn_bias_2,
                       const std::optional<Tensor>& mask, std::optional<int64_t> mask_type) {
  const IntList shape{embed_dim};
  auto norm = [&](const Tensor& x, const Tensor& w, const Tensor& b) {
    return ops::layer_norm(x, shape, w, b, eps, true).tensor();
  };
  Tensor x = norm_first ? norm(src, norm_weight_1, norm_bias_1) : src;
  x = std::get<0>(native_mha_k(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                               proj_bias, mask, false, true, mask_type));
  x = ops::add(x, src);
  if (!norm_first) x = norm(x, norm_weight_1, norm_bias_1);
  const Tensor residual = x;
  if (norm_first) x = norm(x, norm_weight_2, norm_bias_2);
  x = ops::linear(x, ffn_weight_1, ffn_bias_1);
  x = use_gelu ? ops::gelu(x, std::string("none")).tensor() : ops::relu(x).tensor();
  x = ops::add(ops::linear(x, ffn_weight_2, ffn_bias_2), residual);
  if (!norm_first) x = norm(x, norm_weight_2, norm_bias_2);
  return x;
}

// Whether each row of the (batch, sequence) mask (True = a real token) is a run of Trues followed
// by Falses, as the nested fast path needs.
bool left_aligned_k(const Tensor& t, const Tensor& mask) {
  AMPJIT_CHECK(
      mask.dim() == 2 && t.dim() == 3 && mask.size(0) == t.size(0) && mask.size(1) == t.size(1),
      "_nested_tensor_from_mask_left_aligned: expected a (batch, sequence) mask for a "
      "(batch, sequence, embedding) tensor");
  const Tensor m =
      ops::to_device(mask, Device(), ScalarType::Bool, false, true).tensor().contiguous();
  const bool* p = m.data<bool>();
  for (int64_t b = 0; b < m.size(0); ++b) {
    bool ended = false;
    for (int64_t s = 0; s < m.size(1); ++s) {
      const bool valid = p[b * m.size(1) + s];
      if (valid && ended) return false;
      ended |= !valid;
    }
  }
  return true;
}

Tensor nested_from_mask_k(const Tensor&, const Tensor&, bool) {
  AMPJIT_CHECK(false,
               "_nested_tensor_from_mask: ampjit has no nested tensors (torch's nn.Transformer "
               "takes this path with enable_nested_tensor=True and a src_key_padding_mask in "
               "inference; build the encoder with enable_nested_tensor=False)");
  return {};
}

Tensor to_padded_k(const Tensor& self, double, std::optional<std::vector<int64_t>>) {
  AMPJIT_CHECK(false, "to_padded_tensor: ampjit has no nested tensors");
  return self;
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(_native_multi_head_attention, native_mha_k)
AMPJIT_KERNEL(_transformer_encoder_layer_fwd, encoder_layer_k)
AMPJIT_KERNEL(_nested_tensor_from_mask_left_aligned, left_aligned_k)
AMPJIT_KERNEL(_nested_tensor_from_mask, nested_from_mask_k)
AMPJIT_KERNEL(to_padded_tensor, to_padded_k)
