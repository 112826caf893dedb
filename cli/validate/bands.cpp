// SPDX-License-Identifier: MIT
#include "validate/bands.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace flopcast::cli::validate {
namespace {

/// Tails (percent) an 80 % band may use (see band_rules).
constexpr double kTails[] = {10, 7.5, 5, 2.5};
/// Scales of a band about its estimate: kMinScale, +0.1, ..., kMaxScale. Below 1 a band is
/// narrower than the other sources' spread: where they agree closer than that (serving means).
constexpr double kMinScale = 0.2;
constexpr double kScaleStep = 0.1;
constexpr double kMaxScale = 4.0;
/// The share of a held-out source's rows an 80 % band is built to hold.
constexpr double kTargetCoverage = 0.8;

}  // namespace

double source_weighted_percentile(const std::map<std::string, std::vector<double>>& by_source,
                                  double p) {
  std::vector<std::pair<double, double>> v;  // value, weight
  for (const auto& [source, values] : by_source) {
    for (double x : values) v.emplace_back(x, 1.0 / static_cast<double>(values.size()));
  }
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  double total = 0;
  for (const auto& e : v) total += e.second;
  double cum = 0;
  for (const auto& [x, w] : v) {
    cum += w;
    if (cum >= p / 100.0 * total - 1e-12) return x;
  }
  return v.back().first;
}

std::pair<double, double> band_of(const std::map<std::string, std::vector<double>>& by_source,
                                  const BandRule& rule) {
  if (rule.symmetric) {
    std::map<std::string, std::vector<double>> size;  // |slowness|
    for (const auto& [source, v] : by_source) {
      for (double x : v) size[source].push_back(std::fabs(x));
    }
    const double q = rule.scale * source_weighted_percentile(size, 100 - 2 * rule.tail);
    return {-q, q};
  }
  // Where the rows lie, not stretched to the estimate: a band whose edge is the estimate says
  // nothing on that side (Tier 0 is faster than every measurement: its band lies above it).
  // Scaled about its middle, or about the estimate.
  const double lo = source_weighted_percentile(by_source, rule.tail);
  const double hi = source_weighted_percentile(by_source, 100 - rule.tail);
  if (rule.about_estimate) return {rule.scale * lo, rule.scale * hi};
  const double mid = (lo + hi) / 2, half = rule.scale * (hi - lo) / 2;
  return {mid - half, mid + half};
}

BandCheck check_band_rule(const std::map<std::string, std::vector<double>>& by_source,
                          const BandRule& rule) {
  BandCheck c;
  std::size_t rows = 0, in = 0;
  int sources = 0;
  for (const auto& [source, v] : by_source) {
    auto others = by_source;
    others.erase(source);
    if (others.empty()) continue;
    const auto [lo, hi] = band_of(others, rule);
    for (double x : v) in += x >= lo && x <= hi ? 1 : 0;
    rows += v.size();
    c.mean_width += hi - lo;
    ++sources;
  }
  if (rows == 0) return c;
  c.coverage = static_cast<double>(in) / static_cast<double>(rows);
  c.mean_width /= sources;
  return c;
}

std::map<std::string, BandRule> band_rules(
    const std::map<std::string, std::map<std::string, std::vector<double>>>& logs) {
  std::map<std::string, BandRule> out;
  for (const auto& [kind, by_source] : logs) {
    // The nominal band (the pooled residuals' 10th to 90th percentile): a kind with one source,
    // and a kind whose sources disagree beyond every rule (no width holds 80 % of a held-out
    // source's rows: widening further only makes the band useless, and its coverage is reported).
    BandRule chosen{kTails[0], 1.0};
    if (by_source.size() >= 2) {
      double best_width = INFINITY;
      const int steps = static_cast<int>(std::lround((kMaxScale - kMinScale) / kScaleStep));
      for (int i = 0; i <= steps; ++i) {
        const double w = kMinScale + i * kScaleStep;
        for (double tail : kTails) {
          // About the middle, about the estimate, symmetric.
          for (const BandRule rule :
               {BandRule{tail, w, false, false}, BandRule{tail, w, false, true},
                BandRule{tail, w, true, false}}) {
            const BandCheck c = check_band_rule(by_source, rule);
            if (c.coverage >= kTargetCoverage && c.mean_width < best_width - 1e-12) {
              best_width = c.mean_width;
              chosen = rule;
            }
          }
        }
      }
    }
    out[kind] = chosen;
  }
  return out;
}

}  // namespace flopcast::cli::validate
