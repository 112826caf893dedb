// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "flopcast/dtype.hpp"
#include "flopcast/names.hpp"

namespace flopcast {

enum class FfnKind { gated, plain };         ///< SwiGLU-style (gate, up, down) or plain (up, down)
enum class NormKind { rmsnorm, layernorm };  ///< RMSNorm: weight only; LayerNorm: weight + bias
/// How positions enter: rotary (its elementwise cost per token), a learned table (its weights),
/// or none (NoPE: Granite 4.0's hybrid models, whose Mamba layers carry position).
enum class PositionEmbedding { rope, learned, none };
/// Local attention of the windowed layers: a sliding window of the last W tokens (Mistral v0.1,
/// Gemma 2/3, gpt-oss), or fixed chunks of W tokens attended causally within the chunk (Llama 4).
enum class LocalAttention { sliding, chunked };
inline constexpr std::array<Named<FfnKind>, 2> kFfnNames{
    {{"gated", FfnKind::gated}, {"plain", FfnKind::plain}}};
inline constexpr std::array<Named<NormKind>, 2> kNormNames{
    {{"rmsnorm", NormKind::rmsnorm}, {"layernorm", NormKind::layernorm}}};
inline constexpr std::array<Named<PositionEmbedding>, 3> kPositionEmbeddingNames{
    {{"rope", PositionEmbedding::rope},
     {"learned", PositionEmbedding::learned},
     {"none", PositionEmbedding::none}}};
inline constexpr std::array<Named<LocalAttention>, 2> kLocalAttentionNames{
    {{"sliding", LocalAttention::sliding}, {"chunked", LocalAttention::chunked}}};
/// How a quantized checkpoint scales its FP8 weights: one scale per tensor (or per output
/// channel), or one per block of the matrix (128 x 128: DeepSeek-V3's weight_block_size).
enum class WeightScaling { tensor, block };
inline constexpr std::array<Named<WeightScaling>, 2> kWeightScalingNames{
    {{"tensor", WeightScaling::tensor}, {"block", WeightScaling::block}}};
constexpr std::string_view to_string(FfnKind k) noexcept { return name_in(kFfnNames, k); }
constexpr std::string_view to_string(NormKind k) noexcept { return name_in(kNormNames, k); }
constexpr std::string_view to_string(PositionEmbedding p) noexcept {
  return name_in(kPositionEmbeddingNames, p);
}
constexpr std::string_view to_string(LocalAttention a) noexcept {
  return name_in(kLocalAttentionNames, a);
}
constexpr std::string_view to_string(WeightScaling w) noexcept {
  return name_in(kWeightScalingNames, w);
}

/// The model reader's bounds on the sizes every other count is built from (validate), shared with
/// the config importer, which checks them before any arithmetic on them.
inline constexpr int kMaxLayers = 1000;
inline constexpr int kMaxHiddenSize = 1'000'000;
inline constexpr int kMaxHeads = 100'000;

/// What mixes tokens in a layer: attention, a Mamba-2 (SSD) mixer, a Mamba-1 (selective scan)
/// mixer, a gated DeltaNet (linear-attention) mixer, or nothing (a hybrid model's FFN-only layer).
enum class Mixer { attention, mamba, mamba1, gdn, none };

/// Whether a mixer keeps a fixed state per sequence (Mamba-1 and -2, gated DeltaNet) instead of a
/// KV cache.
constexpr bool is_recurrent(Mixer x) noexcept {
  return x == Mixer::mamba || x == Mixer::mamba1 || x == Mixer::gdn;
}

/// A fixed-state mixer's name in messages ("Mamba-2", "Mamba-1", "gated DeltaNet").
constexpr const char* recurrent_name(Mixer x) noexcept {
  return x == Mixer::mamba ? "Mamba-2" : x == Mixer::mamba1 ? "Mamba-1" : "gated DeltaNet";
}

/// A decoder-only transformer, or a hybrid of attention, Mamba-2 and FFN layers. Shapes as in a
/// Hugging Face config.json. For a mixture of experts
/// `intermediate_size` is the FFN width of one routed expert.
///
/// Layers may differ (layer i counts from 1): layer i is a mixture of experts when the model has
/// experts, i > first_dense_layers and (i − first_dense_layers) is a multiple of
/// moe_layer_interval, else a dense FFN of dense_intermediate_size; layer i attends through the
/// local window when window_tokens > 0 and i is not a multiple of global_attention_every (0: every
/// layer is local). Multi-head latent attention (kv_lora_rank > 0) replaces K and V by a cached
/// latent of kv_lora_rank + qk_rope_head_dim elements per token.
///
/// A hybrid model (Nemotron-H, Nemotron 3) sets `layer_pattern`, one character per layer as
/// Megatron-Core's hybrid_override_pattern writes it: each layer is a single block (norm, one
/// mixer or one FFN, residual): 'M' a Mamba-2 mixer, 'S' a Mamba-1 (selective-scan) mixer, 'G' a
/// gated DeltaNet mixer, '*' attention, '-' a dense FFN, 'E' a mixture of experts. The pattern
/// then decides which layers have experts. A Qwen3-Next decoder layer (mixer, then MoE) is two
/// pattern layers: "GE" or "*E"; a Jamba one "SE", "S-", "*E" or "*-".
struct ModelSpec {
  std::string name;
  int num_layers = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;  ///< < num_heads: GQA; 1: MQA
  int head_dim = 0;
  int intermediate_size = 0;
  FfnKind ffn = FfnKind::gated;
  int vocab_size = 0;
  bool tie_embeddings = false;
  int max_context_tokens = 0;
  NormKind norm = NormKind::rmsnorm;
  bool qkv_bias = false;     ///< bias on the q, k, v projections (Qwen2)
  bool linear_bias = false;  ///< bias on o_proj and the MLP linears (GPT-3)
  PositionEmbedding position_embedding = PositionEmbedding::rope;
  int num_experts = 0;  ///< 0: dense FFN
  int experts_per_token = 0;
  int shared_experts = 0;  ///< experts every token passes through (DeepSeek, Llama 4)
  int shared_expert_intermediate_size = 0;  ///< width of one shared expert
  int dense_intermediate_size = 0;          ///< FFN width of the dense layers of an MoE model
  int first_dense_layers = 0;               ///< DeepSeek first_k_dense_replace
  /// Group-limited routing (DeepSeek-V3 n_group / topk_group): the routed experts fall in
  /// `expert_groups` equal groups of consecutive experts, and a token takes its experts from its
  /// top `expert_groups_per_token` groups only. 0: no limit.
  int expert_groups = 0;
  int expert_groups_per_token = 0;
  /// LatentMoE (Nemotron 3 Super, Megatron-Core moe_latent_size): the routed experts work on a
  /// projected latent of this width, between an [h -> latent] and a [latent -> h] projection
  /// every token passes through (replicated, not split over TP); the router and the shared
  /// experts see the full hidden state. 0: experts on the hidden state.
  int moe_latent_size = 0;
  /// Multi-token-prediction modules (DeepSeek num_nextn_predict_layers): each one transformer
  /// layer like the model's last plus a 2h -> h projection, sharing the embedding and LM head.
  /// A speculative-decoding draft in serving; not in the parameter count (DeepSeek-V3's 671B
  /// leaves its 14B MTP module out).
  int mtp_layers = 0;
  /// The types the checkpoint is published in (DeepSeek-V3/R1: fp8; gpt-oss: mxfp4 experts beside
  /// bf16 attention): the default of precision.weights and precision.attention_weights in
  /// inference and serving. Unset: bf16.
  std::optional<DType> checkpoint_weights;
  std::optional<DType> checkpoint_attention_weights;
  /// FP8 weights scaled per block of the weight matrix (DeepSeek-V3/R1, Kimi K2, Qwen3's FP8
  /// releases: quantization_config.weight_block_size [128, 128]) rather than per tensor or
  /// channel. Engines run other GEMM and MoE kernels for them (DeepGEMM, CUTLASS block-scaled,
  /// vLLM's fp8 block path): priced with the `-block` fits where the weights are the checkpoint's.
  WeightScaling checkpoint_weight_scaling = WeightScaling::tensor;
  int moe_layer_interval = 1;  ///< Llama 4 Maverick interleave_moe_layer_step 2
  /// Multi-head latent attention (DeepSeek-V2/V3, Kimi K2); 0: standard multi-/grouped-query.
  int kv_lora_rank = 0;
  int q_lora_rank = 0;  ///< 0: q projected directly from the hidden state
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;  ///< head_dim = qk_nope_head_dim + qk_rope_head_dim under MLA
  int v_head_dim = 0;
  /// DeepSeek sparse attention (DeepSeek-V3.2's DSA, over MLA): a lightning indexer of
  /// dsa_index_heads heads of dsa_index_head_dim scores every cached token (its own fp8 key cache)
  /// and each query attends to the dsa_topk_tokens best in MLA's MQA mode. 0: dense attention.
  int dsa_index_heads = 0;
  int dsa_index_head_dim = 0;
  int dsa_topk_tokens = 0;
  int window_tokens = 0;  ///< local attention window or chunk; 0: every layer attends to all
  LocalAttention local_attention = LocalAttention::sliding;
  int global_attention_every = 0;
  std::string layer_pattern;  ///< empty: every layer is attention + FFN
  /// Mamba-2 mixer (Dao & Gu 2024, mamba_ssm's Mamba2): mamba_heads heads of mamba_head_dim
  /// (d_inner = heads · head_dim), a state of mamba_state_dim per head, B and C shared by
  /// mamba_groups groups of heads, a causal conv1d of mamba_conv_kernel taps, and the chunked
  /// scan in chunks of mamba_chunk_tokens.
  int mamba_heads = 0;
  int mamba_head_dim = 0;
  int mamba_state_dim = 0;
  int mamba_groups = 0;
  int mamba_conv_kernel = 4;
  int mamba_chunk_tokens = 128;
  /// Mamba-1 mixer (Gu & Dao 2023, mamba_ssm's Mamba; Jamba's mamba layers): in_proj to x and the
  /// gate z of mamba1_inner_size channels each, a causal conv1d of mamba1_conv_kernel taps over x,
  /// x_proj to dt (mamba1_dt_rank) and B, C (mamba1_state_dim each), dt_proj back to the
  /// channels, the selective scan with a state of mamba1_state_dim per channel, out_proj.
  int mamba1_inner_size = 0;
  int mamba1_state_dim = 0;
  int mamba1_dt_rank = 0;
  int mamba1_conv_kernel = 4;
  /// Gated DeltaNet mixer (Yang et al. 2025; Megatron-Core's GatedDeltaNet, Qwen3-Next's
  /// linear_attention layers): q and k of gdn_key_heads heads of gdn_key_head_dim, v and the output
  /// gate of gdn_value_heads heads of gdn_value_head_dim (q and k repeated to the value heads), a
  /// causal conv1d of gdn_conv_kernel taps over q, k, v, the chunked delta rule in chunks of
  /// gdn_chunk_tokens and a recurrent state of key_head_dim × value_head_dim per value head.
  int gdn_key_heads = 0;
  int gdn_value_heads = 0;
  int gdn_key_head_dim = 0;
  int gdn_value_head_dim = 0;
  int gdn_conv_kernel = 4;
  int gdn_chunk_tokens = 64;
  /// Kimi Delta Attention (Kimi Linear, model_type kimi_linear; fla's KimiDeltaAttention): the
  /// gated DeltaNet with its decay gate per key channel instead of per head, both it and the output
  /// gate projected through a rank of gdn_key_head_dim (f_a/f_b, g_a/g_b), β from its own
  /// projection.
  bool gdn_channel_gate = false;
  /// Gated attention (Qwen3-Next attn_output_gate): q_proj also yields a per-head sigmoid gate on
  /// the attention output, doubling its width.
  bool attention_output_gate = false;

