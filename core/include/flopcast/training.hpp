// SPDX-License-Identifier: MIT
#pragma once

/// Training estimator: step time, throughput, MFU/HFU, total time and memory per GPU of one
/// training (or LoRA / QLoRA fine-tuning) configuration under TP/SP/PP/DP/ZeRO/FSDP/CP/EP.
/// Formulas and overlap rules: docs/model.md, "Training".

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "flopcast/collective.hpp"
#include "flopcast/dtype.hpp"
#include "flopcast/hardware.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/kernel.hpp"
#include "flopcast/model.hpp"
#include "flopcast/names.hpp"

namespace flopcast {

/// What the backward pass recomputes: nothing; the attention core (selective, Korthikanti et
/// al. 2022, Megatron's default); PyTorch's op-level selective checkpointing (op, torchtitan's
/// `selective` + `op`: every other matmul of a layer, the grouped expert GEMMs and every
/// elementwise op, keeping the attention kernel's output); or each layer's whole forward from its
/// stored input (full).
enum class Recompute { none, selective, op, full };

/// The types `precision.compute` takes: 16-bit, or a low-precision recipe (fp8 tensorwise,
/// MXFP8, NVFP4) on the tensor cores that have it.
inline constexpr std::array<DType, 5> kTrainingComputeTypes{DType::bf16, DType::fp16, DType::fp8,
                                                            DType::mxfp8, DType::fp4};
inline constexpr std::array<Named<Recompute>, 4> kRecomputeNames{
    {{"none", Recompute::none},
     {"selective", Recompute::selective},
     {"op", Recompute::op},
     {"full", Recompute::full}}};
constexpr std::string_view to_string(Recompute r) noexcept { return name_in(kRecomputeNames, r); }

/// Optimizer states per trainable parameter, beside the 16-bit weight and gradient:
/// AdamW with fp32 master weights and two fp32 moments (12 B), SGD with fp32 master weights and
/// fp32 momentum (8 B), 8-bit Adam (bitsandbytes) with fp32 master weights and two 1-byte
/// moments (6 B).
enum class Optimizer { adamw, sgd, adam_8bit };
inline constexpr std::array<Named<Optimizer>, 3> kOptimizerNames{
    {{"adamw", Optimizer::adamw}, {"sgd", Optimizer::sgd}, {"adam_8bit", Optimizer::adam_8bit}}};
constexpr std::string_view to_string(Optimizer o) noexcept { return name_in(kOptimizerNames, o); }

/// Data-parallel sharding. ZeRO stages 1-3 (DeepSpeed, Megatron distributed optimizer) and
/// PyTorch FSDP strategies: full_shard = ZeRO-3, shard_grad_op = ZeRO-2, hybrid_shard = ZeRO-3
/// within a node's data-parallel ranks and replicated (all-reduced) across nodes.
enum class Sharding { none, zero1, zero2, zero3, full_shard, shard_grad_op, hybrid_shard };
inline constexpr std::array<Named<Sharding>, 7> kShardingNames{
    {{"none", Sharding::none},
     {"zero1", Sharding::zero1},
     {"zero2", Sharding::zero2},
     {"zero3", Sharding::zero3},
     {"full_shard", Sharding::full_shard},
     {"shard_grad_op", Sharding::shard_grad_op},
     {"hybrid_shard", Sharding::hybrid_shard}}};
constexpr std::string_view to_string(Sharding s) noexcept { return name_in(kShardingNames, s); }

/// Full fine-tuning, or low-rank adapters on a frozen base (LoRA: base in 16 bits; QLoRA: base
/// in 4-bit NF4 with one 16-bit scale per 64 weights).
enum class Finetune { full, lora, qlora };
inline constexpr std::array<Named<Finetune>, 3> kFinetuneNames{
    {{"full", Finetune::full}, {"lora", Finetune::lora}, {"qlora", Finetune::qlora}}};
constexpr std::string_view to_string(Finetune f) noexcept { return name_in(kFinetuneNames, f); }

/// Which linear layers carry LoRA adapters.
enum class LoraTargets { qv, attention, all_linear };
inline constexpr std::array<Named<LoraTargets>, 3> kLoraTargetNames{
    {{"qv", LoraTargets::qv},
     {"attention", LoraTargets::attention},
     {"all_linear", LoraTargets::all_linear}}};
constexpr std::string_view to_string(LoraTargets t) noexcept {
  return name_in(kLoraTargetNames, t);
}

/// Constants of a training framework: how much of its collectives its compute hides, its fixed
/// time per step, and how much slower than the kernel model its kernels run (eager PyTorch,
/// unfused ops, launch gaps). The profiles are data: presets/frameworks/<id>.json, read by the
/// JSON layer, which copies the chosen profile's constants into the TrainingSpec. `generic` is
/// physics only; `fitted` is fitted on end-to-end measurements (docs/model.md, "Training:
/// fitted constants").
struct TrainingFramework {
  /// Kernel-time multipliers on one GPU architecture (HardwareSpec::architecture): GEMMs and
  /// elementwise ops, and the attention kernel.
  struct Scales {
    std::string family;
    double compute = 1.0;
    double attention = 1.0;
  };
  std::string id = "generic";
  double comm_overlap = 1.0;
  double step_overhead_s = 0;
  std::vector<Scales> scales;  ///< unlisted architectures: 1, 1 (with a warning)
  int tier = 0;                ///< 1 when fitted on end-to-end rows
  /// Compute and attention scale on an architecture without fitted scales.
  double unmeasured_scale = 1.0;
  double unmeasured_attention = 1.0;

