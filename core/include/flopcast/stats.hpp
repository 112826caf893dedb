// SPDX-License-Identifier: MIT
#pragma once

/// Error statistics and the deterministic train/test split of the accuracy harness
/// (`flopcast validate`). Pure functions, no I/O.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace flopcast {

/// Error of predictions against measurements, as fractions (0.05 = 5 %).
/// APE_i = |pred_i − meas_i| / meas_i; signed error_i = (pred_i − meas_i) / meas_i.
struct ErrorStats {
  std::size_t count = 0;
  double mape = 0;            ///< mean APE
  double median_ape = 0;      ///< 50th percentile of APE
  double p90_ape = 0;         ///< 90th percentile of APE
  double max_ape = 0;         ///< largest APE
  std::size_t max_index = 0;  ///< index of the row with the largest APE (first one on ties)
  double bias = 0;  ///< mean signed error: > 0 means flopcast predicts too slow / too high
};

/// Statistics of `predicted` against `measured` (same length; every measurement finite and > 0,
/// every prediction finite; SpecError otherwise). Percentiles interpolate linearly between the
/// closest ranks of the sorted APEs (NumPy's default "linear" method): the p-th percentile of
/// n sorted values x_0..x_{n−1} sits at position p/100 · (n − 1). An empty input gives count 0
/// and all statistics 0.
ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& measured);

/// The p-th percentile (0-100) of sorted, non-empty values, interpolated linearly between the
/// closest ranks (NumPy's default "linear" method).
double percentile(const std::vector<double>& sorted, double p);

/// 64-bit FNV-1a hash (offset basis 14695981039346656037, prime 1099511628211) of the bytes.
std::uint64_t fnv1a64(std::string_view bytes) noexcept;

enum class Split { train, test };
std::string_view to_string(Split s) noexcept;

/// Deterministic split of one row by its identity string: train iff fnv1a64(identity) % 100 < 70
/// (about 70 % train, 30 % test), the same on every platform and every run.
Split split_of(std::string_view identity) noexcept;

}  // namespace flopcast
