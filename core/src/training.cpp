// SPDX-License-Identifier: MIT
// Training step time: per-layer kernels of one micro-batch (forward GEMMs at their shapes,
// backward as dgrad + wgrad GEMMs, FlashAttention-2 backward at 2.5× its forward), the pipeline
// schedule, the collectives of each parallelism and what of them the compute hides.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "flopcast/error.hpp"
#include "layer_ops.hpp"
#include "training_detail.hpp"

namespace flopcast {
namespace {

using namespace training_detail;

constexpr double kAttentionBackwardFactor = 2.5;  // FlashAttention-2: 5 GEMMs vs 2 (Dao, 2023)

// ---- Validation ----

void validate_parallelism(const TrainingSpec& s) {
  const ModelSpec& m = s.model;
  check_int("gpus_per_node", s.gpus_per_node, 1, 1024);
  check_int("parallelism.tp", s.tp, 1, 1024);
  check_int("parallelism.pp", s.pp, 1, 4096);
  check_int("parallelism.dp", s.dp, 1, 1'000'000);
  check_int("parallelism.cp", s.cp, 1, 1024);
  check_int("parallelism.ep", s.ep, 1, 1024);
  check_int("parallelism.vpp", s.vpp, 1, 128);
  layer_ops::check_tensor_parallel_nodes(s.tp, s.gpus_per_node, s.hardware.scaleout_nics_per_node,
                                         "gpus_per_node");
  if (s.experts_tp() != s.tp && s.experts_tp() != 1) {
    fail("parallelism.expert_tp", "must be 1 or parallelism.tp (" + std::to_string(s.tp) + ")",
         s.expert_tp);
  }
  if (s.experts_tp() != s.tp && !m.is_moe()) {
    fail("parallelism.expert_tp", "must equal parallelism.tp for a dense model", s.expert_tp);
  }
  layer_ops::check_tensor_parallel(m, s.tp, "parallelism.tp", {true, true, s.experts_tp()});
  check_int("parallelism.pp", s.pp, 1, m.num_layers);
  check_int("parallelism.first_stage_layers", s.pp_first_stage_layers, 0, m.num_layers);
  check_int("parallelism.last_stage_layers", s.pp_last_stage_layers, 0, m.num_layers);
  const bool uneven_set = s.pp_first_stage_layers > 0 || s.pp_last_stage_layers > 0;
  if (s.pp == 1 && uneven_set) {
    fail(s.pp_first_stage_layers > 0 ? "parallelism.first_stage_layers"
                                     : "parallelism.last_stage_layers",
         "needs parallelism.pp > 1", std::max(s.pp_first_stage_layers, s.pp_last_stage_layers));
  }
  if (s.vpp > 1 && !uneven_set) {
    if (m.num_layers % (s.pp * s.vpp) != 0) {
      throw SpecError("parallelism.pp",
                      "pp·vpp must divide model.num_layers (" + std::to_string(m.num_layers) +
                          "), or set parallelism.first_stage_layers / last_stage_layers (got " +
                          std::to_string(s.pp) + "·" + std::to_string(s.vpp) + " = " +
                          std::to_string(s.pp * s.vpp) + ")");
    }
  } else if (uneven_set) {
    // Megatron-Core's uneven split (decoder_first/last_pipeline_num_layers, or the embedding and
    // the loss counted as a layer each): the other stages hold equal shares, and with
    // interleaving each of their v chunks the same number of layers.
    const int set = (s.pp_first_stage_layers > 0) + (s.pp_last_stage_layers > 0);
    const int rest = m.num_layers - s.pp_first_stage_layers - s.pp_last_stage_layers;
    const int others = s.pp - set;
    const int unit = others * s.vpp;
    if (rest < unit || (others == 0 ? rest != 0 : rest % unit != 0)) {
      throw SpecError(
          "parallelism.first_stage_layers",
          "the " + std::to_string(rest) +
              " layers left after the first and last "
              "stages must split evenly over the other " +
              std::to_string(others) + " stages" +
              (s.vpp > 1 ? " and their " + std::to_string(s.vpp) + " chunks each" : std::string()) +
              ", at least one each (model.num_layers " + std::to_string(m.num_layers) +
              ", parallelism.pp " + std::to_string(s.pp) + ")");
    }
  }
  if (s.vpp > 1 && s.pp == 1) fail("parallelism.vpp", "must be 1 when parallelism.pp is 1", s.vpp);
  const long long product = 1LL * s.tp * s.pp * s.dp * s.cp;
  if (product != s.num_gpus) {
    // Expert parallelism splits the data-parallel ranks (EP inside DP·CP): it adds no GPUs.
    const std::string ep_hint = s.ep > 1
                                    ? "; expert parallelism adds no GPUs: it splits dp·cp (ep " +
                                          std::to_string(s.ep) + " needs dp·cp a multiple of " +
                                          std::to_string(s.ep) + ")"
                                    : std::string();
    throw SpecError("num_gpus", "must equal parallelism tp·pp·dp·cp (" + std::to_string(s.tp) +
                                    "·" + std::to_string(s.pp) + "·" + std::to_string(s.dp) + "·" +
                                    std::to_string(s.cp) + " = " + std::to_string(product) + ")" +
                                    ep_hint + " (got " + std::to_string(s.num_gpus) + ")");
  }
  if (s.ep > 1) {
    if (!m.is_moe()) fail("parallelism.ep", "must be 1 for a dense model", s.ep);
    check_divides("parallelism.ep", s.ep, m.num_experts, "model.num_experts");
    if (s.experts_tp() == 1 && s.tp > 1) {
      // MoE parallel folding: the expert-parallel group spans the TP ranks too.
      check_divides("parallelism.ep", s.ep, 1LL * s.tp * s.dp * s.cp, "parallelism tp·dp·cp");
    } else if ((s.dp * s.cp) % s.ep != 0) {
      fail("parallelism.ep",
           "must divide parallelism dp·cp (" + std::to_string(s.dp * s.cp) +
               "), or tp·dp·cp with parallelism.expert_tp 1 (whole experts, Megatron-Core's MoE "
               "parallel folding)",
           s.ep);
    }
  }
  if (s.sp && s.tp == 1) fail("parallelism.sp", "needs parallelism.tp > 1", "true");
  if (s.ep_comm_overlap && s.ep == 1) {
    fail("parallelism.ep_comm_overlap",
         "needs parallelism.ep > 1 (a MoE model's expert-parallel all-to-alls to overlap)", "true");
  }
}

/// What of a training run is not modelled for a hybrid (Mamba-2 or gated DeltaNet) model, refused
/// by name.
void validate_hybrid(const TrainingSpec& s) {
  const ModelSpec& m = s.model;
  if (!m.is_hybrid()) return;
  const auto refuse = [](const std::string& path, const std::string& what, const std::string& got) {
    throw NotModelledError(path, what +
                                     " of a hybrid model (model.layer_pattern) is not "
                                     "modelled (got " +
                                     got + ")");
  };
  if (s.cp > 1 && m.has_recurrent()) {
    refuse(
        "parallelism.cp",
        std::string("context parallelism over ") + recurrent_name(m.recurrent_mixer()) + " layers",
        std::to_string(s.cp));
  }
  if (s.finetune != Finetune::full) {
    refuse("lora.method", "LoRA / QLoRA", std::string(to_string(s.finetune)));
  }
  if (s.recompute == Recompute::op) refuse("workload.recompute", "op-level checkpointing", "op");
  if (s.mtp_layers > 0 && count_params(m).attention_layers == 0) {
    refuse("workload.mtp_layers", "multi-token prediction without attention layers",
           std::to_string(s.mtp_layers));
  }
}

void validate(const TrainingSpec& s) {
  validate(s.model, "model");
  if (s.model.has_dsa()) {
    // The indexer's own training (its KL objective, dense warm-up) is not priced.
    throw NotModelledError("model.dsa_topk_tokens",
                           "training with DeepSeek sparse attention is not modelled (got " +
                               std::to_string(s.model.dsa_topk_tokens) + ")");
  }
  validate_hybrid(s);
  validate(s.hardware, "hardware");
  check_int("num_gpus", s.num_gpus, 1, 10'000'000);
  validate_parallelism(s);
  check_int("workload.seq_len", s.seq_len, 1, 100'000'000);
  if (s.seq_len % s.cp != 0) {
    fail("workload.seq_len", "must be a multiple of parallelism.cp (" + std::to_string(s.cp) + ")",
         s.seq_len);
  }
  check_int("workload.global_batch_size", s.global_batch_size, 1, 100'000'000);
  if (s.global_batch_size % s.dp != 0) {
    fail("workload.global_batch_size",
         "must be a multiple of parallelism.dp (" + std::to_string(s.dp) + ")",
         s.global_batch_size);
  }
  if (s.micro_batch_size != 0) {
    check_int("workload.micro_batch_size", s.micro_batch_size, 1, 1'000'000);
    const int per_rank = s.global_batch_size / s.dp;
    if (per_rank % s.micro_batch_size != 0) {
      fail("workload.micro_batch_size",
           "must divide global_batch_size / dp (" + std::to_string(s.global_batch_size) + " / " +
               std::to_string(s.dp) + " = " + std::to_string(per_rank) + ")",
           s.micro_batch_size);
    }
  }
  check_real("workload.total_tokens", s.total_tokens, 0, 1e18);
  check_dtype("precision.compute", s.compute, kTrainingComputeTypes);
  if (!s.hardware.peak(math_type(s.compute))) {
    fail("precision.compute",
         "the hardware has no dense " + std::string(to_string(math_type(s.compute))) +
             " peak (hardware.dense_peak_TFLOPS)",
         std::string(to_string(s.compute)));
  }
  check_block_scaled(s.hardware, s.compute, "precision.compute");
  const bool low_precision = low_precision_recipe(s.compute);
  if (low_precision && !s.hardware.peak(DType::bf16) && !s.hardware.peak(DType::fp16)) {
    fail("precision.compute",
         std::string(to_string(s.compute)) +
             " training keeps attention in 16 bits; the hardware has no bf16 or fp16 peak",
         std::string(to_string(s.compute)));
  }
  if (s.bf16_last_layers != 0 && !low_precision) {
    fail("precision.bf16_last_layers", "needs precision.compute fp8, mxfp8 or fp4",
         s.bf16_last_layers);
  }
  check_int("precision.bf16_last_layers", s.bf16_last_layers, 0, s.model.num_layers);
  check_int("workload.mtp_layers", s.mtp_layers, 0, 16);
  if (s.mtp_layers > 0 && s.finetune != Finetune::full) {
    fail("workload.mtp_layers", "must be 0 with LoRA / QLoRA (the adapters train no MTP module)",
         s.mtp_layers);
  }
  if (s.finetune != Finetune::full) check_int("lora.rank", s.lora_rank, 1, 65536);
  if (s.grad_reduce_bytes != 2 && s.grad_reduce_bytes != 4) {
    fail("precision.grad_reduce", "must be bf16 or fp32 (2 or 4 bytes)", s.grad_reduce_bytes);
  }
  check_real("moe.capacity_factor", s.moe_capacity_factor, 1, 100);
  check_real("framework.comm_overlap", s.comm_overlap, 0, 1);
  check_real("framework.step_overhead_ms", s.step_overhead_s * 1e3, 0, 1e7);
  // Scales of the kernel model's times: below 1 a trainer would beat the roofline its kernels are
  // priced at (compute_scale 0.1 gave MFU 3.2).
  check_real("framework.compute_scale", s.compute_scale, 1, 10);
  check_real("framework.attention_scale", s.attention_scale, 1, 10);
  check_real("framework.reserve_GB", s.framework_reserve_bytes / kGB, 0, 1e6);
  check_real("cost_per_gpu_hour_usd", s.cost_per_gpu_hour_usd, 0, 1e6);
}

// ---- Pricing ----

/// The phase of the step an item belongs to (the breakdown's `phase`).
enum class Phase { forward, backward, recompute, communication, pipeline, optimizer, overhead };

constexpr const char* phase_name(Phase p) {
  constexpr const char* kNames[] = {"forward",  "backward",  "recompute", "communication",
                                    "pipeline", "optimizer", "overhead"};
  return kNames[static_cast<int>(p)];
}

/// Time and FLOPs of one item of one micro-batch on one GPU.
struct Item {
  Phase phase = Phase::forward;
  std::string op;
  double time_s = 0;
  double flops = 0;
  Bound bound = Bound::compute;
  bool priced_kernel = false;  // GEMM or attention: counts for the tier
  int tier = 0;
};

class Ledger {
 public:
  void add(Phase phase, const OpCost& op, double scale = 1, const std::string& name = "") {
    Item it;
    it.phase = phase;
    it.op = name.empty() ? op.name : name;
    it.time_s = op.time.value * scale;
    it.flops = op.flops.value * scale;
    it.bound = op.bound;
    it.priced_kernel = op.op_class == OpClass::gemm || op.op_class == OpClass::attention_prefill ||
                       op.op_class == OpClass::moe;
    it.tier = op.tier;
    items_.push_back(std::move(it));
  }
  void add_time(Phase phase, std::string op, double t, Bound bound) {
    if (t <= 0) return;
    Item it;
    it.phase = phase;
    it.op = std::move(op);
    it.time_s = t;
    it.bound = bound;
    items_.push_back(std::move(it));
  }
  /// The time of every item, added to `t`.
  [[nodiscard]] double time(double t = 0) const {
    for (const Item& i : items_) t += i.time_s;
    return t;
  }
  /// time() of the ledger append(*this, k) would make, bit for bit.
  [[nodiscard]] double time_scaled(double k) const {
    double t = 0;
    for (const Item& i : items_) t += i.time_s * k;
    return t;
  }
  [[nodiscard]] double time(Phase phase) const {
    double t = 0;
    for (const Item& i : items_) {
      if (i.phase == phase) t += i.time_s;
    }
    return t;
  }
  [[nodiscard]] const std::vector<Item>& items() const { return items_; }
  /// Puts every item under one op name (a module shown as one line).
  void rename(const std::string& op) {
    for (Item& i : items_) i.op = op;
  }
  void scale(double k) {
    for (Item& i : items_) {
      i.time_s *= k;
      i.flops *= k;
    }
  }
  /// Appends `o` scaled by `k`.
  void append(const Ledger& o, double k) {
    items_.reserve(items_.size() + o.items_.size());
    for (const Item& i : o.items_) {
      items_.push_back(i);
      items_.back().time_s *= k;
      items_.back().flops *= k;
    }
  }
  /// Appends `o` scaled by `k`, moved into `phase`.
  void append(const Ledger& o, double k, Phase phase) {
    const std::size_t first = items_.size();
    append(o, k);
    for (std::size_t i = first; i < items_.size(); ++i) items_[i].phase = phase;
  }

