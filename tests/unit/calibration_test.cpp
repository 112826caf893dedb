// SPDX-License-Identifier: MIT
// Tier-2 efficiency model and its fit (label: unit).
#include "flopcast/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/kernel.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using test::near_rel;

// The model of calibration.hpp on explicit ideal times and parallel work.
double model_s(const Efficiency& e, double compute_s, double memory_s, double units) {
  const double uc = units / (units + e.compute_half_units);
  const double um = units / (units + e.memory_half_units);
  return std::max(compute_s / (e.compute * uc), memory_s / (e.memory * um)) + e.fixed_s;
}

TEST(Calibration, FitRecoversKnownParameters) {
  // Synthetic kernels from a known efficiency: compute-bound ones (large compute time), memory-
  // bound ones, and small ones where the fixed cost and the half-units matter. Parallel work is
  // not proportional to the ideal times (else a half-unit term and the fixed cost would be
  // indistinguishable: T·(1 + r½/r) = T + const when T ∝ r).
  const Efficiency truth{0.62, 40, 0.78, 8, 5e-6};
  std::vector<double> compute, memory, units, measured;
  for (int i = 0; i < 200; ++i) {
    const double size = std::pow(1.06, i);  // 1 .. 1.1e5
    compute.push_back(1e-7 * size * (i % 2 ? 3 : 0.2));
    memory.push_back(1e-7 * size * (i % 2 ? 0.5 : 2));
    units.push_back(std::sqrt(size) * (1 + (i * 7) % 13));
    measured.push_back(model_s(truth, compute.back(), memory.back(), units.back()));
  }
  const Efficiency fit =
      fit_efficiency([&](const Efficiency& e,
                         std::size_t i) { return model_s(e, compute[i], memory[i], units[i]); },
                     measured, Efficiency{});
  EXPECT_TRUE(near_rel(fit.compute, truth.compute, 0.02));
  EXPECT_TRUE(near_rel(fit.memory, truth.memory, 0.02));
  EXPECT_TRUE(near_rel(fit.fixed_s, truth.fixed_s, 0.05));
  EXPECT_TRUE(near_rel(fit.compute_half_units, truth.compute_half_units, 0.1));
  EXPECT_TRUE(near_rel(fit.memory_half_units, truth.memory_half_units, 0.1));
}

TEST(Calibration, FitIsDeterministicAndCapsEfficiency) {
  // Measurements twice as fast as the datasheet allows cannot push efficiency past 1 (the
  // datasheet): the fit stops at the cap and leaves the rest of the error visible.
  std::vector<double> measured{0.5e-3, 1e-3, 2e-3};
  auto predict = [](const Efficiency& e, std::size_t i) { return 1e-3 * (i + 1) / e.memory; };
  const Efficiency a = fit_efficiency(predict, measured, Efficiency{});
  const Efficiency b = fit_efficiency(predict, measured, Efficiency{});
  EXPECT_EQ(a.memory, b.memory);
  EXPECT_DOUBLE_EQ(a.memory, 1.0);
}

TEST(Calibration, GroupedFitRecoversThePerProblemCost) {
  // A grouped kernel (fused MoE): memory-bound at 80 % of the datasheet, 4 us fixed, plus
  // 0.5 us per problem (expert that receives tokens). Problem counts 1..256 vary apart from the
  // bytes, so t_g is identifiable: e.g. 256 problems over 1 ms of ideal memory time is
  // 1e-3 / 0.8 + 4e-6 + 256 * 0.5e-6 = 1.382 ms.
  const Efficiency truth{1.0, 0, 0.8, 0, 4e-6, 0.5e-6};
  std::vector<double> memory, problems, measured;
  for (int i = 0; i < 120; ++i) {
    memory.push_back(1e-6 * std::pow(1.08, i));  // 1 us .. 9 ms
    problems.push_back(1 + (i * 37) % 256);
    measured.push_back(memory.back() / truth.memory + truth.fixed_s +
                       problems.back() * truth.group_s);
  }
  auto predict = [&](const Efficiency& e, std::size_t i) {
    return memory[i] / e.memory + e.fixed_s + problems[i] * e.group_s;
  };
  const Efficiency grouped = fit_efficiency(predict, measured, Efficiency{}, FitExtra::per_problem);
  EXPECT_TRUE(near_rel(grouped.group_s, 0.5e-6, 0.05));
  EXPECT_TRUE(near_rel(grouped.memory, 0.8, 0.02));
  // Not grouped: the per-problem cost stays at the start's (Tier 0: none).
  const Efficiency plain = fit_efficiency(predict, measured, Efficiency{}, FitExtra::none);
  EXPECT_EQ(plain.group_s, 0.0);
}

