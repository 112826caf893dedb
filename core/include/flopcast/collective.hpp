// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "flopcast/hardware.hpp"
#include "flopcast/kernel.hpp"
#include "flopcast/names.hpp"

namespace flopcast {

/// The collectives of NCCL / RCCL.
enum class CollectiveKind {
  all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  broadcast,
  send_recv
};
inline constexpr std::array<Named<CollectiveKind>, 6> kCollectiveKindNames{
    {{"all_reduce", CollectiveKind::all_reduce},
     {"all_gather", CollectiveKind::all_gather},
     {"reduce_scatter", CollectiveKind::reduce_scatter},
     {"all_to_all", CollectiveKind::all_to_all},
     {"broadcast", CollectiveKind::broadcast},
     {"send_recv", CollectiveKind::send_recv}}};
constexpr std::string_view to_string(CollectiveKind k) noexcept {
  return name_in(kCollectiveKindNames, k);
}

/// How the library moves the data; `automatic` picks what NCCL would for the size and layout.
enum class CollectiveAlgorithm { automatic, ring, tree, hierarchical };
inline constexpr std::array<Named<CollectiveAlgorithm>, 4> kCollectiveAlgorithmNames{
    {{"automatic", CollectiveAlgorithm::automatic},
     {"ring", CollectiveAlgorithm::ring},
     {"tree", CollectiveAlgorithm::tree},
     {"hierarchical", CollectiveAlgorithm::hierarchical}}};
constexpr std::string_view to_string(CollectiveAlgorithm a) noexcept {
  return name_in(kCollectiveAlgorithmNames, a);
}

/// NCCL's bus-bandwidth factor (nccl-tests busbw = algbw x factor): all-reduce 2(n-1)/n;
/// all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast and send/recv 1.
double bus_factor(CollectiveKind kind, int ranks) noexcept;

/// The fabric a collective runs on: a node's scale-up domain and the scale-out network between
/// nodes. Bandwidths are per GPU and per direction.
struct ClusterSpec {
  int gpus_per_node = 8;
  BytesPerSecond scaleup_bandwidth;  ///< NVLink / NVSwitch / Infinity Fabric / PCIe, per GPU
  double scaleup_latency_s = 0;
  BytesPerSecond scaleout_bandwidth;  ///< NIC bandwidth per GPU (node NIC total / gpus_per_node)
  double scaleout_latency_s = 0;
  /// Achievable bandwidth and latencies of each fabric (hardware's fits or Tier 0). In Tier 0
  /// the scale-up base latency is `scaleup_latency_s` and each scale-out hop costs
  /// `scaleout_latency_s`.
  FabricModel scaleup_model;
  FabricModel scaleout_model;
};

/// The two fabrics of a cluster.
enum class FabricRole { scaleup, scaleout };

/// The Tier-0 model of a fabric (what an unfitted fabric is priced with): the Simple protocol
/// only, at the kernel model's link efficiency; scale-up: the hardware's latency once per
/// collective; scale-out: its latency per hop.
FabricModel tier0_fabric(FabricRole role, const ClusterSpec& c, const KernelModel& km);

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
///
/// t = min over protocols p of [ latency_p + max over fabrics f (bytes_f / (BW_f · η_{f,p})) ]:
/// the stages of an algorithm are pipelined, so bandwidth terms overlap and latencies add.
/// ring: every step crosses the slowest link (scale-out when the ring spans nodes); tree: NCCL's
/// double binary tree for all-reduce (chain in the node, 2·ceil(log2 nodes) hops between nodes,
/// ring bandwidth); hierarchical: in-node reduce-scatter, inter-node ring over the rails
/// (all-reduce, all-gather, reduce-scatter), in-node all-gather. `automatic` takes the fastest
/// algorithm the op supports, as NCCL's tuner does. Errors: SpecError for ranks < 1 or bad bytes;
/// NotModelledError for an algorithm the op does not have, or nodes without a scale-out network.
CollectiveEstimate estimate_collective(
    CollectiveKind kind, Bytes bytes, int ranks, const ClusterSpec& cluster, const KernelModel& km,
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic);

/// Whether an inference engine runs this tensor-parallel all-reduce with its own custom kernel
/// rather than NCCL: 2..gpus_per_node ranks over NVLink (or 2 GPUs on any link), at most
/// less than `km.custom_all_reduce_max_bytes` per rank. vLLM (and SGLang, which uses its kernel)
/// takes its custom all-reduce under these conditions, 8 MiB by default
/// (`CustomAllreduce.max_size`), and NCCL otherwise.
bool uses_custom_all_reduce(const HardwareSpec& hw, const KernelModel& km, Bytes bytes, int ranks);

/// A custom (one-shot / two-shot) all-reduce inside one node: one barrier, then each rank moves
/// the two-shot traffic 2(n−1)/n·bytes over its links:
///   t = scaleup_latency + 2(n−1)/n · bytes / (scale-up BW · link_efficiency),
/// the Tier-0 form with no ring steps, whatever NCCL fabric fit the cluster has (those are fitted
/// on NCCL's ring and tree, whose per-step latencies a one-kernel all-reduce does not pay).
CollectiveEstimate estimate_custom_all_reduce(Bytes bytes, int ranks, ClusterSpec cluster,
                                              const KernelModel& km);

/// Tensor-parallel all-reduce of `bytes` over `ranks` GPUs of one node, as an op of a step: the
/// engine's custom all-reduce where uses_custom_all_reduce, else NCCL (estimate_collective).
OpCost all_reduce_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks);

/// All-gather within one node, each rank ending with `bytes` in total, as an op of a step.
OpCost all_gather_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks);

/// All-to-all over `ranks` GPUs (across nodes where they span them), each rank sending a buffer
/// of `bytes` spread evenly over all ranks ((n−1)/n of it leaves the GPU), as an op of a step.
OpCost all_to_all_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks);

/// All-to-all over `ranks` GPUs on several nodes whose bytes per GPU through each fabric are
/// given apart, the two stages pipelined (as estimate_collective prices them): `scaleout` through
/// the GPU's own NIC, `scaleup` over NVLink. DeepEP's normal (high-throughput) dispatch and
/// combine send a token across the network once per remote node and forward it inside that node
/// (moe_forwarded_bytes), so the network carries less than all_to_all_op's even spread.
OpCost forwarded_all_to_all_op(std::string name, const HardwareSpec& hw, const KernelModel& km,
                               Bytes scaleup, Bytes scaleout, int ranks);

}  // namespace flopcast
