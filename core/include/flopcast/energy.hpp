// SPDX-License-Identifier: MIT
#pragma once

#include <optional>

#include "flopcast/hardware.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/kernel.hpp"
#include "flopcast/serving.hpp"
#include "flopcast/training.hpp"

namespace flopcast {

/// The Tier-0 power model (docs/model.md, "Energy"). A GPU draws its idle power plus a share of
/// the rest of its board power (`power_limit_W`, else `tdp_W`) that follows what its kernels keep
/// busy: compute-bound kernels run at the power cap (the clock drops to hold it there), bandwidth-
/// bound kernels and collectives keep the memory system, the L2 and the load/store path of every
/// SM busy but leave the tensor cores idle, and time spent waiting for the host (engine and
/// launch overheads) draws only the idle power. Power delivery, host CPUs, network and cooling
/// (PUE) are left out. The two constants are physics, one figure for every GPU, not fitted:
/// ML.ENERGY's measured power (presets/energy/, docs/validation.md) checks them.
struct PowerModel {
  /// Idle power of a GPU with its clocks up and nothing running, as a share of its TDP (an H100
  /// SXM reads about 70 W of its 700 W in nvidia-smi between kernels).
  static constexpr double idle_share = 0.10;
  /// Activity of a bandwidth-bound kernel or a collective: the share of the dynamic power (board
  /// power − idle) it draws. Streaming kernels keep every SM issuing loads and the L2, NoC and HBM
  /// at full rate; only the tensor-core datapath idles.
  static constexpr double memory_activity = 0.70;
};

/// The activity (0 … 1) of time spent in kernels of bound `b`: compute 1, memory and
/// communication PowerModel::memory_activity, host overhead 0.
double activity_of(Bound b) noexcept;

/// Mean activity of a static batch: the prefill items once and the average decode step's items
/// `output_tokens` − 1 times, weighted by their time. 0 when nothing is priced.
double inference_activity(const InferenceResult& r, int output_tokens);

/// Mean activity of a serving run: a static-batch estimate at the batch the engine runs while it
/// steps (its mean prompt and output), times the share of the time it steps at all. A replica
/// holds L = rate · (E2E − queueing) sequences on average (Little's law); the simulator's mean
/// batch is over its steps, so it steps L / that of the time; the analytic engine's is over
/// time, and with Poisson arrivals each held for its own time the batch is empty with
/// probability e^−L (M/G/∞). Saturated: always. Between steps the GPUs draw their idle power.
double serving_activity(const ServingSpec& spec, const ServingResult& r);

/// Mean activity of a training step over its critical path.
double training_activity(const TrainingResult& r);

/// Mean power of one GPU whose priced time has this mean activity: idle + (board − idle) ·
/// activity, with idle = PowerModel::idle_share · tdp_W (at most the board power). 0 when the
/// hardware states no board power.
double gpu_power_W(const HardwareSpec& hw, double activity);

/// The board power of one GPU: power_limit_W where set, else tdp_W; 0 when neither is known.
double board_power_W(const HardwareSpec& hw);

struct Energy {
  double power_W = 0;           ///< all GPUs together, from the power model
  double joules_per_token = 0;  ///< per output token (inference, serving) or trained token
  double tokens_per_kWh = 0;
  double board_power_W = 0;  ///< all GPUs at board power: the upper bound
  double activity = 0;       ///< the mean activity the power model was given
};

/// `gpus` GPUs producing `tokens_per_s` tokens per second at mean activity `activity` (0 … 1).
/// nullopt when the hardware states no board power (Apple presets) or nothing runs.
std::optional<Energy> estimate_energy(const HardwareSpec& hw, int gpus, double tokens_per_s,
                                      double activity);

}  // namespace flopcast
