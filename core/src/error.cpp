// SPDX-License-Identifier: MIT
#include "flopcast/error.hpp"

#include <algorithm>
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

std::string SpecError::safe_text(const std::string& text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  char buf[8];
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = 1;
    if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
    } else if (c == 0xe2 && i + 2 < text.size()) {
      // U+200E/F, U+202A-E and U+2066-9: the marks and overrides that reorder displayed text.
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      const auto b2 = static_cast<unsigned char>(text[i + 2]);
      const bool bidi = (b1 == 0x80 && (b2 == 0x8e || b2 == 0x8f || (b2 >= 0xaa && b2 <= 0xae))) ||
                        (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9);
      if (bidi) {
        const unsigned code = 0x2000u + ((b1 & 0x0fu) << 6) + (b2 & 0x3fu);
        std::snprintf(buf, sizeof buf, "\\u%04x", code);
        len = 3;
      } else {
        buf[0] = '\0';
      }
    } else {
      buf[0] = '\0';
    }
    const std::string piece = buf[0] != '\0' ? std::string(buf) : std::string(1, text[i]);
    if (out.size() + piece.size() > max_bytes) {
      // Cut on a character boundary: drop continuation bytes of a split UTF-8 sequence.
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80)
        out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
      return out + "...";
    }
    out += piece;
    i += len - 1;
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
