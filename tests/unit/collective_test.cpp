// SPDX-License-Identifier: MIT
// estimate_collective against hand derivations on a hand-made cluster (no presets, no fits).
#include "flopcast/collective.hpp"

#include <gtest/gtest.h>

#include "flopcast/collective_fit.hpp"
#include "flopcast/engine.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using test::near_rel;

/// 8 GPUs per node, 450 GB/s NVLink, one 400 Gb/s (50 GB/s) NIC per GPU, fitted fabrics:
/// NVLink Simple 0.75 / LL 0.25 of the link, 5 us base, 1 us per step, Simple +15 us;
/// network 0.8 (both protocols), 10 us base, 2 us per hop.
ClusterSpec cluster() {
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.scaleup_bandwidth = BytesPerSecond(450e9);
  c.scaleup_latency_s = 8e-6;
  c.scaleout_bandwidth = BytesPerSecond(50e9);
  c.scaleout_latency_s = 5e-6;
  c.scaleup_model = {0.75, 0.25, 5e-6, 1e-6, 15e-6, true};
  c.scaleout_model = {0.8, 0.8, 10e-6, 2e-6, 0, true};
  return c;
}

ClusterSpec tier0_cluster() {
  ClusterSpec c = cluster();
  c.scaleup_model = FabricModel{};
  c.scaleout_model = FabricModel{};
  return c;
}

const KernelModel km{};

TEST(Collective, BusFactorsFollowNccl) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_reduce, 8), 1.75);      // 2·7/8
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_gather, 8), 0.875);     // 7/8
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::reduce_scatter, 4), 0.75);  // 3/4
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_to_all, 2), 0.5);       // 1/2
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::send_recv, 2), 1.0);
}

TEST(Collective, Tier0RingIsPlainAlphaBeta) {
  // Unfitted fabric: 8 us + 2·7/8·64e6 B / (450e9 · 0.8) = 8 + 311.111 = 319.111 us.
  const auto e =
      estimate_collective(CollectiveKind::all_reduce, Bytes(64e6), 8, tier0_cluster(), km);
  EXPECT_TRUE(near_rel(e.time.value, 319.111e-6, 1e-5));
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::ring);
  EXPECT_FALSE(e.crosses_nodes);
  // algbw = 64e6 / 319.111 us = 200.557 GB/s; busbw = algbw · 1.75 = 350.975 GB/s.
  EXPECT_TRUE(near_rel(e.algorithm_bandwidth_Bps, 200.557e9, 1e-5));
  EXPECT_TRUE(near_rel(e.bus_bandwidth_Bps, 350.975e9, 1e-5));
}

TEST(Collective, MediumMessagesTakeTheLowLatencyProtocol) {
  // 1 MB all-reduce on 8 GPUs: 14 steps, 1.75 MB per rank.
  // LL:     5 + 14·1 + 1.75e6 / (450e9·0.25) = 19 + 15.556 = 34.556 us
  // Simple: 5 + 15 + 14 + 1.75e6 / (450e9·0.75) = 34 + 5.185 = 39.185 us -> LL
  const auto e = estimate_collective(CollectiveKind::all_reduce, Bytes(1e6), 8, cluster(), km);
  EXPECT_TRUE(near_rel(e.time.value, 34.556e-6, 1e-4));
}

TEST(Collective, LargeMessagesTakeSimple) {
  // 64 MB: LL 19 + 112e6 / 112.5e9 = 1014.56 us; Simple 34 + 112e6 / 337.5e9 = 365.85 us.
  const auto e = estimate_collective(CollectiveKind::all_reduce, Bytes(64e6), 8, cluster(), km);
  EXPECT_TRUE(near_rel(e.time.value, 365.852e-6, 1e-5));
}

