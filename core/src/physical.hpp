// SPDX-License-Identifier: MIT
#pragma once

/// Bounds no estimate may break, whatever its pricing: tokens through a model cost at least two
/// FLOPs per weight they multiply, and no GPU runs math faster than its highest dense peak. A
/// result that would break one is refused with a NotModelledError naming the result's quantity,
/// the bound and the value, never returned as a number (training checks MFU and HFU itself).

#include <string>

#include "flopcast/hardware.hpp"
#include "flopcast/model.hpp"

namespace flopcast::physical {

/// The fewest FLOPs one token's forward pass through `m` takes: two per weight of its linear
/// layers and experts (attention's own work, norms, the embedding lookup and the LM head, which a
/// prompt token may skip, left out).
double min_flops_per_token(const ModelSpec& m) noexcept;

/// The most FLOP/s `gpus` of `hw` reach: their highest dense peak of any type.
double max_flops_per_s(const HardwareSpec& hw, int gpus) noexcept;

/// Throws NotModelledError(`path`) when `tokens_per_s` tokens through `m` would take more FLOP/s
/// than `gpus` of `hw` reach (1 % slack for rounding).
void check_token_rate(const std::string& path, double tokens_per_s, const ModelSpec& m,
                      const HardwareSpec& hw, int gpus);

}  // namespace flopcast::physical
