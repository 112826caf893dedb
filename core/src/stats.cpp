// SPDX-License-Identifier: MIT
#include "flopcast/stats.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"

namespace flopcast {
double percentile(const std::vector<double>& sorted, double p) {
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& measured) {
  if (predicted.size() != measured.size()) {
    fail("predicted",
         "must have as many values as measured (" +
             format_number(static_cast<double>(measured.size())) + ")",
         static_cast<double>(predicted.size()));
  }
  ErrorStats s;
  s.count = measured.size();
  if (s.count == 0) return s;
  std::vector<double> ape(s.count);
  double sum_ape = 0;
  double sum_signed = 0;
  for (std::size_t i = 0; i < s.count; ++i) {
    if (!std::isfinite(measured[i]) || measured[i] <= 0) {
      fail("measured[" + std::to_string(i) + "]", "must be finite and > 0", measured[i]);
    }
    if (!std::isfinite(predicted[i])) {
      fail("predicted[" + std::to_string(i) + "]", "must be finite", predicted[i]);
    }
    const double signed_err = (predicted[i] - measured[i]) / measured[i];
    ape[i] = std::fabs(signed_err);
    sum_ape += ape[i];
    sum_signed += signed_err;
    if (ape[i] > s.max_ape) {
      s.max_ape = ape[i];
      s.max_index = i;
    }
  }
  const auto n = static_cast<double>(s.count);
  s.mape = sum_ape / n;
  s.bias = sum_signed / n;
  std::sort(ape.begin(), ape.end());
  s.median_ape = percentile(ape, 50);
  s.p90_ape = percentile(ape, 90);
  return s;
}

std::uint64_t fnv1a64(std::string_view bytes) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);  // the byte, not its sign-extended char
    h *= 1099511628211ull;
  }
  return h;
}

std::string_view to_string(Split s) noexcept { return s == Split::train ? "train" : "test"; }

Split split_of(std::string_view identity) noexcept {
  return fnv1a64(identity) % 100 < 70 ? Split::train : Split::test;
}

}  // namespace flopcast
