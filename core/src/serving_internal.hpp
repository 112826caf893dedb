// SPDX-License-Identifier: MIT
#pragma once

/// Shared by the analytic serving model and the simulator: the per-replica engine, its KV
/// capacity and the cost of a step with the serving features (speculative drafts, LoRA, MoE
/// all-to-all) on top of StepTimeModel.

#include <optional>
#include <string>
#include <vector>

#include "flopcast/serving.hpp"

namespace flopcast::detail {

/// What both engines derive from a validated ServingSpec.
struct ServingSetup {
  InferenceSpec inference;    ///< engine overrides applied
  int instances = 1;          ///< replicas (collocated) or prefill + decode instances
  int prefill_instances = 0;  ///< disaggregated: the first ones are prefill instances
  bool fits = true;
  std::string unfit_reason;       ///< why nothing can be served (empty where it fits)
  double kv_bytes_per_token = 0;  ///< per GPU
  double kv_capacity_tokens = 0;  ///< per instance, in whole blocks
  long long kv_blocks = 0;
  /// Hybrid models: one running request's Mamba-2 state (per GPU, as kv_bytes_per_token) and
  /// the whole KV blocks it takes from the pool.
  double state_bytes_per_request = 0;
  long long state_blocks = 0;
  double lora_bytes_per_adapter = 0;    ///< per GPU, all layers
  double expected_tokens_per_step = 1;  ///< speculative: E[1 + accepted]
  std::vector<std::string> warnings;
};

ServingSetup make_setup(const ServingSpec& spec);

/// Prices steps: StepTimeModel plus the features' per-step costs.
class StepCoster {
 public:
  StepCoster(const ServingSpec& spec, const ServingSetup& setup);
  /// A step of `shape`; `lora_adapters` distinct adapters in it, `lora_loads` loaded first.
  double cost(const StepShape& shape, int lora_adapters = 0, int lora_loads = 0);
  [[nodiscard]] int tier() const { return model_.tier(); }
  StepTimeModel& model() { return model_; }

 private:
  const ServingSpec& spec_;
  const ServingSetup& setup_;
  StepTimeModel model_;
  std::optional<StepTimeModel> draft_;
  int moe_layers_ = 0;  ///< layers with experts (features.moe.expert_parallel's all-to-alls)
};

/// Mean and second moment of a length distribution (trace: of the trace's lengths).
struct Moments {
  double mean = 0, second = 0;
};
/// Prompt or output lengths at quantile `levels` in (0, 1) (trace: from the trace).
std::vector<double> length_points(const ServingSpec& spec, bool prompt,
                                  const std::vector<double>& levels);

/// Mean, p50, p90 and p99 of values sorted ascending; all zero when there are none.
Percentiles summarize_sorted(const std::vector<double>& sorted);

/// Refuses (NotModelledError) a result whose token rates, or whose saturation rate at its mean
/// request, would need more FLOP/s than the setup's GPUs reach (physical.hpp); prompt tokens a
/// shared prefix may cache are not counted.
void check_physical(const ServingSpec& spec, const ServingResult& r);

}  // namespace flopcast::detail