TEST(Collective, EachOpMovesItsRingTraffic) {
  const ClusterSpec c = cluster();
  // All-gather 64 MB, 8 ranks, Simple: 5 + 15 + 7·1 + 7/8·64e6 / 337.5e9 = 27 + 165.926 us.
  EXPECT_TRUE(
      near_rel(estimate_collective(CollectiveKind::all_gather, Bytes(64e6), 8, c, km).time.value,
               192.926e-6, 1e-5));
  // Reduce-scatter has the same traffic.
  EXPECT_TRUE(near_rel(
      estimate_collective(CollectiveKind::reduce_scatter, Bytes(64e6), 8, c, km).time.value,
      192.926e-6, 1e-5));
  // All-to-all: one round to all peers: 5 + 15 + 1 + 56e6 / 337.5e9 = 21 + 165.926 us.
  EXPECT_TRUE(
      near_rel(estimate_collective(CollectiveKind::all_to_all, Bytes(64e6), 8, c, km).time.value,
               186.926e-6, 1e-5));
  // Broadcast: pipelined along the ring: 5 + 15 + 7 + 64e6 / 337.5e9 = 27 + 189.630 us.
  EXPECT_TRUE(
      near_rel(estimate_collective(CollectiveKind::broadcast, Bytes(64e6), 8, c, km).time.value,
               216.630e-6, 1e-5));
  // Send/recv: 5 + 15 + 1 + 64e6 / 337.5e9 = 21 + 189.630 us.
  EXPECT_TRUE(
      near_rel(estimate_collective(CollectiveKind::send_recv, Bytes(64e6), 2, c, km).time.value,
               210.630e-6, 1e-5));
}

TEST(Collective, LatencyFloorForEmptyMessages) {
  // 0 bytes: LL base 5 us + 14 steps · 1 us = 19 us; bandwidths 0.
  const auto e = estimate_collective(CollectiveKind::all_reduce, Bytes(0), 8, cluster(), km);
  EXPECT_TRUE(near_rel(e.time.value, 19e-6, 1e-9));
  EXPECT_EQ(e.bus_bandwidth_Bps, 0.0);
  // One rank moves nothing.
  EXPECT_EQ(
      estimate_collective(CollectiveKind::all_reduce, Bytes(1e6), 1, cluster(), km).time.value,
      0.0);
}

TEST(Collective, AcrossNodesNcclPicksHierarchicalForLargeAllReduce) {
  // 1 GB over 16 ranks (2 nodes x 8), Simple protocol throughout:
  // hierarchical: NVLink 2·7/8·1e9 = 1.75e9 B at 337.5e9 -> 5185.19 us; rails 2·1/2·1e9/8 =
  //   0.125e9 B at 50e9·0.8 -> 3125 us; latency max(5+15, 10) + 14·1 + 2·2 = 38 us -> 5223.19 us
  // tree: 1.875e9 B over NVLink (5555.6 us) and the node's 8 NICs (400e9·0.8: 5859.4 us),
  //   20 + 14 + 2·ceil(log2 2)·2 = 38 us -> 5897.4 us
  // ring: 20 + 30·2 + 5859.4 = 5939.4 us
  const auto e = estimate_collective(CollectiveKind::all_reduce, Bytes(1e9), 16, cluster(), km);
  EXPECT_TRUE(e.crosses_nodes);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::hierarchical);
  EXPECT_TRUE(near_rel(e.time.value, 5223.19e-6, 1e-5));
  EXPECT_TRUE(near_rel(estimate_collective(CollectiveKind::all_reduce, Bytes(1e9), 16, cluster(),
                                           km, CollectiveAlgorithm::tree)
                           .time.value,
                       5897.4e-6, 1e-4));
  EXPECT_TRUE(near_rel(estimate_collective(CollectiveKind::all_reduce, Bytes(1e9), 16, cluster(),
                                           km, CollectiveAlgorithm::ring)
                           .time.value,
                       5939.4e-6, 1e-4));
  // busbw = 1e9 / 5223.19 us · 2·15/16 = 358.96 GB/s.
  EXPECT_TRUE(near_rel(e.bus_bandwidth_Bps, 358.96e9, 1e-4));
}

TEST(Collective, SmallAllReduceAcrossManyNodesTakesTheTree) {
  // 0 bytes, 64 ranks on 8 nodes, LL: tree 10 + 14·1 + 2·3·2 = 36 us; hierarchical
  // 10 + 14 + 2·7·2 = 52 us; ring 10 + 126·2 = 262 us.
  const auto e = estimate_collective(CollectiveKind::all_reduce, Bytes(0), 64, cluster(), km);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::tree);
  EXPECT_TRUE(near_rel(e.time.value, 36e-6, 1e-9));
}

