// SPDX-License-Identifier: MIT
#include "human.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

namespace flopcast::cli::human {

std::string sig(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  // Decimals so that 4 digits are significant; values that round up to the next decade
  // (999.96 -> 1000) keep 4 digits there too.
  int decimals = 3;
  if (a >= 999.95) {
    decimals = 0;
  } else if (a >= 99.995) {
    decimals = 1;
  } else if (a >= 9.9995) {
    decimals = 2;
  } else if (a < 1 && a > 0) {
    decimals = std::min(12, 3 - static_cast<int>(std::floor(std::log10(a))));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

namespace {

/// The value and SI prefix that print `v` with 1 to 3 digits before the point.
std::pair<double, const char*> scaled(double v) {
  static constexpr std::array<std::pair<double, const char*>, 4> kPrefixes{
      {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (const auto& [scale, prefix] : kPrefixes) {
    if (std::fabs(v) >= scale * 0.99995) return {v / scale, prefix};
  }
  return {v, ""};
}

}  // namespace

std::string si(double v) {
  if (!std::isfinite(v)) return "-";
  const auto [x, prefix] = scaled(v);
  return sig(x) + prefix;
}

std::string duration(double s) {
  if (!std::isfinite(s)) return "-";
  constexpr double kMinute = 60, kHour = 3600, kDay = 86400, kYear = 365.25 * kDay;
  const double a = std::fabs(s);
  if (a < 1e-3) return sig(s * 1e6) + " µs";
  if (a < 1) return sig(s * 1e3) + " ms";
  if (a < 2 * kMinute) return sig(s) + " s";
  if (a < 2 * kHour) return sig(s / kMinute) + " min";
  if (a < 2 * kDay) return sig(s / kHour) + " h";
  if (a < kYear) return sig(s / kDay) + " days";
  return sig(s / kYear) + " years";
}

std::string money(double usd) {
  if (!std::isfinite(usd)) return "-";
  if (std::fabs(usd) < 1e5) {
    if (std::fabs(usd) < 1) return "$" + sig(usd);
    if (std::fabs(usd) < 1000) {
      char cents[32];
      std::snprintf(cents, sizeof cents, "%.2f", usd);
      return std::string("$") + cents;
    }
    // Whole dollars with a thousands separator: $1,235 ... $99,999.
    const long long d = std::llround(usd);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld,%03lld", d / 1000, std::llabs(d % 1000));
    return std::string("$") + buf;
  }
  return "$" + si(usd);
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  if (fraction != 0 && std::fabs(fraction) < 5e-5) return fraction > 0 ? "<0.01 %" : ">-0.01 %";
  // At most two decimals: a share of 0.0153 % is 0.02 %, not four digits of noise.
  const double p = fraction * 100;
  const double a = std::fabs(p);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %%", a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2, p);
  return buf;
}

std::string pad(std::string s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string si_unit(double v, const char* unit) {
  if (!std::isfinite(v)) return "-";
  const auto [x, prefix] = scaled(v);
  return sig(x) + " " + prefix + unit;
}

}  // namespace flopcast::cli::human