TEST(Calibration, PerBlockFitRecoversTheBlockTimeAndKeepsTheComputeSide) {
  // Decode attention (calibration.hpp): t = max(T_c/η_c, hypot(T_m/η_m, B·t_b)) + t_0 with η_m
  // 0.85, t_b 30 ns, t_0 5 us. Blocks 8..65,536 vary apart from the bytes, so t_b is
  // identifiable: e.g. 65,536 blocks over 10 us of ideal memory time is hypot(11.765, 1966.08)
  // + 5 = 1971.1 us. The compute side never binds (T_c is 1/100 of T_m): it is not fitted and
  // keeps the start's efficiency.
  const Efficiency truth{0.6, 0, 0.85, 0, 5e-6, 0, 30e-9};
  std::vector<KernelWork> work;
  std::vector<double> measured;
  for (int i = 0; i < 150; ++i) {
    const double memory = 1e-6 * std::pow(1.07, i);  // 1 us .. 23 ms
    const double blocks = std::pow(2.0, 3 + (i * 7) % 14);
    work.push_back(KernelWork{memory / 100, memory, 1e6, 1, 0, blocks});
    measured.push_back(priced_time_s(work.back(), truth));
  }
  auto predict = [&](const Efficiency& e, std::size_t i) { return priced_time_s(work[i], e); };
  Efficiency start;
  start.compute = 0.6;
  const Efficiency fit = fit_efficiency(predict, measured, start, FitExtra::per_block);
  EXPECT_TRUE(near_rel(fit.block_s, 30e-9, 0.03));
  EXPECT_TRUE(near_rel(fit.memory, 0.85, 0.02));
  EXPECT_TRUE(near_rel(fit.fixed_s, 5e-6, 0.05));
  EXPECT_EQ(fit.compute, 0.6);
  EXPECT_EQ(fit.compute_half_units, 0.0);
  EXPECT_EQ(fit.group_s, 0.0);
}

TEST(Calibration, GroupedDecodeFitFindsTheRateOfTheGroupsWork) {
  // Grouped-query decode kernels: the same bytes per KV head, but 2·group FLOPs per KV element,
  // so T_c / T_m grows with the group (here T_c = T_m · group / 100 at the dense peak). Truth:
  // η_c 0.08, η_m 0.85, t_0 4 us, no block time. Groups 1..4 stream (T_c/η_c = 0.5 T_m/η_m at
  // group 4: 4/100/0.08 = 0.5 vs 1/0.85 = 1.18), group 32 is compute-bound at 4.0 T_m against
  // 1.18. From the start's 0.6 the compute side never binds, so the loss is flat along it; the
  // fit must still find 0.08 and the 85 % the streaming rows reach.
  const Efficiency truth{0.08, 0, 0.85, 0, 4e-6, 0, 0};
  std::vector<KernelWork> work;
  std::vector<double> measured;
  for (int i = 0; i < 150; ++i) {
    const double memory = 1e-6 * std::pow(1.07, i);  // 1 us .. 23 ms
    const double group = std::pow(2.0, i % 6);       // 1 .. 32
    work.push_back(KernelWork{memory * group / 100, memory, 1e6, 1, 0, 0});
    measured.push_back(priced_time_s(work.back(), truth));
  }
  auto predict = [&](const Efficiency& e, std::size_t i) { return priced_time_s(work[i], e); };
  Efficiency start;
  start.compute = 0.6;
  const Efficiency fit = fit_efficiency(predict, measured, start, FitExtra::per_block_grouped);
  EXPECT_TRUE(near_rel(fit.compute, 0.08, 0.02));
  EXPECT_TRUE(near_rel(fit.memory, 0.85, 0.02));
  EXPECT_EQ(fit.compute_half_units, 0.0);
  // Held (multi-head kernels): the compute side stays the start's; the absolute loss follows the
  // streaming majority, so a group-32 row (i = 149: 149 % 6 = 5) is priced at its 1/0.85 streaming
  // time, 3.4x faster than its 4.0 T_m.
  const Efficiency held = fit_efficiency(predict, measured, start, FitExtra::per_block);
  EXPECT_EQ(held.compute, 0.6);
  EXPECT_TRUE(near_rel(predict(held, 149) / measured[149], (1 / 0.85) / 4.0, 0.05));
}

