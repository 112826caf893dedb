// SPDX-License-Identifier: MIT
#include "flopcast/optimize.hpp"

#include <algorithm>
#include <numeric>

namespace flopcast {

std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> start, const std::vector<double>& step,
                                int max_runs, int max_iterations) {
  using Point = std::vector<double>;
  const std::size_t n = start.size();
  Point best = std::move(start);
  double best_value = f(best);
  for (int run = 0; run < max_runs; ++run) {
    std::vector<Point> simplex(n + 1, best);
    std::vector<double> value(n + 1);
    for (std::size_t i = 0; i < n; ++i) simplex[i + 1][i] += step[i];
    for (std::size_t i = 0; i <= n; ++i) value[i] = f(simplex[i]);
    std::vector<std::size_t> order(n + 1);
    for (int iter = 0; iter < max_iterations; ++iter) {
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t b) { return value[a] < value[b]; });
      const std::size_t lo = order[0], hi = order[n], second = order[n - 1];
      if (value[hi] - value[lo] < 1e-14 * (1 + value[lo])) break;
      Point centroid(n, 0.0);
      for (std::size_t i = 0; i <= n; ++i) {
        if (i == hi) continue;
        for (std::size_t d = 0; d < n; ++d) centroid[d] += simplex[i][d] / static_cast<double>(n);
      }
      auto along = [&](double t) {
        Point p(n);
        for (std::size_t d = 0; d < n; ++d) p[d] = centroid[d] + t * (simplex[hi][d] - centroid[d]);
        return p;
      };
      Point reflected = along(-1.0);
      const double fr = f(reflected);
      if (fr < value[lo]) {
        Point expanded = along(-2.0);
        const double fe = f(expanded);
        if (fe < fr) {
          simplex[hi] = std::move(expanded);
          value[hi] = fe;
        } else {
          simplex[hi] = std::move(reflected);
          value[hi] = fr;
        }
      } else if (fr < value[second]) {
        simplex[hi] = std::move(reflected);
        value[hi] = fr;
      } else {
        Point contracted = along(fr < value[hi] ? -0.5 : 0.5);
        const double fc = f(contracted);
        if (fc < std::min(fr, value[hi])) {
          simplex[hi] = std::move(contracted);
          value[hi] = fc;
        } else {
          for (std::size_t i = 0; i <= n; ++i) {
            if (i == lo) continue;
            for (std::size_t d = 0; d < n; ++d) {
              simplex[i][d] = simplex[lo][d] + 0.5 * (simplex[i][d] - simplex[lo][d]);
            }
            value[i] = f(simplex[i]);
          }
        }
      }
    }
    std::size_t arg = 0;
    for (std::size_t i = 1; i <= n; ++i) {
      if (value[i] < value[arg]) arg = i;
    }
    const bool improved = value[arg] < best_value * (1 - 1e-9);
    best = simplex[arg];
    best_value = value[arg];
    if (!improved && run > 0) break;
  }
  return best;
}

}  // namespace flopcast
