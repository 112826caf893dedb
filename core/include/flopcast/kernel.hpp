// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "flopcast/calibration.hpp"
#include "flopcast/dtype.hpp"
#include "flopcast/hardware.hpp"
#include "flopcast/model.hpp"
#include "flopcast/units.hpp"

namespace flopcast {

/// What limits an op: math, DRAM traffic, the interconnect, or fixed CPU/launch cost.
enum class Bound { compute, memory, communication, overhead };
std::string_view to_string(Bound b) noexcept;

/// The work of one kernel before efficiencies: what a Tier-2 fit needs to re-price it.
struct KernelWork {
  double compute_ideal_s = 0;  ///< at 100% of dense peak, after tile and wave quantization
  double memory_ideal_s = 0;   ///< at 100% of datasheet bandwidth
  double units = 1;            ///< parallel work: output tiles, attention blocks, ...
  int kernels = 1;
  double groups = 0;  ///< problems of a grouped kernel (experts with tokens), else 0
  double blocks = 0;  ///< decode attention's (sequence, KV head) thread blocks, else 0
};

/// Time and work of one op (or of `count` identical ops, summed).
struct OpCost {
  std::string name;  ///< breakdown group: qkv_proj, attention, o_proj, mlp, ...
  Flops flops;
  Bytes bytes;
  Seconds time;
  Bound bound = Bound::memory;
  int kernels = 0;  ///< kernel launches included in `time`
  int tier = 0;     ///< 2 when a Tier-2 fit of this GPU and op class priced it, else 0
  /// Residual band of the op's model: the 80% interval is [time·e^p10, time·e^p90].
  double log_residual_p10 = 0;
  double log_residual_p90 = 0;
  bool outside_calibrated_range = false;  ///< Tier 2, but parallel work outside the fitted range
  double units = 0;  ///< parallel work units (output tiles, attention blocks, ...) of the op
  /// Priced as: op class and math type (the calibration key), and up to three kernels' work.
  OpClass op_class = OpClass::elementwise;
  CalibrationKey calibration_key;  ///< which fit (or Tier-0 band) priced it
  std::array<KernelWork, 3> parts{};
  int num_parts = 0;
};

/// Time of work under an efficiency: max(T_c / (η_c·u_c), T_m / (η_m·u_m)) + kernels · t_0.
double priced_time_s(const KernelWork& w, const Efficiency& e);

/// Tier-0 kernel-time constants: physics plus a few efficiencies taken from public measurements,
/// none fitted to flopcast's validation data. Every value is reported in a result's assumptions
/// (see tier0_assumptions) and documented in docs/model.md.
struct KernelModel {
  /// Achievable fraction of datasheet DRAM bandwidth for streaming kernels. STREAM-like copies and
  /// GEMV reach 85-92% of peak on A100/H100 (NVIDIA's bandwidthTest; Jia et al., "Dissecting the
  /// NVIDIA Volta/Ampere GPU architecture", 2018/2021).
  double hbm_efficiency = 0.85;
  /// Best fraction of the dense tensor-core peak a large, tile-aligned cuBLAS GEMM sustains
  /// (about 0.75-0.9 on A100 and H100 in cuBLAS and CUTLASS profiler reports).
  double gemm_efficiency = 0.80;
  /// Fraction of dense peak the fused (Flash) attention kernel sustains on long sequences:
  /// FlashAttention-2 forward reaches 50-73% on A100 (Dao, 2023).
  double attention_efficiency = 0.60;
  /// Fixed cost per kernel: launch gap under CUDA graphs plus ramp-up and tail (~2 us).
  double kernel_overhead_s = 2e-6;
  /// Achievable fraction of the per-direction scale-up bandwidth in a ring all-reduce
  /// (nccl-tests bus bandwidth: ~360-380 of 450 GB/s on H100 NVLink4).
  double link_efficiency = 0.80;
  /// GEMM output tile: m rounds up to a power of two in [min_tile_m, max_tile_m], n to tile_n.
  int min_tile_m = 16;
  int max_tile_m = 128;
  /// Past max_tile_m, m rounds up to this many rows, not to a whole tile. TensorRT-LLM 1.3's
  /// fp8/bf16/nvfp4 GEMMs on H200, B200, GB200 and B300 take 1.00-1.06x the time at m = 129 as at
  /// 128 (../shared aiconfigurator tables); a whole-tile rounding prices them 1.5x.
  int row_step = 32;
  int tile_n = 128;
  /// Query rows per attention thread block.
  int attention_block = 128;
  /// Paged-KV block: decode attention reads whole pages, so a sequence's KV read is its context
  /// rounded up to this many tokens (vLLM 16; TensorRT-LLM's tokens_per_block default 64).
  int kv_page_tokens = 16;
  /// Use the hardware's Tier-2 fits where it has them (false: Tier 0 everywhere).
  bool use_calibration = true;
  /// With use_calibration: only the attention kernels take their Tier-2 fit (the measured
  /// efficiency against work, which rises with sequence length); GEMMs, elementwise ops and
  /// collectives stay at Tier 0. Training sets it: left one source out, the measured attention
  /// fits beat Tier-0 attention on every training source, the GEMM fits do not (docs/model.md).
  bool calibrated_attention_only = false;
  /// Price an fp8 GEMM at most at the 16-bit time of the same shape and tier (gemm_op). True in
  /// training, where Transformer Engine prices its activation casts as separate kernels and
  /// cuBLASLt picks the faster path; false for the inference engines, whose measured fp8 GEMMs
  /// (quantization included) are slower than bf16 on small shapes (docs/model.md).
  bool fp8_gemm_at_most_16bit = false;
  /// Whose kernels to price with: that framework's Tier-2 fit where the GPU has one, else the
  /// fit pooled over frameworks (set from the request's engine).
  Framework framework = Framework::any;
  /// Fixed cost per kernel inside the serving engine, replacing the measured or Tier-0 one: an
  /// engine replaying CUDA graphs hides most of the launch and ramp cost that an isolated kernel
  /// benchmark includes (Tier 1, fitted per engine). None: the kernels' own.
  std::optional<double> engine_kernel_fixed_s;
  /// Tensor-parallel all-reduces inside one NVLink node up to this many bytes run the engine's
  /// own one-kernel all-reduce (vLLM's and SGLang's custom all-reduce: each rank reads its peers'
  /// peer-mapped buffers after one barrier, no NCCL ring), priced by the one-barrier Tier-0 form
  /// instead of the fitted NCCL fabric (collective.hpp, all_reduce_op). 0: NCCL for every size.
  double custom_all_reduce_max_bytes = 0;
  /// Residual bands of Tier 0 per op class (from validation), for hardware without a fit.
  const Calibration* tier0_residuals = nullptr;

