// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace flopcast {

/// Number formats of weights, activations, KV cache and tensor-core math.
enum class DType { fp32, tf32, fp16, bf16, fp8, int8, int4, fp4 };

/// Storage size of one element in bytes (int4 and fp4: 0.5).
double bytes_per_element(DType t) noexcept;
std::string_view to_string(DType t) noexcept;
std::optional<DType> parse_dtype(std::string_view name) noexcept;

}  // namespace flopcast
