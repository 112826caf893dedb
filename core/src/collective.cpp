// SPDX-License-Identifier: MIT
// Alpha-beta model of NCCL collectives: per algorithm, the bytes each fabric carries and the steps
// it takes, priced with the faster of NCCL's two protocol families. docs/model.md derives it.
#include "flopcast/collective.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "flopcast/error.hpp"

namespace flopcast {
namespace {

/// One pipelined stage of an algorithm: `bytes` through each GPU's (or node's) share of one
/// fabric at `bandwidth`, in `steps` sequential hops.
struct Stage {
  FabricModel fabric;
  BytesPerSecond bandwidth;
  double steps = 0;
  double bytes = 0;
};

using Stages = std::array<std::optional<Stage>, 2>;  // scale-up, scale-out

/// The model a fabric is priced with: its fit, or Tier 0.
FabricModel priced(const FabricModel& f, bool scaleout, const ClusterSpec& c,
                   const KernelModel& km) {
  if (f.fitted && km.use_calibration && !km.calibrated_attention_only) return f;
  return tier0_fabric(scaleout ? FabricRole::scaleout : FabricRole::scaleup, c, km);
}

/// Time of the stages under one protocol: the slowest fabric's bytes (stages are pipelined),
/// plus every stage's hops, plus the largest fixed cost. Infinity when the protocol is off.
double protocol_time_s(const Stages& stages, bool simple) {
  double base = 0, hops = 0, transfer = 0;
  for (const auto& s : stages) {
    if (!s) continue;
    const double eff = simple ? s->fabric.efficiency : s->fabric.ll_efficiency;
    if (!(eff > 0)) return INFINITY;
    base = std::max(base, s->fabric.base_latency_s + (simple ? s->fabric.simple_latency_s : 0));
    hops += s->steps * s->fabric.hop_latency_s;
    if (s->bytes > 0) transfer = std::max(transfer, s->bytes / (s->bandwidth.value * eff));
  }
  return base + hops + transfer;
}

double stages_time_s(const Stages& stages) {
  return std::min(protocol_time_s(stages, true), protocol_time_s(stages, false));
}

/// Where the ranks sit: m per node (dense), N nodes.
struct Layout {
  double n = 1, m = 1, nodes = 1;
};

class Planner {
 public:
  Planner(CollectiveKind kind, double bytes, const Layout& l, const ClusterSpec& c,
          const KernelModel& km)
      : kind_(kind),
        s_(bytes),
        l_(l),
        c_(c),
        up_(priced(c.scaleup_model, false, c, km)),
        out_(priced(c.scaleout_model, true, c, km)) {}

  /// Stages of an algorithm, or nullopt when the op does not have it.
  std::optional<Stages> plan(CollectiveAlgorithm a) const {
    switch (a) {
      case CollectiveAlgorithm::ring:
        return ring();
      case CollectiveAlgorithm::tree:
        if (kind_ != CollectiveKind::all_reduce) return std::nullopt;
        return l_.nodes > 1 ? tree() : ring();
      case CollectiveAlgorithm::hierarchical:
        if (kind_ != CollectiveKind::all_reduce && kind_ != CollectiveKind::all_gather &&
            kind_ != CollectiveKind::reduce_scatter) {
          return std::nullopt;
        }
        return l_.nodes > 1 ? hierarchical() : ring();
      case CollectiveAlgorithm::automatic:
        break;
    }
    return std::nullopt;
  }

 private:
  Stage up(double steps, double bytes) const { return {up_, c_.scaleup_bandwidth, steps, bytes}; }
  /// Through the node's NICs together (`per_gpu` false: all rings share the node's NICs) or
  /// through one GPU's share of them (its rail).
  Stage out(double steps, double bytes, bool per_gpu) const {
    const double g = per_gpu ? 1.0 : c_.gpus_per_node;
    return {out_, BytesPerSecond(c_.scaleout_bandwidth.value * g), steps, bytes};
  }

  /// Ring steps and bytes per rank of the op over n ranks.
  std::pair<double, double> ring_traffic(double n) const {
    switch (kind_) {
      case CollectiveKind::all_reduce:
        return {2 * (n - 1), 2 * (n - 1) / n * s_};
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
        return {n - 1, (n - 1) / n * s_};
      case CollectiveKind::broadcast:
        return {n - 1, s_};  // pipelined chunks along the ring
      case CollectiveKind::all_to_all:
        return {1, (n - 1) / n * s_};  // all peers at once
      case CollectiveKind::send_recv:
        return {1, s_};
    }
    return {0, 0};
  }

