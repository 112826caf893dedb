// SPDX-License-Identifier: MIT
#include "flopcast/dtype.hpp"

#include <array>
#include <utility>

namespace flopcast {

double bytes_per_element(DType t) noexcept {
  switch (t) {
    case DType::fp32:
    case DType::tf32:
      return 4.0;
    case DType::fp16:
    case DType::bf16:
      return 2.0;
    case DType::fp8:
    case DType::mxfp8:
    case DType::int8:
      return 1.0;
    case DType::int4:
    case DType::fp4:
    case DType::mxfp4:
      return 0.5;
    case DType::q4_0:
    case DType::q4_k_m:
    case DType::q5_k_m:
    case DType::q6_k:
    case DType::q8_0:
      return stored_bytes_per_element(t);
  }
  return 2.0;
}

double stored_bytes_per_element(DType t) noexcept {
  switch (t) {
    case DType::int4:
      return 0.5 + 2.0 / 128;
    case DType::fp4:
      return 0.5 + 1.0 / 16;
    case DType::mxfp4:
      return 0.5 + 1.0 / 32;
    case DType::mxfp8:
      return 1.0 + 1.0 / 32;
    case DType::q4_0:
      return 18.0 / 32;
    case DType::q4_k_m:
      return 4.84 / 8;
    case DType::q5_k_m:
      return 5.68 / 8;
    case DType::q6_k:
      return 210.0 / 256;
    case DType::q8_0:
      return 34.0 / 32;
    default:
      return bytes_per_element(t);
  }
}

bool is_gguf(DType t) noexcept {
  return t == DType::q4_0 || t == DType::q4_k_m || t == DType::q5_k_m || t == DType::q6_k ||
         t == DType::q8_0;
}

DType math_type(DType t) noexcept {
  if (t == DType::mxfp4) return DType::fp4;
  if (t == DType::mxfp8) return DType::fp8;
  return t;
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (const auto& [n, type] : kDTypeNames) {
    if (n == name) return type;
  }
  return std::nullopt;
}

}  // namespace flopcast
