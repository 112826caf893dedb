// SPDX-License-Identifier: MIT
#include "flopcast/energy.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"

namespace flopcast {

double activity_of(Bound b) noexcept {
  switch (b) {
    case Bound::compute:
      return 1.0;
    case Bound::memory:
    case Bound::communication:
      return PowerModel::memory_activity;
    case Bound::overhead:
      break;
  }
  return 0.0;
}

namespace {

/// Time-weighted mean activity of breakdown items, each item's time counted `times(item)` times.
template <class Items, class Times>
double mean_activity(const Items& items, Times times) {
  double busy = 0, total = 0;
  for (const auto& b : items) {
    const double t = times(b) * b.time_s;
    busy += t * activity_of(b.bound);
    total += t;
  }
  return total > 0 ? busy / total : 0.0;
}

}  // namespace

double inference_activity(const InferenceResult& r, int output_tokens) {
  const double decode_steps = std::max(0, output_tokens - 1);
  return mean_activity(r.breakdown, [&](const BreakdownItem& b) {
    return b.phase == "decode" ? decode_steps : 1.0;
  });
}

double serving_activity(const ServingSpec& spec, const ServingResult& r) {
  if (!(r.requests_per_s > 0) || !(r.mean_batch_size > 0)) return 0.0;
  double busy = 1.0, batch = r.mean_batch_size;  // saturated: the engine always steps
  if (!r.saturated && r.e2e_s) {
    // Little's law: a replica holds `in_batch` sequences on average (queueing excluded).
    const double in_batch = r.requests_per_s / std::max(1, r.replicas) *
                            (r.e2e_s->mean - (r.queueing_s ? r.queueing_s->mean : 0.0));
    if (r.simulated) {
      // The simulator's mean batch is over its steps: it steps in_batch / that of the time.
      busy = std::clamp(in_batch / r.mean_batch_size, 0.0, 1.0);
    } else {
      // The analytic mean batch is over time. Poisson arrivals each held for their own time:
      // the batch is empty with probability e^−in_batch (M/G/∞).
      busy = 1.0 - std::exp(-std::max(0.0, in_batch));
      batch = busy > 0 ? in_batch / busy : 1.0;
    }
  }
  InferenceSpec step = spec.inference;
  step.batch_size = std::max(1, static_cast<int>(std::lround(batch)));
  step.prompt_tokens =
      std::max(1, static_cast<int>(std::lround(r.input_tokens_per_s / r.requests_per_s)));
  step.output_tokens =
      std::max(1, static_cast<int>(std::lround(r.output_tokens_per_s / r.requests_per_s)));
  try {
    return busy * inference_activity(estimate_inference(step), step.output_tokens);
  } catch (const SpecError&) {
    // The mean request exceeds a limit the served distribution never reached (a context past the
    // model's window): price the busy time as bandwidth-bound decode.
    return busy * PowerModel::memory_activity;
  }
}

double training_activity(const TrainingResult& r) {
  return mean_activity(r.breakdown, [](const TrainingBreakdownItem&) { return 1.0; });
}

double board_power_W(const HardwareSpec& hw) {
  return hw.power_limit_W > 0 ? hw.power_limit_W : hw.tdp_W;
}

double gpu_power_W(const HardwareSpec& hw, double activity) {
  const double board = board_power_W(hw);
  if (!(board > 0)) return 0.0;
  const double idle = std::min(board, PowerModel::idle_share * hw.tdp_W);
  return idle + (board - idle) * std::clamp(activity, 0.0, 1.0);
}

std::optional<Energy> estimate_energy(const HardwareSpec& hw, int gpus, double tokens_per_s,
                                      double activity) {
  const double per_gpu = gpu_power_W(hw, activity);
  if (!(per_gpu > 0) || gpus < 1 || !(tokens_per_s > 0) || !std::isfinite(tokens_per_s)) {
    return std::nullopt;
  }
  Energy e;
  e.power_W = per_gpu * gpus;
  e.joules_per_token = e.power_W / tokens_per_s;
  e.tokens_per_kWh = 3.6e6 / e.joules_per_token;  // 1 kWh = 3.6 MJ
  e.board_power_W = board_power_W(hw) * gpus;
  e.activity = std::clamp(activity, 0.0, 1.0);
  return e;
}

}  // namespace flopcast