  Stages ring() const {
    const auto [steps, bytes] = ring_traffic(l_.n);
    if (l_.nodes <= 1) return {up(steps, bytes), std::nullopt};
    if (kind_ == CollectiveKind::all_to_all) {
      // (m − 1)/n of the buffer stays in the node, (n − m)/n leaves through the rank's rail.
      return {up(1, (l_.m - 1) / l_.n * s_), out(1, (l_.n - l_.m) / l_.n * s_, true)};
    }
    if (kind_ == CollectiveKind::send_recv) return {up(0, 0), out(1, s_, true)};
    // One ring per NIC: every ring crosses between nodes through its own NIC, so the node's NICs
    // together carry what one rank sends; each step waits for the slowest (network) hop.
    return {up(0, bytes), out(steps, bytes, false)};
  }

  /// Double binary tree: ring bandwidth (NCCL's tuner assumes the same), a chain inside each node
  /// and 2·ceil(log2 N) hops between nodes (up and down the tree).
  Stages tree() const {
    const auto [steps, bytes] = ring_traffic(l_.n);
    (void)steps;
    return {up(2 * (l_.m - 1), bytes), out(2 * std::ceil(std::log2(l_.nodes)), bytes, false)};
  }

  /// In-node reduce-scatter, ring across nodes over each GPU's rail on 1/m of the data, in-node
  /// all-gather (all-gather and reduce-scatter keep their half of it).
  Stages hierarchical() const {
    const double m = l_.m, nodes = l_.nodes;
    const double k = kind_ == CollectiveKind::all_reduce ? 2 : 1;
    return {up(k * (m - 1), k * (m - 1) / m * s_),
            out(k * (nodes - 1), k * (nodes - 1) / nodes * s_ / m, true)};
  }

  CollectiveKind kind_;
  double s_;
  Layout l_;
  const ClusterSpec& c_;
  FabricModel up_, out_;
};

}  // namespace

double bus_factor(CollectiveKind kind, int ranks) noexcept {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::all_reduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all:
      return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::send_recv:
      return 1;
  }
  return 1;
}

FabricModel tier0_fabric(FabricRole role, const ClusterSpec& c, const KernelModel& km) {
  const bool scaleout = role == FabricRole::scaleout;
  FabricModel t;
  t.efficiency = km.link_efficiency;
  t.ll_efficiency = t.efficiency;  // one protocol in Tier 0
  t.base_latency_s = scaleout ? 0 : c.scaleup_latency_s;
  t.hop_latency_s = scaleout ? c.scaleout_latency_s : 0;
  return t;
}

ClusterSpec cluster_of(const HardwareSpec& hw) {
  ClusterSpec c;
  c.gpus_per_node = hw.gpus_per_node;
  c.scaleup_bandwidth = hw.scaleup_bandwidth;
  c.scaleup_latency_s = hw.scaleup_latency_s;
  c.scaleout_bandwidth = hw.gpus_per_node > 0
                             ? BytesPerSecond(hw.scaleout_nics_per_node *
                                              hw.scaleout_nic_bandwidth.value / hw.gpus_per_node)
                             : BytesPerSecond(0);
  c.scaleout_latency_s = hw.scaleout_latency_s;
  c.scaleup_model = hw.scaleup_fabric;
  c.scaleout_model = hw.scaleout_fabric;
  return c;
}

