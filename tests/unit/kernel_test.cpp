// SPDX-License-Identifier: MIT
// Roofline kernel times against hand derivations (label: unit).
#include "flopcast/kernel.hpp"

#include <gtest/gtest.h>

#include "flopcast/collective.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using test::near_rel;

HardwareSpec hw(const char* id) { return io::resolve_hardware(io::json(id), "hardware"); }

const GemmTypes kBf16{DType::bf16, 2, 2, 2};

// These derivations are of the Tier-0 physics: no Tier-2 fit may price the ops.
KernelModel tier0() {
  KernelModel km;
  km.use_calibration = false;
  return km;
}

TEST(Gemm, Fp8NeverSlowerThanBf16OfTheSameShape) {
  // Tier 2 on H100 (presets/calibration/h100-sxm.json). m = 16, n = k = 512: one 16 x 128 tile
  // row, 4 tiles. bf16: bytes 512·512·2 + 16·512·2 + 16·512·2 = 557,056 B; memory
  // 557,056 / (3350e9 · 0.865656 · 4/(4 + 2.12771)) = 0.2943 us, compute 2·16·512·512 /
  // (989.4e12 · (16·512)/(16·512)) / (0.789262 · 4/(4 + 9.92481)) = 0.0374 us; + 3.0412 us
  // fixed = 3.3355 us. fp8 alone: > 7.04 us (7.03658 us fixed), so it is capped at bf16's.
  KernelModel km;
  km.fp8_gemm_at_most_16bit = true;  // as training sets it
  const HardwareSpec h100 = hw("h100-sxm");
  const GemmTypes fp8{DType::fp8, 1, 1, 2};
  const OpCost small8 = gemm_op("x", h100, km, 16, 512, 512, fp8);
  const OpCost small16 = gemm_op("x", h100, km, 16, 512, 512, kBf16);
  EXPECT_EQ(small8.tier, 2);
  EXPECT_TRUE(near_rel(small16.time.value, 3.3355e-6, 0.002));
  EXPECT_DOUBLE_EQ(small8.time.value, small16.time.value);
  // Inference engines keep their measured fp8 GEMMs (quantization included): not capped.
  EXPECT_GT(gemm_op("x", h100, KernelModel{}, 16, 512, 512, fp8).time.value,
            1.5 * small16.time.value);
  // m = n = k = 8192: 4096 tiles on 132 SMs, wave efficiency 4096/(32·132) = 0.969697.
  // bf16: 1.09951e12 / (989.4e12 · 0.969697) / (0.789262 · 4096/(4096 + 9.92481)) + 3.0412 us
  // = 1.45855 ms; fp8: 1.09951e12 / (1978.9e12 · 0.969697) / (0.554713 · 4096/(4096 + 61.9031))
  // + 7.03658 us = 1.05557 ms: ratio 1.382 (cuBLAS measures 1.6-1.9x; the fit is the data's).
  const OpCost big8 = gemm_op("x", h100, km, 8192, 8192, 8192, fp8);
  const OpCost big16 = gemm_op("x", h100, km, 8192, 8192, 8192, kBf16);
  EXPECT_TRUE(near_rel(big16.time.value, 1.45855e-3, 0.002));
  EXPECT_TRUE(near_rel(big8.time.value, 1.05557e-3, 0.002));
  // Tier 0: fp8 at twice the peak, the cap never binds on a compute-bound shape (ratio ≈ 2).
  KernelModel km0 = tier0();
  km0.fp8_gemm_at_most_16bit = true;
  EXPECT_LT(gemm_op("x", h100, km0, 8192, 8192, 8192, fp8).time.value,
            0.51 * gemm_op("x", h100, tier0(), 8192, 8192, 8192, kBf16).time.value);
}

TEST(Gemm, DecodeGemvIsMemoryBound) {
  // A100: 2039 GB/s · 0.85 = 1733.15 GB/s achievable.
  // bytes = 4096·4096·2 (weights) + 4096·2 (in) + 4096·2 (out) = 33,570,816 B
  // t = 33,570,816 / 1.73315e12 = 19.3698 us, + 2 us kernel overhead = 21.3698 us.
  const OpCost op = gemm_op("x", hw("a100-sxm-80g"), tier0(), 1, 4096, 4096, kBf16);
  EXPECT_EQ(op.bound, Bound::memory);
  EXPECT_TRUE(near_rel(op.time.value, 21.3698e-6, 1e-4));
  EXPECT_TRUE(near_rel(op.flops.value, 2.0 * 4096 * 4096, 1e-12));
}

