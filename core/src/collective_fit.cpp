// SPDX-License-Identifier: MIT
// Fit of one link type's fabric model to measured collectives, through the collective model
// itself (estimate_collective), never a copy of it.
#include "flopcast/collective_fit.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"
#include "flopcast/optimize.hpp"
#include "flopcast/stats.hpp"

namespace flopcast {
namespace {

constexpr std::size_t kMaxSearchRows = 1200;

double logistic(double x) { return 1 / (1 + std::exp(-x)); }

/// Search coordinates (logit efficiency, logit LL efficiency, ln of the three latencies in µs)
/// to a fitted model.
FabricModel to_model(const std::vector<double>& x) {
  FabricModel f;
  f.efficiency = logistic(x[0]);
  f.ll_efficiency = logistic(x[1]);
  f.base_latency_s = std::exp(x[2]) * 1e-6;
  f.hop_latency_s = std::exp(x[3]) * 1e-6;
  f.simple_latency_s = std::exp(x[4]) * 1e-6;
  f.fitted = true;
  return f;
}

/// The coordinates the shrinkage measures distance in.
std::vector<double> shrink_coordinates(const FabricModel& f) {
  return {std::log(f.efficiency), std::log(f.ll_efficiency), std::log1p(f.base_latency_s * 1e6),
          std::log1p(f.hop_latency_s * 1e6), std::log1p(f.simple_latency_s * 1e6)};
}

double predict_s(const CollectiveMeasurement& r, FabricRole role, const FabricModel& model) {
  ClusterSpec c = r.cluster;
  (role == FabricRole::scaleup ? c.scaleup_model : c.scaleout_model) = model;
  KernelModel km;
  km.use_calibration = true;
  return estimate_collective(r.kind, r.bytes, r.ranks, c, km).time.value;
}

double mean_abs_log_error(const std::vector<const CollectiveMeasurement*>& rows, FabricRole role,
                          const FabricModel& model) {
  double sum = 0;
  for (const CollectiveMeasurement* r : rows) {
    const double e = std::fabs(std::log(predict_s(*r, role, model) / r->measured.value));
    sum += std::isfinite(e) ? e : 1e6;
  }
  return sum / static_cast<double>(rows.size());
}

}  // namespace

FabricFit fit_fabric(const std::vector<CollectiveMeasurement>& rows, FabricRole role,
                     const FabricModel& prior, double shrinkage) {
  std::vector<const CollectiveMeasurement*> all;
  for (const CollectiveMeasurement& r : rows) {
    if (r.ranks > 1) all.push_back(&r);
  }
  if (all.empty()) fail("fabrics", "needs a measured collective of more than one rank", 0.0);
  std::vector<const CollectiveMeasurement*> search;
  const std::size_t stride = std::max<std::size_t>(1, all.size() / kMaxSearchRows);
  for (std::size_t i = 0; i < all.size(); i += stride) search.push_back(all[i]);

  const std::vector<double> target = shrink_coordinates(prior);
  auto loss = [&](const std::vector<double>& x) {
    const FabricModel f = to_model(x);
    const std::vector<double> u = shrink_coordinates(f);
    double pull = 0;
    for (std::size_t k = 0; k < u.size(); ++k) pull += (u[k] - target[k]) * (u[k] - target[k]);
    return mean_abs_log_error(search, role, f) + shrinkage * pull;
  };
  // Starts: efficiency 0.73 / 0.88 / 0.62, LL 0.5 / 0.62 / 0.38, base 4.5 / 7.4 / 2.7 µs,
  // hop 0.61 / 1 / 0.37 µs, Simple 20 / 7.4 / 55 µs.
  const std::vector<std::vector<double>> starts{
      {1.0, 0.0, 1.5, -0.5, 3.0}, {2.0, 0.5, 2.0, 0.0, 2.0}, {0.5, -0.5, 1.0, -1.0, 4.0}};
  std::vector<double> best;
  double best_loss = INFINITY;
  for (const std::vector<double>& start : starts) {
    std::vector<double> x = nelder_mead(loss, start, std::vector<double>(5, 0.5), 3, 600);
    const double l = loss(x);
    if (l < best_loss) {
      best_loss = l;
      best = std::move(x);
    }
  }

  FabricFit fit;
  fit.model = to_model(best);
  fit.rows = all.size();
  fit.mean_abs_log_error = mean_abs_log_error(all, role, fit.model);
  std::vector<double> predicted, measured;
  for (const CollectiveMeasurement* r : all) {
    predicted.push_back(predict_s(*r, role, fit.model));
    measured.push_back(r->measured.value);
  }
  fit.median_ape = error_stats(predicted, measured).median_ape;
  return fit;
}

}  // namespace flopcast
