// SPDX-License-Identifier: MIT
// `task: "collective"`: one NCCL-style collective on a hardware preset (or object), with the
// fitted fabric models of presets/collectives/fabrics.json.
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "flopcast/collective.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "reader.hpp"
#include "specs.hpp"

// The typed API defined here is public (flopcast/io/specs.hpp); its bodies use the detail
// helpers of this file.
namespace flopcast::io {
using namespace detail;
}  // namespace flopcast::io

namespace flopcast::io::detail {
namespace {

FabricModel read_fabric(const json& j, const std::string& path) {
  ObjectReader r(j, path,
                 {"efficiency", "ll_efficiency", "base_latency_us", "hop_latency_us",
                  "simple_latency_us", "train_rows", "train_median_ape_pct"});
  FabricModel f;
  f.efficiency = r.number("efficiency");
  f.ll_efficiency = r.number("ll_efficiency");
  f.base_latency_s = r.number("base_latency_us") * kMicro;
  f.hop_latency_s = r.number("hop_latency_us") * kMicro;
  f.simple_latency_s = r.number("simple_latency_us") * kMicro;
  (void)r.integer("train_rows", 0);
  (void)r.number("train_median_ape_pct", 0);
  f.fitted = true;
  auto fraction = [&](const char* key, double v) {
    if (!(v > 0 && v <= 1.5)) fail(r.child(key), "must be in (0, 1.5]", v);
  };
  fraction("efficiency", f.efficiency);
  fraction("ll_efficiency", f.ll_efficiency);
  for (const char* key : {"base_latency_us", "hop_latency_us", "simple_latency_us"}) {
    if (r.number(key) < 0) fail(r.child(key), "must be >= 0", r.number(key));
  }
  return f;
}

std::map<std::string, FabricModel> read_fits(const json& doc) {
  std::map<std::string, FabricModel> m;
  const json& fabrics = doc.at("fabrics");
  if (!fabrics.is_object()) throw SpecError("fabrics", "must be an object");
  for (const auto& item : fabrics.items()) {
    m[item.key()] = read_fabric(item.value(), "fabrics." + item.key());
  }
  return m;
}

const std::map<std::string, FabricModel>& all_fits() {
  static const std::map<std::string, FabricModel> all = [] {
    std::map<std::string, FabricModel> m;
    for (const json& doc : detail::preset_list("collectives")) m.merge(read_fits(doc));
    return m;
  }();
  return all;
}

CollectiveKind read_op(const ObjectReader& r) {
  (void)r.require("op");
  return r.choice("op", kCollectiveKindNames, CollectiveKind::all_reduce);
}

/// `network` overrides the hardware's scale-out fields; checked under their own keys.
void apply_network(const json& j, HardwareSpec& hw) {
  ObjectReader n(j, "network", {"link", "nics_per_node", "nic_bandwidth_Gbps", "latency_us"});
  hw.scaleout_link = n.string("link", hw.scaleout_link);
  read_network_fields(n, hw);
  hw.scaleout_fabric = FabricModel{};
  attach_collective_fits(hw);
}

}  // namespace

void check_collective_fits(const json& doc) { (void)read_fits(doc); }

}  // namespace flopcast::io::detail

namespace flopcast::io {
void attach_collective_fits(HardwareSpec& h) {
  const auto& fits = all_fits();
  if (auto it = fits.find(h.scaleup_link); it != fits.end()) h.scaleup_fabric = it->second;
  if (auto it = fits.find(h.scaleout_link); it != fits.end()) h.scaleout_fabric = it->second;
}

}  // namespace flopcast::io

namespace flopcast::io::detail {

json run_collective(const json& request) {
  ObjectReader r(
      request, "",
      {"schema_version", "task", "hardware", "collective", "gpus_per_node", "network", "max_tier"});
  HardwareSpec hw = resolve_hardware(r.require("hardware"), "hardware");
  const int max_tier = r.integer("max_tier", 2);
  if (max_tier != 0 && max_tier != 2) fail("max_tier", "must be 0 or 2", max_tier);
  KernelModel km;
  km.use_calibration = max_tier == 2;

  ObjectReader c(r.require("collective"), "collective", {"op", "bytes", "ranks", "algorithm"});
  const CollectiveKind op = read_op(c);
  const double bytes = c.number("bytes");
  if (bytes < 0 || bytes > 1e15) fail("collective.bytes", "must be between 0 and 1e15", bytes);
  const int ranks = c.integer("ranks");
  if (ranks < 1 || ranks > 1'000'000) fail("collective.ranks", "must be between 1 and 1e6", ranks);
  const CollectiveAlgorithm algorithm =
      c.choice("algorithm", kCollectiveAlgorithmNames, CollectiveAlgorithm::automatic);

  const int gpus_per_node = r.integer("gpus_per_node", hw.gpus_per_node);
  if (gpus_per_node < 1 || gpus_per_node > 1024) {
    fail("gpus_per_node", "must be between 1 and 1024", gpus_per_node);
  }
  // Each GPU keeps its own NIC share: fewer GPUs per node, fewer NICs (unless `network` says).
  hw = with_gpus_per_node(hw, gpus_per_node);
  if (const json* net = r.find("network")) apply_network(*net, hw);

  const ClusterSpec cluster = cluster_of(hw);
  const CollectiveEstimate e = estimate_collective(op, Bytes(bytes), ranks, cluster, km, algorithm);
  const double nodes = std::ceil(static_cast<double>(ranks) / hw.gpus_per_node);
  const bool fitted = km.use_calibration && hw.scaleup_fabric.fitted &&
                      (!e.crosses_nodes || hw.scaleout_fabric.fitted);

  json resolved{{"schema_version", kSchemaVersion},
                {"task", "collective"},
                {"hardware", r.require("hardware")},
                {"collective",
                 {{"op", to_string(op)},
                  {"bytes", bytes == std::floor(bytes) ? json(static_cast<std::int64_t>(bytes))
                                                       : json(bytes)},
                  {"ranks", ranks},
                  {"algorithm", to_string(algorithm)}}},
                {"gpus_per_node", hw.gpus_per_node},
                {"network",
                 {{"link", hw.scaleout_link},
                  {"nics_per_node", hw.scaleout_nics_per_node},
                  {"nic_bandwidth_Gbps", round6(hw.scaleout_nic_bandwidth.value * 8 / kGB)},
                  {"latency_us", round6(hw.scaleout_latency_s / kMicro)}}},
                {"max_tier", max_tier}};
  return json{{"schema_version", kSchemaVersion},
              {"task", "collective"},
              {"time_us", round6(e.time.value / kMicro)},
              {"bus_bandwidth_GBps", round6(e.bus_bandwidth_Bps / kGB)},
              {"algorithm_bandwidth_GBps", round6(e.algorithm_bandwidth_Bps / kGB)},
              {"bus_factor", round6(bus_factor(op, ranks))},
              {"algorithm", to_string(e.algorithm)},
              {"crosses_nodes", e.crosses_nodes},
              {"nodes", static_cast<int>(nodes)},
              {"ranks_per_node", std::min(ranks, hw.gpus_per_node)},
              {"tier", fitted ? 2 : 0},
              {"request", std::move(resolved)}};
}

}  // namespace flopcast::io::detail
