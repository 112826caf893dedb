// SPDX-License-Identifier: MIT
#include "flopcast/model.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "flopcast/error.hpp"

namespace flopcast {
namespace {

/// Keys that only a mechanism the model lacks uses: each must be 0, with `rule` saying why.
void require_zero(const std::string& p, std::initializer_list<std::pair<const char*, int>> keys,
                  const std::string& rule) {
  for (const auto& [key, value] : keys) {
    if (value != 0) fail(p + key, rule, value);
  }
}

/// The gated DeltaNet shapes of a model with 'G' layers.
void validate_gdn(const ModelSpec& m, const std::string& p) {
  check_int(p + "gdn_key_heads", m.gdn_key_heads, 1, kMaxHeads);
  check_int(p + "gdn_value_heads", m.gdn_value_heads, 1, kMaxHeads);
  if (m.gdn_value_heads % m.gdn_key_heads != 0) {
    fail(p + "gdn_value_heads",
         "must be a multiple of model.gdn_key_heads (" + std::to_string(m.gdn_key_heads) + ")",
         m.gdn_value_heads);
  }
  check_int(p + "gdn_key_head_dim", m.gdn_key_head_dim, 1, 100'000);
  check_int(p + "gdn_value_head_dim", m.gdn_value_head_dim, 1, 100'000);
  check_int(p + "gdn_conv_kernel", m.gdn_conv_kernel, 1, 64);
  check_int(p + "gdn_chunk_tokens", m.gdn_chunk_tokens, 1, 65'536);
  if (m.gdn_channel_gate && m.gdn_key_heads != m.gdn_value_heads) {
    fail(p + "gdn_value_heads",
         "must equal model.gdn_key_heads (" + std::to_string(m.gdn_key_heads) +
             ") with model.gdn_channel_gate (Kimi Delta Attention's q, k and v share their heads)",
         m.gdn_value_heads);
  }
}

/// The Mamba-1 shapes of a model with 'S' layers.
void validate_mamba1(const ModelSpec& m, const std::string& p) {
  check_int(p + "mamba1_inner_size", m.mamba1_inner_size, 1, 10'000'000);
  check_int(p + "mamba1_state_dim", m.mamba1_state_dim, 1, 100'000);
  check_int(p + "mamba1_dt_rank", m.mamba1_dt_rank, 1, 100'000);
  check_int(p + "mamba1_conv_kernel", m.mamba1_conv_kernel, 1, 64);
}

/// The layer pattern of a hybrid model and the Mamba-1, Mamba-2 or gated DeltaNet shapes it
/// needs.
void validate_hybrid(const ModelSpec& m, const std::string& p) {
  const std::string& pat = m.layer_pattern;
  const auto bad = pat.find_first_not_of("MSG*-E");
  if (bad != std::string::npos) {
    fail(p + "layer_pattern",
         "must hold only 'M' (Mamba-2), 'S' (Mamba-1), 'G' (gated DeltaNet), '*' (attention), '-' "
         "(dense FFN) and 'E' (mixture of experts); found '" +
             std::string(1, pat[bad]) + "' at layer " + std::to_string(bad + 1),
         pat);
  }
  if (static_cast<int>(pat.size()) != m.num_layers) {
    fail(p + "layer_pattern",
         "must have one character per layer (model.num_layers " + std::to_string(m.num_layers) +
             "; got " + std::to_string(pat.size()) + ")",
         pat);
  }
  const bool experts = pat.find('E') != std::string::npos;
  if (experts != m.is_moe()) {
    fail(p + "num_experts",
         experts ? "must be > 0 when model.layer_pattern has 'E' layers"
                 : "must be 0 when model.layer_pattern has no 'E' layer",
         m.num_experts);
  }
  if (m.first_dense_layers != 0 || m.moe_layer_interval != 1) {
    fail(p + "first_dense_layers",
         "must be 0 (and moe_layer_interval 1) with model.layer_pattern, which places the "
         "experts",
         m.first_dense_layers);
  }
  if (m.window_tokens != 0) {
    throw NotModelledError(p + "sliding_window_tokens",
                           "local attention in a hybrid model (model.layer_pattern) is not "
                           "modelled (got " +
                               std::to_string(m.window_tokens) + ")");
  }
  if (m.mtp_layers != 0 && pat.find('*') == std::string::npos) {
    // A hybrid MTP module is an attention block and an FFN block (Nemotron 3 Super's
    // mtp_hybrid_override_pattern "*E"); a model without attention layers has none to copy.
    throw NotModelledError(p + "mtp_layers",
                           "multi-token-prediction modules of a hybrid model without attention "
                           "layers are not modelled (got " +
                               std::to_string(m.mtp_layers) + ")");
  }
  if (int(m.has_mamba()) + int(m.has_mamba1()) + int(m.has_gdn()) > 1) {
    throw NotModelledError(p + "layer_pattern",
                           "a model with more than one kind of fixed-state layer (Mamba-2 'M', "
                           "Mamba-1 'S', gated DeltaNet 'G') is not modelled");
  }
  if (m.has_gdn()) validate_gdn(m, p);
  if (m.has_mamba1()) validate_mamba1(m, p);
  if (!m.has_mamba()) return;
  check_int(p + "mamba_heads", m.mamba_heads, 1, kMaxHeads);
  check_int(p + "mamba_head_dim", m.mamba_head_dim, 1, 100'000);
  check_int(p + "mamba_state_dim", m.mamba_state_dim, 1, 100'000);
  check_int(p + "mamba_groups", m.mamba_groups, 1, m.mamba_heads);
  if (m.mamba_heads % m.mamba_groups != 0) {
    fail(p + "mamba_groups",
         "must divide model.mamba_heads (" + std::to_string(m.mamba_heads) + ")", m.mamba_groups);
  }
  check_int(p + "mamba_conv_kernel", m.mamba_conv_kernel, 1, 64);
  check_int(p + "mamba_chunk_tokens", m.mamba_chunk_tokens, 1, 65'536);
}

}  // namespace

void validate(const ModelSpec& m, const std::string& path) {
  const std::string p = path + ".";
  check_int(p + "num_layers", m.num_layers, 1, kMaxLayers);
  check_int(p + "hidden_size", m.hidden_size, 1, kMaxHiddenSize);
  check_int(p + "num_heads", m.num_heads, 1, kMaxHeads);
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
    require_zero(p,
                 {{"experts_per_token", m.experts_per_token},
                  {"shared_experts", m.shared_experts},
                  {"first_dense_layers", m.first_dense_layers},
                  {"expert_groups", m.expert_groups},
                  {"expert_groups_per_token", m.expert_groups_per_token},
                  {"dense_intermediate_size", m.dense_intermediate_size},
                  {"shared_expert_intermediate_size", m.shared_expert_intermediate_size}},
                 "must be 0 when model.num_experts is 0");
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
  if (m.moe_latent_size != 0) {
    if (!m.is_moe())
      fail(p + "moe_latent_size", "must be 0 when model.num_experts is 0", m.moe_latent_size);
    check_int(p + "moe_latent_size", m.moe_latent_size, 1, m.hidden_size);
  }
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
    require_zero(p,
                 {{"q_lora_rank", m.q_lora_rank},
                  {"qk_rope_head_dim", m.qk_rope_head_dim},
                  {"qk_nope_head_dim", m.qk_nope_head_dim},
                  {"v_head_dim", m.v_head_dim}},
                 "must be 0 when model.kv_lora_rank is 0");
  }

  if (m.is_hybrid()) validate_hybrid(m, p);
  check_int(p + "sliding_window_tokens", m.window_tokens, 0, 100'000'000);
  check_int(p + "global_attention_every", m.global_attention_every, 0, m.num_layers);
  if (m.window_tokens == 0 && m.global_attention_every != 0) {
    fail(p + "global_attention_every", "must be 0 without model.sliding_window_tokens",
         m.global_attention_every);
  }
  if (!m.has_mamba()) {
    require_zero(p,
                 {{"mamba_heads", m.mamba_heads},
                  {"mamba_head_dim", m.mamba_head_dim},
                  {"mamba_state_dim", m.mamba_state_dim},
                  {"mamba_groups", m.mamba_groups}},
                 "must be 0 without 'M' layers in model.layer_pattern");
  }
  if (!m.has_mamba1()) {
    require_zero(p,
                 {{"mamba1_inner_size", m.mamba1_inner_size},
                  {"mamba1_state_dim", m.mamba1_state_dim},
                  {"mamba1_dt_rank", m.mamba1_dt_rank}},
                 "must be 0 without 'S' layers in model.layer_pattern");
  }
  if (!m.has_gdn()) {
    require_zero(p,
                 {{"gdn_key_heads", m.gdn_key_heads},
                  {"gdn_value_heads", m.gdn_value_heads},
                  {"gdn_key_head_dim", m.gdn_key_head_dim},
                  {"gdn_value_head_dim", m.gdn_value_head_dim}},
                 "must be 0 without 'G' layers in model.layer_pattern");
  }
  if (m.has_dsa() || m.dsa_index_heads != 0 || m.dsa_index_head_dim != 0) {
    check_int(p + "dsa_topk_tokens", m.dsa_topk_tokens, 1, 100'000'000);
    check_int(p + "dsa_index_heads", m.dsa_index_heads, 1, kMaxHeads);
    check_int(p + "dsa_index_head_dim", m.dsa_index_head_dim, 1, 100'000);
    if (!m.is_mla() || m.q_lora_rank == 0) {
      throw NotModelledError(p + "dsa_topk_tokens",
                             "DeepSeek sparse attention is modelled over multi-head latent "
                             "attention with a q latent (model.kv_lora_rank and q_lora_rank > 0) "
                             "only (got " +
                                 std::to_string(m.dsa_topk_tokens) + ")");
    }
    if (m.window_tokens != 0 || m.is_hybrid()) {
      throw NotModelledError(p + "dsa_topk_tokens",
                             "DeepSeek sparse attention beside local attention or in a hybrid "
                             "model is not modelled (got " +
                                 std::to_string(m.dsa_topk_tokens) + ")");
    }
  }
  if (m.gdn_channel_gate && !m.has_gdn()) {
    throw SpecError(p + "gdn_channel_gate",
                    "must be false without 'G' layers in model.layer_pattern");
  }
  if (m.attention_output_gate && m.is_mla()) {
    throw NotModelledError(p + "attention_output_gate",
                           "a gated output on multi-head latent attention is not modelled");
  }
}

std::vector<LayerKind> layer_kinds(const ModelSpec& m) {
  std::vector<LayerKind> kinds;
  for (int i = 1; i <= m.num_layers; ++i) {
    const bool moe = m.moe_layer(i), local = m.local_layer(i), ffn = m.has_ffn(i);
    const Mixer mixer = m.mixer(i);
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const LayerKind& k) {
      return k.moe == moe && k.local == local && k.mixer == mixer && k.ffn == ffn;
    });
    if (it == kinds.end()) {
      kinds.push_back(LayerKind{1, moe, local, mixer, ffn});
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
  c.norms_per_layer = m.blocks_per_layer() * norm;
  if (m.is_mla()) {
    const double rq = m.q_lora_rank, rkv = m.kv_lora_rank;
    const double q = rq > 0 ? h * rq + rq * hq * d : h * hq * d;
    const double kv =
        h * (rkv + m.qk_rope_head_dim) + rkv * hq * (m.qk_nope_head_dim + m.v_head_dim);
    c.attention_per_layer = q + kv + hq * m.v_head_dim * h;
    c.norms_per_layer += (rq > 0 ? rq : 0) + rkv;  // RMSNorm of each latent
    if (m.has_dsa()) {
      // The indexer: wq_b [r_q → H_I·d_I], wk [h → d_I], weights_proj [h → H_I] and the LayerNorm
      // of its key (weight and bias).
      const double hi = m.dsa_index_heads, di = m.dsa_index_head_dim;
      c.attention_per_layer += rq * hi * di + h * (di + hi) + 2 * di;
    }
  } else {
    c.attention_per_layer = h * hq * d + 2 * h * hkv * d + hq * d * h;
    if (m.attention_output_gate) c.attention_per_layer += h * hq * d;
  }
  if (m.qkv_bias) c.attention_per_layer += (hq + 2 * hkv) * d;
  if (m.linear_bias) c.attention_per_layer += h;
  c.expert_per_layer = ffn(m.is_moe() ? m.intermediate_size : m.dense_ffn_width());
  if (m.moe_latent_size > 0) {
    // A routed expert maps the latent, not h: its weights scale by latent / h (biases aside).
    const double l = m.moe_latent_size;
    c.expert_per_layer = (gated ? 3 : 2) * l * m.intermediate_size +
                         (m.linear_bias ? (gated ? 2 : 1) * m.intermediate_size + l : 0);
  }
  c.shared_expert_per_layer = m.shared_experts * ffn(m.shared_expert_width());
  c.dense_ffn_per_layer = ffn(m.dense_ffn_width());
  c.router_per_layer = m.is_moe() ? h * m.num_experts + 2 * h * m.moe_latent_size : 0;
  c.final_norm = norm;
  if (m.has_mamba()) {
    const double di = m.mamba_inner(), gn = double(m.mamba_groups) * m.mamba_state_dim;
    const double heads = m.mamba_heads;
    c.recurrent_per_layer = h * (2 * di + 2 * gn + heads) +
                            (di + 2 * gn) * (m.mamba_conv_kernel + 1) + 3 * heads + di + di * h;
  } else if (m.has_mamba1()) {
    // in_proj (x, z), conv1d with bias, x_proj (dt, B, C), dt_proj with bias, A, D, out_proj.
    const double di = m.mamba1_inner_size, n = m.mamba1_state_dim, r = m.mamba1_dt_rank;
    c.recurrent_per_layer = h * 2 * di + di * (m.mamba1_conv_kernel + 1) + di * (r + 2 * n) +
                            (r + 1) * di + di * n + di + di * h;
  } else if (m.has_gdn()) {
    const double k = double(m.gdn_key_heads) * m.gdn_key_head_dim;
    const double v = double(m.gdn_value_heads) * m.gdn_value_head_dim;
    const double hv = m.gdn_value_heads;
    c.recurrent_per_layer = h * (2 * k + 2 * v + 2 * hv) + (2 * k + v) * m.gdn_conv_kernel +
                            2 * hv + m.gdn_value_head_dim + v * h;
    if (m.gdn_channel_gate) {
      // Kimi Delta Attention: q, k, v and β from h, the decay and output gates through a rank of
      // dk (f_a, f_b, g_a, g_b), A_log per head and dt_bias per key channel.
      const double dk = m.gdn_key_head_dim;
      c.recurrent_per_layer = h * (2 * k + v + hv + 2 * dk) + dk * (k + v) +
                              (2 * k + v) * m.gdn_conv_kernel + hv + k + m.gdn_value_head_dim +
                              v * h;
    }
  }
  for (int i = 1; i <= m.num_layers; ++i) {
    c.moe_layers += m.moe_layer(i) ? 1 : 0;
    c.dense_layers += m.has_ffn(i) && !m.moe_layer(i) ? 1 : 0;
    c.attention_layers += m.mixer(i) == Mixer::attention ? 1 : 0;
    c.recurrent_layers += is_recurrent(m.mixer(i)) ? 1 : 0;
  }

  const double shared = c.embedding + c.lm_head + c.final_norm;
  const double fixed = c.attention_layers * c.attention_per_layer +
                       c.recurrent_layers * c.recurrent_per_layer +
                       m.num_layers * c.norms_per_layer + c.dense_layers * c.dense_ffn_per_layer;
  const double moe_fixed = c.router_per_layer + c.shared_expert_per_layer;
  c.total = shared + fixed + c.moe_layers * (moe_fixed + m.num_experts * c.expert_per_layer);
  c.active = shared + fixed + c.moe_layers * (moe_fixed + m.experts_per_token * c.expert_per_layer);
  return c;
}

}  // namespace flopcast
