// SPDX-License-Identifier: MIT
#include "layer_ops.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"

namespace flopcast::layer_ops {
double linear_params(const std::vector<LinearShape>& linears) {
  double n = 0;
  for (const auto& l : linears) n += l.n * l.k;
  return n;
}

void check_tensor_parallel(const ModelSpec& m, int tp, const std::string& path, TensorSplit split) {
  if (split.attention) {
    check_divides(path, tp, m.num_heads, "model.num_heads");
    if (!m.is_mla() && m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0) {
      fail(path,
           "must divide model.num_kv_heads (" + std::to_string(m.num_kv_heads) +
               ") or be a multiple of it",
           tp);
    }
  }
  const int expert_ways = split.expert_ways > 0 ? split.expert_ways : tp;
  if (expert_ways == tp) {
    check_divides(path, tp, m.intermediate_size, "model.intermediate_size");
  } else if (m.intermediate_size % expert_ways != 0) {
    fail(path,
         "over parallelism.ep must divide model.intermediate_size (" +
             std::to_string(m.intermediate_size) +
             "): each expert's width is split over tp / ep = " + std::to_string(expert_ways) +
             " GPUs",
         tp);
  }
  if (m.has_mamba()) {
    check_divides(path, tp, m.mamba_heads, "model.mamba_heads");
    check_divides(path, tp, m.mamba_groups, "model.mamba_groups");
  }
  if (m.has_mamba1()) check_divides(path, tp, m.mamba1_inner_size, "model.mamba1_inner_size");
  if (m.has_gdn()) {
    check_divides(path, tp, m.gdn_key_heads, "model.gdn_key_heads");
    check_divides(path, tp, m.gdn_value_heads, "model.gdn_value_heads");
  }
  if (!split.dense) return;
  if (m.is_moe() && m.dense_intermediate_size > 0) {
    check_divides(path, tp, m.dense_intermediate_size, "model.dense_intermediate_size");
  }
  if (m.shared_experts > 0) {
    check_divides(path, tp, 1LL * m.shared_experts * m.shared_expert_width(),
                  "model.shared_experts · shared_expert_intermediate_size");
  }
}

void check_tensor_parallel_nodes(int tp, int gpus_per_node, int scaleout_nics_per_node,
                                 const std::string& node_key) {
  if (tp <= gpus_per_node) return;
  // A TP group over whole nodes: its collectives cross the scale-out network (the collective
  // model's two levels, TP innermost), which the hardware must have.
  const std::string node = std::to_string(gpus_per_node);
  if (scaleout_nics_per_node == 0) {
    throw NotModelledError("parallelism.tp",
                           "tensor parallelism across nodes needs a scale-out network; "
                           "hardware.scaleout_nics_per_node is 0, so tp must be <= " +
                               node_key + " (" + node + ") (got " + std::to_string(tp) + ")");
  }
  if (tp % gpus_per_node != 0) {
    fail("parallelism.tp",
         "must be a multiple of " + node_key + " (" + node + ") when it spans nodes", tp);
  }
}

std::vector<LinearShape> attention_linears(const ModelSpec& m, int tp) {
  const double h = m.hidden_size, hq = double(m.num_heads) / tp;
  if (!m.is_mla()) {
    const double hkv = std::max(1.0, double(m.num_kv_heads) / tp), d = m.head_dim;
    const double q = m.attention_output_gate ? 2 * hq : hq;  // the output gate rides with q
    return {{"qkv_proj", (q + 2 * hkv) * d, h}, {"o_proj", h, hq * d}};
  }
  std::vector<LinearShape> out;
  const double d_qk = m.head_dim;
  if (m.q_lora_rank > 0) {
    out.push_back({"qkv_proj", double(m.q_lora_rank), h});
    out.push_back({"qkv_proj", hq * d_qk, double(m.q_lora_rank)});
  } else {
    out.push_back({"qkv_proj", hq * d_qk, h});
  }
  out.push_back({"qkv_proj", double(m.kv_lora_rank + m.qk_rope_head_dim), h});
  out.push_back({"qkv_proj", hq * (m.qk_nope_head_dim + m.v_head_dim), double(m.kv_lora_rank)});
  if (m.has_dsa()) {
    // DSA's indexer, whole on every TP rank: wq_b from the q latent, wk and weights_proj (one
    // GEMM) from the hidden state.
    const double hi = m.dsa_index_heads, di = m.dsa_index_head_dim;
    out.push_back({"indexer_proj", hi * di, double(m.q_lora_rank)});
    out.push_back({"indexer_proj", di + hi, h});
  }
  out.push_back({"o_proj", h, hq * m.v_head_dim});
  return out;
}

std::vector<LinearShape> ffn_linears(const ModelSpec& m, double width, int tp, std::string name) {
  const double w = width / tp, h = m.hidden_size;
  const double up = m.ffn == FfnKind::gated ? 2 * w : w;
  return {{name, up, h}, {name, h, w}};
}

std::vector<LinearShape> expert_linears(const ModelSpec& m, int tp, std::string name) {
  const double w = double(m.intermediate_size) / tp, l = m.expert_hidden();
  const double up = m.ffn == FfnKind::gated ? 2 * w : w;
  return {{name, up, l}, {name, l, w}};
}

std::vector<LinearShape> latent_linears(const ModelSpec& m) {
  if (m.moe_latent_size == 0) return {};
  const double h = m.hidden_size, l = m.moe_latent_size;
  return {{"moe_latent_proj", l, h}, {"moe_latent_proj", h, l}};
}

AttentionDims attention_dims(const ModelSpec& m, int tp, bool local, bool decode) {
  const double hq = double(m.num_heads) / tp;
  AttentionDims a;
  if (!m.is_mla()) {
    a = AttentionDims::standard(hq, std::max(1.0, double(m.num_kv_heads) / tp), m.head_dim);
  } else {
    const double latent = m.kv_lora_rank + m.qk_rope_head_dim;
    a.heads = hq;
    a.kv_heads = 1;
    a.kv_elems = latent;
    a.qk_dim = decode ? latent : m.head_dim;
    a.v_dim = decode ? m.kv_lora_rank : m.v_head_dim;
  }
  if (local) {
    a.window_tokens = m.window_tokens;
    a.local = m.local_attention;
  }
  if (m.has_dsa()) {
    // DeepSeek-V3.2 runs its sparse attention in MLA's MQA mode, prefill and decode alike (each
    // query over its top-k latents), and indexes every token: fp8 keys with an fp32 scale per 128.
    const double latent = m.kv_lora_rank + m.qk_rope_head_dim;
    a.qk_dim = latent;
    a.v_dim = m.kv_lora_rank;
    a.window_tokens = m.dsa_topk_tokens;
    a.local = LocalAttention::sliding;
    a.index_heads = m.dsa_index_heads;
    a.index_dim = m.dsa_index_head_dim;
    a.index_bytes = a.index_dim + 4 * std::ceil(a.index_dim / 128);
  }
  return a;
}

double kv_elements_per_token(const ModelSpec& m, int tp) {
  const AttentionDims a = attention_dims(m, tp, false, true);
  return a.kv_heads * a.kv_elems;
}

double rope_elements_per_token(const ModelSpec& m, int tp) {
  if (m.position_embedding != PositionEmbedding::rope) return 0;
  const double hq = double(m.num_heads) / tp;
  if (m.is_mla()) return (hq + 1) * m.qk_rope_head_dim;
  return (hq + std::max(1.0, double(m.num_kv_heads) / tp)) * m.head_dim;
}

namespace {

/// A Mamba-2 mixer on one TP rank: heads, groups, d_in = heads·P, G·N, head size P, state N,
/// chunk Q, and the scan's fp32 per-token traffic units: chunk states 4·H·P·N/Q, dt and its
/// cumulative decay 8·H, the C·Bᵀ block 4·G·Q.
struct MambaShard {
  double heads, groups, di, gn, p, n, q, states, dt, cb;
};
MambaShard mamba_shard(const ModelSpec& m, int tp) {
  const double heads = double(m.mamba_heads) / tp, groups = double(m.mamba_groups) / tp;
  const double p = m.mamba_head_dim, n = m.mamba_state_dim, q = m.mamba_chunk_tokens;
  return {heads,     groups,        heads * p, groups * n, p, n, q, 4 * heads * p * n / q,
          8 * heads, 4 * groups * q};
}

/// A gated DeltaNet mixer on one TP rank: value heads H (q and k repeated to them), q/k width,
/// v width, the conv1d's channels 2·k + v, head sizes dk and dv, chunk C, q or k repeated
/// (H·dk) and v (H·dv) per token, and the decay gate's elements per token: H, or H·dk under Kimi
/// Delta Attention's gate per key channel.
struct GdnShard {
  double heads, k, v, conv, kd, vd, c, kh, vh, g;
  /// Chunk states per token in k's dtype (`act_bytes`): H·dk·dv·a / C.
  [[nodiscard]] double states(double act_bytes) const { return heads * kd * vd * act_bytes / c; }
  /// The WY step per token, in the forward and again in the backward: k, v, β, g (fp32) in; w, u
  /// and the C×C block A out.
  [[nodiscard]] double wy_bytes(double a) const {
    return 2 * (kh + vh) * a + heads * a + 4 * g + heads * c * a;
  }
  /// The chunk-state pass per token, forward and recomputed: k, w, u, g in; states, v_new out.
  [[nodiscard]] double state_pass_bytes(double a) const {
    return (2 * kh + vh) * a + 4 * g + states(a) + vh * a;
  }
};
GdnShard gdn_shard(const ModelSpec& m, int tp) {
  const double heads = double(m.gdn_value_heads) / tp;
  const double kd = m.gdn_key_head_dim, vd = m.gdn_value_head_dim;
  const double k = double(m.gdn_key_heads) * kd / tp, v = heads * vd;
  return {heads,
          k,
          v,
          2 * k + v,
          kd,
          vd,
          double(m.gdn_chunk_tokens),
          heads * kd,
          heads * vd,
          m.gdn_channel_gate ? heads * kd : heads};
}

/// A Mamba-1 mixer on one TP rank (vLLM's MambaMixer splits the channels; x_proj is row-parallel,
/// dt_proj column-parallel): channels d_in, state N, dt rank R, conv taps K.
struct Mamba1Shard {
  double di, n, r, k;
  /// A token's step, forward or decode: per channel and state dA = exp(Δ·A), Δ·B·x, the state
  /// update, C·state (2 each) and D·x; the conv1d's taps.
  [[nodiscard]] double flops() const { return 9 * di * n + 2 * k * di; }
  /// What a token's step reads and writes beside the conv1d and the state: Jamba's RMSNorms of dt,
  /// B and C, then the scan's x, Δ, z, B, C in and y out.
  [[nodiscard]] double io_bytes(double a) const {
    return 2 * (r + 2 * n) * a + (4 * di + 2 * n) * a;
  }
};
Mamba1Shard mamba1_shard(const ModelSpec& m, int tp) {
  return {double(m.mamba1_inner_size) / tp, double(m.mamba1_state_dim), double(m.mamba1_dt_rank),
          double(m.mamba1_conv_kernel)};
}

}  // namespace

std::vector<LinearShape> mamba1_linears(const ModelSpec& m, int tp) {
  const Mamba1Shard r = mamba1_shard(m, tp);
  const double h = m.hidden_size;
  return {{"mamba1_in_proj", 2 * r.di, h},
          {"mamba1_x_proj", r.r + 2 * r.n, r.di},
          {"mamba1_dt_proj", r.di, r.r},
          {"mamba1_out_proj", h, r.di}};
}

ScanWork mamba1_scan(const ModelSpec& m, int tp, double act_bytes) {
  const Mamba1Shard r = mamba1_shard(m, tp);
  ScanWork s;
  s.flops = r.flops();
  s.bytes = 2 * r.di * act_bytes + r.io_bytes(act_bytes);  // the conv1d: x in, convolved x out
  s.kernels = 5;
  return s;
}

ScanWork mamba1_decode(const ModelSpec& m, int tp, double act_bytes) {
  const Mamba1Shard r = mamba1_shard(m, tp);
  // The state (in the model's type) and the conv state, each read and written.
  const double state = mamba1_state_bytes(m, tp, act_bytes);
  ScanWork s;
  s.flops = r.flops();
  s.bytes = 2 * state + r.io_bytes(act_bytes);
  s.kernels = 5;
  return s;
}

ScanWork mamba1_scan_backward(const ModelSpec& m, int tp, double act_bytes) {
  const Mamba1Shard r = mamba1_shard(m, tp);
  const double a = act_bytes;
  ScanWork s;
  // The scan recomputed within each chunk, then its gradient: twice the forward's work again.
  s.flops = 3 * 9 * r.di * r.n + 4 * r.k * r.di;
  // x, Δ, z, B, C and dy in; dx, dΔ, dz, dB, dC out.
  const double scan = (5 * r.di + 2 * r.n) * a + (3 * r.di + 2 * r.n) * a;
  const double conv = 3 * r.di * a;              // input and output gradient in, input gradient out
  const double norms = 3 * (r.r + 2 * r.n) * a;  // input, gradient in; gradient out
  s.bytes = scan + conv + norms;
  s.kernels = 5;
  return s;
}

double mamba1_state_bytes(const ModelSpec& m, int tp, double act_bytes) {
  const Mamba1Shard r = mamba1_shard(m, tp);
  return (r.di * r.n + (r.k - 1) * r.di) * act_bytes;
}

std::vector<LinearShape> mamba_linears(const ModelSpec& m, int tp) {
  const MambaShard r = mamba_shard(m, tp);
  const double h = m.hidden_size;
  return {{"mamba_in_proj", 2 * r.di + 2 * r.gn + r.heads, h}, {"mamba_out_proj", h, r.di}};
}

ScanWork mamba_scan(const ModelSpec& m, int tp, double act_bytes) {
  const MambaShard r = mamba_shard(m, tp);
  const double p = r.p, n = r.n, q = r.q, heads = r.heads, di = r.di, gn = r.gn, a = act_bytes;
  const double states = r.states, dt = r.dt, cb = r.cb;
  ScanWork s;
  s.flops = heads * (4 * n * p + 2 * q * p) + 2 * r.groups * q * n;
  const double conv = 2 * (di + 2 * gn) * a;  // read x, B, C; write them convolved
  const double cumsum = heads * a + dt;
  const double chunk_state = (di + gn) * a + dt + states;
  const double state_passing = 2 * states;
  const double bmm = 2 * gn * a + cb;
  const double chunk_scan = cb + (2 * di + gn) * a + states + dt + di * a;  // x, z, C in; y out
  const double norm = 3 * di * a;                                           // y, z in; out
  s.bytes = conv + cumsum + chunk_state + state_passing + bmm + chunk_scan + norm;
  return s;
}

ScanWork mamba_decode(const ModelSpec& m, int tp, double act_bytes) {
  const MambaShard r = mamba_shard(m, tp);
  const double a = act_bytes;
  const double ssm = 4 * r.di * m.mamba_state_dim;
  const double conv = (m.mamba_conv_kernel - 1) * (r.di + 2 * r.gn) * a;
  ScanWork s;
  s.flops = 5 * r.di * m.mamba_state_dim;
  s.bytes = 2 * ssm + 2 * conv + (2 * r.di + 2 * r.gn + r.heads) * a + r.di * a + 3 * r.di * a;
  s.kernels = 3;
  return s;
}

ScanWork mamba_scan_backward(const ModelSpec& m, int tp, double act_bytes) {
  const MambaShard r = mamba_shard(m, tp);
  const double p = r.p, n = r.n, q = r.q, heads = r.heads, di = r.di, gn = r.gn, a = act_bytes;
  const double states = r.states, dt = r.dt, cb = r.cb;
  ScanWork s;
  // Recomputed chunk states (2·N·P) and C·Bᵀ; the states' gradient, dx (from C·Bᵀ and from the
  // states), dB, dC (2·N·P each), d(C·Bᵀ) (2·Q·P), d(dt·A) (2·Q·P) and C·Bᵀ's two backward
  // matmuls (2·Q·N each).
  s.flops = heads * (10 * n * p + 4 * q * p) + 6 * r.groups * q * n;
  const double recompute =
      (heads * a + dt) + (2 * gn * a + cb) + ((di + gn) * a + dt + states) + 2 * states;
  const double dz = 6 * di * a;  // x, z, y, dy in; dz and dy·(gate) out
  const double dstates = (gn + di) * a + dt + states;
  const double passing = 3 * states;
  const double dx = (3 * di + gn) * a + cb + 2 * dt + states;
  const double db = (di + 2 * gn) * a + dt + states;
  const double dc = (di + 2 * gn) * a + dt + states;
  const double dcb = 2 * di * a + dt + cb;
  const double bmm = 2 * (3 * gn * a + cb);
  const double dda = 2 * di * a + cb + 2 * dt;
  const double dcumsum = heads * a + 2 * dt;
  const double conv = 3 * (di + 2 * gn) * a;  // input and output gradient in, input gradient out
  const double norm = 5 * di * a;             // y, z, gradient in; dy, dz out
  s.bytes =
      recompute + dz + dstates + passing + dx + db + dc + dcb + bmm + dda + dcumsum + conv + norm;
  s.kernels = 17;
  return s;
}

std::vector<LinearShape> gdn_linears(const ModelSpec& m, int tp) {
  const GdnShard r = gdn_shard(m, tp);
  const double h = m.hidden_size;
  if (m.gdn_channel_gate) {
    // Kimi Delta Attention: q, k, v, β and the gates' rank-dk down-projections (whole on every
    // rank), then the gates' up-projections to the rank's key and value channels.
    return {{"gdn_in_proj", 2 * r.k + r.v + r.heads + 2 * r.kd, h},
            {"gdn_gate_proj", r.kh + r.v, r.kd},
            {"gdn_out_proj", h, r.v}};
  }
  return {{"gdn_in_proj", 2 * r.k + 2 * r.v + 2 * r.heads, h}, {"gdn_out_proj", h, r.v}};
}

ScanWork gdn_scan(const ModelSpec& m, int tp, double act_bytes) {
  const GdnShard r = gdn_shard(m, tp);
  const double kd = r.kd, vd = r.vd, c = r.c, heads = r.heads, a = act_bytes;
  const double kh = r.kh, vh = r.vh, states = r.states(a);
  ScanWork s;
  // Per head and token: K·Kᵀ and the WY products w, u (lower-triangular C×C blocks: C·dk, C·dk,
  // C·dv), the state pass (v_new = u − w·S, S += kᵀ·v_new: 4·dk·dv) and the output (q·S 2·dk·dv,
  // the masked q·kᵀ C·dk and its product with v_new C·dv).
  s.flops = heads * (6 * kd * vd + 3 * c * kd + 2 * c * vd);
  const double conv = 2 * r.conv * a;            // q, k, v in; convolved out
  const double l2norm = 4 * r.k * a;             // q and k in and out
  const double repeat = (2 * r.k + 2 * kh) * a;  // q and k repeated to the value heads
  const double g = r.g;
  const double gates = (g + heads) * a + 4 * g + heads;  // alpha, beta in; g (fp32), beta out
  const double cumsum = 8 * g;                           // g in and out, fp32
  const double fwd_o = (2 * kh + vh) * a + states + 4 * g + vh * a;  // q, k, v_new, h → o
  const double norm = 3 * vh * a;                                    // o, z in; out
  s.bytes = conv + l2norm + repeat + gates + cumsum + r.wy_bytes(a) + r.state_pass_bytes(a) +
            fwd_o + norm;
  s.kernels = 9;
  return s;
}

ScanWork gdn_decode(const ModelSpec& m, int tp, double act_bytes) {
  const GdnShard r = gdn_shard(m, tp);
  const double a = act_bytes, state = 4 * r.heads * r.kd * r.vd;
  const double conv = (m.gdn_conv_kernel - 1) * r.conv * a;
  ScanWork s;
  s.flops = 7 * r.heads * r.kd * r.vd;
  // The in_proj outputs: q, k, v, the output gate, the decay gate's input and β.
  s.bytes = 2 * state + 2 * conv + (2 * r.k + 2 * r.v + r.g + r.heads) * a + r.v * a + 3 * r.v * a;
  s.kernels = 3;
  return s;
}

ScanWork gdn_scan_backward(const ModelSpec& m, int tp, double act_bytes) {
  const GdnShard r = gdn_shard(m, tp);
  const double kd = r.kd, vd = r.vd, c = r.c, heads = r.heads, a = act_bytes;
  const double kh = r.kh, vh = r.vh, states = r.states(a);
  ScanWork s;
  // Per head and token: recomputed w, u (C·dk + C·dv) and states (4·dk·dv); the local dv (C·dk +
  // C·dv); the state gradients and dv (6·dk·dv); dq, dk, dw and ds (6·dk·dv + 2·C·dk + C·dv);
  // the WY representation's backward (2·C·dk + 2·C·dv).
  s.flops = heads * (16 * kd * vd + 6 * c * kd + 5 * c * vd);
  const double recompute = r.wy_bytes(a) + r.state_pass_bytes(a);  // w, u and the states again
  const double g = r.g;
  const double dv_local = (2 * kh + 2 * vh) * a + 4 * g;      // q, k, do → dv
  const double dhu = (3 * kh + 3 * vh) * a + 4 * g + states;  // q, k, w, do, dv → dh, dv2
  const double dqkwg = (3 * kh + 3 * vh) * a + 2 * states + 4 * g + 3 * kh * a + 4 * g;
  const double wy = 2 * (kh + vh) * a + heads * a + heads * c * a + (kh + vh) * a + 8 * g +
                    (kh + vh) * a + heads * a;      // k, v, β, A, g, dw, du → dk, dv, dβ, dg
  const double adds = 3 * kh * a + 12 * g + 8 * g;  // dk += dk2, dg += dg2, reverse cumsum
  const double inputs = 2 * (2 * r.k + 2 * kh) * a + 4 * r.k * a + (g + heads) * a + 4 * g + heads;
  const double conv = 3 * r.conv * a;  // input and output gradient in, input gradient out
  const double norm = 5 * vh * a;      // o, z, gradient in; do, dz out
  s.bytes = recompute + dv_local + dhu + dqkwg + wy + adds + inputs + conv + norm;
  s.kernels = 14;
  return s;
}

double gdn_state_bytes(const ModelSpec& m, int tp, double act_bytes) {
  const GdnShard r = gdn_shard(m, tp);
  return 4 * r.heads * r.kd * r.vd + (m.gdn_conv_kernel - 1) * r.conv * act_bytes;
}

std::vector<LinearShape> recurrent_linears(const ModelSpec& m, int tp) {
  switch (m.recurrent_mixer()) {
    case Mixer::mamba:
      return mamba_linears(m, tp);
    case Mixer::mamba1:
      return mamba1_linears(m, tp);
    case Mixer::gdn:
      return gdn_linears(m, tp);
    default:
      return {};
  }
}

ScanWork recurrent_work(const ModelSpec& m, int tp, double act_bytes, RecurrentPass pass) {
  const bool decode = pass == RecurrentPass::decode, backward = pass == RecurrentPass::backward;
  switch (m.recurrent_mixer()) {
    case Mixer::gdn:
      return decode     ? gdn_decode(m, tp, act_bytes)
             : backward ? gdn_scan_backward(m, tp, act_bytes)
                        : gdn_scan(m, tp, act_bytes);
    case Mixer::mamba1:
      return decode     ? mamba1_decode(m, tp, act_bytes)
             : backward ? mamba1_scan_backward(m, tp, act_bytes)
                        : mamba1_scan(m, tp, act_bytes);
    default:
      return decode     ? mamba_decode(m, tp, act_bytes)
             : backward ? mamba_scan_backward(m, tp, act_bytes)
                        : mamba_scan(m, tp, act_bytes);
  }
}

OpCost recurrent_op(const HardwareSpec& hw, const KernelModel& km, const ModelSpec& m, int tp,
                    double act_bytes, double n, RecurrentPass pass) {
  const ScanWork one = recurrent_work(m, tp, act_bytes, pass);
  const Mixer x = m.recurrent_mixer();
  const char* name = x == Mixer::gdn      ? (m.gdn_channel_gate ? "kda_scan" : "gdn_scan")
                     : x == Mixer::mamba1 ? "mamba1_scan"
                                          : "mamba_scan";
  return memory_op(name, hw, km, Flops(one.flops * n), Bytes(one.bytes * n), one.kernels);
}

double recurrent_state_bytes(const ModelSpec& m, int tp, double act_bytes) {
  if (m.has_gdn()) return gdn_state_bytes(m, tp, act_bytes);
  if (m.has_mamba1()) return mamba1_state_bytes(m, tp, act_bytes);
  const MambaShard r = mamba_shard(m, tp);
  return 4 * r.di * m.mamba_state_dim + (m.mamba_conv_kernel - 1) * (r.di + 2 * r.gn) * act_bytes;
}

double recurrent_saved_elements(const ModelSpec& m, int tp) {
  if (m.has_mamba1()) {
    // in_proj's output (x, z), the conv1d's, x_proj's (dt, B, C), dt_proj's and the scan's.
    const Mamba1Shard r = mamba1_shard(m, tp);
    return 2 * r.di + r.di + (r.r + 2 * r.n) + r.di + r.di;
  }
  if (m.has_gdn()) {
    // in_proj's output, the conv1d's, the kernel's output and the gated norm's (out_proj's input).
    const GdnShard r = gdn_shard(m, tp);
    return (2 * r.k + 2 * r.v + r.g + r.heads) + r.conv + 2 * r.v;
  }
  const MambaShard r = mamba_shard(m, tp);
  return (2 * r.di + 2 * r.gn + r.heads) + (r.di + 2 * r.gn) + 2 * r.di;
}

double activation_fn_elements(const ModelSpec& m, bool moe, int tp, double rows_per_token) {
  const double per_width = m.ffn == FfnKind::gated ? 3 : 2;
  if (!moe) return per_width * m.dense_ffn_width() / tp;
  return per_width *
         (rows_per_token * m.experts_per_token * m.intermediate_size +
          m.shared_experts * double(m.shared_expert_width())) /
         tp;
}

}  // namespace flopcast::layer_ops
