// SPDX-License-Identifier: MIT
// Every preset loads strictly, and derived parameter counts match the published ones (unit).
#include <gtest/gtest.h>

#include "flopcast/model.hpp"
#include "specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;

TEST(Presets, AllLoadWithTheRequiredIds) {
  const json& all = io::presets();
  EXPECT_EQ(all["models"].size(), 41u);
  EXPECT_EQ(all["hardware"].size(), 14u);
  EXPECT_EQ(all["scenarios"].size(), 10u);
  EXPECT_EQ(all["frameworks"].size(), 4u);  // generic, fitted, pytorch_fsdp, megatron
  for (const char* id : {"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b",
                         "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "gpt-3-175b",
                         "mixtral-8x7b", "mixtral-8x22b", "falcon-40b", "mistral-7b",
                         "qwen2.5-7b", "qwen2.5-72b", "codellama-34b", "falcon-180b",
                         "gpt-j-6b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b",
                         "llama-4-scout-17b-16e", "llama-4-maverick-17b-128e", "qwen3-0.6b",
                         "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b",
                         "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3", "deepseek-r1",
                         "gpt-oss-20b", "gpt-oss-120b", "gemma-3-4b", "gemma-3-12b",
                         "gemma-3-27b", "phi-4", "mistral-small-24b-2501",
                         "mistral-large-2407"}) {
    EXPECT_NO_THROW((void)io::preset("models", id, "model")) << id;
  }
  for (const char* id : {"h100-sxm", "h100-pcie", "h200-sxm", "b200", "a100-sxm-80g",
                         "a100-sxm-40g", "a100-pcie-80g", "l40s", "l4", "t4", "v100-sxm",
                         "mi300x", "mi250x"}) {
    EXPECT_NO_THROW((void)io::preset("hardware", id, "hardware")) << id;
  }
}

TEST(Presets, EveryPresetHasSourceAndNotes) {
  for (const auto& kind : {"models", "hardware", "scenarios"}) {
    for (const json& p : io::presets()[kind]) {
      EXPECT_FALSE(p["source"].get<std::string>().empty()) << p["id"];
      EXPECT_FALSE(p["notes"].get<std::string>().empty()) << p["id"];
    }
  }
}

/// Published figures further than 1 % from the derived count: the tolerance that holds them and
/// why (tests/unit/model_zoo_test.cpp derives each model's count by hand).
struct KnownGap {
  const char* id;
  bool active;  ///< the active figure (else the total)
  double tolerance;
};
const KnownGap kKnownGaps[] = {
    // "1.7B" is the derived 1.7206e9 rounded to two digits (1.2 %).
    {"qwen3-1.7b", false, 0.015},
    // Llama 4's 109B total includes the 0.87e9 vision encoder, which flopcast does not model
    // (language model 107.77e9 = 1.1 % less).
    {"llama-4-scout-17b-16e", false, 0.015},
    // Two-digit active figures: "17B" (derived 17.17e9, 17.18e9), "3.3B" (3.353e9), "37B"
    // (37.55e9, of which 0.93e9 is the input embedding DeepSeek may not count).
    {"llama-4-scout-17b-16e", true, 0.03},
    {"llama-4-maverick-17b-128e", true, 0.03},
    {"qwen3-30b-a3b", true, 0.02},
    {"deepseek-v3", true, 0.02},
    {"deepseek-r1", true, 0.02},
    // OpenAI's active figures leave out the embedding table (0.579e9), flopcast's include it:
    // 4.187e9 for "3.61B", 5.712e9 for "5.13B" (without it 3.608e9 and 5.133e9).
    {"gpt-oss-20b", true, 0.17},
    {"gpt-oss-120b", true, 0.12},
};

double tolerance(const json& preset, bool active) {
  for (const KnownGap& g : kKnownGaps) {
    if (preset["id"] == g.id && g.active == active) return g.tolerance;
  }
  return 0.01;
}

TEST(Presets, DerivedParameterCountsMatchPublishedWithin1Percent) {
  for (const json& p : io::presets()["models"]) {
    const ModelSpec m = io::detail::read_model(p["model"], "model");
    const ParamCounts c = count_params(m);
    const double published = p["published_params_B"].get<double>() * 1e9;
    EXPECT_TRUE(test::near_rel(c.total, published, tolerance(p, false))) << p["id"];
    if (p.contains("published_active_params_B")) {
      const double active = p["published_active_params_B"].get<double>() * 1e9;
      EXPECT_TRUE(test::near_rel(c.active, active, tolerance(p, true))) << p["id"];
    }
  }
}

TEST(Presets, KnownCountsByHand) {
  // Llama-2-7B: 2·32000·4096 + 32·(4·4096² + 3·4096·11008 + 2·4096) + 4096 = 6,738,415,616.
  const ModelSpec llama = io::detail::resolve_model(json("llama-2-7b"), "model");
  EXPECT_EQ(count_params(llama).total, 6738415616.0);
  // Mixtral-8x7B active: 2 of 8 experts: 12.88e9 (published 12.9 B).
  const ModelSpec mixtral = io::detail::resolve_model(json("mixtral-8x7b"), "model");
  EXPECT_TRUE(test::near_rel(count_params(mixtral).active, 12.88e9, 1e-3));
  EXPECT_TRUE(test::near_rel(count_params(mixtral).total, 46.70e9, 1e-3));
}

TEST(Presets, HardwarePeaksAreDense) {
  // H100 SXM dense bf16 989.4 TFLOP/s (1979 is the 2:4-sparse figure).
  const HardwareSpec h100 = io::detail::resolve_hardware(json("h100-sxm"), "hardware");
  EXPECT_TRUE(test::near_rel(h100.peak(DType::bf16)->value, 989.4e12, 1e-3));
  // T4 and V100 have no bf16 tensor cores: no peak, so bf16 math is an explicit error.
  EXPECT_FALSE(io::detail::resolve_hardware(json("t4"), "hardware").peak(DType::bf16));
  EXPECT_FALSE(io::detail::resolve_hardware(json("v100-sxm"), "hardware").peak(DType::bf16));
}

TEST(Presets, EveryScenarioRuns) {
  for (const json& p : io::presets()["scenarios"]) {
    const json r = io::run(p["request"]);
    EXPECT_GT(r["ttft_ms"].get<double>(), 0) << p["id"];
  }
}

}  // namespace
}  // namespace flopcast