TEST(Collective, BadInputIsAnError) {
  const ClusterSpec c = cluster();
  try {
    (void)estimate_collective(CollectiveKind::all_reduce, Bytes(1e6), 0, c, km);
    FAIL() << "ranks 0 accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.path(), "collective.ranks");
  }
  EXPECT_THROW((void)estimate_collective(CollectiveKind::all_reduce, Bytes(-1), 8, c, km),
               SpecError);
  // Trees are NCCL's all-reduce algorithm only.
  EXPECT_THROW((void)estimate_collective(CollectiveKind::all_gather, Bytes(1e6), 16, c, km,
                                         CollectiveAlgorithm::tree),
               NotModelledError);
  ClusterSpec single = c;
  single.scaleout_bandwidth = BytesPerSecond(0);
  try {
    (void)estimate_collective(CollectiveKind::all_reduce, Bytes(1e6), 16, single, km);
    FAIL() << "crossed nodes without a network";
  } catch (const NotModelledError& e) {
    EXPECT_EQ(e.path(), "hardware.scaleout_nics_per_node");
  }
}

TEST(CollectiveJson, ResponseCarriesTheContractKeys) {
  const io::json r = io::run({{"task", "collective"},
                              {"hardware", "h100-sxm"},
                              {"collective", {{"op", "all_reduce"}, {"bytes", 64e6}, {"ranks", 8}}},
                              {"max_tier", 0}});
  // Tier 0 on the preset: 8 us + 1.75·64e6 / 360e9 = 319.111 us (as Tier0RingIsPlainAlphaBeta).
  EXPECT_TRUE(near_rel(r.at("time_us").get<double>(), 319.111, 1e-5));
  EXPECT_TRUE(near_rel(r.at("bus_bandwidth_GBps").get<double>(), 350.975, 1e-5));
  EXPECT_TRUE(near_rel(r.at("algorithm_bandwidth_GBps").get<double>(), 200.557, 1e-5));
  EXPECT_EQ(r.at("algorithm"), "ring");
  EXPECT_EQ(r.at("crosses_nodes"), false);
  EXPECT_EQ(r.at("request").at("collective").at("algorithm"), "automatic");
  EXPECT_EQ(r.at("request").at("network").at("nics_per_node"), 8);  // DGX H100 default
}

TEST(CollectiveJson, FewerGpusPerNodeKeepEachGpusNicShare) {
  // h100-sxm: 8 GPUs and 8 × 400 Gb/s NICs per node. At 1 GPU per node each node keeps its one
  // NIC: Tier-0 ring all-reduce of 64e6 B over 4 nodes moves 2·3/4·64e6 = 96e6 B per GPU through
  // 50e9 B/s · 0.8 = 40e9 B/s: 2400 us plus the per-hop latencies (6 hops · 5 us and the fixed
  // costs, under 50 us). With the preset's 8 NICs it came out 8x faster (300 us + latencies).
  io::json q{
      {"task", "collective"},
      {"hardware", "h100-sxm"},
      {"collective", {{"op", "all_reduce"}, {"bytes", 64e6}, {"ranks", 4}, {"algorithm", "ring"}}},
      {"gpus_per_node", 1},
      {"max_tier", 0}};
  const io::json r = io::run(q);
  const double t = r.at("time_us").get<double>();
  EXPECT_GT(t, 2400);
  EXPECT_LT(t, 2450);
  EXPECT_EQ(r.at("request").at("network").at("nics_per_node"), 1);
  EXPECT_EQ(r.at("request").at("network").at("nic_bandwidth_Gbps"), 400);
  EXPECT_EQ(io::run(r.at("request")).at("time_us"), r.at("time_us"));  // the echo reruns
  // An explicit network wins: 8 NICs for the one GPU.
  q["network"] = {{"nics_per_node", 8}};
  EXPECT_LT(io::run(q).at("time_us").get<double>(), 400);
}

TEST(CollectiveJson, ErrorsNameTheField) {
  const io::json good{{"task", "collective"},
                      {"hardware", "h100-sxm"},
                      {"collective", {{"op", "all_reduce"}, {"bytes", 1024}, {"ranks", 8}}}};
  io::json r = good;
  r["collective"]["op"] = "allreduce";
  EXPECT_EQ(test::failure_of(r).path, "collective.op");
  r = good;
  r["collective"]["size"] = 1;
  EXPECT_EQ(test::failure_of(r).path, "collective.size");
  r = good;
  r["collective"].erase("ranks");
  EXPECT_EQ(test::failure_of(r).path, "collective.ranks");
  r = good;
  r["network"] = {{"nic_bandwidth_Gbps", -1}};
  const test::Failure f = test::failure_of(r);
  EXPECT_EQ(f.path, "network.nic_bandwidth_Gbps");
  EXPECT_EQ(f.message, "network.nic_bandwidth_Gbps: must be > 0 (got -1)");
  r = good;
  r["hardware"] = "l40s";
  r["collective"]["ranks"] = 16;
  const test::Failure g = test::failure_of(r);
  EXPECT_EQ(g.code, "not_modelled");
  EXPECT_EQ(g.path, "hardware.scaleout_nics_per_node");
}

