// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

#include "flopcast/hardware.hpp"
#include "flopcast/kernel.hpp"

namespace flopcast {

/// The collectives of NCCL / RCCL.
enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };
std::string_view to_string(CollectiveKind k) noexcept;

/// How the library moves the data; `automatic` picks what NCCL would for the size and layout.
enum class CollectiveAlgorithm { automatic, ring, tree, hierarchical };
std::string_view to_string(CollectiveAlgorithm a) noexcept;

/// The fabric a collective runs on: a node's scale-up domain and the scale-out network between
/// nodes. Bandwidths are per GPU and per direction.
struct ClusterSpec {
  int gpus_per_node = 8;
  BytesPerSecond scaleup_bandwidth;   ///< NVLink / NVSwitch / Infinity Fabric / PCIe, per GPU
  double scaleup_latency_s = 0;
  BytesPerSecond scaleout_bandwidth;  ///< NIC bandwidth per GPU (node NIC total / gpus_per_node)
  double scaleout_latency_s = 0;
};

/// The cluster a hardware preset describes (its scale-up fields and default scale-out network).
ClusterSpec cluster_of(const HardwareSpec& hw);

/// Time of one collective. `bytes` follows the nccl-tests `size` convention: the buffer of one
/// rank (all-reduce: in = out; all-gather: the gathered output; reduce-scatter: the input;
/// all-to-all: all a rank sends; broadcast: the buffer; send/recv: the message).
struct CollectiveEstimate {
  Seconds time;
  double algorithm_bandwidth_Bps = 0;  ///< bytes / time
  double bus_bandwidth_Bps = 0;        ///< nccl-tests busbw: algbw × the op's bus factor
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  bool crosses_nodes = false;
};

/// `ranks` GPUs placed densely: min(ranks, gpus_per_node) per node.
CollectiveEstimate estimate_collective(CollectiveKind kind, Bytes bytes, int ranks,
                                       const ClusterSpec& cluster, const KernelModel& km,
                                       CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic);

/// Tensor-parallel all-reduce of `bytes` over `ranks` GPUs of one node, as an op of a step.
OpCost all_reduce_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks);

/// All-gather within one node, each rank ending with `bytes` in total, as an op of a step.
OpCost all_gather_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks);

}  // namespace flopcast
