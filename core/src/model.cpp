// SPDX-License-Identifier: MIT
#include "flopcast/model.hpp"

#include "flopcast/error.hpp"

namespace flopcast {
namespace {

void check_range(const std::string& path, long long value, long long lo, long long hi) {
  if (value < lo || value > hi) {
    fail(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi),
         static_cast<double>(value));
  }
}

}  // namespace

void validate(const ModelSpec& m, const std::string& path) {
  const std::string p = path + ".";
  check_range(p + "num_layers", m.num_layers, 1, 1000);
  check_range(p + "hidden_size", m.hidden_size, 1, 1'000'000);
  check_range(p + "num_heads", m.num_heads, 1, 100'000);
  check_range(p + "num_kv_heads", m.num_kv_heads, 1, m.num_heads);
  if (m.num_heads % m.num_kv_heads != 0) {
    fail(p + "num_kv_heads", "must divide model.num_heads (" + std::to_string(m.num_heads) + ")",
         m.num_kv_heads);
  }
  check_range(p + "head_dim", m.head_dim, 1, 100'000);
  check_range(p + "intermediate_size", m.intermediate_size, 1, 10'000'000);
  check_range(p + "vocab_size", m.vocab_size, 1, 100'000'000);
  check_range(p + "max_context_tokens", m.max_context_tokens, 1, 100'000'000);
  check_range(p + "num_experts", m.num_experts, 0, 100'000);
  if (m.is_moe()) {
    check_range(p + "experts_per_token", m.experts_per_token, 1, m.num_experts);
  } else if (m.experts_per_token != 0) {
    fail(p + "experts_per_token", "must be 0 when model.num_experts is 0", m.experts_per_token);
  }
}

ParamCounts count_params(const ModelSpec& m) noexcept {
  const double h = m.hidden_size;
  const double d = m.head_dim;
  const double hq = m.num_heads;
  const double hkv = m.num_kv_heads;
  const double inter = m.intermediate_size;
  const double vocab = m.vocab_size;
  const bool gated = m.ffn == FfnKind::gated;
  const double norm = m.norm == NormKind::layernorm ? 2 * h : h;

  ParamCounts c;
  c.embedding = vocab * h;
  if (m.position_embedding == PositionEmbedding::learned) c.embedding += m.max_context_tokens * h;
  c.lm_head = m.tie_embeddings ? 0 : vocab * h;
  c.attention_per_layer = h * hq * d + 2 * h * hkv * d + hq * d * h;
  if (m.qkv_bias) c.attention_per_layer += (hq + 2 * hkv) * d;
  if (m.linear_bias) c.attention_per_layer += h;
  c.expert_per_layer = (gated ? 3 : 2) * h * inter;
  if (m.linear_bias) c.expert_per_layer += (gated ? 2 * inter : inter) + h;
  c.router_per_layer = m.is_moe() ? h * m.num_experts : 0;
  c.norms_per_layer = 2 * norm;
  c.final_norm = norm;

  const double experts = m.is_moe() ? m.num_experts : 1;
  const double active_experts = m.is_moe() ? m.experts_per_token : 1;
  const double shared = c.embedding + c.lm_head + c.final_norm;
  const double layer_fixed = c.attention_per_layer + c.router_per_layer + c.norms_per_layer;
  c.total = shared + m.num_layers * (layer_fixed + experts * c.expert_per_layer);
  c.active = shared + m.num_layers * (layer_fixed + active_experts * c.expert_per_layer);
  return c;
}

}  // namespace flopcast