TEST(Calibration, PerBlockTimeReadsAsWrittenAndMustNotBeNegative) {
  // A fit's JSON carries block_us (microseconds) only where it has a per-block time.
  CalibratedEfficiency c;
  c.efficiency = Efficiency{0.6, 0, 0.77, 250, 6e-6, 0, 35.6e-9};
  c.log_residual_p10 = -0.2;
  c.log_residual_p90 = 0.3;
  const io::json fit = io::calibration_fit_to_json(c);
  EXPECT_TRUE(near_rel(fit.at("block_us").get<double>(), 0.0356, 1e-12));
  EXPECT_FALSE(fit.contains("group_us"));
  io::json doc{{"schema_version", 1},  {"id", "x"},
               {"name", "x"},          {"source", "test"},
               {"notes", "unit test"}, {"fits", {{"attn_decode/bf16", fit}}}};
  const Calibration read = io::read_calibration(doc, "calibration");
  const CalibratedEfficiency* back = read.find(*parse_calibration_key("attn_decode/bf16"));
  ASSERT_NE(back, nullptr);
  EXPECT_TRUE(near_rel(back->efficiency.block_s, 35.6e-9, 1e-12));
  doc["fits"]["attn_decode/bf16"]["block_us"] = -1;
  try {
    io::read_calibration(doc, "calibration");
    FAIL() << "a negative block_us must be rejected";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration.fits.attn_decode/bf16"), std::string::npos);
  }
}

TEST(Calibration, KeysReadAsTheyAreWritten) {
  // The calibration files' keys: op class / math type, with a suffix for the kernel family.
  for (const char* text :
       {"gemm/bf16", "gemm/bf16-w4", "gemm/bf16-w8", "gemm/fp8-block", "attn_decode/fp16",
        "attn_decode/bf16-mha", "moe/bf16", "elementwise/bf16"}) {
    const auto key = parse_calibration_key(text);
    ASSERT_TRUE(key) << text;
    EXPECT_EQ(to_string(*key), text);
  }
  EXPECT_EQ(parse_calibration_key("gemm/fp8-block")->variant, KernelVariant::block_scaled);
  for (const char* bad : {"gemm", "conv/bf16", "gemm/bf17", "gemm/bf16-w3", "/bf16"}) {
    EXPECT_FALSE(parse_calibration_key(bad)) << bad;
  }
}

TEST(Calibration, Tier2FitPricesTheOpAndTier0OtherwiseIsUnchanged) {
  HardwareSpec hw = io::resolve_hardware(io::json("a100-sxm-80g"), "hardware");
  hw.calibration = nullptr;
  const KernelModel km;
  const GemmTypes bf16{DType::bf16, 2, 2, 2};
  // Tier 0: the hand-derived 21.3698 us of kernel_test (GEMV 1x4096x4096 on A100).
  const OpCost t0 = gemm_op("x", hw, km, 1, 4096, 4096, bf16);
  EXPECT_EQ(t0.tier, 0);
  EXPECT_TRUE(near_rel(t0.time.value, 21.3698e-6, 1e-4));
  // Tier 2 with memory efficiency 0.7, half-units 0, fixed 4 us: 33,570,816 B / (2039e9 · 0.7)
  // = 23.5202 us + 4 us = 27.5202 us; the band is e^p10..e^p90 around it.
  auto cal = std::make_shared<Calibration>();
  CalibratedEfficiency fit;
  fit.efficiency = Efficiency{0.7, 0, 0.7, 0, 4e-6};
  fit.log_residual_p10 = -0.1;
  fit.log_residual_p90 = 0.2;
  fit.min_units = 1;
  fit.max_units = 1e5;
  cal->fits[CalibrationKey{OpClass::gemm, DType::bf16}] = fit;
  hw.calibration = cal;
  const OpCost t2 = gemm_op("x", hw, km, 1, 4096, 4096, bf16);
  EXPECT_EQ(t2.tier, 2);
  EXPECT_TRUE(near_rel(t2.time.value, 27.5202e-6, 1e-4));
  EXPECT_DOUBLE_EQ(t2.log_residual_p90, 0.2);
  EXPECT_FALSE(t2.outside_calibrated_range);
  // fp8 has no fit on this GPU (and no peak): still an explicit error, never a guess.
  EXPECT_THROW(gemm_op("x", hw, km, 1, 4096, 4096, GemmTypes{DType::fp8, 1, 1, 2}), SpecError);
}

