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
  EXPECT_EQ(all["models"].size(), 18u);
  EXPECT_EQ(all["hardware"].size(), 14u);
  EXPECT_EQ(all["scenarios"].size(), 10u);
  EXPECT_EQ(all["frameworks"].size(), 4u);  // generic, fitted, pytorch_fsdp, megatron
  for (const char* id : {"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b",
                         "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "gpt-3-175b",
                         "mixtral-8x7b", "mixtral-8x22b", "falcon-40b", "mistral-7b",
                         "qwen2.5-7b", "qwen2.5-72b", "codellama-34b", "falcon-180b",
                         "gpt-j-6b"}) {
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

TEST(Presets, DerivedParameterCountsMatchPublishedWithin1Percent) {
  for (const json& p : io::presets()["models"]) {
    const ModelSpec m = io::detail::read_model(p["model"], "model");
    const ParamCounts c = count_params(m);
    const double published = p["published_params_B"].get<double>() * 1e9;
    EXPECT_TRUE(test::near_rel(c.total, published, 0.01)) << p["id"];
    if (p.contains("published_active_params_B")) {
      const double active = p["published_active_params_B"].get<double>() * 1e9;
      EXPECT_TRUE(test::near_rel(c.active, active, 0.01)) << p["id"];
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