// ---- fit_fabric: rows generated by the model itself from known parameters ----

/// Every op of one node at 2, 4 and 8 ranks, 1 KiB to 1 GiB in steps of 4x, "measured" as the
/// model prices them on `c`.
std::vector<CollectiveMeasurement> single_node_rows(const ClusterSpec& c) {
  std::vector<CollectiveMeasurement> rows;
  for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather,
                    CollectiveKind::reduce_scatter, CollectiveKind::all_to_all}) {
    for (int ranks : {2, 4, 8}) {
      for (double bytes = 1024; bytes <= 1.1e9; bytes *= 4) {
        rows.push_back({kind, Bytes(bytes), ranks, c,
                        estimate_collective(kind, Bytes(bytes), ranks, c, km).time});
      }
    }
  }
  return rows;
}

void expect_recovered(const FabricModel& got, const FabricModel& truth) {
  EXPECT_TRUE(near_rel(got.efficiency, truth.efficiency, 0.01));
  EXPECT_TRUE(near_rel(got.ll_efficiency, truth.ll_efficiency, 0.01));
  EXPECT_TRUE(near_rel(got.base_latency_s, truth.base_latency_s, 0.05));
  EXPECT_TRUE(near_rel(got.hop_latency_s, truth.hop_latency_s, 0.05));
  EXPECT_TRUE(near_rel(got.simple_latency_s, truth.simple_latency_s, 0.05));
  EXPECT_TRUE(got.fitted);
}

TEST(CollectiveFit, RecoversScaleUpParametersOfSyntheticRows) {
  // The rows are the model's own times under cluster()'s NVLink fit (Simple 0.75, LL 0.25,
  // 5 us base, 1 us per step, Simple +15 us), so the mean |ln error| is 0 there and nowhere
  // else: base and per-step latency separate through the step counts 2(n-1), n-1 and 1, the
  // two efficiencies through the LL/Simple crossover. The fit starts from none of these values
  // and the Tier-0 pull (0.8, 0.8, 8 us, 0, 0) is too weak to move it off them.
  const ClusterSpec c = cluster();
  const std::vector<CollectiveMeasurement> rows = single_node_rows(c);
  const FabricFit fit =
      fit_fabric(rows, FabricRole::scaleup, tier0_fabric(FabricRole::scaleup, c, km));
  expect_recovered(fit.model, c.scaleup_model);
  EXPECT_EQ(fit.rows, rows.size());  // 4 ops x 3 rank counts x 11 sizes = 132
  EXPECT_LT(fit.median_ape, 0.01);
}

TEST(CollectiveFit, RecoversScaleOutParametersWithScaleUpHeld) {
  // 2 and 4 nodes of 8 (all-reduce: ring, tree and hierarchical compete; all-gather; send/recv
  // over one rail), the NVLink fit held at cluster()'s, a network of Simple 0.7, LL 0.35, 12 us
  // base, 3 us per hop, Simple +14 us to recover. The fixed cost of a protocol is the larger of
  // the two fabrics' (LL: 12 > 5 us; Simple: 12 + 14 = 26 > 5 + 15 = 20 us), so both show.
  ClusterSpec c = cluster();
  c.scaleout_model = {0.7, 0.35, 12e-6, 3e-6, 14e-6, true};
  std::vector<CollectiveMeasurement> rows;
  for (auto kind :
       {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::send_recv}) {
    for (int ranks : {16, 32}) {
      for (double bytes = 1024; bytes <= 1.1e9; bytes *= 4) {
        rows.push_back({kind, Bytes(bytes), ranks, c,
                        estimate_collective(kind, Bytes(bytes), ranks, c, km).time});
      }
    }
  }
  const FabricFit fit =
      fit_fabric(rows, FabricRole::scaleout, tier0_fabric(FabricRole::scaleout, c, km));
  expect_recovered(fit.model, c.scaleout_model);
}

