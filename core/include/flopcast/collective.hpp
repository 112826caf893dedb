// SPDX-License-Identifier: MIT
#pragma once

#include "flopcast/hardware.hpp"
#include "flopcast/kernel.hpp"

namespace flopcast {

/// Ring all-reduce of `bytes` over `ranks` GPUs of one node's scale-up fabric (alpha-beta model):
///   t = scaleup_latency + 2·(n−1)/n · bytes / (per-direction link BW · link_efficiency).
/// The 2(n−1)/n factor is NCCL's bus-bandwidth convention for all-reduce. One rank costs nothing.
OpCost all_reduce_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks);

/// Ring all-gather, each rank ending with `bytes` in total: t = latency + (n−1)/n · bytes / BW.
OpCost all_gather_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks);

}  // namespace flopcast