  /// Tier-0 efficiency of an op class: these constants, no fitted parameters.
  [[nodiscard]] Efficiency tier0(OpClass c) const;
};

/// The best fraction of the dense peak this GPU's 16-bit GEMMs reach in its kernel measurements
/// (the compute efficiency of its pooled Tier-2 gemm/bf16 fit, gemm/fp16 without one), capped at
/// `tier0`; `tier0` where the GPU has neither fit. B200 and GB200 measure 0.71 and 0.69 where the
/// Tier-0 constant is 0.8 (H100 0.80, A100 0.82: capped).
double measured_gemm_ceiling(const HardwareSpec& hw, double tier0);

/// Element sizes of one op's operands.
struct GemmTypes {
  DType math;           ///< tensor-core type the multiply runs in (bf16, fp16, fp8)
  double weight_bytes;  ///< per weight element, including quantization scales
  double input_bytes;   ///< per activation element read
  double output_bytes;  ///< per output element written
  /// Kernel family for calibration when the types alone do not tell it (block-scaled fp8);
  /// weight-only GEMMs are recognized from the bytes.
  KernelVariant variant = KernelVariant::plain;
};

/// GEMM of an [m x k] activation by a [k x n] weight, repeated `count` times in one grouped kernel
/// (e.g. one per expert). compute = 2mnk / (peak · gemm_efficiency · tile_eff · wave_eff), where
/// tile_eff = mn / padded mn and wave_eff = tiles / (waves · SMs) when there are at least as many
/// tiles as SMs (fewer tiles are assumed to be spread by split-K); memory = (nk·w + mk·a + mn·o) /
/// (BW · hbm_efficiency); time = count · max(compute, memory) + kernel overhead.
OpCost gemm_op(const std::string& name, const HardwareSpec& hw, const KernelModel& km, double m,
               double n, double k, const GemmTypes& types, double count = 1);

/// Expected number of distinct experts `tokens` tokens touch when each picks `topk` of `experts`
/// uniformly: E · (1 − (1 − k/E)^T).
double expected_distinct_experts(double experts, double topk, double tokens);

/// Expert FFNs of one MoE layer on this GPU: the router GEMM [T × h]·[h × E] (16-bit weights),
/// then gate/up and down as grouped GEMMs over the distinct experts touched, each with
/// T·k / touched rows. `inter` is one expert's FFN width on this GPU. Under expert parallelism
/// the experts are split into `expert_groups` groups of whole experts (one per GPU group), so
/// this GPU runs touched / expert_groups of the problems, each still with T·k / touched rows.
/// `redundant_experts` extra slots (replicas of busy experts) spread the tokens over E + r
/// problems, touched as E + r distinct experts would be; the router still scores E.
OpCost moe_experts_op(const HardwareSpec& hw, const KernelModel& km, double tokens, double hidden,
                      double inter, int experts, int topk, bool gated, const GemmTypes& linear,
                      const GemmTypes& router, int expert_groups = 1, int redundant_experts = 0);

/// Shapes of one layer's attention on one GPU.
struct AttentionDims {
  double heads = 0;     ///< query heads
  double kv_heads = 0;  ///< cached KV heads (MLA: one latent shared by every head)
  double qk_dim = 0;    ///< per head, of q·kᵀ
  double v_dim = 0;     ///< per head, of the values
  double kv_elems = 0;  ///< cached elements per KV head and token: 2·d (K and V); MLA r_kv + d_rope
  int window_tokens = 0;  ///< local attention (0: full causal); DSA: the top-k each query attends
  LocalAttention local = LocalAttention::sliding;
  /// DeepSeek sparse attention's lightning indexer (0 heads: none): index_heads heads of index_dim
  /// score every cached token in fp8 (the window is then the top-k, not a cut of the KV cache);
  /// index_bytes of index key cached per token (fp8 and its scale).
  double index_heads = 0;
  double index_dim = 0;
  double index_bytes = 0;

