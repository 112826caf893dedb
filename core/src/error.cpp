// SPDX-License-Identifier: MIT
#include "flopcast/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace flopcast {

void check_int(const std::string& path, long long value, long long lo, long long hi) {
  if (value < lo || value > hi) {
    fail(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi),
         static_cast<double>(value));
  }
}

void check_real(const std::string& path, double value, double lo, double hi, double unit) {
  if (!std::isfinite(value) || value < lo || value > hi) {
    fail(path, "must be between " + format_number(lo / unit) + " and " + format_number(hi / unit),
         value / unit);
  }
}

void check_divides(const std::string& path, int value, long long whole, const std::string& what) {
  if (whole % value != 0) {
    fail(path, "must divide " + what + " (" + std::to_string(whole) + ")", value);
  }
}

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

namespace {

/// Bytes of the UTF-8 sequence a lead byte starts (1 for ASCII and for stray bytes).
std::size_t sequence_length(unsigned char lead) {
  if (lead >= 0xf0 && lead < 0xf8) return 4;
  if (lead >= 0xe0) return lead < 0xf0 ? 3 : 1;
  if (lead >= 0xc0) return 2;
  return 1;
}

/// U+200E/F, U+202A-E and U+2066-9: the marks and overrides that reorder displayed text.
bool is_bidi_control(unsigned char b0, unsigned char b1, unsigned char b2) {
  return b0 == 0xe2 && ((b1 == 0x80 && (b2 == 0x8e || b2 == 0x8f || (b2 >= 0xaa && b2 <= 0xae))) ||
                        (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9));
}

}  // namespace

std::string SpecError::safe_text(const std::string& text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  char escaped[8];
  // One character at a time, so a cut never splits one.
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = std::min(sequence_length(c), text.size() - i);
    std::string_view piece(text.data() + i, len);
    if (c < 0x20 || c == 0x7f) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      piece = escaped;
    } else if (len == 3 && is_bidi_control(c, static_cast<unsigned char>(text[i + 1]),
                                           static_cast<unsigned char>(text[i + 2]))) {
      const unsigned code = 0x2000u + ((static_cast<unsigned char>(text[i + 1]) & 0x0fu) << 6) +
                            (static_cast<unsigned char>(text[i + 2]) & 0x3fu);
      std::snprintf(escaped, sizeof escaped, "\\u%04x", code);
      piece = escaped;
    }
    if (out.size() + piece.size() > max_bytes) return out + "...";
    out += piece;
    i += len;
  }
  return out;
}

void fail(const std::string& path, const std::string& rule, double got) {
  throw SpecError(path, rule + " (got " + format_number(got) + ")");
}

void fail(const std::string& path, const std::string& rule, const std::string& got) {
  throw SpecError(path, rule + " (got " + got + ")");
}

}  // namespace flopcast
