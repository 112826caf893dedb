// SPDX-License-Identifier: MIT
// The physical bounds every inference and serving result is held to (core/src/physical.hpp;
// label: unit).
#include "physical.hpp"

#include <gtest/gtest.h>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

TEST(Physical, FewestFlopsPerTokenCountTheMultipliedWeightsTwice) {
  // Llama-2-7B: 6,738,415,616 weights, less the embedding and the LM head (32,000 · 4,096 =
  // 131,072,000 each), the final norm (4,096) and 32 layers of two norms (2 · 4,096 each,
  // 262,144): 6,476,005,376 multiplied, 12,952,010,752 FLOPs a token.
  const ModelSpec m = io::resolve_model("llama-2-7b", "model");
  EXPECT_DOUBLE_EQ(physical::min_flops_per_token(m), 12952010752.0);
}

TEST(Physical, ATokenRateAboveTheFastestPeakIsRefusedNamingTheQuantity) {
  // An A100's fastest dense peak is int8's 624 TOPS: two GPUs reach 1,248 TFLOP/s, which carry
  // at most 1,248e12 / 12,952,010,752 = 96,355 Llama-2-7B tokens a second (1 % slack: 97,318).
  const ModelSpec m = io::resolve_model("llama-2-7b", "model");
  const HardwareSpec hw = io::resolve_hardware("a100-sxm-80g", "hardware");
  EXPECT_DOUBLE_EQ(physical::max_flops_per_s(hw, 2), 1248e12);
  EXPECT_NO_THROW(physical::check_token_rate("prefill_tokens_per_s", 97000, m, hw, 2));
  try {
    physical::check_token_rate("prefill_tokens_per_s", 98000, m, hw, 2);
    ADD_FAILURE() << "98,000 tokens/s on two A100s passed";
  } catch (const NotModelledError& e) {
    EXPECT_EQ(e.path(), "prefill_tokens_per_s");
    // 98,000 · 12.952 GFLOP = 1,269.3 TFLOP/s.
    EXPECT_NE(std::string(e.what()).find("1269.3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(got 98000)"), std::string::npos) << e.what();
  }
}

TEST(Physical, EstimatesStayUnderTheBound) {
  // The bound is a net under the pricing, not a limit it meets: a 1-GPU Llama-2-7B prefill of
  // 64 prompts of 2,048 tokens runs at ~1/3 of the bound (bf16 at ~half of int8's peak, and
  // attention on top), so the estimate passes it.
  io::json req = test::base_request();
  req["workload"] = {{"prompt_tokens", 2048}, {"output_tokens", 128}, {"batch_size", 64}};
  req["max_tier"] = 2;
  const io::json r = io::run(req);
  const double bound = 624e12 / 12952010752.0;
  EXPECT_LT(r["prefill_tokens_per_s"].get<double>(), 0.5 * bound);
  EXPECT_GT(r["prefill_tokens_per_s"].get<double>(), 0.1 * bound);
}

}  // namespace
}  // namespace flopcast
