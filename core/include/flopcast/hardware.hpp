// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "flopcast/calibration.hpp"
#include "flopcast/dtype.hpp"
#include "flopcast/units.hpp"

namespace flopcast {

/// One accelerator and the scale-up fabric that joins it to its node peers. SI units inside.
struct HardwareSpec {
  std::string name;
  std::string vendor;
  std::map<DType, FlopsPerSecond> dense_peak;  ///< dense (never 2:4 sparse) tensor/matrix peaks
  Bytes hbm_capacity;
  BytesPerSecond hbm_bandwidth;
  Bytes l2_cache;
  int num_sms = 0;  ///< streaming multiprocessors (NVIDIA) or compute units (AMD)
  std::string scaleup_link;
  BytesPerSecond scaleup_bandwidth;  ///< per GPU, per direction
  double scaleup_latency_s = 0;      ///< fixed cost of one small collective on the fabric
  int gpus_per_node = 0;
  double tdp_W = 0;
  /// Tier-2 efficiencies fitted to measurements of this GPU; null: Tier 0 only.
  std::shared_ptr<const Calibration> calibration;

  /// Dense peak for a math type, or nullopt when the hardware has no such tensor-core support.
  [[nodiscard]] std::optional<FlopsPerSecond> peak(DType t) const {
    auto it = dense_peak.find(t);
    if (it == dense_peak.end()) return std::nullopt;
    return it->second;
  }
};

void validate(const HardwareSpec& h, const std::string& path);

}  // namespace flopcast
