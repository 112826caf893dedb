// SPDX-License-Identifier: MIT
// Numbers for people: tables print 4 significant digits with a unit scaled to the value (JSON and
// CSV keep full precision).
#pragma once

#include <string>

namespace flopcast::cli::human {

/// `v` to 4 significant digits in plain notation (1234, 123.4, 12.34, 1.234, 0.1234).
std::string sig(double v);
/// A count or rate with an SI prefix: 950, 1.234k, 170.0k, 25.10M, 3.4G.
std::string si(double v);
/// Seconds in the unit that reads best: 850 µs, 85.40 ms, 8.030 s, 12.50 min, 531.0 h, 22.20 days,
/// 2.797 years.
std::string duration(double seconds);
/// Dollars: $0.1234 under $1, cents under $1,000 ($3.49), then $1,235, $118.8k, $87.59M.
std::string money(double usd);
/// A fraction as a percentage, 3 digits and at most 2 decimals: 0.4405 -> 44.1 %, 0.0482 ->
/// 4.82 %, 0.000153 -> 0.02 %; below 0.005 %, "<0.01 %".
std::string percent(double fraction);
/// Joules or watts with an SI prefix and the unit: 30.53 MJ, 618.7 kW.
std::string si_unit(double v, const char* unit);
/// `s` widened with spaces to `width` characters, on the left when `right` (a number column),
/// else on the right; longer text is left as it is.
std::string pad(std::string s, std::size_t width, bool right = false);

}  // namespace flopcast::cli::human
