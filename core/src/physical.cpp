// SPDX-License-Identifier: MIT
#include "physical.hpp"

#include <algorithm>

#include "flopcast/error.hpp"

namespace flopcast::physical {

double min_flops_per_token(const ModelSpec& m) noexcept {
  const ParamCounts c = count_params(m);
  const double multiplied =
      c.active - c.embedding - c.lm_head - c.final_norm - m.num_layers * c.norms_per_layer;
  return 2 * std::max(0.0, multiplied);
}

double max_flops_per_s(const HardwareSpec& hw, int gpus) noexcept {
  double peak = 0;
  for (const auto& [type, p] : hw.dense_peak) peak = std::max(peak, p.value);
  return peak * gpus;
}

void check_token_rate(const std::string& path, double tokens_per_s, const ModelSpec& m,
                      const HardwareSpec& hw, int gpus) {
  const double needed = tokens_per_s * min_flops_per_token(m);
  const double most = max_flops_per_s(hw, gpus);
  if (needed <= most * 1.01) return;
  throw NotModelledError(
      path, "must need no more than the GPUs' peak: at least " +
                format_number(min_flops_per_token(m) / 1e9) + " GFLOP per token (two per weight " +
                "it multiplies) at this rate is " + format_number(needed / 1e12) +
                " TFLOP/s, above the " + format_number(most / 1e12) + " TFLOP/s of " +
                std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
                " at their highest dense peak; the pricing breaks this bound for this request "
                "(got " +
                format_number(tokens_per_s) + ")");
}

}  // namespace flopcast::physical