  /// Standard multi-, grouped- or multi-query attention with head dimension d, full causal.
  static AttentionDims standard(double heads, double kv_heads, double head_dim) {
    return AttentionDims{heads, kv_heads, head_dim, head_dim, 2 * head_dim};
  }
};

/// The types of an attention kernel: the math type, and the bytes per element of Q and O (the
/// activations) and of the KV cache.
struct AttentionTypes {
  DType math = DType::bf16;
  double activation_bytes = 2;
  double kv_bytes = 2;
};

/// Causal fused attention over `batch` sequences of `seq` new tokens each, after `cached` tokens
/// already in the KV cache (a prefix-cache hit or the earlier chunks of a chunked prefill).
/// FLOPs = 2·Hq·(d_qk + d_v)·P per sequence, P = attended_pairs(cached, s, window) (s(s+1)/2 for
/// full attention without a cache: QKᵀ and PV over the causal triangle; s·c + s(s+1)/2 after c
/// cached tokens); bytes = Q and O (activation type) + the new tokens' KV written to the cache +
/// the cached KV the new tokens attend to, read once. Query tiles cover the new tokens only: a
/// few new tokens over a long cache fill a fraction of each tile. With DSA's indexer
/// (a.index_heads > 0) the op also holds the indexer's scoring of every causal pair
/// (2·H_I·d_I FLOPs each, at the fp8 peak where the GPU has one), its fp32 logits written and
/// read once by the top-k, and the index keys read and written.
OpCost attention_prefill_op(const HardwareSpec& hw, const KernelModel& km, double batch, double seq,
                            const AttentionDims& a, const AttentionTypes& types, double cached = 0);
/// One decode step of attention: `batch` sequences, each one query token over `context` cached
/// tokens, of which it attends to c' = attended_context(context, window). FLOPs = 2·c'·Hq·(d_qk +
/// d_v) per sequence; bytes = the KV cache read, in whole KV pages (ceil(c'/page)·page·Hkv·kv_elems
/// ·kv), + Q and O. With DSA's indexer the op also scores every cached token: its index keys read
/// (a.index_bytes each), 2·H_I·d_I FLOPs, a logit written and read.
OpCost attention_decode_op(const HardwareSpec& hw, const KernelModel& km, double batch,
                           double context, const AttentionDims& a, const AttentionTypes& types);
/// A bandwidth-bound op (norms, residual adds, rotary, activation function, embedding lookup):
/// time = bytes / (BW · hbm_efficiency) + kernels · kernel overhead.
OpCost memory_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Flops flops,
                 Bytes bytes, int kernels);

}  // namespace flopcast