TEST(Gemm, LargeSquareIsComputeBoundWithWaveQuantization) {
  // m = n = k = 4096 on A100 (108 SMs): 128x128 tiles -> 32·32 = 1024 tiles, ceil(1024/108) = 10
  // waves, wave efficiency 1024/1080 = 0.948148. Sustained = 312e12 · 0.8 · 0.948148 =
  // 236.658e12 FLOP/s; FLOPs = 2·4096³ = 1.37439e11 -> 580.749 us, + 2 us = 582.749 us.
  const OpCost op = gemm_op("x", hw("a100-sxm-80g"), tier0(), 4096, 4096, 4096, kBf16);
  EXPECT_EQ(op.bound, Bound::compute);
  EXPECT_TRUE(near_rel(op.time.value, 582.749e-6, 1e-4));
}

TEST(Gemm, PastTheTileMRoundsToThirtyTwoRowsAndItsTilesStillFillWaves) {
  // m = 4096 + 64 = 4160, a multiple of 32: no padded rows (a whole 128-row tile would pad to
  // 4224), but the 33rd row of tiles still takes SMs: tiles = 33·32 = 1056, waves =
  // ceil(1056/108) = 10, wave eff = 1056/1080 = 0.977778. FLOPs = 2·4160·4096·4096 =
  // 1.395864e11; sustained = 312e12·0.8·0.977778 = 244.053e12 -> 571.955 us + 2 us.
  const OpCost op = gemm_op("x", hw("a100-sxm-80g"), tier0(), 4160, 4096, 4096, kBf16);
  EXPECT_TRUE(near_rel(op.time.value, 573.955e-6, 1e-4));
}

TEST(Gemm, OneRowPastTheTileCostsThirtyTwoRowsNotATile) {
  // A100 bf16 (312 TFLOP/s, 108 SMs), n = k = 16384. m = 256: 2·128 = 256 tiles, ceil(256/108)
  // = 3 waves, wave eff 256/324 = 0.790123; 2·256·16384² = 1.374390e11 FLOP at
  // 312e12·0.8·0.790123 = 197.215e12 FLOP/s -> 696.893 us + 2 us. m = 129 pads to 160 rows, not
  // 256: the same 256 tiles, the work of 160 rows, 2·160·16384² / 197.215e12 = 435.558 us + 2 us;
  // compute-bound (its bytes 16384²·2 + 2·129·16384·2 = 545,325,056 at 2039e9·0.85 take
  // 314.6 us). TensorRT-LLM 1.3's GEMMs take 1.00-1.06x at m = 129 what they take at 128.
  const OpCost full = gemm_op("x", hw("a100-sxm-80g"), tier0(), 256, 16384, 16384, kBf16);
  const OpCost over = gemm_op("x", hw("a100-sxm-80g"), tier0(), 129, 16384, 16384, kBf16);
  const OpCost step = gemm_op("x", hw("a100-sxm-80g"), tier0(), 160, 16384, 16384, kBf16);
  EXPECT_TRUE(near_rel(full.time.value, 698.893e-6, 1e-4));
  EXPECT_EQ(over.bound, Bound::compute);
  EXPECT_TRUE(near_rel(over.time.value, 437.558e-6, 1e-4));
  EXPECT_DOUBLE_EQ(over.time.value, step.time.value);
}

TEST(Gemm, Fp8UsesTheFp8PeakAndHalvesWeightBytes) {
  // H100 fp8 dense peak 1978.9 TFLOP/s. m = n = k = 8192: tiles 64·64 = 4096 over 132 SMs ->
  // 32 waves, eff 4096/4224 = 0.969697; sustained = 1978.9e12·0.8·0.969697 = 1535.15e12;
  // FLOPs 2·8192³ = 1.09951e12 -> 716.225 us + 2 us.
  const GemmTypes fp8{DType::fp8, 1, 1, 2};
  const OpCost op = gemm_op("x", hw("h100-sxm"), tier0(), 8192, 8192, 8192, fp8);
  EXPECT_EQ(op.bound, Bound::compute);
  EXPECT_TRUE(near_rel(op.time.value, 718.225e-6, 1e-4));
}