TEST(Calibration, MlaDecodeKeepsTier0ComputeUnderAGroupedFit) {
  // A decode fit's compute efficiency describes grouped-query kernels; MLA's decode (FlashMLA:
  // 64 heads per MMA) keeps Tier 0's 60 % and the fit's memory side. Batch 64 at 4,096 tokens on
  // an H100 (989 TFLOP/s bf16, 3.35 TB/s): GQA with 32 query heads on one KV head of d 128 does
  // 64·2·4096·32·256 = 4.29 GFLOP for 134 MB of bf16 KV, so under a fit of compute 0.05 it is
  // compute-bound (86.8 us + 4 us fixed) where under 0.6 it streams (134 MB / (3.35 TB/s · 0.9) =
  // 44.5 us + 4 us). MLA with 128 heads over one 576-wide latent (d_qk 576, d_v 512) costs the
  // same under both fits.
  HardwareSpec hw = io::resolve_hardware(io::json("h100-sxm"), "hardware");
  const KernelModel km;
  const AttentionTypes bf16{DType::bf16, 2, 2};
  const AttentionDims gqa = AttentionDims::standard(32, 1, 128);
  const AttentionDims mla{128, 1, 576, 512, 576};
  auto priced = [&](double compute) {
    auto cal = std::make_shared<Calibration>();
    CalibratedEfficiency fit;
    fit.efficiency = Efficiency{compute, 0, 0.9, 0, 4e-6};
    fit.min_units = 1;
    fit.max_units = 1e6;
    cal->fits[CalibrationKey{OpClass::attention_decode, DType::bf16}] = fit;
    hw.calibration = cal;
    return std::pair{attention_decode_op(hw, km, 64, 4096, gqa, bf16).time.value,
                     attention_decode_op(hw, km, 64, 4096, mla, bf16).time.value};
  };
  const auto [gqa_low, mla_low] = priced(0.05);
  const auto [gqa_tier0, mla_tier0] = priced(0.6);
  EXPECT_TRUE(near_rel(gqa_low / gqa_tier0, 90.8 / 48.5, 0.02));
  EXPECT_DOUBLE_EQ(mla_low, mla_tier0);
  EXPECT_EQ(km.tier0(OpClass::attention_decode).compute, 0.6);
}

