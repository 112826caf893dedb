// SPDX-License-Identifier: MIT
#include "flopcast/model.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "flopcast/error.hpp"

namespace flopcast {
void validate(const ModelSpec& m, const std::string& path) {
  const std::string p = path + ".";
  check_int(p + "num_layers", m.num_layers, 1, 1000);
  check_int(p + "hidden_size", m.hidden_size, 1, 1'000'000);
  check_int(p + "num_heads", m.num_heads, 1, 100'000);
  check_int(p + "num_kv_heads", m.num_kv_heads, 1, m.num_heads);
  if (m.num_heads % m.num_kv_heads != 0) {
    fail(p + "num_kv_heads", "must divide model.num_heads (" + std::to_string(m.num_heads) + ")",
         m.num_kv_heads);
  }
  check_int(p + "head_dim", m.head_dim, 1, 100'000);
  check_int(p + "intermediate_size", m.intermediate_size, 1, 10'000'000);
  check_int(p + "vocab_size", m.vocab_size, 1, 100'000'000);
  check_int(p + "max_context_tokens", m.max_context_tokens, 1, 100'000'000);
  check_int(p + "num_experts", m.num_experts, 0, 100'000);
  if (m.is_moe()) {
    check_int(p + "experts_per_token", m.experts_per_token, 1, m.num_experts);
  } else {
    const std::pair<const char*, int> moe_only[] = {
        {"experts_per_token", m.experts_per_token},
        {"shared_experts", m.shared_experts},
        {"first_dense_layers", m.first_dense_layers},
        {"expert_groups", m.expert_groups},
        {"expert_groups_per_token", m.expert_groups_per_token},
        {"dense_intermediate_size", m.dense_intermediate_size},
        {"shared_expert_intermediate_size", m.shared_expert_intermediate_size},
    };
    for (const auto& [key, value] : moe_only) {
      if (value != 0) fail(p + key, "must be 0 when model.num_experts is 0", value);
    }
    if (m.moe_layer_interval != 1) {
      fail(p + "moe_layer_interval", "must be 1 when model.num_experts is 0", m.moe_layer_interval);
    }
  }
  check_int(p + "shared_experts", m.shared_experts, 0, 1'000);
  check_int(p + "shared_expert_intermediate_size", m.shared_expert_intermediate_size, 0,
            10'000'000);
  check_int(p + "dense_intermediate_size", m.dense_intermediate_size, 0, 10'000'000);
  check_int(p + "first_dense_layers", m.first_dense_layers, 0, m.num_layers);
  check_int(p + "moe_layer_interval", m.moe_layer_interval, 1, m.num_layers);
  check_int(p + "mtp_layers", m.mtp_layers, 0, std::min(16, m.num_layers - 1));
  if (m.expert_groups == 0 && m.expert_groups_per_token != 0) {
    fail(p + "expert_groups_per_token", "needs model.expert_groups", m.expert_groups_per_token);
  }
  if (m.is_moe() && m.expert_groups != 0) {
    check_int(p + "expert_groups", m.expert_groups, 1, m.num_experts);
    if (m.num_experts % m.expert_groups != 0) {
      fail(p + "expert_groups",
           "must divide model.num_experts (" + std::to_string(m.num_experts) + ")",
           m.expert_groups);
    }
    const int per_group = m.num_experts / m.expert_groups;
    check_int(p + "expert_groups_per_token", m.expert_groups_per_token, 1, m.expert_groups);
    if (m.expert_groups_per_token * per_group < m.experts_per_token) {
      fail(p + "expert_groups_per_token",
           "must leave model.experts_per_token (" + std::to_string(m.experts_per_token) +
               ") experts in the chosen groups (" + std::to_string(per_group) + " a group)",
           m.expert_groups_per_token);
    }
  }
  if (m.is_moe() && m.first_dense_layers + m.moe_layer_interval > m.num_layers) {
    fail(p + "first_dense_layers",
         "leaves no layer with experts (model.num_layers " + std::to_string(m.num_layers) +
             ", moe_layer_interval " + std::to_string(m.moe_layer_interval) + ")",
         m.first_dense_layers);
  }

  check_int(p + "kv_lora_rank", m.kv_lora_rank, 0, 1'000'000);
  if (m.is_mla()) {
    check_int(p + "q_lora_rank", m.q_lora_rank, 0, 1'000'000);
    check_int(p + "qk_rope_head_dim", m.qk_rope_head_dim, 1, 100'000);
    check_int(p + "qk_nope_head_dim", m.qk_nope_head_dim, 1, 100'000);
    check_int(p + "v_head_dim", m.v_head_dim, 1, 100'000);
    if (m.head_dim != m.qk_nope_head_dim + m.qk_rope_head_dim) {
      fail(p + "head_dim",
           "must equal qk_nope_head_dim + qk_rope_head_dim under multi-head latent attention (" +
               std::to_string(m.qk_nope_head_dim + m.qk_rope_head_dim) + ")",
           m.head_dim);
    }
    if (m.num_kv_heads != m.num_heads) {
      fail(p + "num_kv_heads",
           "must equal num_heads under multi-head latent attention (" +
               std::to_string(m.num_heads) + ")",
           m.num_kv_heads);
    }
  } else {
    const std::pair<const char*, int> mla_only[] = {{"q_lora_rank", m.q_lora_rank},
                                                    {"qk_rope_head_dim", m.qk_rope_head_dim},
                                                    {"qk_nope_head_dim", m.qk_nope_head_dim},
                                                    {"v_head_dim", m.v_head_dim}};
    for (const auto& [key, value] : mla_only) {
      if (value != 0) fail(p + key, "must be 0 when model.kv_lora_rank is 0", value);
    }
  }

  check_int(p + "sliding_window_tokens", m.window_tokens, 0, 100'000'000);
  check_int(p + "global_attention_every", m.global_attention_every, 0, m.num_layers);
  if (m.window_tokens == 0 && m.global_attention_every != 0) {
    fail(p + "global_attention_every", "must be 0 without model.sliding_window_tokens",
         m.global_attention_every);
  }
}

std::vector<LayerKind> layer_kinds(const ModelSpec& m) {
  std::vector<LayerKind> kinds;
  for (int i = 1; i <= m.num_layers; ++i) {
    const bool moe = m.moe_layer(i), local = m.local_layer(i);
    auto it = std::find_if(kinds.begin(), kinds.end(),
                           [&](const LayerKind& k) { return k.moe == moe && k.local == local; });
    if (it == kinds.end()) {
      kinds.push_back(LayerKind{1, moe, local});
    } else {
      ++it->count;
    }
  }
  return kinds;
}

namespace {

/// Σ_{p=1}^{n} attended(p): keys seen by the first n queries of a sequence.
double prefix_pairs(double n, double w, LocalAttention kind) {
  if (n <= 0) return 0;
  if (w <= 0 || n <= w) return n * (n + 1) / 2;
  if (kind == LocalAttention::sliding) return w * (w + 1) / 2 + (n - w) * w;
  const double chunks = std::floor(n / w), rest = n - chunks * w;
  return chunks * w * (w + 1) / 2 + rest * (rest + 1) / 2;
}

}  // namespace

double attended_pairs(double cached_tokens, double new_tokens, int window_tokens,
                      LocalAttention kind) noexcept {
  return prefix_pairs(cached_tokens + new_tokens, window_tokens, kind) -
         prefix_pairs(cached_tokens, window_tokens, kind);
}

double attended_context(double context_tokens, int window_tokens, LocalAttention kind) noexcept {
  if (window_tokens <= 0 || context_tokens <= window_tokens) return context_tokens;
  return kind == LocalAttention::sliding ? window_tokens : (window_tokens + 1) / 2.0;
}

double local_kv_tokens(double tokens, int window_tokens) noexcept {
  return window_tokens > 0 ? std::min(tokens, static_cast<double>(window_tokens)) : tokens;
}

ParamCounts count_params(const ModelSpec& m) noexcept {
  const double h = m.hidden_size;
  const double d = m.head_dim;
  const double hq = m.num_heads;
  const double hkv = m.num_kv_heads;
  const double vocab = m.vocab_size;
  const bool gated = m.ffn == FfnKind::gated;
  const double norm = m.norm == NormKind::layernorm ? 2 * h : h;
  auto ffn = [&](double width) {
    return (gated ? 3 : 2) * h * width + (m.linear_bias ? (gated ? 2 : 1) * width + h : 0);
  };

  ParamCounts c;
  c.embedding = vocab * h;
  if (m.position_embedding == PositionEmbedding::learned) c.embedding += m.max_context_tokens * h;
  c.lm_head = m.tie_embeddings ? 0 : vocab * h;
  c.norms_per_layer = 2 * norm;
  if (m.is_mla()) {
    const double rq = m.q_lora_rank, rkv = m.kv_lora_rank;
    const double q = rq > 0 ? h * rq + rq * hq * d : h * hq * d;
    const double kv =
        h * (rkv + m.qk_rope_head_dim) + rkv * hq * (m.qk_nope_head_dim + m.v_head_dim);
    c.attention_per_layer = q + kv + hq * m.v_head_dim * h;
    c.norms_per_layer += (rq > 0 ? rq : 0) + rkv;  // RMSNorm of each latent
  } else {
    c.attention_per_layer = h * hq * d + 2 * h * hkv * d + hq * d * h;
  }
  if (m.qkv_bias) c.attention_per_layer += (hq + 2 * hkv) * d;
  if (m.linear_bias) c.attention_per_layer += h;
  c.expert_per_layer = ffn(m.is_moe() ? m.intermediate_size : m.dense_ffn_width());
  c.shared_expert_per_layer = m.shared_experts * ffn(m.shared_expert_width());
  c.dense_ffn_per_layer = ffn(m.dense_ffn_width());
  c.router_per_layer = m.is_moe() ? h * m.num_experts : 0;
  c.final_norm = norm;
  for (int i = 1; i <= m.num_layers; ++i) c.moe_layers += m.moe_layer(i) ? 1 : 0;

  const double shared = c.embedding + c.lm_head + c.final_norm;
  const double dense_layers = m.num_layers - c.moe_layers;
  const double layer_fixed = c.attention_per_layer + c.norms_per_layer;
  const double moe_fixed = c.router_per_layer + c.shared_expert_per_layer;
  c.total = shared + m.num_layers * layer_fixed + dense_layers * c.dense_ffn_per_layer +
            c.moe_layers * (moe_fixed + m.num_experts * c.expert_per_layer);
  c.active = shared + m.num_layers * layer_fixed + dense_layers * c.dense_ffn_per_layer +
             c.moe_layers * (moe_fixed + m.experts_per_token * c.expert_per_layer);
  return c;
}

}  // namespace flopcast
