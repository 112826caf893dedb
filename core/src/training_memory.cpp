// SPDX-License-Identifier: MIT
// Parameters, model FLOPs and memory per GPU of a training run.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "layer_ops.hpp"
#include "training_detail.hpp"

namespace flopcast {
namespace training_detail {
namespace {

constexpr double kQloraBytesPerWeight = 0.5 + 2.0 / 64;  // NF4 + one 16-bit scale per 64
constexpr double kWeightBytes = 2;                       // 16-bit working copy of the weights
constexpr double kGradientBytes = 2;                     // 16-bit gradients (ZeRO paper's 2Ψ)

/// Optimizer-state bytes per trainable parameter (fp32 master weights included).
double optimizer_bytes_per_param(Optimizer o) {
  switch (o) {
    case Optimizer::adamw:
      return 12;  // master 4 + m 4 + v 4
    case Optimizer::sgd:
      return 8;  // master 4 + momentum 4
    case Optimizer::adam_8bit:
      return 6;  // master 4 + m 1 + v 1
  }
  return 12;
}

/// (in, out) widths of the linear layers LoRA adapts, unsharded.
std::vector<std::pair<double, double>> lora_linears(const ModelSpec& m, LoraTargets t) {
  const double h = m.hidden_size, q = double(m.num_heads) * m.head_dim,
               kv = double(m.num_kv_heads) * m.head_dim, i = m.intermediate_size;
  std::vector<std::pair<double, double>> out{{h, q}, {h, kv}};  // q_proj, v_proj
  if (t == LoraTargets::qv) return out;
  out.emplace_back(h, kv);  // k_proj
  out.emplace_back(q, h);   // o_proj
  if (t == LoraTargets::attention) return out;
  if (m.ffn == FfnKind::gated) out.emplace_back(h, i);  // gate
  out.emplace_back(h, i);                               // up
  out.emplace_back(i, h);                               // down
  return out;
}

double lora_params_per_layer(const TrainingSpec& s) {
  double n = 0;
  for (const auto& [in, out] : lora_linears(s.model, s.lora_targets)) n += s.lora_rank * (in + out);
  return n;
}

/// Parameters of the embedding and LM head on the stage that holds them (TP-sharded).
struct Ends {
  double embedding = 0, lm_head = 0, final_norm = 0;
};
Ends ends(const TrainingSpec& s) {
  const ParamCounts c = count_params(s.model);
  return {c.embedding / s.tp, (s.model.tie_embeddings ? c.embedding : c.lm_head) / s.tp,
          c.final_norm};
}

}  // namespace

StageLayers stage_layers(const TrainingSpec& s) {
  const int layers = s.model.num_layers, pp = s.pp;
  if (pp == 1) return {layers, 0, layers};
  const int first = s.pp_first_stage_layers, last = s.pp_last_stage_layers;
  if (first > 0 || last > 0) {
    const int set = (first > 0) + (last > 0);
    const int rest = layers - first - last;
    const int middle = pp > set ? rest / (pp - set) : 0;
    return {first > 0 ? first : middle, pp > 2 ? middle : 0, last > 0 ? last : middle};
  }
  const int base = layers / pp, extra = layers % pp;  // stages 0 … extra−1 take base + 1
  return {base + (extra > 0), pp > 2 ? base + (extra > 1) : 0, base + (extra >= pp)};
}

std::string op_sac_key(const std::string& name, bool first_of_group) {
  if (name == "mlp" || name == "moe_experts" || name == "shared_experts") {
    return name + (first_of_group ? ".up" : ".down");
  }
  return name;
}

OpSacLayer op_sac_layer(const ModelSpec& m, bool moe, int tp) {
  struct Matmul {
    std::string key;
    double k, n;           // [1 × k]·[k × n] per token on this rank
    bool grouped = false;  // the experts' grouped GEMM: not an aten.mm, always recomputed
    double per_token = 1;  // times a token passes through it (top-k experts)
  };
  // The layer's linears as layer_ops shapes them; PyTorch runs the fused ones as separate
  // matmuls: q, k and v (standard attention), gate and up (gated FFN).
  std::vector<Matmul> mms;
  for (const layer_ops::LinearShape& l : layer_ops::attention_linears(m, tp)) {
    if (m.is_mla() || l.name != "qkv_proj") {
      mms.push_back({l.name, l.k, l.n});
      continue;
    }
    const double kv = std::max(1.0, double(m.num_kv_heads) / tp) * m.head_dim;
    for (const double n : {l.n - 2 * kv, kv, kv}) mms.push_back({l.name, l.k, n});
  }
  const auto add_ffn = [&](const std::string& name,
                           const std::vector<layer_ops::LinearShape>& up_down, bool grouped,
                           double per_token) {
    const int ups = m.ffn == FfnKind::gated ? 2 : 1;
    for (int i = 0; i < ups; ++i) {
      mms.push_back({name + ".up", up_down[0].k, up_down[0].n / ups, grouped, per_token});
    }
    mms.push_back({name + ".down", up_down[1].k, up_down[1].n, grouped, per_token});
  };
  const auto ffn = [&](const std::string& name, double width, bool grouped, double per_token) {
    add_ffn(name, layer_ops::ffn_linears(m, width, tp, name), grouped, per_token);
  };
  if (moe) {
    mms.push_back({"moe_router", double(m.hidden_size), double(m.num_experts)});
    for (const layer_ops::LinearShape& l : layer_ops::latent_linears(m)) {
      mms.push_back({l.name, l.k, l.n});
    }
    add_ffn("moe_experts", layer_ops::expert_linears(m, tp, "moe_experts"), true,
            m.experts_per_token);
    if (m.shared_experts > 0) {
      ffn("shared_experts", double(m.shared_experts) * m.shared_expert_width(), false, 1);
    }
  } else {
    ffn("mlp", m.dense_ffn_width(), false, 1);
  }
  OpSacLayer out;
  std::map<std::string, double> total;
  int counted = 0;
  for (const Matmul& mm : mms) {
    const double flops = mm.k * mm.n * mm.per_token;
    const bool saved = !mm.grouped && ++counted % 2 == 1;
    total[mm.key] += flops;
    out.recomputed_share[mm.key] += saved ? 0 : flops;
    if (saved) {
      out.saved_elements += mm.n;
    } else {
      out.recomputed_params += flops;
    }
  }
  for (auto& [key, share] : out.recomputed_share) share /= total[key];
  return out;
}

double attention_flops_per_token(const ModelSpec& m, int seq) {
  // 6·Hq·(d_qk + d_v)·s per layer (= 12·Hq·d·s for d_qk = d_v = d).
  double attention = 0;
  const double full_pairs = attended_pairs(0, seq, 0, m.local_attention);
  for (const LayerKind& k : layer_kinds(m)) {
    if (k.mixer != Mixer::attention) continue;
    const AttentionDims a = layer_ops::attention_dims(m, 1, k.local, false);
    const double share = attended_pairs(0, seq, a.window_tokens, a.local) / full_pairs;
    attention += k.count * 6.0 * a.heads * (a.qk_dim + a.v_dim) * seq * share;
  }
  return attention;
}

int hybrid_group(const TrainingSpec& s) {
  return std::clamp(s.gpus_per_node / s.tp, 1, grad_ranks(s));
}

ShardDivisors shard_divisors(const TrainingSpec& s) {
  const double n = grad_ranks(s);
  switch (s.sharding) {
    case Sharding::none:
      return {1, 1, 1};
    case Sharding::zero1:
      return {1, 1, n};
    case Sharding::zero2:
    case Sharding::shard_grad_op:
      return {1, n, n};
    case Sharding::zero3:
    case Sharding::full_shard:
      return {n, n, n};
    case Sharding::hybrid_shard: {
      const double g = hybrid_group(s);
      return {g, g, g};
    }
  }
  return {1, 1, 1};
}

namespace {

/// Attention weights of one layer on one GPU: the linears as layer_ops shards them (MLA's
/// down-projections replicated across TP ranks), biases and latent norms split over TP.
double attention_params_on_gpu(const TrainingSpec& s, const ParamCounts& c) {
  using layer_ops::linear_params;
  return linear_params(layer_ops::attention_linears(s.model, s.tp)) +
         (c.attention_per_layer - linear_params(layer_ops::attention_linears(s.model, 1))) / s.tp;
}

/// Mamba-2 / gated DeltaNet weights of one layer on one GPU: the projections as layer_ops shards
/// them, the rest (conv1d, A, D, dt bias, gated norm) split over TP with the heads.
double recurrent_params_on_gpu(const TrainingSpec& s, const ParamCounts& c) {
  using layer_ops::linear_params;
  if (c.recurrent_layers == 0) return 0;
  return linear_params(layer_ops::recurrent_linears(s.model, s.tp)) +
         (c.recurrent_per_layer - linear_params(layer_ops::recurrent_linears(s.model, 1))) / s.tp;
}

/// Share of the layers of each kind: a transformer's layers all attend and have an FFN.
struct LayerShares {
  double attention, recurrent, dense, moe;
};
LayerShares layer_shares(const ModelSpec& m, const ParamCounts& c) {
  const double n = m.num_layers;
  return {c.attention_layers / n, c.recurrent_layers / n, c.dense_layers / n, c.moe_layers / n};
}

/// FFN weights of one MoE layer on one GPU: its expert rank's routed experts split over the
/// experts' TP (whole under MoE parallel folding), the shared ones over TP.
double moe_ffn_params(const TrainingSpec& s, const ParamCounts& c) {
  const double routed =
      s.model.is_moe() ? double(s.model.num_experts) / s.ep * c.expert_per_layer : 0;
  return routed / s.experts_tp() + c.shared_expert_per_layer / s.tp;
}

}  // namespace

LayerParams layer_params(const TrainingSpec& s) {
  // The mean layer: dense and MoE layers weighted by their counts.
  const ModelSpec& m = s.model;
  const ParamCounts c = count_params(m);
  const LayerShares share = layer_shares(m, c);
  const double ffn = share.dense * c.dense_ffn_per_layer / s.tp + share.moe * moe_ffn_params(s, c);
  LayerParams p;
  p.linear = share.attention * attention_params_on_gpu(s, c) +
             share.recurrent * recurrent_params_on_gpu(s, c) + ffn;
  p.total = p.linear + share.moe * c.router_per_layer + c.norms_per_layer;
  p.trainable = s.finetune == Finetune::full ? p.total : lora_params_per_layer(s) / s.tp;
  return p;
}

double mtp_module_params(const TrainingSpec& s) {
  const ModelSpec& m = s.model;
  const ParamCounts c = count_params(m);
  const double ffn = m.is_moe() ? moe_ffn_params(s, c) : c.dense_ffn_per_layer / s.tp;
  const double h = m.hidden_size;
  return attention_params_on_gpu(s, c) + ffn + (m.is_moe() ? c.router_per_layer : 0) +
         c.norms_per_layer + 2 * h * h / s.tp + 3 * h;
}

double trainable_params(const TrainingSpec& s) {
  if (s.finetune == Finetune::full) return count_params(s.model).total;
  return s.model.num_layers * lora_params_per_layer(s);
}

TrainingMemory training_memory(const TrainingSpec& s, int b, int m) {
  const ModelSpec& md = s.model;
  const LayerParams lp = layer_params(s);
  const Ends e = ends(s);
  const ShardDivisors div = shard_divisors(s);
  const StageLayers sl = stage_layers(s);
  const double seq = double(s.seq_len) / s.cp;  // tokens of one sequence on this GPU
  const double g_bytes = kGradientBytes;
  const bool lora = s.finetune != Finetune::full;

  // One stage: layers plus the embedding (first) or LM head and loss (last); pp == 1: both.
  auto stage = [&](bool first, bool last) {
    const double layers = first ? sl.first : sl.last;
    const double mtp = last ? s.mtp_layers : 0;  // MTP modules live on the last stage
    const double end_params = (first ? e.embedding : 0) + (last ? e.lm_head + e.final_norm : 0) +
                              mtp * mtp_module_params(s);
    const double frozen_linear = lora ? layers * lp.linear : 0;
    const double weights_16 = layers * lp.total + end_params - frozen_linear;
    const double base_bytes = s.finetune == Finetune::qlora ? kQloraBytesPerWeight : kWeightBytes;
    const double trainable = lora ? layers * lp.trainable : layers * lp.trainable + end_params;
    TrainingMemory mem;
    mem.capacity_bytes = s.hardware.hbm_capacity.value;
    mem.weights_bytes = (weights_16 * kWeightBytes + frozen_linear * base_bytes +
                         (lora ? trainable * kWeightBytes : 0)) /
                        div.weights;
    mem.gradients_bytes = trainable * g_bytes / div.gradients;
    mem.optimizer_bytes = trainable * optimizer_bytes_per_param(s.optimizer) / div.optimizer;

    // Micro-batches in flight: 1F1B holds min(m, p) on the first stage; interleaving adds
    // (p − 1)/(p·v) of a stage (Korthikanti et al. 2022, §4.2.3); the last stage holds one.
    double in_flight = 1;
    if (first && s.pp > 1) {
      in_flight = std::min<double>(m, s.pp);
      if (s.vpp > 1) in_flight *= 1 + (s.pp - 1.0) / (double(s.pp) * s.vpp);
    }
    const double per_layer =
        activation_bytes_per_layer(md, b, seq, s.tp, s.sp, s.recompute, s.flash_attention);
    mem.activations_per_layer_bytes = per_layer;
    mem.activations_bytes = per_layer * (layers + mtp) * in_flight;
    // Recomputation rebuilds one layer's activations during its backward.
    if (s.recompute != Recompute::none) {
      mem.activations_bytes +=
          activation_bytes_per_layer(md, b, seq, s.tp, s.sp, Recompute::none, s.flash_attention);
    }
    const double tokens = b * seq;
    double temp = 0;
    if (first) temp += 2 * tokens * md.hidden_size;  // embedding output
    // Logits: the bf16 GEMM output and the fp32 log-softmax the cross-entropy keeps (6 B each).
    // Each MTP module's loss keeps logits of its own.
    if (last) temp += (1 + mtp) * 6 * tokens * std::ceil(double(md.vocab_size) / s.tp);
    // Gathered layers of ZeRO-3 / FSDP: the running and the prefetched one, with their 16-bit
    // gradients before the reduce-scatter.
    if (div.weights > 1) temp += 2 * lp.total * (kWeightBytes + g_bytes);
    // fp8 / NVFP4 recipes cache each linear weight cast for the step (Transformer Engine, torchao):
    // the forward copy and the transposed (column-wise) one the dgrad GEMM reads. Replicated
    // weights keep them for every low-precision layer; sharded ones only for the gathered two.
    if (low_precision_recipe(s.compute)) {
      const double copies = 2 * stored_bytes_per_element(s.compute) * lp.linear;
      if (div.weights > 1) {
        temp += 2 * copies;
      } else {
        mem.weights_bytes += layers * (1 - double(s.bf16_last_layers) / md.num_layers) * copies;
      }
    }
    mem.temporary_bytes = temp;
    mem.reserve_bytes = s.framework_reserve_bytes;
    mem.total_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                      mem.activations_bytes + mem.temporary_bytes + mem.reserve_bytes;
    mem.fits = mem.total_bytes <= mem.capacity_bytes;
    return mem;
  };
  if (s.pp == 1) return stage(true, true);
  const TrainingMemory first = stage(true, false);
  const TrainingMemory last = stage(false, true);
  return first.total_bytes >= last.total_bytes ? first : last;
}

}  // namespace training_detail

double model_flops_per_token(const ModelSpec& m, int seq) {
  using layer_ops::linear_params;
  const ParamCounts c = count_params(m);
  const double h = m.hidden_size;
  const double dense = linear_params(layer_ops::ffn_linears(m, m.dense_ffn_width(), 1, ""));
  const double expert = linear_params(layer_ops::expert_linears(m, 1, ""));
  const double shared = linear_params(
      layer_ops::ffn_linears(m, double(m.shared_experts) * m.shared_expert_width(), 1, ""));
  const double recurrent =
      c.recurrent_layers > 0 ? linear_params(layer_ops::recurrent_linears(m, 1)) : 0;
  const double n_matmul =
      c.attention_layers * linear_params(layer_ops::attention_linears(m, 1)) +
      c.recurrent_layers * recurrent + c.dense_layers * dense +
      c.moe_layers * (m.experts_per_token * expert + shared + c.router_per_layer) +
      double(m.vocab_size) * h;
  // The Mamba-2 / GDN scan's own matmuls (states, C·Bᵀ or K·Kᵀ, the chunk scan), forward and
  // backward.
  const double scan =
      c.recurrent_layers > 0
          ? 3 * c.recurrent_layers *
                layer_ops::recurrent_work(m, 1, 2, layer_ops::RecurrentPass::forward).flops
          : 0;
  return 6 * n_matmul + scan + training_detail::attention_flops_per_token(m, seq);
}

double activation_bytes_per_layer(const ModelSpec& m, double b, double s, int tp, bool sp,
                                  Recompute recompute, bool flash_attention) {
  const double h = m.hidden_size;
  const double t = tp;
  const double t_sp = sp ? t : 1;
  if (recompute == Recompute::full) return 2 * s * b * h / t_sp;
  const ParamCounts c = count_params(m);
  const training_detail::LayerShares share = training_detail::layer_shares(m, c);
  // Norm inputs and QKV / FFN-up inputs, one each per residual block (2 in a transformer layer):
  // 2 bytes × h each, sharded only under SP.
  const double replicated = 4 * m.blocks_per_layer() * h / t_sp;
  // Q, K, V as the attention kernel reads them (MLA: K and V expanded per head), the attention
  // output (O-proj input), and the FFN intermediates of the mean layer (2 bytes each).
  const AttentionDims a = layer_ops::attention_dims(m, 1, false, false);
  const double kv_heads = m.is_mla() ? a.heads : a.kv_heads;
  const double attention =
      share.attention *
      (2 * (a.heads * a.qk_dim + kv_heads * (a.qk_dim + a.v_dim)) + 2 * a.heads * a.v_dim);
  const double moe_share = share.moe;
  const double ffn = 2 * (share.dense * layer_ops::activation_fn_elements(m, false, 1) +
                          moe_share * layer_ops::activation_fn_elements(m, true, 1));
  const double recurrent =
      share.recurrent > 0 ? share.recurrent * 2 * layer_ops::recurrent_saved_elements(m, 1) : 0;
  double bytes = s * b * (replicated + (attention + ffn + recurrent) / t);
  if (recompute == Recompute::op) {
    // The layer input, the outputs of the saved matmuls and the attention output, 2 bytes each.
    double saved = (1 - moe_share) * training_detail::op_sac_layer(m, false, 1).saved_elements;
    if (m.is_moe()) saved += moe_share * training_detail::op_sac_layer(m, true, 1).saved_elements;
    bytes = s * b * (2 * h / t_sp + 2 * (saved + a.heads * a.v_dim) / t);
  }
  if (m.is_moe()) bytes += moe_share * s * b * 2 * h * m.experts_per_token / t;  // dispatched
  if (flash_attention) {
    bytes += share.attention * 4 * b * a.heads * s / t;  // fp32 log-sum-exp per query row
  } else if (recompute == Recompute::none) {
    bytes += share.attention * 4 * b * a.heads * s * s / t;  // scores and softmax, 2 B each
  }
  return bytes;
}

}  // namespace flopcast
