// SPDX-License-Identifier: MIT
#include "flopcast/calibration.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "flopcast/optimize.hpp"

namespace flopcast {
namespace {

using Point = std::vector<double>;  // log-space efficiency parameters (5, or 6 with an extra term)
// Efficiencies are fractions of the datasheet: a fit above it would hide a work model that
// over-counts the op's FLOPs or bytes.
constexpr double kMaxEfficiency = 1.0;

// Log-space parameters -> Efficiency. Half-units and the fixed cost get a floor so that "zero"
// stays reachable in log space.
Efficiency to_efficiency(const Point& p, FitExtra extra) {
  Efficiency e;
  e.compute = std::min(kMaxEfficiency, std::exp(p[0]));
  e.compute_half_units = std::exp(p[1]);
  e.memory = std::min(kMaxEfficiency, std::exp(p[2]));
  e.memory_half_units = std::exp(p[3]);
  e.fixed_s = std::exp(p[4]);
  if (extra == FitExtra::per_problem) e.group_s = std::exp(p[5]);
  if (extra == FitExtra::per_block || extra == FitExtra::per_block_grouped) {
    e.block_s = std::exp(p[5]);
  }
  return e;
}

Point to_point(const Efficiency& e, FitExtra extra) {
  Point p{std::log(std::max(e.compute, 1e-3)), std::log(std::max(e.compute_half_units, 1e-3)),
          std::log(std::max(e.memory, 1e-3)), std::log(std::max(e.memory_half_units, 1e-3)),
          std::log(std::max(e.fixed_s, 1e-8))};
  if (extra == FitExtra::per_problem) p.push_back(std::log(std::max(e.group_s, 1e-8)));
  if (extra == FitExtra::per_block || extra == FitExtra::per_block_grouped) {
    p.push_back(std::log(std::max(e.block_s, 1e-8)));
  }
  return p;
}

/// The terms a fit does not search keep `start`'s values. A decode-attention fit keeps the compute
/// half-units, and multi-head kernels (per_block) the compute efficiency too: they read each KV
/// byte for one FLOP, so no measured row can tell a compute side apart, and fitted anyway it
/// drifts to whatever never binds there. Grouped-query kernels (per_block_grouped) score,
/// softmax and accumulate each KV token once per query head of the group (2·group FLOPs per KV
/// element, in small-M MMAs, exps and fp8-to-bf16 conversions), far below the dense peak: the
/// measured kernels slow as the group grows (H200, TensorRT-LLM, fp8 KV: 4–8 query heads per KV
/// head stream at ~85 % of the bandwidth, 32 at under half), and that rate is what the fit finds.
Efficiency with_start_extras(Efficiency e, const Efficiency& start, FitExtra extra) {
  const bool decode = extra == FitExtra::per_block || extra == FitExtra::per_block_grouped;
  if (extra != FitExtra::per_problem) e.group_s = start.group_s;
  if (!decode) e.block_s = start.block_s;
  if (decode) e.compute_half_units = start.compute_half_units;
  if (extra == FitExtra::per_block) e.compute = start.compute;
  return e;
}

}  // namespace

std::string_view to_string(OpClass c) noexcept {
  switch (c) {
    case OpClass::gemm:
      return "gemm";
    case OpClass::attention_prefill:
      return "attn_prefill";
    case OpClass::attention_decode:
      return "attn_decode";
    case OpClass::elementwise:
      return "elementwise";
    case OpClass::moe:
      return "moe";
  }
  return "?";
}

namespace {

constexpr std::array<std::pair<KernelVariant, std::string_view>, 7> kVariantSuffix{{
    {KernelVariant::weight_int8, "-w8"},
    {KernelVariant::weight_int4, "-w4"},
    {KernelVariant::block_scaled, "-block"},
    {KernelVariant::kv8, "-kv8"},
    {KernelVariant::weight_gguf, "-gguf"},  // llama.cpp's kernels: no measured fit (Tier 0)
    {KernelVariant::mha, "-mha"},
    {KernelVariant::weight_mxfp4, "-mxfp4"},
}};

constexpr std::array<OpClass, 5> kOpClasses{OpClass::gemm, OpClass::attention_prefill,
                                            OpClass::attention_decode, OpClass::elementwise,
                                            OpClass::moe};

}  // namespace

std::string_view to_string(Framework f) noexcept {
  switch (f) {
    case Framework::any:
      return "any";
    case Framework::trtllm:
      return "trtllm";
    case Framework::vllm:
      return "vllm";
    case Framework::sglang:
      return "sglang";
  }
  return "?";
}

std::optional<Framework> parse_framework(std::string_view name) noexcept {
  for (Framework f : {Framework::any, Framework::trtllm, Framework::vllm, Framework::sglang}) {
    if (to_string(f) == name) return f;
  }
  return std::nullopt;
}

std::string to_string(const CalibrationKey& k) {
  std::string text = std::string(to_string(k.op)) + "/" + std::string(to_string(k.math));
  for (const auto& [variant, suffix] : kVariantSuffix) {
    if (variant == k.variant) text += suffix;
  }
  if (k.framework != Framework::any) text.append("@").append(to_string(k.framework));
  return text;
}

std::optional<CalibrationKey> parse_calibration_key(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  CalibrationKey key;
  bool op_found = false;
  for (OpClass c : kOpClasses) {
    if (to_string(c) == text.substr(0, slash)) {
      key.op = c;
      op_found = true;
    }
  }
  if (!op_found) return std::nullopt;
  std::string_view math = text.substr(slash + 1);
  if (const std::size_t at = math.find('@'); at != std::string_view::npos) {
    const auto f = parse_framework(math.substr(at + 1));
    if (!f || *f == Framework::any) return std::nullopt;  // "any" is written without a suffix
    key.framework = *f;
    math = math.substr(0, at);
  }
  for (const auto& [variant, suffix] : kVariantSuffix) {
    if (math.size() > suffix.size() && math.substr(math.size() - suffix.size()) == suffix) {
      key.variant = variant;
      math.remove_suffix(suffix.size());
    }
  }
  const auto type = parse_dtype(math);
  if (!type) return std::nullopt;
  key.math = *type;
  return key;
}

namespace {

// Sizes of the key's enums (their last enumerators + 1); a key outside them has no table slot.
constexpr std::size_t kOps = static_cast<std::size_t>(OpClass::moe) + 1;
constexpr std::size_t kMaths = static_cast<std::size_t>(DType::q8_0) + 1;
constexpr std::size_t kVariants = static_cast<std::size_t>(KernelVariant::weight_mxfp4) + 1;
constexpr std::size_t kFrameworks = static_cast<std::size_t>(Framework::sglang) + 1;
constexpr std::size_t kSlots = kOps * kMaths * kVariants * kFrameworks;
constexpr std::size_t kNoSlot = kSlots;

std::size_t slot_of(const CalibrationKey& k) {
  const auto op = static_cast<std::size_t>(k.op), math = static_cast<std::size_t>(k.math),
             variant = static_cast<std::size_t>(k.variant),
             framework = static_cast<std::size_t>(k.framework);
  if (op >= kOps || math >= kMaths || variant >= kVariants || framework >= kFrameworks) {
    return kNoSlot;
  }
  return ((op * kMaths + math) * kVariants + variant) * kFrameworks + framework;
}

}  // namespace

void Calibration::build_index() {
  indexed_.clear();
  slot_.assign(kSlots, -1);
  for (const auto& [key, fit] : fits) {
    const std::size_t s = slot_of(key);
    if (s == kNoSlot) continue;  // find() walks the map for it
    slot_[s] = static_cast<int>(indexed_.size());
    indexed_.push_back(fit);
  }
  indexed_fits_ = fits.size();
}

const CalibratedEfficiency* Calibration::find(const CalibrationKey& key) const {
  if (!slot_.empty() && indexed_fits_ == fits.size()) {
    const std::size_t s = slot_of(key);
    if (s != kNoSlot) return slot_[s] < 0 ? nullptr : &indexed_[static_cast<std::size_t>(slot_[s])];
  }
  auto it = fits.find(key);
  return it == fits.end() ? nullptr : &it->second;
}

const CalibratedEfficiency* Calibration::find_for(const CalibrationKey& key) const {
  if (key.framework != Framework::any) {
    if (const CalibratedEfficiency* own = find(key)) return own;
  }
  CalibrationKey pooled = key;
  pooled.framework = Framework::any;
  return find(pooled);
}

Efficiency fit_efficiency(const std::function<double(const Efficiency&, std::size_t)>& predict_s,
                          const std::vector<double>& measured_s, const Efficiency& start,
                          FitExtra extra) {
  const std::size_t n = measured_s.size();
  if (n == 0) return start;
  auto loss = [&](const Point& p) {
    const Efficiency e = with_start_extras(to_efficiency(p, extra), start, extra);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double pred = predict_s(e, i);
      const double r = std::log(pred / measured_s[i]);
      sum += std::isfinite(r) ? std::abs(r) : 1e6;
    }
    return sum / static_cast<double>(n);
  };

  // Restarted from the best vertex until it stops improving (at most 6 runs); the half-units
  // (and the extra term) get wider first steps: they span decades.
  std::vector<double> steps{0.3, 2.0, 0.3, 2.0, 0.3};
  if (extra != FitExtra::none) steps.push_back(2.0);
  // A grouped-query decode kernel's compute side binds only where the group is large: from the
  // start alone the simplex sees a flat loss along it, so it also starts from a fifth and a
  // twentieth of it, and the best of the three stands.
  std::vector<Point> starts{to_point(start, extra)};
  if (extra == FitExtra::per_block_grouped) {
    for (double f : {0.2, 0.05}) {
      Efficiency s = start;
      s.compute *= f;
      starts.push_back(to_point(s, extra));
    }
  }
  Point best;
  double best_loss = 0;
  for (const Point& p0 : starts) {
    Point p = nelder_mead(loss, p0, steps, 6, 1500);
    const double l = loss(p);
    if (best.empty() || l < best_loss) {
      best = std::move(p);
      best_loss = l;
    }
  }
  return with_start_extras(to_efficiency(best, extra), start, extra);
}

}  // namespace flopcast
