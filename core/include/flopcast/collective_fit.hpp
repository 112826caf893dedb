// SPDX-License-Identifier: MIT
#pragma once

/// Fitting the FabricModel of one link type to measured collectives (`flopcast fit
/// --collectives`). Pure and deterministic; the rows are read by the CLI.

#include <cstddef>
#include <vector>

#include "flopcast/collective.hpp"

namespace flopcast {

/// One measured collective: the arguments of estimate_collective (NCCL's automatic algorithm)
/// and the measured time.
struct CollectiveMeasurement {
  CollectiveKind kind = CollectiveKind::all_reduce;
  Bytes bytes;
  int ranks = 2;
  ClusterSpec cluster;  ///< the fabric not being fitted is priced as given here
  Seconds measured;
};

/// Weight of the pull toward the Tier-0 model (see fit_fabric).
inline constexpr double kFabricShrinkage = 1e-4;

struct FabricFit {
  FabricModel model;              ///< fitted = true
  double mean_abs_log_error = 0;  ///< over every row, of the fitted model
  double median_ape = 0;          ///< over every row (fraction)
  std::size_t rows = 0;
};

/// Fits the five parameters of the `role` fabric (efficiency, ll_efficiency, base, hop and
/// Simple latency) shared by all `rows`, minimising
///
///   mean_i |ln(t_i / measured_i)| + shrinkage · Σ_k (u_k − u_k(prior))²
///
/// with u = ln efficiency for the two efficiencies and u = ln(1 + latency / 1 µs) for the three
/// latencies: a mild pull toward `prior` (the Tier-0 model) that decides only parameters the
/// rows leave undetermined (a hop latency on a link measured with one algorithm step, say).
/// Efficiencies are searched through a logistic, so they stay in (0, 1); latencies through exp,
/// so they stay > 0. Nelder–Mead from three starts (each restarted until it stops improving) on
/// a deterministic subsample of at most about 1200 rows (every k-th); the statistics are over
/// every row. Rows of one rank (nothing to move) are ignored. SpecError when no row is left.
FabricFit fit_fabric(const std::vector<CollectiveMeasurement>& rows, FabricRole role,
                     const FabricModel& prior, double shrinkage = kFabricShrinkage);

}  // namespace flopcast