TEST(Gemm, PowerLimitLowersTheSustainedClockByItsCubeRoot) {
  // The same 8192³ fp8 GEMM on an H100 limited to 500 of its 700 W: the clock, and with it the
  // compute time's rate, scales by (500/700)^(1/3) = 0.893904, so the compute part
  // 716.225 us / 0.893904 = 801.234 us, + 2 us. A memory-bound GEMV does not move.
  HardwareSpec capped = hw("h100-sxm");
  capped.power_limit_W = 500;
  EXPECT_TRUE(near_rel(capped.power_clock_factor(), 0.893904, 1e-5));
  const GemmTypes fp8{DType::fp8, 1, 1, 2};
  const OpCost op = gemm_op("x", capped, tier0(), 8192, 8192, 8192, fp8);
  EXPECT_TRUE(near_rel(op.time.value, 803.234e-6, 1e-4));
  const OpCost gemv = gemm_op("x", capped, tier0(), 1, 4096, 4096, kBf16);
  const OpCost gemv_full = gemm_op("x", hw("h100-sxm"), tier0(), 1, 4096, 4096, kBf16);
  EXPECT_EQ(gemv.bound, Bound::memory);
  EXPECT_DOUBLE_EQ(gemv.time.value, gemv_full.time.value);
  // At or above the TDP nothing changes.
  capped.power_limit_W = 700;
  EXPECT_DOUBLE_EQ(capped.power_clock_factor(), 1.0);
}

TEST(Attention, DecodeReadsTheWholeKvCache) {
  // Llama-2-7B layer, batch 1, context 4096, 32 heads (MHA), d = 128, bf16 KV, A100:
  // bytes = 128·(2·4096·32·2 + 2·32·2) = 67,125,248 B -> / 1.73315e12 = 38.7302 us, + 2 us.
  const OpCost op =
      attention_decode_op(hw("a100-sxm-80g"), tier0(), 1, 4096,
                          AttentionDims::standard(32, 32, 128), AttentionTypes{DType::bf16, 2, 2});
  EXPECT_EQ(op.bound, Bound::memory);
  EXPECT_TRUE(near_rel(op.time.value, 40.7302e-6, 1e-4));
  EXPECT_TRUE(near_rel(op.flops.value, 4.0 * 4096 * 128 * 32, 1e-12));
}

TEST(Attention, ManyShortSequencesAreBlockBound) {
  // Decode attention runs one thread block per (sequence, KV head): batch 2048 on 8 KV heads is
  // 16,384 blocks whatever the context. The op records them for the per-block term.
  const OpCost op =
      attention_decode_op(hw("h200-sxm"), tier0(), 2048, 8, AttentionDims::standard(32, 8, 128),
                          AttentionTypes{DType::bf16, 2, 2});
  EXPECT_DOUBLE_EQ(op.parts[0].blocks, 2048.0 * 8);
  // Its kernel family: grouped-query here; multi-head and an 8-bit KV cache have their own fits.
  EXPECT_EQ(op.calibration_key.variant, KernelVariant::plain);
  const AttentionDims mha = AttentionDims::standard(32, 32, 128);
  EXPECT_EQ(
      attention_decode_op(hw("h200-sxm"), tier0(), 8, 8, mha, AttentionTypes{DType::bf16, 2, 2})
          .calibration_key.variant,
      KernelVariant::mha);
  EXPECT_EQ(
      attention_decode_op(hw("h200-sxm"), tier0(), 8, 8, mha, AttentionTypes{DType::bf16, 2, 1})
          .calibration_key.variant,
      KernelVariant::kv8);
  // The term (calibration.hpp): t = max(T_c/η_c, hypot(T_m/η_m, B·t_b)) + t_0. With an H200-like
  // fit (η_m 0.9, t_b 36 ns, t_0 6 us), the 67.1 MB of KV that aiconfigurator's row reads
  // (2048·8 tokens·8 heads·128·2·2 B) at 4.8 TB/s: T_m = 14 us -> 15.556 us; B·t_b = 16,384·36 ns
  // = 589.824 us; hypot = 590.029 us, + 6 us = 596.03 us (measured: 598.7 us, TensorRT-LLM).
  const Efficiency e{0.6, 0, 0.9, 0, 6e-6, 0, 36e-9};
  KernelWork w{1e-6, 14e-6, 1, 1, 0, 16384};
  EXPECT_TRUE(near_rel(priced_time_s(w, e), 596.029e-6, 1e-5));
  // Long contexts: batch 64 on 8 KV heads at 4096 tokens read 1.0737 GB per layer, T_m =
  // 223.7 us at 4.8 TB/s -> 248.55 us at 0.9; B·t_b = 512·36 ns = 18.432 us; hypot = 249.23 us,
  // + 6 = 255.23 us: bandwidth-bound, the blocks add 0.3 %.
  w = KernelWork{1e-6, 223.696e-6, 1, 1, 0, 512};
  EXPECT_TRUE(near_rel(priced_time_s(w, e), 255.23e-6, 1e-4));
  // Without a per-block time (Tier 0, every other op class) the term is exactly the memory time.
  w.blocks = 0;
  const Efficiency t0{0.6, 0, 0.9, 0, 6e-6, 0, 0};
  EXPECT_DOUBLE_EQ(priced_time_s(w, t0), 223.696e-6 / 0.9 + 6e-6);
}