  /// The scales fitted for an architecture, or nullptr when there are none.
  [[nodiscard]] const Scales* scales_for(std::string_view architecture) const;
};

struct TrainingSpec {
  ModelSpec model;
  HardwareSpec hardware;
  ClusterSpec cluster;  ///< fabric of the collectives (cluster_of(hardware) by default)
  int num_gpus = 1;
  int gpus_per_node = 8;
  // Parallelism: tp·pp·dp·cp = num_gpus; ep divides dp·cp (experts spread over data ranks), or
  // tp·dp·cp with expert_tp 1.
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  /// Tensor parallelism of the routed experts (Megatron-Core expert_tensor_parallel_size): tp
  /// (its default: each expert split like the dense layers), or 1 (MoE parallel folding: whole
  /// experts, the expert-parallel group spanning the TP ranks, each rank dispatching its own
  /// sequence shard). 0: tp.
  int expert_tp = 0;
  [[nodiscard]] int experts_tp() const noexcept { return expert_tp > 0 ? expert_tp : tp; }
  bool sp = false;  ///< sequence parallelism with TP (norms and dropout sharded, AG/RS for AR)
  int vpp = 1;      ///< virtual pipeline stages per GPU (interleaved 1F1B when > 1)
  /// Layers of the first and last pipeline stages (Megatron's decoder_first/last_pipeline_num_
  /// layers); the other stages share the rest evenly. 0: unset. Both unset and num_layers not a
  /// multiple of pp: the first num_layers mod pp stages take one layer more.
  int pp_first_stage_layers = 0;
  int pp_last_stage_layers = 0;
  Sharding sharding = Sharding::none;
  // Workload.
  int seq_len = 0;
  int global_batch_size = 0;  ///< sequences per optimizer step
  int micro_batch_size = 0;   ///< sequences per micro-batch per data rank; 0: search
  double total_tokens = 0;    ///< token budget; 0: no total time
  Recompute recompute = Recompute::none;
  bool flash_attention = true;
  /// Multi-token-prediction modules trained with the model (DeepSeek-V3 §2.2), on the last
  /// stage: each a transformer layer like the model's last, a [2h -> h] projection and the
  /// shared embedding and LM head run again with their own loss.
  int mtp_layers = 0;
  // Precision and optimizer.
  /// bf16 or fp16; fp8 (GEMMs at the fp8 peak) or fp4 (NVFP4 GEMMs at the fp4 peak); attention
  /// stays in 16 bits.
  DType compute = DType::bf16;
  /// With fp8 or fp4 compute: the last layers whose linears stay in 16 bits (NVIDIA's NVFP4
  /// recipe keeps about the last 15 % in BF16).
  int bf16_last_layers = 0;
  Optimizer optimizer = Optimizer::adamw;
  /// Element size of the gradient reduction (2: bf16; 4: fp32, e.g. PyTorch FSDP with an fp32
  /// reduce_dtype).
  double grad_reduce_bytes = 2;
  Finetune finetune = Finetune::full;
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::qv;
  /// MoE: tokens an expert rank receives relative to a perfectly balanced routing (capacity
  /// factor, or the measured load imbalance).
  double moe_capacity_factor = 1.0;
  // Overlap and framework constants (docs/model.md lists their sources and fits).
  std::string framework = "generic";  ///< the profile the three constants below came from
  /// Set when the profile has no fitted scales for the hardware's architecture (reported).
  std::string framework_warning;
  /// The constants below came from a fit on measured training runs (result tier 1).
  bool framework_fitted = false;
  /// Fraction of the compute a concurrent collective can hide behind (the rest is exposed):
  /// 1 means DP/FSDP/CP traffic runs fully in the shadow of the compute it overlaps.
  double comm_overlap = 1.0;
  bool tp_comm_overlap = false;  ///< TP collectives overlapped with GEMMs (TE userbuffers)
  /// EP all-to-alls of one micro-batch overlapped with another micro-batch's compute on the same
  /// stage (DeepSeek-V3's DualPipe; Megatron-Core's --overlap-moe-expert-parallel-comm).
  bool ep_comm_overlap = false;
  /// Fixed time per optimizer step outside the kernels: Python, launch gaps, data loading, logging.
  double step_overhead_s = 0;
  /// Kernel time multiplier of the framework (1: kernels as the Tier-0/2 fits price them).
  double compute_scale = 1.0;
  /// Attention kernel time multiplier: the framework's FlashAttention version against the
  /// calibrated attention kernel (e.g. FlashAttention-2 leaves Hopper's TMA/WGMMA unused).
  double attention_scale = 1.0;
  double framework_reserve_bytes = 2.0e9;  ///< CUDA context, NCCL/cuBLAS workspaces, allocator
  double cost_per_gpu_hour_usd = 0;        ///< 0: no cost
  KernelModel kernel;
};

/// One line of "where the time of a step goes", summed over the step.
struct TrainingBreakdownItem {
  std::string
      phase;  ///< forward, backward, recompute, communication, pipeline, optimizer, overhead
  std::string op;
  double time_s = 0;  ///< on the critical path of one step
  double share = 0;   ///< of the step time
  Bound bound = Bound::compute;
  double flops = 0;  ///< per GPU per step
};

/// Per-GPU memory of the most loaded pipeline stage (the first). Bytes.
struct TrainingMemory {
  double capacity_bytes = 0;
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;            ///< all micro-batches in flight on the stage
  double activations_per_layer_bytes = 0;  ///< one micro-batch, one layer
  double temporary_bytes = 0;  ///< gathered ZeRO-3 layers, logits, communication buckets
  double reserve_bytes = 0;
  double total_bytes = 0;
  bool fits = false;
};

struct TrainingResult {
  int micro_batch_size = 0;
  int max_micro_batch_size = 0;  ///< largest that fits (0: none)
  bool micro_batch_searched = false;
  int micro_batches_priced = 0;  ///< micro-batch sizes whose step was priced (1 unless searched)
  int num_micro_batches = 0;     ///< per data rank per step (gradient accumulation steps)
  double step_time_s = 0;
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_token = 0;  ///< 6·N_matmul + 12·L·Hq·d·s (see model_flops_per_token)
  /// Model FLOPs + recomputed forward FLOPs, attention over the square (Megatron's count).
  double hardware_flops_per_token = 0;
  double mfu = 0;
  double hfu = 0;
  double peak_flops_per_gpu = 0;  ///< the dense peak MFU/HFU divide by
  double bubble_fraction = 0;     ///< bubble time / step time
  double total_time_s = 0;        ///< 0 when no total_tokens
  double gpu_hours = 0;
  double cost_usd = 0;
  double trainable_params = 0;
  ParamCounts params;
  TrainingMemory memory;
  std::vector<TrainingBreakdownItem> breakdown;
  std::vector<Assumption> assumptions;
  std::vector<std::string> warnings;
  /// 2 when every GEMM and attention op used a Tier-2 kernel fit; else 1 when the framework
  /// constants were fitted on measured training runs; 0: physics only.
  int tier = 0;
};

/// Model FLOPs of one token of a training step at sequence length `seq`, as in the literature
/// (Narayanan et al. 2021, PaLM appendix B): 6·N_matmul + 12·L·Hq·d·s, where N_matmul counts
/// every weight of a matrix multiply a token passes through (attention and FFN linears of the
/// active experts, router, LM head; not the embedding lookup, norms or biases) and attention is
/// counted over the whole s×s score matrix (not halved for causality).
double model_flops_per_token(const ModelSpec& m, int seq);

/// Activation bytes one layer stores for the backward pass, for a micro-batch of `b` sequences
/// of `s` tokens on one GPU (16-bit activations, no dropout), generalising Korthikanti et al.
/// (2022) to GQA and gated FFNs:
///   none:      s·b·[ (8h)/t_sp + (2(hq+2hkv)d + 2hq·d + ffn)/t ] + s²-term
///   selective: the same without the s²-term
///   op:        s·b·[2h/t_sp + 2·(saved matmul outputs + hq·d_v)/t] + the s²-term: the layer
///              input, the outputs of the odd-numbered matmuls and the attention output
///   full:      2·s·b·h / t_sp (the layer input only)
/// with t_sp = t under sequence parallelism else 1; ffn = 6I (gated) or 4I (plain); the s²-term
/// = 4·b·Hq·s²/t (scores and softmax, 2 bytes each) without FlashAttention, else the fp32
/// log-sum-exp 4·b·Hq·s/t. `s` is the sequence share of one CP rank.
double activation_bytes_per_layer(const ModelSpec& m, double b, double s, int tp, bool sp,
                                  Recompute recompute, bool flash_attention);

/// Validates the spec (SpecError with the request's JSON paths) and estimates the step. A
/// micro_batch_size of 0 searches the divisors of global_batch_size / dp for the fastest that
/// fits. "Does not fit" is a result (memory.fits), not an error.
TrainingResult estimate_training(const TrainingSpec& spec);

}  // namespace flopcast
