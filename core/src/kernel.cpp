// SPDX-License-Identifier: MIT
#include "flopcast/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "flopcast/error.hpp"

namespace flopcast {
namespace {

double round_up(double x, double multiple) { return std::ceil(x / multiple) * multiple; }

double pow2_tile(double m, int lo, int hi) {
  double tile = lo;
  while (tile < m && tile < hi) tile *= 2;
  return tile;
}

/// The dense peak of `math` at the sustained clock (a power limit lowers it).
FlopsPerSecond peak_or_throw(const HardwareSpec& hw, DType math) {
  auto peak = hw.peak(math);
  if (!peak) {
    throw NotModelledError("precision", std::string("the hardware has no dense ") +
                                            std::string(to_string(math)) +
                                            " peak (hardware.dense_peak_TFLOPS." +
                                            std::string(to_string(math)) + " is missing)");
  }
  return FlopsPerSecond(peak->value * hw.power_clock_factor());
}

/// Fraction of the SMs busy in the last wave, averaged: tiles / (waves · SMs). Fewer tiles than
/// SMs are assumed spread by split-K / stream-K, so they do not count as a partial wave.
double wave_efficiency(double tiles, int num_sms) {
  if (tiles < num_sms) return 1.0;
  const double waves = std::ceil(tiles / num_sms);
  return tiles / (waves * num_sms);
}

/// The work of one op before efficiencies: times at 100% of peak and bandwidth.
struct Work {
  Flops flops;
  Bytes bytes;
  Seconds compute_ideal;  // after tile and wave quantization
  Seconds memory_ideal;
  double units = 1;  // parallel work: output tiles, attention blocks, ...
  int kernels = 1;
  double groups = 0;  // problems of a grouped kernel
  double blocks = 0;  // thread blocks with a minimum lifetime (decode attention)
};

double utilization(double units, double half_units) {
  return half_units > 0 ? units / (units + half_units) : 1.0;
}

/// The compute and the memory time of work under an efficiency, before the fixed cost.
std::pair<double, double> compute_memory_s(const KernelWork& w, const Efficiency& e) {
  return {w.compute_ideal_s / (e.compute * utilization(w.units, e.compute_half_units)),
          w.memory_ideal_s / (e.memory * utilization(w.units, e.memory_half_units))};
}

}  // namespace

double priced_time_s(const KernelWork& w, const Efficiency& e) {
  const auto [compute, memory] = compute_memory_s(w, e);
  // Bytes and blocks as a 2-norm (calibration.hpp); sqrt, not std::hypot, whose last bit differs
  // between glibc and the WebAssembly libc.
  const double blocks = w.blocks * e.block_s;
  const double streamed = blocks > 0 ? std::sqrt(memory * memory + blocks * blocks) : memory;
  return std::max(compute, streamed) + w.kernels * e.fixed_s + w.groups * e.group_s;
}

namespace {

/// Prices work with the Tier-2 fit of (op class, math type) when the hardware has one, else with
/// the Tier-0 constants.
/// `tier0_compute`: the fit's memory side describes the kernel, its compute side does not (MLA's
/// decode; attention_decode_op).
OpCost apply(std::string name, const Work& w, const HardwareSpec& hw, const KernelModel& km,
             OpClass cls, DType math, KernelVariant variant = KernelVariant::plain,
             bool tier0_compute = false) {
  OpCost op;
  op.name = std::move(name);
  op.flops = w.flops;
  op.bytes = w.bytes;
  op.kernels = w.kernels;
  op.units = w.units;
  op.op_class = cls;
  op.calibration_key = CalibrationKey{cls, math, variant, km.framework};
  op.parts[0] = KernelWork{
      w.compute_ideal.value, w.memory_ideal.value, w.units, w.kernels, w.groups, w.blocks};
  op.num_parts = 1;
  Efficiency e = km.tier0(cls);
  const bool calibrated = km.use_calibration && hw.calibration &&
                          (!km.calibrated_attention_only || cls == OpClass::attention_prefill);
  const CalibratedEfficiency* fit =
      calibrated ? hw.calibration->find_for(op.calibration_key) : nullptr;
  // Block-scaled FP8 where this GPU's tables measured none: the per-tensor kernels' fit, the
  // nearest measured kernels (the same math, a scale per block instead of per tensor).
  if (calibrated && !fit && variant == KernelVariant::block_scaled) {
    op.calibration_key.variant = KernelVariant::plain;
    fit = hw.calibration->find_for(op.calibration_key);
  }
  if (fit) {
    e = fit->efficiency;
    op.tier = 2;
    op.log_residual_p10 = fit->log_residual_p10;
    op.log_residual_p90 = fit->log_residual_p90;
    op.outside_calibrated_range = w.units < 0.5 * fit->min_units || w.units > 2 * fit->max_units;
    if (tier0_compute) {
      e.compute = km.tier0(cls).compute;
      e.compute_half_units = km.tier0(cls).compute_half_units;
    }
  } else if (km.tier0_residuals) {
    if (const CalibratedEfficiency* band = km.tier0_residuals->find_for(op.calibration_key)) {
      op.log_residual_p10 = band->log_residual_p10;
      op.log_residual_p90 = band->log_residual_p90;
    }
  }
  if (km.engine_kernel_fixed_s) e.fixed_s = *km.engine_kernel_fixed_s;
  const auto [compute, memory] = compute_memory_s(op.parts[0], e);
  op.bound = compute > memory ? Bound::compute : Bound::memory;
  op.time = Seconds(priced_time_s(op.parts[0], e));
  return op;
}

/// Weight-only quantized GEMMs (weights narrower than the activations they multiply) run other
/// kernels than plain ones: their own calibration key.
KernelVariant weight_variant(const GemmTypes& t) {
  if (t.variant != KernelVariant::plain) return t.variant;
  if (t.weight_bytes >= 0.75 * t.input_bytes) return KernelVariant::plain;
  return t.weight_bytes <= 0.6 ? KernelVariant::weight_int4 : KernelVariant::weight_int8;
}

Work gemm_work(const HardwareSpec& hw, const KernelModel& km, double m, double n, double k,
               const GemmTypes& types, double count) {
  const FlopsPerSecond peak = peak_or_throw(hw, types.math);
  const double tile_m =
      pow2_tile(m, hw.min_gemm_rows > 0 ? hw.min_gemm_rows : km.min_tile_m, km.max_tile_m);
  // Past the largest tile the libraries do not pad m to a whole tile: their autotuners pick
  // 64-row tiles, swap-AB configurations (m on the MMA's n side, steps of 8-32) and stream-K,
  // so m rounds to km.row_step there (docs/model.md, "GEMM").
  const double padded_m = round_up(m, m > tile_m ? km.row_step : tile_m);
  const double padded_n = round_up(n, km.tile_n);
  const double tile_eff = (m * n) / (padded_m * padded_n);
  const double tiles = std::ceil(padded_m / tile_m) * (padded_n / km.tile_n);
  Work w;
  w.flops = Flops(2 * m * n * k * count);
  w.bytes = Bytes(count * (n * k * types.weight_bytes + m * k * types.input_bytes +
                           m * n * types.output_bytes));
  w.compute_ideal = w.flops / (peak * (tile_eff * wave_efficiency(tiles, hw.num_sms)));
  w.memory_ideal = w.bytes / hw.hbm_bandwidth;
  w.units = tiles * count;
  return w;
}

}  // namespace

std::string_view to_string(Bound b) noexcept {
  switch (b) {
    case Bound::compute:
      return "compute";
    case Bound::memory:
      return "memory";
    case Bound::communication:
      return "communication";
    case Bound::overhead:
      return "overhead";
  }
  return "?";
}

Efficiency KernelModel::tier0(OpClass c) const {
  Efficiency e;
  e.compute = c == OpClass::attention_prefill || c == OpClass::attention_decode
                  ? attention_efficiency
                  : gemm_efficiency;
  e.memory = hbm_efficiency;
  e.fixed_s = kernel_overhead_s;
  return e;
}

OpCost gemm_op(const std::string& name, const HardwareSpec& hw, const KernelModel& km, double m,
               double n, double k, const GemmTypes& types, double count) {
  OpCost op = apply(name, gemm_work(hw, km, m, n, k, types, count), hw, km, OpClass::gemm,
                    types.math, weight_variant(types));
  // Training: an fp8 GEMM is never slower than the same shape in 16 bits (fp8 moves half the
  // bytes at twice the peak, and the activation casts are priced as their own kernels). The fp8
  // fits, pooled over inference engines whose fp8 GEMMs include quantization, have a larger
  // fixed cost and half-units than the bf16 ones and price small fp8 GEMMs above bf16: cap them
  // at the bf16 time of the same tier.
  if (km.fp8_gemm_at_most_16bit && types.math == DType::fp8) {
    const DType half = hw.peak(DType::bf16) ? DType::bf16 : DType::fp16;
    if (hw.peak(half)) {
      const GemmTypes t16{half, 2, 2, types.output_bytes};
      const OpCost ref = apply(name, gemm_work(hw, km, m, n, k, t16, count), hw, km, OpClass::gemm,
                               half, KernelVariant::plain);
      if (ref.tier == op.tier && ref.time < op.time) {
        op.time = ref.time;
        op.bound = ref.bound;
      }
    }
  }
  return op;
}

double expected_distinct_experts(double experts, double topk, double tokens) {
  return experts * (1.0 - std::pow(1.0 - topk / experts, tokens));
}

OpCost moe_experts_op(const HardwareSpec& hw, const KernelModel& km, double tokens, double hidden,
                      double inter, int experts, int topk, bool gated, const GemmTypes& linear,
                      const GemmTypes& router, int expert_groups, int redundant_experts) {
  const double touched_all =
      expected_distinct_experts(double(experts) + redundant_experts, topk, tokens);
  const double rows = tokens * topk / touched_all;
  const double touched = touched_all / expert_groups;  // this GPU's share of the problems
  const double up_width = gated ? 2 * inter : inter;
  // One fused op under the experts' key (their precision and kernel family), router included:
  // the measured fused-MoE kernels are fitted and looked up by the experts' precision.
  const DType math = linear.math;
  const KernelVariant variant = weight_variant(linear);
  OpCost moe = apply("moe_experts", gemm_work(hw, km, tokens, experts, hidden, router, 1), hw, km,
                     OpClass::moe, math, variant);
  // Each expert that receives tokens is one problem of the grouped gate+up and down kernels.
  Work up_work = gemm_work(hw, km, rows, up_width, hidden, linear, touched);
  Work down_work = gemm_work(hw, km, rows, hidden, inter, linear, touched);
  up_work.groups = down_work.groups = touched;
  const OpCost up = apply("moe_experts", up_work, hw, km, OpClass::moe, math, variant);
  const OpCost down = apply("moe_experts", down_work, hw, km, OpClass::moe, math, variant);
  for (const OpCost* part : {&up, &down}) {
    moe.flops += part->flops;
    moe.bytes += part->bytes;
    moe.time += part->time;
    moe.kernels += part->kernels;
  }
  moe.bound = up.time > down.time ? up.bound : down.bound;
  moe.units += up.units + down.units;
  moe.parts[1] = up.parts[0];
  moe.parts[2] = down.parts[0];
  moe.num_parts = 3;
  moe.tier = up.tier;
  moe.log_residual_p10 = up.log_residual_p10;
  moe.log_residual_p90 = up.log_residual_p90;
  moe.outside_calibrated_range = up.outside_calibrated_range || down.outside_calibrated_range;
  return moe;
}

namespace {

/// DSA's lightning indexer over `pairs` query-key pairs of `batch` sequences (DeepGEMM's
/// fp8_mqa_logits, then a top-k over the fp32 logits): 2·H_I·d_I FLOPs a pair at the fp8 peak
/// (the math type's where the GPU has none), the logits written and read (8 B a pair), and
/// `key_bytes` of index keys and queries.
struct Indexer {
  Flops flops;
  Bytes bytes;
  Seconds compute;
};
Indexer indexer_work(const HardwareSpec& hw, DType math, const AttentionDims& a, double batch,
                     double pairs, double key_bytes) {
  const FlopsPerSecond peak = peak_or_throw(hw, hw.peak(DType::fp8) ? DType::fp8 : math);
  const Flops flops(batch * 2 * a.index_heads * a.index_dim * pairs);
  return {flops, Bytes(batch * pairs * 8 + key_bytes), flops / peak};
}

}  // namespace

OpCost attention_prefill_op(const HardwareSpec& hw, const KernelModel& km, double batch, double seq,
                            const AttentionDims& a, const AttentionTypes& types, double cached) {
  const DType math = types.math;
  const double act_bytes = types.activation_bytes, kv_bytes = types.kv_bytes;
  const FlopsPerSecond peak = peak_or_throw(hw, math);
  const double blocks_per_head = std::ceil(seq / km.attention_block);
  const double tile_eff = seq / (blocks_per_head * km.attention_block);
  const double tiles = blocks_per_head * a.heads * batch;
  // No split-K in prefill attention: fewer blocks than SMs leave SMs idle.
  const double occupancy = wave_efficiency(tiles, hw.num_sms) * std::min(1.0, tiles / hw.num_sms);
  const double pairs = attended_pairs(cached, seq, a.window_tokens, a.local);
  // The cached tokens the new ones can see are read once per sequence (the window's share).
  const double cached_read =
      std::min(cached, attended_context(cached + seq, a.window_tokens, a.local));
  Work w;
  w.flops = Flops(batch * 2 * a.heads * (a.qk_dim + a.v_dim) * pairs);
  w.bytes =
      Bytes(batch * seq *
                (a.heads * (a.qk_dim + a.v_dim) * act_bytes + a.kv_heads * a.kv_elems * kv_bytes) +
            batch * cached_read * a.kv_heads * a.kv_elems * kv_bytes);
  w.compute_ideal = w.flops / (peak * (tile_eff * occupancy));
  if (a.index_heads > 0) {
    const Indexer idx =
        indexer_work(hw, math, a, batch, attended_pairs(cached, seq, 0, a.local),
                     batch * ((cached + seq) * a.index_bytes + seq * a.index_heads * a.index_dim));
    w.flops = w.flops + idx.flops;
    w.bytes = w.bytes + idx.bytes;
    w.compute_ideal = w.compute_ideal + idx.compute / (tile_eff * occupancy);
  }
  w.memory_ideal = w.bytes / hw.hbm_bandwidth;
  w.units = tiles;
  return apply("attention", w, hw, km, OpClass::attention_prefill, math);
}

OpCost attention_decode_op(const HardwareSpec& hw, const KernelModel& km, double batch,
                           double context, const AttentionDims& a, const AttentionTypes& types) {
  const DType math = types.math;
  const double act_bytes = types.activation_bytes, kv_bytes = types.kv_bytes;
  const FlopsPerSecond peak = peak_or_throw(hw, math);
  const double attended = attended_context(context, a.window_tokens, a.local);
  Work w;
  w.flops = Flops(batch * 2 * attended * a.heads * (a.qk_dim + a.v_dim));
  const double read_tokens = round_up(attended, km.kv_page_tokens);
  w.bytes = Bytes(batch * (read_tokens * a.kv_heads * a.kv_elems * kv_bytes +
                           a.heads * (a.qk_dim + a.v_dim) * act_bytes));
  w.compute_ideal = w.flops / peak;
  if (a.index_heads > 0) {
    const Indexer idx =
        indexer_work(hw, math, a, batch, context,
                     batch * (context * a.index_bytes + a.index_heads * a.index_dim));
    w.flops = w.flops + idx.flops;
    w.bytes = w.bytes + idx.bytes;
    w.compute_ideal = w.compute_ideal + idx.compute;
  }
  w.memory_ideal = w.bytes / hw.hbm_bandwidth;
  // Parallel work of split-KV (flash-decoding) kernels: sequences x KV heads x 256-token splits;
  // DSA's indexer splits the whole context the same way.
  w.units = batch * a.kv_heads * std::ceil(attended / 256) +
            (a.index_heads > 0 ? batch * std::ceil(context / 256) : 0);
  w.blocks = batch * a.kv_heads;
  // An 8-bit KV cache and multi-head attention each run their own decode kernels.
  const KernelVariant variant = kv_bytes <= 1           ? KernelVariant::kv8
                                : a.heads == a.kv_heads ? KernelVariant::mha
                                                        : KernelVariant::plain;
  // MLA's heads share one latent KV row (K and V in one r_kv + d_rope vector): its decode kernels
  // (FlashMLA, TensorRT-LLM's MLA generation kernel) tile 64 heads per MMA and run near their
  // compute peak, which the grouped-query kernels the fits measured (at most 32 query heads per
  // KV head, in small MMAs) do not show: they keep the fit's memory side and Tier 0's compute.
  const bool latent = a.kv_elems < a.qk_dim + a.v_dim;
  return apply("attention", w, hw, km, OpClass::attention_decode, math, variant, latent);
}

OpCost memory_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Flops flops,
                 Bytes bytes, int kernels) {
  // Elementwise math runs far below any peak; only its bytes matter.
  Work w;
  w.flops = flops;
  w.bytes = bytes;
  w.memory_ideal = bytes / hw.hbm_bandwidth;
  w.units = bytes.value / 16384;  // 16 KiB per thread block
  w.kernels = kernels;
  OpCost op = apply(std::move(name), w, hw, km, OpClass::elementwise, DType::bf16);
  op.bound = Bound::memory;
  return op;
}

double measured_gemm_ceiling(const HardwareSpec& hw, double tier0) {
  if (!hw.calibration) return tier0;
  for (DType t : {DType::bf16, DType::fp16}) {
    const CalibratedEfficiency* fit = hw.calibration->find(CalibrationKey{OpClass::gemm, t});
    if (fit) return std::min(tier0, fit->efficiency.compute);
  }
  return tier0;
}

}  // namespace flopcast
