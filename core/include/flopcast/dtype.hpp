// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "flopcast/error.hpp"
#include "flopcast/names.hpp"

namespace flopcast {

/// Number formats of weights, activations, KV cache and tensor-core math. fp4 is NVFP4 (E2M1 with
/// an FP8 E4M3 scale per 16 elements); mxfp4 is OCP MXFP4 (E2M1 with an E8M0 scale per 32). Both
/// run on the FP4 tensor cores (the hardware's `fp4` peak) where there are any. mxfp8 is OCP MXFP8
/// (E4M3 with an E8M0 scale per 32): it multiplies on the FP8 units, but only where they apply
/// block scales themselves (Blackwell's and CDNA4's block-scaled MMA, the GPUs that have an `fp4`
/// peak: HardwareSpec::block_scaled_mma).
/// q4_0 … q8_0 are llama.cpp's GGUF weight formats (weight-only: dequantized in the GEMM kernel,
/// math in the activations' type).
enum class DType {
  fp32,
  tf32,
  fp16,
  bf16,
  fp8,
  mxfp8,
  int8,
  int4,
  fp4,
  mxfp4,
  q4_0,
  q4_k_m,
  q5_k_m,
  q6_k,
  q8_0
};

/// Storage size of one element in bytes (int4, fp4 and mxfp4: 0.5; mxfp8: 1).
double bytes_per_element(DType t) noexcept;
/// Bytes per element of a quantized tensor with its block scales: int4 (AWQ/GPTQ) 0.5 + one
/// 16-bit scale per 128 = 0.515625; NVFP4 0.5 + 1/16 = 0.5625; MXFP4 0.5 + 1/32 = 0.53125; MXFP8
/// 1 + 1/32 = 1.03125; other
/// types bytes_per_element (per-tensor scales are negligible). GGUF: the bits per weight of
/// llama.cpp's blocks (ggml-common.h: q4_0 18 B per 32 = 4.5, q8_0 34 B per 32 = 8.5, q6_k 210 B
/// per 256 = 6.5625) and of its k-quant mixes as its quantize README measures them on Llama-2-7B
/// (Q4_K_M 4.84, Q5_K_M 5.68: some tensors a k-quant wider), divided by 8.
double stored_bytes_per_element(DType t) noexcept;
/// llama.cpp's GGUF weight formats.
bool is_gguf(DType t) noexcept;
/// The tensor-core math type of a format: mxfp4 runs on the fp4 units, mxfp8 on the fp8 ones;
/// others are their own.
DType math_type(DType t) noexcept;
inline constexpr std::array<Named<DType>, 15> kDTypeNames{{{"fp32", DType::fp32},
                                                           {"tf32", DType::tf32},
                                                           {"fp16", DType::fp16},
                                                           {"bf16", DType::bf16},
                                                           {"fp8", DType::fp8},
                                                           {"mxfp8", DType::mxfp8},
                                                           {"int8", DType::int8},
                                                           {"int4", DType::int4},
                                                           {"fp4", DType::fp4},
                                                           {"mxfp4", DType::mxfp4},
                                                           {"q4_0", DType::q4_0},
                                                           {"q4_k_m", DType::q4_k_m},
                                                           {"q5_k_m", DType::q5_k_m},
                                                           {"q6_k", DType::q6_k},
                                                           {"q8_0", DType::q8_0}}};
constexpr std::string_view to_string(DType t) noexcept { return name_in(kDTypeNames, t); }
std::optional<DType> parse_dtype(std::string_view name) noexcept;

/// "bf16, fp16, fp8": the names of `types`, for "must be one of" messages.
template <std::size_t N>
std::string dtype_names(const std::array<DType, N>& types) {
  std::string out;
  for (DType t : types) {
    if (!out.empty()) out += ", ";
    out += to_string(t);
  }
  return out;
}

/// SpecError at `path` unless `t` is one of `allowed`: "must be one of bf16, fp16 (got fp8)".
template <std::size_t N>
void check_dtype(const std::string& path, DType t, const std::array<DType, N>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), t) == allowed.end()) {
    fail(path, "must be one of " + dtype_names(allowed), std::string(to_string(t)));
  }
}

}  // namespace flopcast