TEST(Attention, PrefillIsCausal) {
  // FLOPs = 2·d·Hq·s·(s+1) = 2·128·32·4096·4097 = 1.37473e11 for one sequence of 4096.
  // Tiles: 32 blocks · 32 heads = 1024 on 108 SMs -> wave eff 0.948148; sustained =
  // 312e12·0.6·0.948148 = 177.493e12 -> 774.52 us + 2 us.
  const OpCost op =
      attention_prefill_op(hw("a100-sxm-80g"), tier0(), 1, 4096,
                           AttentionDims::standard(32, 32, 128), AttentionTypes{DType::bf16, 2, 2});
  EXPECT_EQ(op.bound, Bound::compute);
  EXPECT_TRUE(near_rel(op.flops.value, 1.37473e11, 1e-5));
  EXPECT_TRUE(near_rel(op.time.value, 776.52e-6, 1e-4));
}

TEST(Attention, PrefillAfterCachedTokens) {
  // 2 new tokens after 592 cached (a prefix-cache hit), 32 heads of 128 on an A100:
  // pairs = 2·592 + 2·3/2 = 1187; FLOPs = 2·32·(128 + 128)·1187 = 1.94478e7. One query tile of
  // 128 rows holds the 2 tokens (tile eff 2/128), 32 tiles on 108 SMs (occupancy 32/108):
  // 1.94478e7 / (312e12 · 0.015625 · 0.296296) = 13.464 us of compute, / 0.6 = 22.440 us, + 2 us.
  // Bytes: Q, O and the new KV (2·32·256·2·2 = 65,536) + the cached KV read once
  // (592·32·256·2 = 9,699,328): 4.8 us at 2,039 GB/s · 0.85, below the compute time.
  const OpCost op =
      attention_prefill_op(hw("a100-sxm-80g"), tier0(), 1, 2, AttentionDims::standard(32, 32, 128),
                           AttentionTypes{DType::bf16, 2, 2}, 592);
  EXPECT_EQ(op.bound, Bound::compute);
  EXPECT_TRUE(near_rel(op.flops.value, 1.94478e7, 1e-5));
  EXPECT_TRUE(near_rel(op.bytes.value, 9764864, 1e-9));
  EXPECT_TRUE(near_rel(op.time.value, 24.440e-6, 1e-4));
}

TEST(Collective, RingAllReduceAlphaBeta) {
  // H100 NVLink4: 450 GB/s per direction · 0.8 = 360 GB/s; 8 µs latency.
  // 64 MB over 8 ranks: 8e-6 + 2·7/8·64e6 / 360e9 = 8 us + 311.111 us = 319.111 us.
  const OpCost op = all_reduce_op("ar", hw("h100-sxm"), tier0(), Bytes(64e6), 8);
  EXPECT_EQ(op.bound, Bound::communication);
  EXPECT_TRUE(near_rel(op.time.value, 319.111e-6, 1e-5));
  // One rank communicates nothing.
  EXPECT_EQ(all_reduce_op("ar", hw("h100-sxm"), tier0(), Bytes(64e6), 1).time.value, 0.0);
}

TEST(Collective, AllGatherMovesHalfTheAllReduceTraffic) {
  // 8e-6 + 7/8 · 64e6 / 360e9 = 8 us + 155.556 us.
  const OpCost op = all_gather_op("ag", hw("h100-sxm"), tier0(), Bytes(64e6), 8);
  EXPECT_TRUE(near_rel(op.time.value, 163.556e-6, 1e-5));
}

TEST(Kernel, MissingPeakIsAnExplicitError) {
  // V100 has no bf16 tensor cores: asking for bf16 math must not guess.
  EXPECT_THROW(gemm_op("x", hw("v100-sxm"), tier0(), 1, 1, 1, kBf16), SpecError);
}

}  // namespace
}  // namespace flopcast
