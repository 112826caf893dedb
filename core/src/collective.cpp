// SPDX-License-Identifier: MIT
#include "flopcast/collective.hpp"

namespace flopcast {
namespace {

OpCost ring(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
            int ranks, double traffic_factor) {
  OpCost op;
  op.name = std::move(name);
  op.bytes = bytes;
  op.bound = Bound::communication;
  if (ranks <= 1) return op;
  const double n = ranks;
  op.time = Seconds(hw.scaleup_latency_s) +
            Bytes(traffic_factor * (n - 1) / n * bytes.value) /
                (hw.scaleup_bandwidth * km.link_efficiency);
  op.kernels = 1;
  return op;
}

}  // namespace

OpCost all_reduce_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks) {
  return ring(std::move(name), hw, km, bytes, ranks, 2.0);
}

OpCost all_gather_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks) {
  return ring(std::move(name), hw, km, bytes, ranks, 1.0);
}

}  // namespace flopcast
