// SPDX-License-Identifier: MIT
#include "flopcast/energy.hpp"

#include <cmath>

namespace flopcast {

double board_power_W(const HardwareSpec& hw) {
  return hw.power_limit_W > 0 ? hw.power_limit_W : hw.tdp_W;
}

std::optional<BoardEnergy> board_energy(const HardwareSpec& hw, int gpus, double tokens_per_s) {
  const double per_gpu = board_power_W(hw);
  if (!(per_gpu > 0) || gpus < 1 || !(tokens_per_s > 0) || !std::isfinite(tokens_per_s)) {
    return std::nullopt;
  }
  BoardEnergy e;
  e.power_W = per_gpu * gpus;
  e.joules_per_token = e.power_W / tokens_per_s;
  e.tokens_per_kWh = 3.6e6 / e.joules_per_token;  // 1 kWh = 3.6 MJ
  return e;
}

}  // namespace flopcast
