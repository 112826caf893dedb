// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace flopcast {

enum class FfnKind { gated, plain };          ///< SwiGLU-style (gate, up, down) or plain (up, down)
enum class NormKind { rmsnorm, layernorm };   ///< RMSNorm: weight only; LayerNorm: weight + bias
enum class PositionEmbedding { rope, learned };

/// A decoder-only transformer. Shapes as in a Hugging Face config.json. For a mixture of experts
/// `intermediate_size` is the FFN width of one expert.
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

  [[nodiscard]] bool is_moe() const noexcept { return num_experts > 0; }
};

/// Parameter counts derived from the shapes (see count_params for the formula).
struct ParamCounts {
  double total = 0;                 ///< every weight
  double active = 0;                ///< weights one token touches (MoE: top-k experts)
  double embedding = 0;             ///< token (+ learned position) embedding
  double lm_head = 0;               ///< 0 when tied to the embedding
  double attention_per_layer = 0;   ///< q, k, v, o weights and biases
  double expert_per_layer = 0;      ///< one expert's FFN (the dense FFN when not MoE)
  double router_per_layer = 0;
  double norms_per_layer = 0;
  double final_norm = 0;
};

/// Checks shapes and cross-field rules; throws SpecError with paths under `path` (e.g. "model").
void validate(const ModelSpec& m, const std::string& path);

/// embed = V·h (+ ctx·h for learned positions); lm_head = V·h unless tied;
/// attention = h·Hq·d + 2·h·Hkv·d + Hq·d·h (+ biases); expert FFN = (3 gated | 2 plain)·h·I (+ biases);
/// MoE layer = E·expert + h·E router; norms 2 per layer (+1 final), h (RMSNorm) or 2h (LayerNorm).
ParamCounts count_params(const ModelSpec& m) noexcept;

}  // namespace flopcast
