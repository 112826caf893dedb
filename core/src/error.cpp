// SPDX-License-Identifier: MIT
#include "flopcast/error.hpp"

#include <cmath>
#include <cstdio>

namespace flopcast {

std::string format_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", value);
  }
  return buf;
}

void fail(const std::string& path, const std::string& rule, double got) {
  throw SpecError(path, rule + " (got " + format_number(got) + ")");
}

void fail(const std::string& path, const std::string& rule, const std::string& got) {
  throw SpecError(path, rule + " (got " + got + ")");
}

}  // namespace flopcast
