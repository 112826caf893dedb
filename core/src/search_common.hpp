// SPDX-License-Identifier: MIT
#pragma once

/// Helpers the layout searches share (training_search.cpp, serving_search.cpp).

#include <algorithm>
#include <string>
#include <vector>

#include "flopcast/error.hpp"

namespace flopcast::search_detail {

/// 1, 2, 4, … up to `limit`.
inline std::vector<int> powers_of_two(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

/// The tensor-parallel sizes a search tries: powers of two up to two nodes (and the GPUs there
/// are). Across nodes TP's all-reduces cross the NICs, which can still be the only way a large
/// model fits; hardware without a scale-out network rejects those layouts with the model's rule.
/// Wider than two nodes never pays.
inline std::vector<int> tensor_parallel_sizes(int gpus_per_node, int gpus) {
  return powers_of_two(std::min(2 * gpus_per_node, gpus));
}

/// The rule of a validation error without the values it quotes, so that layouts failing the
/// same rule count together: "parallelism.ep: must divide parallelism dp·cp (2) (got 4)" →
/// "parallelism.ep: must divide parallelism dp·cp".
inline std::string rule_of(const SpecError& e) {
  std::string text = e.what();
  const std::size_t colon = text.find(": ");
  if (const std::size_t paren = text.find(" (", colon == std::string::npos ? 0 : colon);
      paren != std::string::npos) {
    text.resize(paren);
  }
  return text;
}

/// SpecError at search.<path> when a value of the list is below 1.
inline void check_positive(const std::vector<int>& values, const char* path) {
  for (const int v : values) {
    if (v < 1) fail(std::string("search.") + path, "every value must be >= 1", v);
  }
}

}  // namespace flopcast::search_detail
