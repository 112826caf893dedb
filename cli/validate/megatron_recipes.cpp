// SPDX-License-Identifier: MIT
#include "validate/megatron_recipes.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "validate/e2e.hpp"

namespace flopcast::cli::validate {

std::string nemo_container(std::string_view framework) {
  // The first "YY.MM" or "YY.MM.PP" after "NeMo".
  const auto at = framework.find("NeMo");
  if (at == std::string_view::npos) return "";
  for (std::size_t i = at; i + 5 <= framework.size(); ++i) {
    const auto digit = [&](std::size_t k) {
      return k < framework.size() && std::isdigit(static_cast<unsigned char>(framework[k]));
    };
    if (!(digit(i) && digit(i + 1) && framework[i + 2] == '.' && digit(i + 3) && digit(i + 4)) ||
        (i > 0 && digit(i - 1))) {
      continue;
    }
    std::size_t end = i + 5;
    if (end < framework.size() && framework[end] == '.' && digit(end + 1) && digit(end + 2)) {
      end += 3;
    }
    return std::string(framework.substr(i, end - i));
  }
  return "";
}

namespace {

/// One recipe family with EP overlap on, from the container that first shipped it on, up to
/// (without) the one that dropped it; versions "YY.MM[.PP]" compare as text. Read from the
/// recipes of each Megatron-Bridge release tag whose docs/performance-summary.md leads with that
/// container's table (v0.1.0rc4: 25.09, v0.2.2: 25.11, v0.3.0: 26.02, v0.4.0: 26.02.01, v0.4.1:
/// 26.04, v0.4.2: 26.04.01, v0.5.0: 26.06, v0.5.1: 26.06.01, v0.6.0: 26.08):
/// `overlap_moe_expert_parallel_comm = True` in scripts/performance/run_script.py (v0.1.0rc4,
/// DeepSeek-V3 on H100 only), `moe_a2a_overlap=True` in scripts/performance/configs/…/
/// *workload_base_configs.py (v0.2.0 to v0.5.1), then in src/megatron/bridge/perf_recipes/
/// (v0.6.0; the `_enable_…_full_iteration_mxfp8` helpers of qwen/, deepseek/ and gpt_oss/
/// common.py set it). Open-ended families still have it in v0.6.0.
struct OverlapRecipe {
  std::string_view model;  ///< text the lower-cased model name contains
  std::string_view gpus;   ///< preset ids, space separated
  std::string_view computes;
  int global_batch;  ///< the recipe variant's batch (V1/V2 differ); 0: every variant
  std::string_view since;
  std::string_view until;  ///< "" while still on
};

constexpr std::array<OverlapRecipe, 15> kOverlapRecipes{{
    // v0.1.0rc4 (A2A_1F1B on H100), v0.2.x DEEPSEEK_V3_H100_BASE_CONFIG; gone in v0.3.0.
    {"deepseek-v3", "h100-sxm", "bf16 fp8", 0, "25.09", "26.02"},
    // v0.2.x QWEN3_*_H100_*_BASE_CONFIG and QWEN3_235B_A22B_B200_*_BASE_CONFIG; v0.3.0 keeps the
    // H100 ones (Qwen3-30B until v0.4.0), drops B200 and sets B300.
    {"qwen3-235b", "h100-sxm", "bf16 fp8", 0, "25.11", ""},
    {"qwen3-30b", "h100-sxm", "bf16 fp8", 0, "25.11", "26.02.01"},
    {"qwen3-235b", "b200", "bf16 fp8 mxfp8", 0, "25.11", "26.02"},
    {"qwen3-235b", "b300", "bf16 fp8 mxfp8", 0, "26.02", "26.02.01"},
    // GPT_OSS_120B_PRETRAIN_CONFIG_GB200_{BF16,FP8_MX}_V2 (GBS 1280; v0.4.0 on).
    {"gpt-oss-120b", "gb200", "bf16 mxfp8", 1280, "26.02.01", ""},
    // DEEPSEEK_V3_PRETRAIN_CONFIG_B200_{FP8_MX,NVFP4}_V2 (GBS 4096, EP 32; v0.4.2 on).
    {"deepseek-v3", "b200", "mxfp8 fp4", 4096, "26.04.01", ""},
    // v0.5.0: the MXFP8 recipes with full-iteration CUDA graphs and HybridEP.
    {"deepseek-v3", "gb200 gb300", "mxfp8", 0, "26.06", ""},
    {"gpt-oss-120b", "gb300", "mxfp8", 1280, "26.06", ""},
    {"qwen3-235b", "gb200 gb300", "mxfp8", 8192, "26.06", ""},
    {"qwen3-30b", "b300 gb200 gb300", "mxfp8", 0, "26.06", ""},
    // v0.5.1.
    {"deepseek-v3", "b300", "mxfp8", 0, "26.06.01", ""},
    {"qwen3-235b", "b200 b300", "mxfp8", 8192, "26.06.01", ""},
    {"qwen3-30b", "b200", "mxfp8", 0, "26.06.01", ""},
    // v0.6.0 adds Qwen3-30B-A3B on H100 in BF16 (qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config).
    {"qwen3-30b", "h100-sxm", "bf16", 0, "26.08", ""},
}};

bool has_word(std::string_view words, std::string_view word) {
  std::size_t start = 0;
  while (start <= words.size()) {
    const std::size_t end = std::min(words.find(' ', start), words.size());
    if (words.substr(start, end - start) == word) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

bool megatron_bridge_ep_overlap(std::string_view container, std::string_view model,
                                std::string_view gpu, std::string_view compute, int global_batch) {
  if (container.empty()) return false;
  const std::string name = lower_case(model);
  return std::any_of(kOverlapRecipes.begin(), kOverlapRecipes.end(), [&](const OverlapRecipe& r) {
    return contains(name, r.model) && has_word(r.gpus, gpu) && has_word(r.computes, compute) &&
           (r.global_batch == 0 || r.global_batch == global_batch) && container >= r.since &&
           (r.until.empty() || container < r.until);
  });
}

}  // namespace flopcast::cli::validate
