// SPDX-License-Identifier: MIT
#pragma once

#include <optional>

#include "flopcast/hardware.hpp"

namespace flopcast {

/// Energy at board power: every GPU draws its board power (`power_limit_W`, else `tdp_W`) for the
/// whole time it is estimated to run. A busy GPU sits at its power cap when compute-bound and
/// somewhat below it when memory-bound, and an idle one well below, so this is an upper bound on
/// the GPUs' energy; host CPUs, network, memory power outside the board and cooling (PUE) are
/// left out. nullopt when the hardware states no board power (Apple presets) or nothing runs.
struct BoardEnergy {
  double power_W = 0;           ///< all GPUs together
  double joules_per_token = 0;  ///< per output token (inference, serving) or trained token
  double tokens_per_kWh = 0;
};

/// The board power of one GPU: power_limit_W where set, else tdp_W; 0 when neither is known.
double board_power_W(const HardwareSpec& hw);

/// `gpus` GPUs producing `tokens_per_s` tokens per second at board power.
std::optional<BoardEnergy> board_energy(const HardwareSpec& hw, int gpus, double tokens_per_s);

}  // namespace flopcast