TEST(Calibration, BlockScaledFp8TakesItsOwnFitElseThePerTensorOne) {
  // An H100 GEMM of 4096 x 4096 x 4096 in fp8: 2·4096³ = 1.37439e11 FLOP; 32 · 32 = 1024 tiles
  // of 128 x 128 on 132 SMs (8 waves, wave efficiency 1024 / (8·132) = 0.969697) at the fp8 peak
  // 1978.9e12: 71.6257 us ideal. Under a fit of compute 0.5 (half-units 0, fixed 5 us):
  // 143.251 + 5 = 148.251 us; under 0.25: 286.503 + 5 = 291.503 us.
  HardwareSpec hw = io::resolve_hardware(io::json("h100-sxm"), "hardware");
  const KernelModel km;
  const GemmTypes tensor{DType::fp8, 1, 1, 2};
  const GemmTypes block{DType::fp8, 1, 1, 2, KernelVariant::block_scaled};
  auto fit_of = [](double compute) {
    CalibratedEfficiency fit;
    fit.efficiency = Efficiency{compute, 0, 0.9, 0, 5e-6};
    fit.min_units = 1;
    fit.max_units = 1e6;
    return fit;
  };
  auto cal = std::make_shared<Calibration>();
  cal->fits[CalibrationKey{OpClass::gemm, DType::fp8}] = fit_of(0.5);
  hw.calibration = cal;
  // No block-scaled fit on this GPU: the per-tensor one, and the op names the fit it used.
  const OpCost fallback = gemm_op("x", hw, km, 4096, 4096, 4096, block);
  EXPECT_EQ(fallback.tier, 2);
  EXPECT_EQ(fallback.calibration_key.variant, KernelVariant::plain);
  EXPECT_TRUE(near_rel(fallback.time.value, 148.251e-6, 1e-4));
  // With one, its own.
  cal->fits[CalibrationKey{OpClass::gemm, DType::fp8, KernelVariant::block_scaled}] = fit_of(0.25);
  const OpCost own = gemm_op("x", hw, km, 4096, 4096, 4096, block);
  EXPECT_EQ(own.calibration_key.variant, KernelVariant::block_scaled);
  EXPECT_TRUE(near_rel(own.time.value, 291.503e-6, 1e-4));
  // Per-tensor weights never take the block-scaled fit.
  EXPECT_TRUE(
      near_rel(gemm_op("x", hw, km, 4096, 4096, 4096, tensor).time.value, 148.251e-6, 1e-4));
}

TEST(Calibration, FrameworkKeysRoundTripAndFallBackToThePooledFit) {
  const auto key = parse_calibration_key("attn_decode/bf16-kv8@vllm");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->op, OpClass::attention_decode);
  EXPECT_EQ(key->variant, KernelVariant::kv8);
  EXPECT_EQ(key->framework, Framework::vllm);
  EXPECT_EQ(to_string(*key), "attn_decode/bf16-kv8@vllm");
  EXPECT_FALSE(parse_calibration_key("gemm/bf16@any").has_value());  // pooled has no suffix
  EXPECT_FALSE(parse_calibration_key("gemm/bf16@tgi").has_value());

  Calibration cal;
  CalibratedEfficiency pooled, own;
  pooled.train_rows = 1;
  own.train_rows = 2;
  cal.fits[CalibrationKey{OpClass::gemm, DType::bf16}] = pooled;
  cal.fits[CalibrationKey{OpClass::gemm, DType::bf16, KernelVariant::plain, Framework::vllm}] = own;
  auto rows = [&](Framework f) {
    const auto* fit =
        cal.find_for(CalibrationKey{OpClass::gemm, DType::bf16, KernelVariant::plain, f});
    return fit ? fit->train_rows : 0;
  };
  EXPECT_EQ(rows(Framework::vllm), 2);    // its own fit
  EXPECT_EQ(rows(Framework::sglang), 1);  // no own fit: the pooled one
  EXPECT_EQ(rows(Framework::any), 1);
  EXPECT_EQ(cal.find_for(CalibrationKey{OpClass::moe, DType::bf16}), nullptr);

  // The same answers from the dense table (build_index), and a fit added after it is still
  // found (the table no longer matches `fits`: find walks the map).
  cal.build_index();
  EXPECT_EQ(rows(Framework::vllm), 2);
  EXPECT_EQ(rows(Framework::sglang), 1);
  EXPECT_EQ(rows(Framework::any), 1);
  EXPECT_EQ(cal.find_for(CalibrationKey{OpClass::moe, DType::bf16}), nullptr);
  CalibratedEfficiency moe;
  moe.train_rows = 3;
  cal.fits[CalibrationKey{OpClass::moe, DType::bf16}] = moe;
  ASSERT_NE(cal.find_for(CalibrationKey{OpClass::moe, DType::bf16}), nullptr);
  EXPECT_EQ(cal.find_for(CalibrationKey{OpClass::moe, DType::bf16})->train_rows, 3);
}

}  // namespace
}  // namespace flopcast
