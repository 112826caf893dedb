// SPDX-License-Identifier: MIT
#pragma once

/// The 80 % bands of end-to-end estimates (presets/bands/e2e.json): how a band is drawn from
/// leave-one-source-out residuals and checked on sources it was not built from. No I/O; the
/// rules are unit-tested with hand-made residuals (tests/unit/bands_test.cpp).

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace flopcast::cli::validate {

/// The p-th percentile (0-100) of values weighted so that every source counts alike (each row
/// weighs 1 / rows of its source): the band must fit a new source, not the largest old one.
double source_weighted_percentile(const std::map<std::string, std::vector<double>>& by_source,
                                  double p);

/// How an 80 % band of slowness ln(measured time / predicted time) is drawn from residuals
/// (sources weighted alike): the `tail` and 100 − `tail` percentiles, scaled `scale` times about
/// their middle, or about the estimate (`about_estimate`: both edges times `scale`); a band need
/// not hold its estimate (where every row is slower, it lies above it). Or, `symmetric`,
/// ±`scale`·(the 100 − 2·`tail` percentile of |slowness|) about the estimate, for sources that
/// disagree in sign.
struct BandRule {
  double tail = 10;  ///< percent
  double scale = 1;
  bool symmetric = false;
  bool about_estimate = false;
};
/// The band [low, high] of `rule` over residuals by source.
std::pair<double, double> band_of(const std::map<std::string, std::vector<double>>& by_source,
                                  const BandRule& rule);
/// Leave-one-source-out check of a rule: each source's rows against the band of the others.
struct BandCheck {
  double coverage = 0;    ///< share of all rows inside their held-out band
  double mean_width = 0;  ///< high − low, averaged over the held-out sources
};
BandCheck check_band_rule(const std::map<std::string, std::vector<double>>& by_source,
                          const BandRule& rule);
/// Per kind (kind → source → residuals): the narrowest rule (mean held-out width) over tails
/// 10, 7.5, 5, 2.5 %, both shapes and scales 0.5, 0.6, ..., 4 whose held-out coverage is at
/// least 80 %; the nominal 10 % tails, unscaled, for a kind with one source and for one where no
/// rule reaches 80 % (sources that disagree beyond any width: its coverage says so).
std::map<std::string, BandRule> band_rules(
    const std::map<std::string, std::map<std::string, std::vector<double>>>& logs);

}  // namespace flopcast::cli::validate
