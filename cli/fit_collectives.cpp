// SPDX-License-Identifier: MIT
// `flopcast fit --collectives PATH...`: refits presets/collectives/fabrics.json, the FabricModel
// of every link type, on the train split of the measured NCCL collectives, and prints the file.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flopcast/collective_fit.hpp"
#include "flopcast/error.hpp"
#include "validate/collector.hpp"
#include "validate/loaders.hpp"

namespace flopcast::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

/// Four significant digits, as the file has always been written.
double sig4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return std::stod(buf);
}

/// A latency in µs to 4 significant digits and at most 0.1 ns resolution: the search reaches 0
/// only asymptotically (through exp), and 1e-36 µs is 0.
double latency_us(double s) { return sig4(std::round(s * 1e6 * 1e4) / 1e4); }

ordered_json fabric_json(const FabricFit& f) {
  return ordered_json{{"efficiency", sig4(f.model.efficiency)},
                      {"ll_efficiency", sig4(f.model.ll_efficiency)},
                      {"base_latency_us", latency_us(f.model.base_latency_s)},
                      {"hop_latency_us", latency_us(f.model.hop_latency_s)},
                      {"simple_latency_us", latency_us(f.model.simple_latency_s)},
                      {"train_rows", f.rows},
                      {"train_median_ape_pct", sig4(f.median_ape * 100)}};
}

FabricFit fit_link(const std::string& link, const std::vector<CollectiveMeasurement>& rows,
                   FabricRole role) {
  const FabricModel prior = tier0_fabric(role, rows.front().cluster, KernelModel{});
  const FabricFit fit = fit_fabric(rows, role, prior);
  std::cerr << "fit: " << link << ": " << fit.rows << " train rows, median APE "
            << sig4(fit.median_ape * 100) << "%, mean |ln error| " << sig4(fit.mean_abs_log_error)
            << "\n";
  return fit;
}

}  // namespace

int run_fit_collectives(const FitOptions& o) {
  validate::Collector collector({});
  collector.record_samples();
  validate::Context ctx(collector, KernelModel{});
  for (const std::string& file : expand_paths(o.paths)) validate::load_file(file, ctx);

  // Scale-up links on the single-node train rows first.
  std::map<std::string, std::vector<CollectiveMeasurement>> up_rows;
  for (const validate::CollectiveSample& s : collector.collective_samples()) {
    if (s.split == Split::train && s.scaleout_link.empty()) {
      up_rows[s.scaleup_link].push_back(s.row);
    }
  }
  std::map<std::string, FabricFit> up;
  for (const auto& [link, rows] : up_rows) {
    up.emplace(link, fit_link(link, rows, FabricRole::scaleup));
  }

  // Then scale-out links on the multi-node rows, their scale-up fabric held at its new fit.
  std::map<std::string, std::vector<CollectiveMeasurement>> out_rows;
  std::map<std::string, std::size_t> unheld;  // scale-up link without a fit -> rows left out
  for (const validate::CollectiveSample& s : collector.collective_samples()) {
    if (s.split != Split::train || s.scaleout_link.empty()) continue;
    const auto held = up.find(s.scaleup_link);
    if (held == up.end()) {
      ++unheld[s.scaleup_link];
      continue;
    }
    CollectiveMeasurement row = s.row;
    row.cluster.scaleup_model = held->second.model;
    out_rows[s.scaleout_link].push_back(row);
  }
  for (const auto& [link, n] : unheld) {
    std::cerr << "fit: " << n << " multi-node rows over " << link
              << " left out: no single-node rows to fit " << link << " on\n";
  }

  if (up.empty()) {
    throw SpecError("paths", "no measured NCCL collective in the train split (got none in " +
                                 std::to_string(collector.predicted_rows()) + " predicted rows)");
  }
  ordered_json fabrics = ordered_json::object();
  for (const auto& [link, fit] : up) fabrics[link] = fabric_json(fit);
  for (const auto& [link, rows] : out_rows) {
    fabrics[link] = fabric_json(fit_link(link, rows, FabricRole::scaleout));
  }
  const ordered_json doc{
      {"schema_version", 1},
      {"id", "fabrics"},
      {"name", "Collective fabric models per link type (fitted)"},
      {"source",
       "flopcast fit --collectives ../shared/groundtruth on the train split (70%, flopcast "
       "validate's split) of ../shared/groundtruth: aiconfigurator nccl-tests (A100, H100, H200, "
       "B200, GB200, L40S), vidur torch.distributed NCCL (A100/H100 DGX), the 2 x 8 H100 "
       "a3-mega nccl-tests log"},
      {"notes",
       "Per link type: Simple-protocol efficiency and LL/LL128 efficiency (fractions of the "
       "per-direction link bandwidth), base latency per collective, latency per algorithm step, "
       "extra fixed latency of the Simple protocol. Fitted by Nelder-Mead through the collective "
       "model itself (core/src/collective_fit.cpp), minimising the mean |ln(pred / measured)| over "
       "all sizes of the link's NCCL rows (custom all-reduce rows and pairwise-NVLink systems "
       "excluded) plus a mild pull toward the Tier-0 model (1e-4 x the squared distance in ln "
       "efficiency and ln(1 + latency/us)); efficiencies stay in (0, 1), latencies >= 0. "
       "Scale-out links fitted on multi-node rows with the scale-up fit held. ib-ndr: vidur's "
       "H100 DGX 2-node send/recv only; tcpxo: the a3-mega all-reduce log only. "
       "train_median_ape_pct is over all sizes. Regenerate with `flopcast fit --collectives "
       "../shared/groundtruth > presets/collectives/fabrics.json`; do not edit by hand."},
      {"fabrics", fabrics}};
  std::cout << doc.dump(2) << "\n";
  return kOk;
}

}  // namespace flopcast::cli
