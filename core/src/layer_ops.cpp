// SPDX-License-Identifier: MIT
#include "layer_ops.hpp"

#include <algorithm>

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
    return {{"qkv_proj", (hq + 2 * hkv) * d, h}, {"o_proj", h, hq * d}};
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

/// A Mamba-2 mixer's widths on one TP rank: heads, groups, d_in = heads·P and G·N.
struct MambaShard {
  double heads, groups, di, gn;
};
MambaShard mamba_shard(const ModelSpec& m, int tp) {
  const double heads = double(m.mamba_heads) / tp, groups = double(m.mamba_groups) / tp;
  return {heads, groups, heads * m.mamba_head_dim, groups * m.mamba_state_dim};
}

}  // namespace

std::vector<LinearShape> mamba_linears(const ModelSpec& m, int tp) {
  const MambaShard r = mamba_shard(m, tp);
  const double h = m.hidden_size;
  return {{"mamba_in_proj", 2 * r.di + 2 * r.gn + r.heads, h}, {"mamba_out_proj", h, r.di}};
}

MambaScan mamba_scan(const ModelSpec& m, int tp, double act_bytes) {
  const MambaShard r = mamba_shard(m, tp);
  const double p = m.mamba_head_dim, n = m.mamba_state_dim, q = m.mamba_chunk_tokens;
  const double heads = r.heads, di = r.di, gn = r.gn, a = act_bytes;
  MambaScan s;
  s.flops = heads * (4 * n * p + 2 * q * p) + 2 * r.groups * q * n;
  const double states = 4 * heads * p * n / q;  // fp32 chunk states, per token of the chunk
  const double dt = 8 * heads;                  // fp32 dt and its cumulative decay
  const double cb = 4 * r.groups * q;           // fp32 C·Bᵀ block, per token
  const double conv = 2 * (di + 2 * gn) * a;    // read x, B, C; write them convolved
  const double cumsum = heads * a + dt;
  const double chunk_state = (di + gn) * a + dt + states;
  const double state_passing = 2 * states;
  const double bmm = 2 * gn * a + cb;
  const double chunk_scan = cb + (2 * di + gn) * a + states + dt + di * a;  // x, z, C in; y out
  const double norm = 3 * di * a;                                           // y, z in; out
  s.bytes = conv + cumsum + chunk_state + state_passing + bmm + chunk_scan + norm;
  return s;
}

MambaScan mamba_decode(const ModelSpec& m, int tp, double act_bytes) {
  const MambaShard r = mamba_shard(m, tp);
  const double a = act_bytes;
  const double ssm = 4 * r.di * m.mamba_state_dim;
  const double conv = (m.mamba_conv_kernel - 1) * (r.di + 2 * r.gn) * a;
  MambaScan s;
  s.flops = 5 * r.di * m.mamba_state_dim;
  s.bytes = 2 * ssm + 2 * conv + (2 * r.di + 2 * r.gn + r.heads) * a + r.di * a + 3 * r.di * a;
  s.kernels = 3;
  return s;
}

MambaScan mamba_scan_backward(const ModelSpec& m, int tp, double act_bytes) {
  const MambaShard r = mamba_shard(m, tp);
  const double p = m.mamba_head_dim, n = m.mamba_state_dim, q = m.mamba_chunk_tokens;
  const double heads = r.heads, di = r.di, gn = r.gn, a = act_bytes;
  const double states = 4 * heads * p * n / q, dt = 8 * heads, cb = 4 * r.groups * q;
  MambaScan s;
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

OpCost mamba_op(const HardwareSpec& hw, const KernelModel& km, const ModelSpec& m, int tp,
                double act_bytes, double n, MambaPass pass) {
  const MambaScan one = pass == MambaPass::decode     ? mamba_decode(m, tp, act_bytes)
                        : pass == MambaPass::backward ? mamba_scan_backward(m, tp, act_bytes)
                                                      : mamba_scan(m, tp, act_bytes);
  return memory_op("mamba_scan", hw, km, Flops(one.flops * n), Bytes(one.bytes * n), one.kernels);
}

double mamba_state_bytes(const ModelSpec& m, int tp, double act_bytes) {
  const MambaShard r = mamba_shard(m, tp);
  return 4 * r.di * m.mamba_state_dim + (m.mamba_conv_kernel - 1) * (r.di + 2 * r.gn) * act_bytes;
}

double mamba_saved_elements(const ModelSpec& m, int tp) {
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