TEST(CollectiveFit, KeepsEfficienciesBelowOneAndLatenciesNonNegative) {
  // Large messages 20 % faster than the link allows (Simple efficiency 1.2): the best physical
  // model runs the link at just under its full bandwidth, never past it.
  ClusterSpec c = cluster();
  c.scaleup_model = {1.2, 0.25, 5e-6, 1e-6, 15e-6, true};
  const FabricFit fit = fit_fabric(single_node_rows(c), FabricRole::scaleup,
                                   tier0_fabric(FabricRole::scaleup, c, km));
  EXPECT_GT(fit.model.efficiency, 0.95);
  EXPECT_LE(fit.model.efficiency, 1.0);
  EXPECT_LE(fit.model.ll_efficiency, 1.0);
  EXPECT_GE(fit.model.base_latency_s, 0.0);
  EXPECT_GE(fit.model.hop_latency_s, 0.0);
  EXPECT_GE(fit.model.simple_latency_s, 0.0);
}

TEST(CollectiveFit, NeedsARowOfMoreThanOneRank) {
  const ClusterSpec c = cluster();
  const std::vector<CollectiveMeasurement> rows{
      {CollectiveKind::all_reduce, Bytes(1e6), 1, c, Seconds(1e-5)}};
  try {
    (void)fit_fabric(rows, FabricRole::scaleup, FabricModel{});
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "fabrics: needs a measured collective of more than one rank (got 0)");
  }
}

TEST(CustomAllReduce, OneBarrierThenTwoShotTraffic) {
  // 1 MB over 4 ranks, whatever NCCL fit the cluster carries: 8 us + 2·3/4 · 1e6 B /
  // (450e9 B/s · 0.80) = 8 + 4.1667 = 12.1667 us (no ring steps).
  EXPECT_TRUE(near_rel(estimate_custom_all_reduce(Bytes(1e6), 4, cluster(), km).time.value,
                       12.1667e-6, 1e-4));
}

TEST(CustomAllReduce, TakenWhereVllmTakesIt) {
  HardwareSpec hw;
  hw.scaleup_link = "nvlink4";
  hw.gpus_per_node = 8;
  KernelModel k;
  k.custom_all_reduce_max_bytes = 8 * kMiB;
  EXPECT_TRUE(uses_custom_all_reduce(hw, k, Bytes(1e6), 4));
  EXPECT_FALSE(uses_custom_all_reduce(hw, k, Bytes(8 * kMiB), 4));         // input < max_size only
  EXPECT_FALSE(uses_custom_all_reduce(hw, k, Bytes(1e6), 16));             // beyond one node
  EXPECT_FALSE(uses_custom_all_reduce(hw, KernelModel{}, Bytes(1e6), 4));  // NCCL engines
  hw.scaleup_link = "pcie4";
  EXPECT_TRUE(uses_custom_all_reduce(hw, k, Bytes(1e6), 2));   // 2 GPUs on any link
  EXPECT_FALSE(uses_custom_all_reduce(hw, k, Bytes(1e6), 4));  // else full NVLink only
}

TEST(CustomAllReduce, VllmTensorParallelAllReduceIsNotPricedAsNccl) {
  // H100 (450 GB/s, 8 us Tier-0 latency), vLLM's profile (8 MiB custom all-reduce): a decode
  // step's 64 KiB all-reduce over 4 GPUs costs 8 us + 1.5 · 65536 B / (450e9 B/s · 0.8) =
  // 8.273 us, below the fitted NCCL ring (base + 6 steps), as vLLM's measured 5.2 us is below
  // NCCL's 13.5 us (aiconfigurator, H100).
  const HardwareSpec hw = io::resolve_hardware("h100-sxm", "hardware");
  KernelModel vllm;
  apply_engine(io::engine_profile("vllm", "engine"), vllm);
  const double custom = all_reduce_op("tp_comm", hw, vllm, Bytes(65536), 4).time.value;
  const double nccl = all_reduce_op("tp_comm", hw, KernelModel{}, Bytes(65536), 4).time.value;
  EXPECT_TRUE(near_rel(custom, 8.2731e-6, 1e-4));
  EXPECT_LT(custom, nccl);
}

}  // namespace
}  // namespace flopcast