  [[nodiscard]] bool is_hybrid() const noexcept { return !layer_pattern.empty(); }
  [[nodiscard]] bool has_mamba() const noexcept {
    return layer_pattern.find('M') != std::string::npos;
  }
  [[nodiscard]] bool has_mamba1() const noexcept {
    return layer_pattern.find('S') != std::string::npos;
  }
  [[nodiscard]] bool has_gdn() const noexcept {
    return layer_pattern.find('G') != std::string::npos;
  }
  /// The model's fixed-state mixer (at most one kind a model): Mamba-2, Mamba-1, gated DeltaNet
  /// or none.
  [[nodiscard]] Mixer recurrent_mixer() const noexcept {
    return has_mamba()    ? Mixer::mamba
           : has_mamba1() ? Mixer::mamba1
           : has_gdn()    ? Mixer::gdn
                          : Mixer::none;
  }
  [[nodiscard]] bool has_recurrent() const noexcept { return recurrent_mixer() != Mixer::none; }
  [[nodiscard]] double mamba_inner() const noexcept { return double(mamba_heads) * mamba_head_dim; }
  /// The width the routed experts read and write, and their tokens travel in: the hidden state,
  /// or the LatentMoE latent.
  [[nodiscard]] int expert_hidden() const noexcept {
    return moe_latent_size > 0 ? moe_latent_size : hidden_size;
  }
  [[nodiscard]] bool is_moe() const noexcept { return num_experts > 0; }
  [[nodiscard]] bool is_mla() const noexcept { return kv_lora_rank > 0; }
  [[nodiscard]] bool has_dsa() const noexcept { return dsa_topk_tokens > 0; }
  [[nodiscard]] int dense_ffn_width() const noexcept {
    return dense_intermediate_size > 0 ? dense_intermediate_size : intermediate_size;
  }
  [[nodiscard]] int shared_expert_width() const noexcept {
    return shared_expert_intermediate_size > 0 ? shared_expert_intermediate_size
                                               : intermediate_size;
  }
  /// Whether layer i (1-based) is a mixture of experts / attends through the local window.
  [[nodiscard]] bool moe_layer(int i) const noexcept {
    if (is_hybrid()) return layer_pattern[std::size_t(i - 1)] == 'E';
    return is_moe() && i > first_dense_layers && (i - first_dense_layers) % moe_layer_interval == 0;
  }
  [[nodiscard]] bool local_layer(int i) const noexcept {
    return window_tokens > 0 && (global_attention_every == 0 || i % global_attention_every != 0);
  }
  /// Layer i's mixer, and whether it has an FFN (every transformer layer has both).
  [[nodiscard]] Mixer mixer(int i) const noexcept {
    if (!is_hybrid()) return Mixer::attention;
    const char c = layer_pattern[std::size_t(i - 1)];
    return c == '*'   ? Mixer::attention
           : c == 'M' ? Mixer::mamba
           : c == 'S' ? Mixer::mamba1
           : c == 'G' ? Mixer::gdn
                      : Mixer::none;
  }
  [[nodiscard]] bool has_ffn(int i) const noexcept {
    if (!is_hybrid()) return true;
    const char c = layer_pattern[std::size_t(i - 1)];
    return c == '-' || c == 'E';
  }
  /// Residual blocks (norm, sublayer, residual add) a layer holds: 2 in a transformer, 1 in a
  /// hybrid model.
  [[nodiscard]] int blocks_per_layer() const noexcept { return is_hybrid() ? 1 : 2; }
};

/// Layers that cost the same: `count` layers with (or without) experts and local attention, their
/// mixer, and whether they have an FFN.
struct LayerKind {
  int count = 0;
  bool moe = false;
  bool local = false;
  Mixer mixer = Mixer::attention;
  bool ffn = true;
};

/// The model's layers grouped by kind, in order of first appearance (one entry for a uniform
/// model, at most four for a transformer).
std::vector<LayerKind> layer_kinds(const ModelSpec& m);

/// Query–key pairs that `new_tokens` queries at positions cached+1 … cached+new attend to, each
/// query p seeing keys 1…p (full), max(1, p−W+1)…p (sliding window W) or those of its own chunk
/// of W (chunked): Σ attended(p). Full: n·c + n(n+1)/2.
double attended_pairs(double cached_tokens, double new_tokens, int window_tokens,
                      LocalAttention kind) noexcept;

/// Keys one decode query attends to with `context` tokens cached before it (itself included in
/// the count, as in attention_decode_op): all of them, at most W (sliding), or for chunks the
/// mean over a chunk, (W + 1)/2, once the context is longer than one chunk.
double attended_context(double context_tokens, int window_tokens, LocalAttention kind) noexcept;

/// Tokens of KV cache one local layer keeps for a sequence of `tokens`: min(tokens, W) (an engine
/// that frees what the window left behind; vLLM's hybrid KV manager, SGLang, TensorRT-LLM).
double local_kv_tokens(double tokens, int window_tokens) noexcept;

/// Parameter counts derived from the shapes (see count_params for the formula).
struct ParamCounts {
  double total = 0;                    ///< every weight
  double active = 0;                   ///< weights one token touches (MoE: top-k experts)
  double embedding = 0;                ///< token (+ learned position) embedding
  double lm_head = 0;                  ///< 0 when tied to the embedding
  double attention_per_layer = 0;      ///< q, k, v, o weights and biases
  double expert_per_layer = 0;         ///< one routed expert's FFN (the dense FFN when not MoE)
  double shared_expert_per_layer = 0;  ///< the shared experts of one MoE layer, together
  double dense_ffn_per_layer = 0;      ///< the FFN of a dense layer
  /// Per MoE layer, the weights every token passes through once, replicated over TP: the router,
  /// and LatentMoE's two latent projections 2·h·latent.
  double router_per_layer = 0;
  double norms_per_layer = 0;  ///< with MLA, its two latent norms too
  /// One fixed-state mixer: Mamba-2 (projections, conv1d, A, D, dt bias, norm) or gated DeltaNet
  /// (projections, conv1d, A, dt bias, norm).
  double recurrent_per_layer = 0;
  double final_norm = 0;
  int moe_layers = 0;        ///< layers with experts
  int dense_layers = 0;      ///< layers with a dense FFN
  int attention_layers = 0;  ///< layers with attention (every layer of a transformer)
  int recurrent_layers = 0;  ///< layers with a Mamba-2 or gated DeltaNet mixer
};

/// Checks shapes and cross-field rules; throws SpecError with paths under `path` (e.g. "model").
void validate(const ModelSpec& m, const std::string& path);

/// embed = V·h (+ ctx·h for learned positions); lm_head = V·h unless tied;
/// attention = h·Hq·d + 2·h·Hkv·d + Hq·d·h (+ biases), or under MLA
///   q: h·r_q + r_q·Hq·d (r_q = q_lora_rank; h·Hq·d without it), kv: h·(r_kv + d_rope) +
///   r_kv·Hq·(d_nope + d_v), o: Hq·d_v·h, and the latents' norms r_q + r_kv with the layer's norms;
/// FFN of width w = (3 gated | 2 plain)·h·w (+ biases); MoE layer = E·expert(I) + shared
/// experts(S·I_s) + h·E router, dense layer = FFN(dense_intermediate_size); norms 2 per layer
/// (1 in a hybrid model; +1 final), h (RMSNorm) or 2h (LayerNorm); Mamba-2 mixer with
/// d_in = heads·head_dim, G groups, state N, conv kernel K, H heads:
///   in_proj h·(2·d_in + 2·G·N + H) + conv1d (d_in + 2·G·N)·(K + 1) + A, D, dt bias 3·H +
///   gated norm d_in + out_proj d_in·h; gated DeltaNet with q/k width k = Hk·dk, v width
///   v = Hv·dv, conv kernel K: in_proj h·(2·k + 2·v + 2·Hv) + conv1d (2·k + v)·K + A, dt bias
///   2·Hv + gated norm dv + out_proj v·h; gated attention adds h·Hq·d to q.
ParamCounts count_params(const ModelSpec& m) noexcept;

}  // namespace flopcast