 private:
  std::vector<Item> items_;
};

/// Shapes of one GPU's shard of a layer.
struct Shard {
  double h, d, hq, hkv, inter, vocab;
  double tokens;                        // T = b·s/cp: tokens of one micro-batch on this GPU
  double b, s_full;                     // sequences, full sequence length
  double norm_tokens;                   // tokens of the norms: T/tp under SP
  const std::vector<LayerKind>* kinds;  // the model's, grouped (layer_kinds)
  GemmTypes linear;                     // transformer linears (fp8 under the fp8 recipe)
  GemmTypes dense16;                    // LM head, router, LoRA adapters, wgrad outputs
  DType attn_math;
  double a = 2;
};

/// Bytes the cast of a 16-bit GEMM operand to the low-precision training format moves per
/// element. fp8 (Transformer Engine, torchao): read 2 B, write 1 B. MXFP8 (torchao's MX recipe,
/// Transformer Engine's MXFP8BlockScaling): the E8M0 scales run along the reduction dimension,
/// which is a different one in the forward / dgrad GEMM and in wgrad, so each operand is cast
/// twice, row-wise and column-wise, each reading the 16-bit tensor (2 B) and writing 1.03125 B:
/// 6.0625 B. NVFP4 (NVIDIA's recipe,
/// arXiv:2509.25149, as Transformer Engine runs it): three passes over the 16-bit tensor, the
/// per-tensor amax that sets the global scale, then a row-wise cast for the forward / dgrad GEMM
/// and a column-wise one (after the 16-point random Hadamard transform) for wgrad, each writing
/// 0.5625 B (E2M1 plus an E4M3 scale per 16).
double cast_bytes_per_element(DType compute) {
  if (compute == DType::fp4) return 3 * 2 + 2 * stored_bytes_per_element(DType::fp4);
  if (compute == DType::mxfp8) return 2 * (2 + stored_bytes_per_element(DType::mxfp8));
  return 3;
}

/// Share of the layers whose linears stay in 16 bits under an fp8 / fp4 recipe.
double bf16_tail_share(const TrainingSpec& s) {
  return double(s.bf16_last_layers) / s.model.num_layers;
}

Shard make_shard(const TrainingSpec& s, int b, const std::vector<LayerKind>& kinds) {
  const ModelSpec& m = s.model;
  Shard sh{};
  sh.h = m.hidden_size;
  sh.d = m.head_dim;
  sh.hq = double(m.num_heads) / s.tp;
  sh.hkv = std::max(1.0, double(m.num_kv_heads) / s.tp);
  sh.inter = double(m.intermediate_size) / s.tp;
  sh.vocab = std::ceil(double(m.vocab_size) / s.tp);
  sh.b = b;
  sh.s_full = s.seq_len;
  sh.tokens = double(b) * s.seq_len / s.cp;
  sh.norm_tokens = s.sp ? sh.tokens / s.tp : sh.tokens;
  sh.kinds = &kinds;
  const bool low = low_precision_recipe(s.compute);
  const DType half = low ? (s.hardware.peak(DType::bf16) ? DType::bf16 : DType::fp16) : s.compute;
  sh.a = 2;
  sh.dense16 = GemmTypes{half, 2, 2, 2};
  // Both GEMM operands in the low-precision format with its scales (NVFP4: 0.5625 B, MXFP8:
  // 1.03125 B), output bf16, on the tensor cores of its math type (MXFP8: the fp8 ones).
  const double q = stored_bytes_per_element(s.compute);
  sh.linear = low ? GemmTypes{math_type(s.compute), q, q, 2} : sh.dense16;
  sh.attn_math = half;
  return sh;
}

/// One linear layer [T × k]·[k × n]: forward; backward as dgrad [T × n]·[n × k] and, when the
/// weight trains, wgrad [k × T]·[T × n]. QLoRA reads 4-bit weights (weight-only kernels).
struct Linear {
  std::string name;
  double n, k;
  double count = 1;  // grouped (experts)
  double rows = 0;   // 0: the shard's tokens
};

struct LinearCosts {
  OpCost fwd, dgrad, wgrad;
  bool has_wgrad = true;
};

LinearCosts price_linear(const TrainingSpec& s, const Shard& sh, const Linear& l, bool trains,
                         const GemmTypes& types) {
  const HardwareSpec& hw = s.hardware;
  const KernelModel& km = s.kernel;
  const double t = l.rows > 0 ? l.rows : sh.tokens;
  LinearCosts c;
  c.fwd = gemm_op(l.name, hw, km, t, l.n, l.k, types, l.count);
  c.dgrad = gemm_op(l.name, hw, km, t, l.k, l.n, types, l.count);
  c.has_wgrad = trains;
  if (trains) c.wgrad = gemm_op(l.name, hw, km, l.k, l.n, t, types, l.count);
  return c;
}

/// Ops of one transformer layer for one micro-batch: forward, backward, and the forward again
/// when recomputed.
struct LayerPass {
  Ledger fwd, bwd, recompute;
  double gemm_fwd_s = 0, gemm_bwd_s = 0;  // what TP communication can hide behind
  double attention_fwd_s = 0, attention_bwd_s = 0;
};

/// Tokens one GPU routes to the experts per micro-batch: all of its TP group's (the experts are
/// split like the dense layers), or its 1/tp sequence shard when whole experts span the TP ranks
/// (expert_tp 1).
double moe_tokens(const TrainingSpec& s, const Shard& sh) {
  return s.experts_tp() == s.tp ? sh.tokens : sh.tokens / s.tp;
}

std::vector<Linear> layer_linears(const TrainingSpec& s, const Shard& sh, const LayerKind& kind) {
  const ModelSpec& m = s.model;
  std::vector<Linear> out;
  if (kind.mixer == Mixer::attention) {
    for (const auto& l : layer_ops::attention_linears(m, s.tp)) out.push_back({l.name, l.n, l.k});
  } else if (is_recurrent(kind.mixer)) {
    for (const auto& l : layer_ops::recurrent_linears(m, s.tp)) out.push_back({l.name, l.n, l.k});
  }
  if (!kind.ffn) return out;
  if (kind.moe) {
    // Each expert rank holds E/ep experts and receives ep·T·k/E·capacity rows per expert, T the
    // tokens each rank dispatches (its sequence shard under MoE parallel folding).
    const double experts = double(m.num_experts) / s.ep;
    const double rows =
        s.ep * moe_tokens(s, sh) * m.experts_per_token / m.num_experts * s.moe_capacity_factor;
    for (const auto& l : layer_ops::expert_linears(m, s.experts_tp(), "moe_experts")) {
      out.push_back({l.name, l.n, l.k, experts, rows});
    }
    // Duplicated over TP: each rank projects its own tokens (its sequence shard under SP).
    for (const auto& l : layer_ops::latent_linears(m)) {
      out.push_back({l.name, l.n, l.k, 1, sh.tokens / (s.sp ? s.tp : 1)});
    }
    const double shared = double(m.shared_experts) * m.shared_expert_width();
    if (shared > 0) {
      for (const auto& l : layer_ops::ffn_linears(m, shared, s.tp, "shared_experts")) {
        out.push_back({l.name, l.n, l.k});
      }
    }
  } else {
    for (const auto& l : layer_ops::ffn_linears(m, m.dense_ffn_width(), s.tp, "mlp")) {
      out.push_back({l.name, l.n, l.k});
    }
  }
  return out;
}

/// LoRA adapters on this layer: (name, in, out) on this GPU's TP shard.
std::vector<Linear> lora_adapters(const TrainingSpec& s, const Shard& sh) {
  const ModelSpec& m = s.model;
  const double r = s.lora_rank;
  const double q = sh.hq * sh.d, kv = sh.hkv * sh.d;
  std::vector<std::pair<double, double>> io{{sh.h, q}, {sh.h, kv}};
  if (s.lora_targets != LoraTargets::qv) {
    io.emplace_back(sh.h, kv);
    io.emplace_back(q, sh.h);
  }
  if (s.lora_targets == LoraTargets::all_linear) {
    if (m.ffn == FfnKind::gated) io.emplace_back(sh.h, sh.inter);
    io.emplace_back(sh.h, sh.inter);
    io.emplace_back(sh.inter, sh.h);
  }
  std::vector<Linear> out;
  for (const auto& [in, o] : io) {
    out.push_back({"lora", r, in});  // A: [T × in]·[in × r]
    out.push_back({"lora", o, r});   // B: [T × r]·[r × out]
  }
  return out;
}

LayerPass price_layer(const TrainingSpec& s, const Shard& sh, const LayerKind& kind) {
  const HardwareSpec& hw = s.hardware;
  const KernelModel& km = s.kernel;
  const ModelSpec& m = s.model;
  const bool full = s.finetune == Finetune::full;
  LayerPass p;

  GemmTypes base = sh.linear;
  if (s.finetune == Finetune::qlora) base = GemmTypes{sh.attn_math, 0.5 + 2.0 / 64, 2, 2};
  double cast_elems = 0;  // GEMM inputs cast to fp8 per token: Σ k · rows / T
  const bool op_sac = s.recompute == Recompute::op;
  const training_detail::OpSacLayer sac =
      op_sac ? training_detail::op_sac_layer(m, kind.moe, s.tp) : training_detail::OpSacLayer{};
  std::string previous;
  for (const Linear& l : layer_linears(s, sh, kind)) {
    cast_elems += l.k * (l.rows > 0 ? l.rows * l.count / sh.tokens : 1);
    const LinearCosts c = price_linear(s, sh, l, full, base);
    if (op_sac)
      p.recompute.add(
          Phase::recompute, c.fwd,
          sac.recomputed_share.at(training_detail::op_sac_key(l.name, l.name != previous)));
    previous = l.name;
    p.fwd.add(Phase::forward, c.fwd);
    p.bwd.add(Phase::backward, c.dgrad);
    if (c.has_wgrad) p.bwd.add(Phase::backward, c.wgrad);
    p.gemm_fwd_s += c.fwd.time.value;
    p.gemm_bwd_s += c.dgrad.time.value + (c.has_wgrad ? c.wgrad.time.value : 0);
  }
  if (kind.moe) {
    const LinearCosts router =
        price_linear(s, sh, {"moe_router", double(m.num_experts), sh.h}, full, sh.dense16);
    if (op_sac)
      p.recompute.add(Phase::recompute, router.fwd, sac.recomputed_share.at("moe_router"));
    p.fwd.add(Phase::forward, router.fwd);
    p.bwd.add(Phase::backward, router.dgrad);
    if (router.has_wgrad) p.bwd.add(Phase::backward, router.wgrad);
  }
  if (!full) {
    for (const Linear& l : lora_adapters(s, sh)) {
      const LinearCosts c = price_linear(s, sh, l, true, sh.dense16);
      p.fwd.add(Phase::forward, c.fwd);
      p.bwd.add(Phase::backward, c.dgrad);
      p.bwd.add(Phase::backward, c.wgrad);
    }
  }
  if (s.finetune == Finetune::qlora) {
    // NF4 → bf16 dequantization of the base weights, forward and again for dgrad.
    const double w = layer_params(s).linear;
    const OpCost deq = memory_op("dequantize", hw, km, Flops(0), Bytes(w * (0.53 + 2)), 4);
    p.fwd.add(Phase::forward, deq);
    p.bwd.add(Phase::backward, deq);
  }

  // Attention core: each CP rank computes its 1/cp share of the causal score matrix.
  const bool attends = kind.mixer == Mixer::attention;
  OpCost attn;
  if (attends) {
    attn = attention_prefill_op(hw, km, sh.b, sh.s_full,
                                layer_ops::attention_dims(m, s.tp, kind.local, false),
                                AttentionTypes{sh.attn_math, sh.a, sh.a});
    attn.time = attn.time * s.attention_scale;
    p.attention_fwd_s = attn.time.value / s.cp;
    p.attention_bwd_s = p.attention_fwd_s * kAttentionBackwardFactor;
    p.fwd.add(Phase::forward, attn, 1.0 / s.cp);
    p.bwd.add(Phase::backward, attn, kAttentionBackwardFactor / s.cp);
  }
  if (is_recurrent(kind.mixer)) {
    // Mamba-2's or GDN's conv1d, chunked scan and gated norm: memory-bound kernels, forward
    // (layer_ops::mamba_scan, gdn_scan) and backward (mamba_scan_backward: ~2.7x the bytes).
    using layer_ops::RecurrentPass;
    p.fwd.add(Phase::forward,
              layer_ops::recurrent_op(hw, km, m, s.tp, sh.a, sh.tokens, RecurrentPass::forward));
    p.bwd.add(Phase::backward,
              layer_ops::recurrent_op(hw, km, m, s.tp, sh.a, sh.tokens, RecurrentPass::backward));
  }
  if (attends && !s.flash_attention) {
    // Unfused attention writes and reads the scores and probabilities (2 bytes each) in HBM.
    const double elems = sh.b * sh.hq * sh.s_full * sh.s_full / s.cp;
    const OpCost scores = memory_op("attention", hw, km, Flops(0), Bytes(8 * elems), 3);
    p.fwd.add(Phase::forward, scores);
    p.bwd.add(Phase::backward, scores, 2);
  }

  // Elementwise: two fused residual-add + norm (read x, residual; write both), rotary on q and
  // k, the activation function; the backward moves about twice the bytes.
  // A hybrid model's layer has one residual block: one norm, rotary only where it attends, the
  // activation function only where it has an FFN.
  double bytes = m.blocks_per_layer() * 4 * sh.norm_tokens * sh.h * sh.a;
  if (attends) bytes += 2 * sh.tokens * layer_ops::rope_elements_per_token(m, s.tp) * sh.a;
  if (kind.ffn)
    bytes += sh.tokens *
             layer_ops::activation_fn_elements(m, kind.moe, s.tp, s.moe_capacity_factor) * sh.a;
  if (sh.linear.math != sh.dense16.math)
    bytes += cast_bytes_per_element(s.compute) * sh.tokens * cast_elems;
  const OpCost elementwise = memory_op("norm_elementwise", hw, km, Flops(0), Bytes(bytes), 6);
  p.fwd.add(Phase::forward, elementwise);
  p.bwd.add(Phase::backward, elementwise, 2);

  // MoE token permutation (Megatron's and torchtitan's token dispatchers): the routed copies of
  // the layer's tokens are gathered into expert order before the grouped GEMMs (read T·h, write
  // T·k·c·h) and scattered back, weighted and summed after them (read T·k·c·h, write T·h), 16-bit
  // each; the backward moves the gradients the same way. Index sort and top-k are small beside.
  OpCost permute;
  if (kind.moe) {
    const double tokens = moe_tokens(s, sh);
    const double routed = tokens * m.experts_per_token * s.moe_capacity_factor;
    permute = memory_op("moe_permute", hw, km, Flops(0),
                        Bytes(2 * (tokens + routed) * m.expert_hidden() * sh.a), 4);
    p.fwd.add(Phase::forward, permute);
    p.bwd.add(Phase::backward, permute);
  }

  // Recomputation in the backward: the whole forward (full), the attention core (selective), or
  // the elementwise ops beside the matmuls op-level checkpointing recomputes (above).
  if (s.recompute == Recompute::full) {
    p.recompute.append(p.fwd, 1, Phase::recompute);
  } else if (s.recompute == Recompute::selective && attends) {
    p.recompute.add(Phase::recompute, attn, 1.0 / s.cp);
  } else if (op_sac) {
    p.recompute.add(Phase::recompute, elementwise);
    if (kind.moe) p.recompute.add(Phase::recompute, permute);  // gathers are not saved either
  }
  return p;
}

/// The mean layer of the model: each kind of layer weighted by its share of the layers (the
/// layers of one pipeline stage are taken as a cross-section of the model's).
LayerPass price_mean_layer(const TrainingSpec& s, const Shard& sh) {
  LayerPass mean;
  // The last bf16_last_layers layers keep 16-bit linears; they are taken as a cross-section of
  // the layer kinds, like the layers of a stage.
  const double tail = bf16_tail_share(s);
  Shard sh16{};  // priced only when there is a tail
  if (tail > 0) {
    sh16 = sh;
    sh16.linear = sh.dense16;
  }
  std::vector<std::pair<LayerPass, double>> passes;
  for (const LayerKind& kind : *sh.kinds) {
    const double share = double(kind.count) / s.model.num_layers;
    if (tail < 1) passes.emplace_back(price_layer(s, sh, kind), share * (1 - tail));
    if (tail > 0) passes.emplace_back(price_layer(s, sh16, kind), share * tail);
  }
  for (const auto& [p, w] : passes) {
    mean.fwd.append(p.fwd, w);
    mean.bwd.append(p.bwd, w);
    mean.recompute.append(p.recompute, w);
    mean.gemm_fwd_s += w * p.gemm_fwd_s;
    mean.gemm_bwd_s += w * p.gemm_bwd_s;
    mean.attention_fwd_s += w * p.attention_fwd_s;
    mean.attention_bwd_s += w * p.attention_bwd_s;
  }
  return mean;
}

/// The embedding (first stage) and the final norm, LM head and loss (last stage).
Ledger price_ends(const TrainingSpec& s, const Shard& sh, bool first, bool last) {
  const HardwareSpec& hw = s.hardware;
  const KernelModel& km = s.kernel;
  Ledger l;
  if (first) {
    const OpCost emb =
        memory_op("embedding", hw, km, Flops(0), Bytes(2 * sh.tokens * sh.h * sh.a), 1);
    l.add(Phase::forward, emb);
    l.add(Phase::backward, emb, 2);  // scatter-add of the gradient
  }
  if (last) {
    const bool trains = s.finetune == Finetune::full;
    const LinearCosts head = price_linear(s, sh, {"lm_head", sh.vocab, sh.h}, trains, sh.dense16);
    l.add(Phase::forward, head.fwd);
    l.add(Phase::backward, head.dgrad);
    if (head.has_wgrad) l.add(Phase::backward, head.wgrad);
    // Final norm, then fp32 logits, softmax and the gradient of the cross-entropy.
    const double logits = sh.tokens * sh.vocab;
    const OpCost loss =
        memory_op("lm_head", hw, km, Flops(0), Bytes(4 * sh.tokens * sh.h * sh.a + 10 * logits), 3);
    l.add(Phase::forward, loss);
    l.add(Phase::backward, loss);
  }
  return l;
}

/// The MTP modules of the last stage, shown as one `mtp_module` line per phase: each a
/// transformer layer like the model's last (an MoE layer in an MoE model) — in a hybrid model an
/// attention block and an FFN block (Nemotron 3 Super's mtp_hybrid_override_pattern "*E") —
/// the norms of the hidden state and of the next token's embedding, the [T x 2h]·[2h x h]
/// projection, and the shared embedding, LM head and loss again.
Ledger price_mtp(const TrainingSpec& s, const Shard& sh) {
  Ledger l;
  if (s.mtp_layers == 0) return l;
  std::vector<LayerKind> blocks;
  if (s.model.is_hybrid()) {
    blocks = {LayerKind{1, false, false, Mixer::attention, false},
              LayerKind{1, s.model.is_moe(), false, Mixer::none, true}};
  } else {
    const LayerKind* last = &sh.kinds->back();
    for (const LayerKind& k : *sh.kinds) {
      if (k.moe == s.model.is_moe() && !k.local) last = &k;
    }
    blocks = {*last};
  }
  for (const LayerKind& block : blocks) {
    const LayerPass layer = price_layer(s, sh, block);
    l.append(layer.fwd, 1);
    l.append(layer.bwd, 1);
    l.append(layer.recompute, 1);
  }
  const LinearCosts proj =
      price_linear(s, sh, {"mtp_projection", sh.h / s.tp, 2 * sh.h}, true, sh.dense16);
  l.add(Phase::forward, proj.fwd);
  l.add(Phase::backward, proj.dgrad);
  l.add(Phase::backward, proj.wgrad);
  const OpCost norms = memory_op("norm_elementwise", s.hardware, s.kernel, Flops(0),
                                 Bytes(2 * 4 * sh.norm_tokens * sh.h * sh.a), 2);
  l.add(Phase::forward, norms);
  l.add(Phase::backward, norms, 2);
  l.append(price_ends(s, sh, true, true), 1);
  l.rename("mtp_module");
  Ledger out;
  out.append(l, s.mtp_layers);
  return out;
}

/// A collective over `ranks` GPUs of one parallel group whose consecutive members are `stride`
/// GPUs apart (TP innermost, then CP, then DP; PP outermost).
double collective_s(const TrainingSpec& s, CollectiveKind kind, double bytes, int ranks,
                    int stride) {
  if (ranks <= 1 || bytes <= 0) return 0;
  ClusterSpec c = s.cluster;
  c.gpus_per_node = std::max(1, s.gpus_per_node / std::max(1, stride));
  return estimate_collective(kind, Bytes(bytes), ranks, c, s.kernel).time.value;
}

/// Communication of one micro-batch on one stage, and what of it stays exposed.
struct MicroComm {
  double tp_s = 0, tp_exposed_s = 0;
  double cp_s = 0, cp_exposed_s = 0;
  double ep_s = 0;  // all-to-all: on the critical path
  double fsdp_fwd_s = 0, fsdp_bwd_s = 0;
};

MicroComm micro_comm(const TrainingSpec& s, const Shard& sh, const LayerPass& lp, double layers) {
  MicroComm c;
  const ModelSpec& m = s.model;
  const bool full_recompute = s.recompute == Recompute::full;
  const double act = sh.tokens * sh.h * sh.a;  // one [T × h] activation, 16-bit
  if (s.tp > 1) {
    // Per layer 2 all-reduces forward and 2 backward (Megatron); with SP each is an all-gather
    // plus a reduce-scatter of the same bytes. Full recompute repeats the forward ones.
    double per = 0;
    if (s.sp) {
      per = collective_s(s, CollectiveKind::all_gather, act, s.tp, 1) +
            collective_s(s, CollectiveKind::reduce_scatter, act, s.tp, 1);
    } else {
      per = collective_s(s, CollectiveKind::all_reduce, act, s.tp, 1);
    }
    const double n = (full_recompute ? 3 : 2) * m.blocks_per_layer();
    c.tp_s = n * per * layers;
    const double hide =
        s.tp_comm_overlap
            ? s.comm_overlap * layers * (lp.gemm_fwd_s * (full_recompute ? 2 : 1) + lp.gemm_bwd_s)
            : 0;
    c.tp_exposed_s = std::max(0.0, c.tp_s - hide);
  }
  if (s.cp > 1) {
    // Ring attention: cp − 1 exchanges of the rank's K and V chunk forward; K, V and their
    // gradients backward; each step overlaps the attention of the previous chunk.
    const double kv = sh.tokens * layer_ops::kv_elements_per_token(m, s.tp) * sh.a;
    const double step = collective_s(s, CollectiveKind::send_recv, kv, 2, s.tp);
    const double fwd = (s.cp - 1) * step, bwd = 2 * fwd;
    const double n_fwd = full_recompute ? 2 : 1;
    c.cp_s = layers * (n_fwd * fwd + bwd);
    c.cp_exposed_s = layers * (n_fwd * std::max(0.0, fwd - s.comm_overlap * lp.attention_fwd_s) +
                               std::max(0.0, bwd - s.comm_overlap * lp.attention_bwd_s));
  }
  if (m.is_moe() && s.ep > 1) {
    // Dispatch and combine forward, and both again backward (and in a full recompute).
    // The routed copies travel at the experts' width (LatentMoE: the latent).
    // Under MoE parallel folding the group is ep consecutive GPUs, TP ranks first.
    const double bytes =
        moe_tokens(s, sh) * m.experts_per_token * s.moe_capacity_factor * m.expert_hidden() * sh.a;
    const bool folded = s.experts_tp() != s.tp;
    const double one =
        collective_s(s, CollectiveKind::all_to_all, bytes, s.ep, folded ? 1 : s.tp * s.cp);
    const double moe_share = double(count_params(m).moe_layers) / m.num_layers;
    c.ep_s = layers * moe_share * one * (full_recompute ? 6 : 4);
  }
  // ZeRO-3 / FSDP full and grad-op shard: the layers' weights are gathered for each micro-batch
  // forward (and, fully sharded, again backward); gradients are reduce-scattered every backward.
  const bool gathers = s.sharding == Sharding::zero3 || s.sharding == Sharding::full_shard ||
                       s.sharding == Sharding::hybrid_shard ||
                       s.sharding == Sharding::shard_grad_op;
  if (gathers) {
    const int ranks = s.sharding == Sharding::hybrid_shard ? hybrid_group(s) : grad_ranks(s);
    const double w = layer_params(s).total * 2 * layers;
    const double g = layer_params(s).trainable * s.grad_reduce_bytes * layers;
    const double ag = collective_s(s, CollectiveKind::all_gather, w, ranks, s.tp);
    const double rs = collective_s(s, CollectiveKind::reduce_scatter, g, ranks, s.tp);
    c.fsdp_fwd_s = ag;
    c.fsdp_bwd_s = rs + (s.sharding == Sharding::shard_grad_op ? 0 : ag);
  }
  return c;
}

/// Bytes one optimizer step moves per trainable parameter on this GPU (fp32 master read and
/// written, states read and written, the gradient read, the 16-bit weight written).
double optimizer_update_bytes(Optimizer o) {
  switch (o) {
    case Optimizer::adamw:
      return 8 + 8 + 8 + 2 + 2;
    case Optimizer::sgd:
      return 8 + 8 + 2 + 2;
    case Optimizer::adam_8bit:
      return 8 + 2 + 2 + 2 + 2;
  }
  return 28;
}

/// Trainable parameters of the slowest (last) stage on one GPU before ZeRO sharding, and all its
/// 16-bit weights.
struct StageParams {
  double trainable = 0, weights = 0;
};
StageParams stage_params(const TrainingSpec& s) {
  const LayerParams lp = layer_params(s);
  const ParamCounts c = count_params(s.model);
  const double layers = training_detail::stage_layers(s).last;
  double ends = (s.model.tie_embeddings ? c.embedding : c.lm_head) / s.tp + c.final_norm +
                s.mtp_layers * training_detail::mtp_module_params(s);
  if (s.pp == 1 && !s.model.tie_embeddings) ends += c.embedding / s.tp;
  StageParams p;
  p.weights = layers * lp.total + ends;
  p.trainable = layers * lp.trainable + (s.finetune == Finetune::full ? ends : 0);
  return p;
}

/// FLOPs per token: the model's under this spec's fine-tuning (6·N for trained weights, 4·N for
/// frozen ones: forward and dgrad, no wgrad; plus attention over the square), the hardware's as
/// Megatron counts them (recompute added), and what the GPUs execute (causal attention).
struct TokenFlops {
  double model = 0, hardware = 0, executed = 0;
};

TokenFlops flops_per_token(const TrainingSpec& s) {
  const ModelSpec& m = s.model;
  double attention = training_detail::attention_flops_per_token(m, s.seq_len);
  double model = model_flops_per_token(m, s.seq_len);
  if (s.mtp_layers > 0) {
    // Each MTP module: 6 FLOPs per weight a token touches in its layer (like the model's last,
    // global attention), projection and the LM head again, plus that layer's attention.
    const ParamCounts c = count_params(m);
    const double h = m.hidden_size;
    const double ffn = m.is_moe() ? m.experts_per_token * c.expert_per_layer +
                                        c.shared_expert_per_layer + c.router_per_layer
                                  : c.dense_ffn_per_layer;
    ModelSpec global = m;
    global.window_tokens = 0;
    global.global_attention_every = 0;
    const double attn_layer =
        training_detail::attention_flops_per_token(global, s.seq_len) / c.attention_layers;
    model +=
        s.mtp_layers *
        (6 * (c.attention_per_layer + ffn + 2 * h * h + double(m.vocab_size) * h) + attn_layer);
    attention += s.mtp_layers * attn_layer;
  }
  const double n_matmul = (model - attention) / 6;
  if (s.finetune != Finetune::full) model = 4 * n_matmul + 6 * trainable_params(s) + attention;
  const double head = double(m.vocab_size) * m.hidden_size;
  // Published MFU and HFU count attention over the whole s × s square (PaLM, Megatron); a causal
  // kernel computes only the pairs at or below the diagonal, (s + 1) / 2s of it. HFU here is the
  // executed work, so it never exceeds 1; hardware_flops_per_token keeps Megatron's count, which
  // its papers' TFLOP/s per GPU use.
  const double causal = attention * (double(s.seq_len) + 1) / (2.0 * s.seq_len);
  // Op-level checkpointing: the recomputed matmuls of every layer, forward only (2 FLOPs each).
  double op_recomputed = 0;
  if (s.recompute == Recompute::op) {
    const ParamCounts pc = count_params(m);
    op_recomputed = pc.dense_layers * training_detail::op_sac_layer(m, false, 1).recomputed_params;
    if (pc.moe_layers > 0)
      op_recomputed += pc.moe_layers * training_detail::op_sac_layer(m, true, 1).recomputed_params;
  }
  const auto with_recompute = [&](double base, double attn) {
    if (s.recompute == Recompute::full) return base + 2 * (n_matmul - head) + attn / 3;
    if (s.recompute == Recompute::selective) return base + attn / 3;
    if (s.recompute == Recompute::op) return base + 2 * op_recomputed;
    return base;
  };
  return {model, with_recompute(model, attention),
          with_recompute(model - attention + causal, causal)};
}

/// The stage that bounds a micro-batch: the last (layers + LM head and loss, MTP) unless an uneven
/// split gives another stage more work (the first also holds the embedding; a middle stage only
/// layers). `ends` is what the stage runs besides its layers.
struct SlowestStage {
  double layers = 0;
  Ledger ends;
  bool is_last = false;
};

SlowestStage slowest_stage(const TrainingSpec& s, const Shard& sh, double layer_s) {
  const StageLayers sl = training_detail::stage_layers(s);
  Ledger head = price_ends(s, sh, s.pp == 1, true);
  head.append(price_mtp(s, sh), 1);
  Ledger embedding = price_ends(s, sh, true, false);
  SlowestStage out{double(sl.last), std::move(head), true};
  if (s.pp > 1 && sl.first * layer_s + embedding.time() > out.layers * layer_s + out.ends.time()) {
    out = SlowestStage{double(sl.first), std::move(embedding), false};
  }
  if (sl.middle * layer_s > out.layers * layer_s + out.ends.time()) {
    out = SlowestStage{double(sl.middle), Ledger{}, false};
  }
  return out;
}

/// One micro-batch on the slowest stage: its layers' kernels, its ends, and the communication
/// of the micro-batch that compute does not hide (TP, CP, EP, FSDP).
struct MicroBatch {
  Ledger ledger;
  double fwd_s = 0, bwd_s = 0;  // compute only, after the compute scale
  double ends_s = 0;            // the stage's ends, before the compute scale
};

MicroBatch price_micro_batch(const TrainingSpec& s, const Shard& sh, const LayerPass& lp,
                             const SlowestStage& st, int micro) {
  const double ov = s.comm_overlap;
  MicroBatch out;
  Ledger& mb = out.ledger;
  mb.append(lp.fwd, st.layers);
  mb.append(lp.bwd, st.layers);
  mb.append(lp.recompute, st.layers, Phase::recompute);
  out.ends_s = st.ends.time();
  if (!st.ends.items().empty()) mb.append(st.ends, 1);
  mb.scale(s.compute_scale);
  out.fwd_s = mb.time(Phase::forward);
  out.bwd_s = mb.time(Phase::backward) + mb.time(Phase::recompute);

  // The last stage's MTP layers communicate as its other layers do.
  const MicroComm mc = micro_comm(s, sh, lp, st.layers + (st.is_last ? s.mtp_layers : 0));
  mb.add_time(Phase::communication, "tp_collectives", mc.tp_exposed_s, Bound::communication);
  mb.add_time(Phase::communication, "cp_ring_exchange", mc.cp_exposed_s, Bound::communication);
  // The all-to-alls sit between attention and experts of their own micro-batch; only a schedule
  // that runs two micro-batches at once on the stage (DualPipe, Megatron-Core's EP overlap) hides
  // them, behind the other one's compute, and only when the stage has another micro-batch.
  const bool two_in_flight = micro > 1 || s.pp > 1;
  const double ep_hide = s.ep_comm_overlap && two_in_flight ? ov * (out.fwd_s + out.bwd_s) : 0;
  mb.add_time(Phase::communication, "ep_all_to_all", std::max(0.0, mc.ep_s - ep_hide),
              Bound::communication);
  if (mc.fsdp_fwd_s > 0 || mc.fsdp_bwd_s > 0) {
    // Prefetch hides each layer's gather behind the previous layer's compute; the first gather
    // and the last reduce-scatter have nothing to hide behind.
    const double first = mc.fsdp_fwd_s / st.layers;
    mb.add_time(Phase::communication, "fsdp_forward",
                std::max(0.0, mc.fsdp_fwd_s - ov * out.fwd_s) + first, Bound::communication);
    mb.add_time(Phase::communication, "fsdp_backward",
                std::max(0.0, mc.fsdp_bwd_s - ov * out.bwd_s) + first, Bound::communication);
  }
  return out;
}

/// Transformer Engine and torchao cast each weight to fp8 / NVFP4 on the first micro-batch of a
/// step and reuse the cached copy until the optimizer changes it: once per step per linear weight
/// of the stage's low-precision layers (one cast kernel per layer).
void add_weight_casts(Ledger& step, const TrainingSpec& s, const Shard& sh, double layers) {
  if (sh.linear.math == sh.dense16.math) return;
  const std::string op = std::string(to_string(s.compute)) + "_weight_cast";
  const OpCost cast =
      memory_op(op, s.hardware, s.kernel, Flops(0),
                Bytes(cast_bytes_per_element(s.compute) * layer_params(s).linear), 1);
  step.add(Phase::forward, cast, layers * (1 - bf16_tail_share(s)) * s.compute_scale);
}

/// 1F1B: (p − 1) micro-batch slots of fill and drain, divided by v when interleaved, and the
/// activations sent between stages. Steady-state sends overlap compute; the fill and the drain
/// wait for theirs: the first micro-batch crosses the p·v − 1 boundaries between the model's
/// chunks (every one a GPU boundary when interleaved, so v times the transfers: Narayanan et al.
/// 2021, §2.2.2), and its gradient crosses them back.
void add_pipeline(Ledger& step, const TrainingSpec& s, const Shard& sh, const MicroBatch& mb) {
  if (s.pp == 1) return;
  const double stage_s = mb.ledger.time() - mb.ends_s * s.compute_scale;
  step.add_time(Phase::pipeline, "bubble", (s.pp - 1.0) / s.vpp * stage_s, Bound::overhead);
  const double act = sh.tokens * sh.h * sh.a / (s.sp ? s.tp : 1);
  const double p2p = collective_s(s, CollectiveKind::send_recv, act, 2, s.tp * s.cp * s.dp);
  step.add_time(Phase::communication, "pp_send_recv", 2 * (double(s.pp) * s.vpp - 1) * p2p,
                Bound::communication);
}

/// Data-parallel gradient synchronisation once per step, overlapped with the last micro-batch's
/// backward (gradients) and the first one's forward (ZeRO-1/2 parameter gather).
void add_gradient_sync(Ledger& step, const TrainingSpec& s, const StageParams& sp,
                       const MicroBatch& mb) {
  const double ov = s.comm_overlap;
  const int nd = grad_ranks(s);
  if (s.sharding == Sharding::none) {
    const double ar =
        collective_s(s, CollectiveKind::all_reduce, s.grad_reduce_bytes * sp.trainable, nd, s.tp);
    step.add_time(Phase::communication, "dp_all_reduce", std::max(0.0, ar - ov * mb.bwd_s),
                  Bound::communication);
  } else if (s.sharding == Sharding::zero1 || s.sharding == Sharding::zero2) {
    const double rs = collective_s(s, CollectiveKind::reduce_scatter,
                                   s.grad_reduce_bytes * sp.trainable, nd, s.tp);
    const double ag = collective_s(s, CollectiveKind::all_gather, 2 * sp.trainable, nd, s.tp);
    step.add_time(Phase::communication, "dp_reduce_scatter", std::max(0.0, rs - ov * mb.bwd_s),
                  Bound::communication);
    step.add_time(Phase::communication, "dp_all_gather", std::max(0.0, ag - ov * mb.fwd_s),
                  Bound::communication);
  } else if (s.sharding == Sharding::hybrid_shard && nd > hybrid_group(s)) {
    const int g = hybrid_group(s);
    const double ar = collective_s(s, CollectiveKind::all_reduce,
                                   s.grad_reduce_bytes * sp.trainable / g, nd / g, s.tp * g);
    step.add_time(Phase::communication, "dp_all_reduce", std::max(0.0, ar - ov * mb.bwd_s),
                  Bound::communication);
  }
}

/// The optimizer's update of this GPU's share of the trainable parameters, and the framework's
/// fixed time per step.
void add_optimizer_and_overhead(Ledger& step, const TrainingSpec& s, const StageParams& sp) {
  const double opt_params = sp.trainable / shard_divisors(s).optimizer;
  step.add(Phase::optimizer,
           memory_op("optimizer_step", s.hardware, s.kernel, Flops(0),
                     Bytes(opt_params * (optimizer_update_bytes(s.optimizer) + 2)), 4));
  step.add_time(Phase::overhead, "framework", s.step_overhead_s, Bound::overhead);
}

/// What every micro-batch size of one request shares: the model's layers grouped by kind and
/// the FLOPs per token MFU and HFU count.
struct RequestConstants {
  std::vector<LayerKind> kinds;
  TokenFlops flops;
};

/// Rates, MFU, HFU and totals of a priced step.
void fill_rates(TrainingResult& r, const TrainingSpec& s, double step_s, const TokenFlops& f) {
  r.step_time_s = step_s;
  r.tokens_per_step = double(s.global_batch_size) * s.seq_len;
  r.tokens_per_s = r.tokens_per_step / r.step_time_s;
  r.tokens_per_s_per_gpu = r.tokens_per_s / s.num_gpus;
  r.model_flops_per_token = f.model;
  r.hardware_flops_per_token = f.hardware;
  // The fastest peak the step's math runs at: the compute type's, or the 16-bit one attention
  // and the norms keep (a custom GPU may list an fp4 peak below its bf16 one). No FLOP of the
  // step runs faster, so MFU and HFU against it are at most 1 where the pricing is physical.
  double peak = s.hardware.peak(math_type(s.compute))->value;
  for (const DType half : {DType::bf16, DType::fp16}) {
    if (const auto p = s.hardware.peak(half)) peak = std::max(peak, p->value);
  }
  r.peak_flops_per_gpu = peak;
  r.mfu = f.model * r.tokens_per_s_per_gpu / r.peak_flops_per_gpu;
  r.hfu = f.executed * r.tokens_per_s_per_gpu / r.peak_flops_per_gpu;
  if (!(r.hfu <= 1)) {
    throw NotModelledError("hfu",
                           "must be <= 1: the step would run faster than the GPU's "
                           "peak FLOP/s, a bound the pricing breaks for this request (got " +
                               format_number(r.hfu) + ")");
  }
  if (!(r.mfu <= 1)) {
    throw NotModelledError(
        "workload.seq_len",
        "MFU counts attention over the whole s x s square (PaLM, Megatron), twice what causal "
        "attention executes; at this sequence length it would be " +
            format_number(r.mfu) + " > 1 (HFU " + format_number(r.hfu) +
            "): no meaningful MFU (got " + format_number(double(s.seq_len)) + ")");
  }
  if (s.total_tokens > 0) {
    r.total_time_s = s.total_tokens / r.tokens_per_s;
    r.gpu_hours = r.total_time_s * s.num_gpus / 3600;
    r.cost_usd = r.gpu_hours * s.cost_per_gpu_hour_usd;
  }
}

/// Breakdown: one line per (phase, op), in order of first appearance; the tier is 2 only when
/// every priced kernel was.
void fill_breakdown(TrainingResult& r, const TrainingSpec& s, const Ledger& step) {
  std::map<std::pair<Phase, std::string>, std::size_t> index;
  bool all_tier2 = true;
  for (const Item& i : step.items()) {
    if (i.priced_kernel && i.tier != 2) all_tier2 = false;
    auto key = std::make_pair(i.phase, i.op);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(std::move(key), r.breakdown.size()).first;
      TrainingBreakdownItem item;
      item.phase = phase_name(i.phase);
      item.op = i.op;
      item.bound = i.bound;
      r.breakdown.push_back(item);
    }
    TrainingBreakdownItem& out = r.breakdown[it->second];
    out.time_s += i.time_s;
    out.flops += i.flops;
  }
  for (TrainingBreakdownItem& item : r.breakdown) item.share = item.time_s / r.step_time_s;
  r.tier = all_tier2 ? 2 : (s.framework_fitted ? 1 : 0);
}

/// One step at micro-batch `b`: its result without the memory and the breakdown, and the
/// ledgers the breakdown comes from (built only for the micro-batch the estimate reports): the
/// micro-batch's, `micro` times, then the step's own items.
struct Step {
  TrainingResult result;
  Ledger micro_batch, rest;
  /// The whole step's ledger.
  [[nodiscard]] Ledger ledger() const {
    Ledger step;
    step.append(micro_batch, result.num_micro_batches);
    step.append(rest, 1);
    return step;
  }
};

Step estimate_step(const TrainingSpec& s, int b, const RequestConstants& rc) {
  const Shard sh = make_shard(s, b, rc.kinds);
  const LayerPass lp = price_mean_layer(s, sh);
  const int micro = s.global_batch_size / (s.dp * b);
  const SlowestStage stage =
      slowest_stage(s, sh, lp.fwd.time() + lp.bwd.time() + lp.recompute.time());
  MicroBatch mb = price_micro_batch(s, sh, lp, stage, micro);

  Ledger rest;
  add_weight_casts(rest, s, sh, stage.layers);
  add_pipeline(rest, s, sh, mb);
  const StageParams sp = stage_params(s);
  add_gradient_sync(rest, s, sp, mb);
  add_optimizer_and_overhead(rest, s, sp);

  Step out{TrainingResult{}, std::move(mb.ledger), std::move(rest)};
  TrainingResult& r = out.result;
  r.micro_batch_size = b;
  r.num_micro_batches = micro;
  // The step's ledger's sum, in its order, without building it.
  fill_rates(r, s, out.rest.time(out.micro_batch.time_scaled(micro)), rc.flops);
  r.bubble_fraction = out.rest.time(Phase::pipeline) / r.step_time_s;
  return out;
}

std::vector<Assumption> assumptions(const TrainingSpec& s) {
  const KernelModel& km = s.kernel;
  std::vector<Assumption> out{
      {"attention_backward_factor", kAttentionBackwardFactor, "x forward",
       "FlashAttention-2 backward runs 5 GEMMs to the forward's 2 (Dao, 2023)"},
      {"comm_overlap", s.comm_overlap, "fraction of overlapped compute",
       "share of the concurrent compute a DP/FSDP/CP collective can hide behind"},
      {"step_overhead", s.step_overhead_s / kMilli, "ms per step",
       "framework time outside kernels per optimizer step"},
      {"compute_scale", s.compute_scale, "x kernel time", "framework kernel-time multiplier"},
      {"attention_scale", s.attention_scale, "x attention time",
       "framework attention-kernel multiplier"},
      {"framework_reserve", s.framework_reserve_bytes / kGB, "GB per GPU",
       "CUDA context, NCCL and cuBLAS workspaces, allocator slack"},
      {"gemm_efficiency", km.gemm_efficiency, "of dense peak",
       "Tier 0 (0.8), at most the share the GPU's measured 16-bit GEMMs reach (fitted constants)"},
      {"attention_efficiency", km.attention_efficiency, "of dense peak", "Tier 0"},
      {"hbm_efficiency", km.hbm_efficiency, "of HBM bandwidth", "Tier 0"},
  };
  if (s.mtp_layers > 0) {
    out.push_back({"mtp_layers", double(s.mtp_layers), "modules on the last stage",
                   "multi-token prediction trained with the model (DeepSeek-V3 §2.2): a layer, "
                   "a [2h -> h] projection, the shared embedding and LM head again per module; "
                   "workload.mtp_layers 0 leaves them out"});
  }
  if (s.pp > 1 && (s.model.num_layers % s.pp != 0 || s.pp_first_stage_layers > 0 ||
                   s.pp_last_stage_layers > 0)) {
    const training_detail::StageLayers sl = training_detail::stage_layers(s);
    out.push_back({"pipeline_stage_layers", double(sl.first), "layers on the first stage",
                   "uneven split: first " + std::to_string(sl.first) + ", middle up to " +
                       std::to_string(sl.middle) + ", last " + std::to_string(sl.last) +
                       (s.pp_first_stage_layers > 0 || s.pp_last_stage_layers > 0
                            ? " (first/last as given, the rest even)"
                            : " (the first num_layers mod pp stages take one layer more)") +
                       "; step time follows the slowest stage"});
  }
  return out;
}

}  // namespace

