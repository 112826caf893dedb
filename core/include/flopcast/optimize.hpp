// SPDX-License-Identifier: MIT
#pragma once

/// Derivative-free minimisation shared by the fits (kernel efficiencies, collective fabrics).
/// Pure and deterministic: the same input gives the same optimum on every platform.

#include <functional>
#include <vector>

namespace flopcast {

/// Minimises `f` over R^n (n = start.size()) by Nelder–Mead with the standard coefficients
/// (reflection 1, expansion 2, contraction 0.5, shrink 0.5). Each run starts from the simplex
/// {x, x + step_i·e_i} around the best point so far and stops after `max_iterations` steps or when
/// the simplex's values agree to 1e-14 (relative); runs repeat from the best vertex until one
/// does not improve it (relative 1e-9), at most `max_runs` runs. Returns the best point.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> start, const std::vector<double>& step,
                                int max_runs, int max_iterations);

}  // namespace flopcast
