// SPDX-License-Identifier: MIT
// Megatron-Bridge recipe settings the published performance summary leaves out
// (cli/validate/megatron_recipes.hpp), on the containers and recipes they were read from.
#include "validate/megatron_recipes.hpp"

#include <gtest/gtest.h>

namespace flopcast::cli::validate {
namespace {

TEST(MegatronRecipes, ContainerIsReadFromTheFrameworkText) {
  EXPECT_EQ(nemo_container("Megatron-Bridge / Megatron-Core, NeMo 26.06 container"), "26.06");
  EXPECT_EQ(nemo_container("Megatron-Bridge / Megatron-Core, NeMo 26.04.01 container"), "26.04.01");
  EXPECT_EQ(nemo_container("NeMo 25.09"), "25.09");
  // A version before "NeMo", or none at all, is not a container.
  EXPECT_EQ(nemo_container("Megatron-LM 0.14"), "");
  EXPECT_EQ(nemo_container("torchtitan 26.06"), "");
}

TEST(MegatronRecipes, EpOverlapFollowsTheRecipeOfEachContainer) {
  // Qwen3-30B-A3B MXFP8 on GB300: moe_a2a_overlap=True from v0.5.0 (NeMo 26.06), not in v0.4.2
  // (26.04.01), where QWEN3_30B_A3B_PRETRAIN_CONFIG_GB300_FP8_MX_V1 was the FP8-CS recipe.
  EXPECT_TRUE(megatron_bridge_ep_overlap("26.06", "Qwen3-30B-A3B", "gb300", "mxfp8", 512));
  EXPECT_TRUE(megatron_bridge_ep_overlap("26.08", "Qwen3-30B-A3B", "gb300", "mxfp8", 512));
  EXPECT_FALSE(megatron_bridge_ep_overlap("26.04.01", "Qwen3-30B-A3B", "gb300", "mxfp8", 512));
  // Its BF16 and FP8-CS recipes never set it.
  EXPECT_FALSE(megatron_bridge_ep_overlap("26.08", "Qwen3-30B-A3B", "gb300", "bf16", 512));
  // B200 followed in v0.5.1 (26.06.01).
  EXPECT_FALSE(megatron_bridge_ep_overlap("26.06", "Qwen3-30B-A3B", "b200", "mxfp8", 512));
  EXPECT_TRUE(megatron_bridge_ep_overlap("26.06.01", "Qwen3-30B-A3B", "b200", "mxfp8", 512));
  // Qwen3-235B on H100 since v0.2.x (25.11), in either precision; v0.1.0rc4 (25.09) set it for
  // DeepSeek-V3 on H100 only, which v0.3.0 (26.02) dropped.
  EXPECT_TRUE(megatron_bridge_ep_overlap("25.11", "Qwen3-235B-A22B", "h100-sxm", "fp8", 8192));
  EXPECT_TRUE(megatron_bridge_ep_overlap("26.08", "Qwen3-235B-A22B", "h100-sxm", "bf16", 8192));
  EXPECT_FALSE(megatron_bridge_ep_overlap("25.09", "Qwen3-235B-A22B", "h100-sxm", "fp8", 2048));
  EXPECT_TRUE(megatron_bridge_ep_overlap("25.09", "DeepSeek-V3", "h100-sxm", "fp8", 8192));
  EXPECT_FALSE(megatron_bridge_ep_overlap("26.02", "DeepSeek-V3", "h100-sxm", "fp8", 8192));
  // The variant matters where V1 and V2 differ: GPT-OSS-120B on GB200 only at GBS 1280 (V2).
  EXPECT_TRUE(megatron_bridge_ep_overlap("26.04", "gpt-oss-120b", "gb200", "bf16", 1280));
  EXPECT_FALSE(megatron_bridge_ep_overlap("26.04", "gpt-oss-120b", "gb200", "bf16", 512));
  // Models whose recipes never set it, and a row without a container.
  EXPECT_FALSE(
      megatron_bridge_ep_overlap("26.08", "Nemotron-3-Super-120B-A12B", "gb300", "mxfp8", 512));
  EXPECT_FALSE(megatron_bridge_ep_overlap("", "Qwen3-30B-A3B", "gb300", "mxfp8", 512));
}

}  // namespace
}  // namespace flopcast::cli::validate