std::vector<int> training_detail::divisors(int n) {
  std::vector<int> out;
  for (int i = 1; 1LL * i * i <= n; ++i) {
    if (n % i == 0) {
      out.push_back(i);
      if (i != n / i) out.push_back(n / i);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const TrainingFramework::Scales* TrainingFramework::scales_for(
    std::string_view architecture) const {
  for (const Scales& sc : scales) {
    if (!architecture.empty() && sc.family == architecture) return &sc;
  }
  return nullptr;
}

TrainingResult estimate_training(const TrainingSpec& request) {
  validate(request);
  TrainingSpec spec = request;
  spec.kernel.fp8_gemm_at_most_16bit = true;  // docs/model.md, "Kernel time"
  const int per_rank = spec.global_batch_size / spec.dp;
  std::vector<int> candidates{spec.micro_batch_size};
  if (spec.micro_batch_size == 0) candidates = divisors(per_rank);

  const RequestConstants rc{layer_kinds(spec.model), flops_per_token(spec)};
  Step chosen;
  TrainingResult& best = chosen.result;
  bool found = false;
  int largest_fit = 0;
  int priced = 0;
  for (int b : candidates) {
    const TrainingMemory mem = training_detail::training_memory(spec, b, per_rank / b);
    if (!mem.fits && spec.micro_batch_size == 0) break;  // memory grows with b
    if (mem.fits) largest_fit = b;
    Step step = estimate_step(spec, b, rc);
    ++priced;
    step.result.memory = mem;
    if (!found || step.result.step_time_s <= best.step_time_s * (1 + 1e-9)) {
      chosen = std::move(step);
      found = true;
    }
  }
  if (!found) {  // not even one sequence per micro-batch fits: report b = 1
    chosen = estimate_step(spec, 1, rc);
    ++priced;
    best.memory = training_detail::training_memory(spec, 1, per_rank);
    best.warnings.push_back("does not fit: even micro_batch_size 1 needs " +
                            format_number(std::round(best.memory.total_bytes / kGB * 100) / 100) +
                            " GB per GPU of " + format_number(best.memory.capacity_bytes / kGB) +
                            " GB");
  } else if (!best.memory.fits) {
    best.warnings.push_back("does not fit in memory at this micro_batch_size");
  }
  if (spec.micro_batch_size != 0) {
    for (int b : divisors(per_rank)) {
      if (!training_detail::training_memory(spec, b, per_rank / b).fits) break;
      largest_fit = b;
    }
  }
  fill_breakdown(best, spec, chosen.ledger());
  best.max_micro_batch_size = largest_fit;
  best.micro_batch_searched = spec.micro_batch_size == 0;
  best.micro_batches_priced = priced;
  best.params = count_params(spec.model);
  best.trainable_params = training_detail::trainable_params(spec);
  best.assumptions = assumptions(spec);
  if (!spec.framework_warning.empty()) best.warnings.push_back(spec.framework_warning);
  if (spec.pp > 1 && best.num_micro_batches < spec.pp) {
    best.warnings.push_back("fewer micro-batches (" + std::to_string(best.num_micro_batches) +
                            ") than pipeline stages (" + std::to_string(spec.pp) +
                            "): the bubble dominates");
  }
  if (spec.vpp > 1 && best.num_micro_batches % spec.pp != 0) {
    best.warnings.push_back("interleaved 1F1B expects the number of micro-batches (" +
                            std::to_string(best.num_micro_batches) + ") to be a multiple of pp (" +
                            std::to_string(spec.pp) + ")");
  }
  return std::move(chosen.result);
}

}  // namespace flopcast