CollectiveEstimate estimate_collective(CollectiveKind kind, Bytes bytes, int ranks,
                                       const ClusterSpec& cluster, const KernelModel& km,
                                       CollectiveAlgorithm algorithm) {
  if (ranks < 1) fail("collective.ranks", "must be >= 1", ranks);
  if (!std::isfinite(bytes.value) || bytes.value < 0 || bytes.value > 1e15) {
    fail("collective.bytes", "must be between 0 and 1e15", bytes.value);
  }
  if (cluster.gpus_per_node < 1) fail("gpus_per_node", "must be >= 1", cluster.gpus_per_node);
  if (!(cluster.scaleup_bandwidth.value > 0) && ranks > 1) {
    fail("hardware.scaleup_bandwidth_GBps", "must be > 0", cluster.scaleup_bandwidth.value / kGB);
  }
  CollectiveEstimate e;
  e.algorithm = algorithm == CollectiveAlgorithm::automatic ? CollectiveAlgorithm::ring : algorithm;
  if (ranks == 1) return e;  // nothing to move

  Layout l;
  l.n = ranks;
  l.m = std::min(ranks, cluster.gpus_per_node);
  l.nodes = std::ceil(l.n / cluster.gpus_per_node);
  e.crosses_nodes = l.nodes > 1;
  if (e.crosses_nodes && !(cluster.scaleout_bandwidth.value > 0)) {
    throw NotModelledError("hardware.scaleout_nics_per_node",
                           "a collective over " + format_number(l.nodes) +
                               " nodes needs a scale-out network (got 0 NICs per node)");
  }

  const Planner planner(kind, bytes.value, l, cluster, km);
  double best = INFINITY;
  if (algorithm == CollectiveAlgorithm::automatic) {
    for (auto a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree,
                   CollectiveAlgorithm::hierarchical}) {
      const auto stages = planner.plan(a);
      if (!stages) continue;
      const double t = stages_time_s(*stages);
      if (t < best) {  // ties keep the simpler algorithm
        best = t;
        e.algorithm = a;
      }
    }
  } else {
    const auto stages = planner.plan(algorithm);
    if (!stages) {
      throw NotModelledError("collective.algorithm", std::string(to_string(algorithm)) +
                                                         " is not modelled for " +
                                                         std::string(to_string(kind)) + " (got \"" +
                                                         std::string(to_string(algorithm)) + "\")");
    }
    best = stages_time_s(*stages);
  }
  e.time = Seconds(best);
  if (best > 0) {
    e.algorithm_bandwidth_Bps = bytes.value / best;
    e.bus_bandwidth_Bps = e.algorithm_bandwidth_Bps * bus_factor(kind, ranks);
  }
  return e;
}

namespace {

OpCost collective_op(std::string name, CollectiveKind kind, const HardwareSpec& hw,
                     const KernelModel& km, Bytes bytes, int ranks) {
  OpCost op;
  op.name = std::move(name);
  op.bytes = bytes;
  op.bound = Bound::communication;
  if (ranks <= 1) return op;
  const bool custom =
      kind == CollectiveKind::all_reduce && uses_custom_all_reduce(hw, km, bytes, ranks);
  op.time = custom ? estimate_custom_all_reduce(bytes, ranks, cluster_of(hw), km).time
                   : estimate_collective(kind, bytes, ranks, cluster_of(hw), km).time;
  op.kernels = 1;
  return op;
}

}  // namespace

bool uses_custom_all_reduce(const HardwareSpec& hw, const KernelModel& km, Bytes bytes, int ranks) {
  const bool nvlink = hw.scaleup_link.rfind("nvlink", 0) == 0;
  return ranks > 1 && ranks <= hw.gpus_per_node && (nvlink || ranks == 2) &&
         bytes.value < km.custom_all_reduce_max_bytes;
}

CollectiveEstimate estimate_custom_all_reduce(Bytes bytes, int ranks, ClusterSpec cluster,
                                              const KernelModel& km) {
  cluster.scaleup_model = FabricModel{};  // not NCCL's fit: the one-barrier Tier-0 form
  return estimate_collective(CollectiveKind::all_reduce, bytes, ranks, cluster, km,
                             CollectiveAlgorithm::ring);
}

OpCost all_reduce_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks) {
  return collective_op(std::move(name), CollectiveKind::all_reduce, hw, km, bytes, ranks);
}

OpCost all_gather_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks) {
  return collective_op(std::move(name), CollectiveKind::all_gather, hw, km, bytes, ranks);
}

OpCost all_to_all_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Bytes bytes,
                     int ranks) {
  return collective_op(std::move(name), CollectiveKind::all_to_all, hw, km, bytes, ranks);
}

OpCost forwarded_all_to_all_op(std::string name, const HardwareSpec& hw, const KernelModel& km,
                               Bytes scaleup, Bytes scaleout, int ranks) {
  OpCost op;
  op.name = std::move(name);
  op.bytes = Bytes(scaleup.value + scaleout.value);
  op.bound = Bound::communication;
  if (ranks <= 1) return op;
  const ClusterSpec c = cluster_of(hw);
  if (!(c.scaleout_bandwidth.value > 0) || !(c.scaleup_bandwidth.value > 0)) {
    throw NotModelledError("hardware.scaleout_nics_per_node",
                           "an all-to-all forwarded between nodes needs a scale-up and a "
                           "scale-out network");
  }
  const Stages stages{
      Stage{priced(c.scaleup_model, false, c, km), c.scaleup_bandwidth, 1, scaleup.value},
      Stage{priced(c.scaleout_model, true, c, km), c.scaleout_bandwidth, 1, scaleout.value}};
  op.time = Seconds(stages_time_s(stages));
  op.kernels = 1;
  return op;
}

}  // namespace flopcast
