// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopcast/dtype.hpp"

namespace flopcast {

/// Op classes that carry their own efficiency model.
enum class OpClass { gemm, attention_prefill, attention_decode, elementwise, moe };
std::string_view to_string(OpClass c) noexcept;

/// Efficiency of one op class on one GPU and math type, Tier 0 or Tier 2:
///
///   t = max(T_c / (η_c · u_c), hypot(T_m / (η_m · u_m), B · t_b)) + t_0 + G · t_g,
///   u_x = r / (r + r_x)
///
/// T_c and T_m are the op's times at 100% of the dense peak (after tile and wave quantization) and
/// at 100% of the datasheet bandwidth; r is its parallel work (output tiles, attention blocks,
/// ...). u rises monotonically to 1 with more parallel work: a small kernel cannot fill the GPU.
/// t_0 is the fixed cost of the op's kernels (launch, ramp-up, tail). Tier 0 has r_x = 0 (u = 1).
/// Grouped kernels (the expert GEMMs of a fused MoE layer, one problem per expert that receives
/// tokens) add t_g per problem: each problem's tiles load their own weights and block scales and
/// end in their own epilogue. Tier 0 has t_g = 0; only MoE fits have it.
/// Decode attention runs B thread blocks, one per (sequence, KV head): each lives at least t_b
/// (device-wide: its lifetime over the blocks the GPU runs at once) to load its page table and
/// query, reduce the softmax and write its output, however few KV tokens it reads. Many short
/// sequences make the kernel block-bound rather than bandwidth-bound. The block time and the KV
/// stream overlap only in part (a block's fixed work stalls its own loads), so they combine as a
/// 2-norm: either alone where it dominates, √2 of each where they are equal. Tier 0 has t_b = 0
/// (the memory time exactly); only decode-attention fits have it.
struct Efficiency {
  double compute = 0.8;
  double compute_half_units = 0;
  double memory = 0.85;
  double memory_half_units = 0;
  double fixed_s = 2e-6;
  double group_s = 0;
  double block_s = 0;
};

/// A Tier-2 fit with what is needed to state its error and its range.
struct CalibratedEfficiency {
  Efficiency efficiency;
  double log_residual_p10 = 0;  ///< 10th percentile of ln(measured / predicted), train rows
  double log_residual_p90 = 0;  ///< 90th percentile
  double min_units = 0;         ///< parallel-work range of the train rows: the calibrated range
  double max_units = 0;
  int train_rows = 0;
  double train_mape = 0;
};

/// Kernel families the math type alone does not tell apart: weight-only int8/int4 GEMMs,
/// block-scaled fp8 GEMMs, decode attention over an 8-bit KV cache (dequantized in registers,
/// so it reaches a different fraction of the bandwidth than 16-bit KV), and decode attention of
/// multi-head models (one query head per KV head: TensorRT-LLM runs its masked-MHA kernel, not
/// XQA, at a third of the time per block).
/// weight_mxfp4: MXFP4 weights (gpt-oss's experts) against 16-bit or MXFP8 activations, whose
/// kernels (Triton, TensorRT-LLM's MXFP4 MoE) are not the int4 weight-only ones.
enum class KernelVariant {
  plain,
  weight_int8,
  weight_int4,
  block_scaled,
  kv8,
  weight_gguf,
  mha,
  weight_mxfp4
};

/// Whose kernels: the same op on the same GPU runs different kernels in TensorRT-LLM, vLLM and
/// SGLang (cuBLAS vs CUTLASS vs Triton GEMMs, XQA vs FlashInfer vs FlashAttention decode), and
/// their measured times differ by more than a kernel model's error. `any`: all of them pooled.
enum class Framework { any, trtllm, vllm, sglang };
std::string_view to_string(Framework f) noexcept;
/// "trtllm", "vllm", "sglang" or "any"; nullopt for other names.
std::optional<Framework> parse_framework(std::string_view name) noexcept;

/// What a fit is for: op class, math type, kernel family and framework. Written
/// "<op class>/<math type>" with "-w8", "-w4", "-block" or "-kv8" for the variants and
/// "@<framework>" unless it is `any` (e.g. "gemm/bf16", "gemm/bf16-w4", "attn_decode/bf16@vllm").
/// A plain value, so the estimator looks fits up without building strings.
struct CalibrationKey {
  OpClass op = OpClass::elementwise;
  DType math = DType::bf16;
  KernelVariant variant = KernelVariant::plain;
  Framework framework = Framework::any;

  [[nodiscard]] bool operator<(const CalibrationKey& o) const noexcept {
    if (op != o.op) return op < o.op;
    if (math != o.math) return math < o.math;
    if (variant != o.variant) return variant < o.variant;
    return framework < o.framework;
  }
};
std::string to_string(const CalibrationKey& k);
/// The key written as `text`, or nullopt when it names no op class, math type or variant.
std::optional<CalibrationKey> parse_calibration_key(std::string_view text);

/// Tier-2 calibration of one GPU: one fit per CalibrationKey.
struct Calibration {
  std::string source;
  std::map<CalibrationKey, CalibratedEfficiency> fits;

  /// Builds a dense table over every possible key (op class × math type × variant ×
  /// framework) holding a copy of each fit, so that find() costs an index instead of a tree walk
  /// (every priced op looks its fit up once or twice: 8 % of a setup search's time went to the
  /// walk). Call it once `fits` is complete (read_calibration does); without it, or once fits
  /// were added or removed, find() walks `fits`. Call it again after changing a fit's value.
  void build_index();

  /// The fit of exactly `key`, or nullptr.
  [[nodiscard]] const CalibratedEfficiency* find(const CalibrationKey& key) const;
  /// The framework's own fit when there is one, else the pooled (`any`) fit, else nullptr.
  [[nodiscard]] const CalibratedEfficiency* find_for(const CalibrationKey& key) const;

 private:
  std::vector<CalibratedEfficiency> indexed_;  ///< copies of the fits, in key order
  std::vector<int> slot_;                      ///< table slot → position in indexed_, or −1
  std::size_t indexed_fits_ = 0;               ///< fits.size() when the table was built
};

/// Fits an Efficiency by Nelder–Mead on the mean absolute log error |ln(predicted / measured)|
/// (absolute: rows of kernels the model cannot follow must not drag every other shape's fit):
/// `predict_s(e, i)` is the model's time for sample i under efficiency e. Parameters are searched
/// in log space, so efficiencies, half-units and the fixed cost stay positive; efficiencies are
/// capped at 1, the datasheet (a physical bound: where a kernel seems to beat it, the work model
/// over-counts, and the fit must not hide that). Deterministic.
/// `extra`: also fit the per-problem cost `group_s` (MoE) or the per-block time `block_s` (decode
/// attention); the other stays at `start`'s. Decode attention keeps `start`'s compute side
/// (`per_block`: multi-head kernels, one query head per KV head, never near it) or fits its
/// efficiency too (`per_block_grouped`: grouped-query kernels, whose work per KV byte grows
/// with the group).
enum class FitExtra { none, per_problem, per_block, per_block_grouped };
Efficiency fit_efficiency(const std::function<double(const Efficiency&, std::size_t)>& predict_s,
                          const std::vector<double>& measured_s, const Efficiency& start,
                          FitExtra extra = FitExtra::none);

}  // namespace flopcast
