// SPDX-License-Identifier: MIT
#include "flopcast/calibration.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace flopcast {
namespace {

constexpr int kParams = 5;
using Point = std::array<double, kParams>;
constexpr double kMaxEfficiency = 1.2;

// Log-space parameters -> Efficiency. Half-units and the fixed cost get a floor so that "zero"
// stays reachable in log space.
Efficiency to_efficiency(const Point& p) {
  Efficiency e;
  e.compute = std::min(kMaxEfficiency, std::exp(p[0]));
  e.compute_half_units = std::exp(p[1]);
  e.memory = std::min(kMaxEfficiency, std::exp(p[2]));
  e.memory_half_units = std::exp(p[3]);
  e.fixed_s = std::exp(p[4]);
  return e;
}

Point to_point(const Efficiency& e) {
  return {std::log(std::max(e.compute, 1e-3)), std::log(std::max(e.compute_half_units, 1e-3)),
          std::log(std::max(e.memory, 1e-3)), std::log(std::max(e.memory_half_units, 1e-3)),
          std::log(std::max(e.fixed_s, 1e-8))};
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

constexpr std::array<std::pair<KernelVariant, std::string_view>, 4> kVariantSuffix{{
    {KernelVariant::weight_int8, "-w8"},
    {KernelVariant::weight_int4, "-w4"},
    {KernelVariant::block_scaled, "-block"},
    {KernelVariant::kv8, "-kv8"},
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

const CalibratedEfficiency* Calibration::find(const CalibrationKey& key) const {
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
                          const std::vector<double>& measured_s, const Efficiency& start) {
  const std::size_t n = measured_s.size();
  if (n == 0) return start;
  auto loss = [&](const Point& p) {
    const Efficiency e = to_efficiency(p);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double pred = predict_s(e, i);
      const double r = std::log(pred / measured_s[i]);
      sum += std::isfinite(r) ? r * r : 1e6;
    }
    return sum / static_cast<double>(n);
  };

  // Nelder–Mead with the standard coefficients, restarted from the best vertex until it stops
  // improving (at most 6 runs).
  Point best = to_point(start);
  double best_value = loss(best);
  for (int restart = 0; restart < 6; ++restart) {
    std::array<Point, kParams + 1> simplex;
    std::array<double, kParams + 1> value{};
    simplex[0] = best;
    for (int i = 0; i < kParams; ++i) {
      simplex[i + 1] = best;
      simplex[i + 1][i] += i == 1 || i == 3 ? 2.0 : 0.3;
    }
    for (int i = 0; i <= kParams; ++i) value[i] = loss(simplex[i]);
    for (int iter = 0; iter < 1500; ++iter) {
      std::array<int, kParams + 1> order{};
      for (int i = 0; i <= kParams; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](int a, int b) { return value[a] < value[b]; });
      const int lo = order[0], hi = order[kParams], second = order[kParams - 1];
      if (value[hi] - value[lo] < 1e-14 * (1 + value[lo])) break;
      Point centroid{};
      for (int i = 0; i <= kParams; ++i) {
        if (i == hi) continue;
        for (int d = 0; d < kParams; ++d) centroid[d] += simplex[i][d] / kParams;
      }
      auto along = [&](double t) {
        Point p;
        for (int d = 0; d < kParams; ++d) p[d] = centroid[d] + t * (simplex[hi][d] - centroid[d]);
        return p;
      };
      const Point reflected = along(-1.0);
      const double fr = loss(reflected);
      if (fr < value[lo]) {
        const Point expanded = along(-2.0);
        const double fe = loss(expanded);
        if (fe < fr) {
          simplex[hi] = expanded;
          value[hi] = fe;
        } else {
          simplex[hi] = reflected;
          value[hi] = fr;
        }
      } else if (fr < value[second]) {
        simplex[hi] = reflected;
        value[hi] = fr;
      } else {
        const Point contracted = along(fr < value[hi] ? -0.5 : 0.5);
        const double fc = loss(contracted);
        if (fc < std::min(fr, value[hi])) {
          simplex[hi] = contracted;
          value[hi] = fc;
        } else {
          for (int i = 0; i <= kParams; ++i) {
            if (i == lo) continue;
            for (int d = 0; d < kParams; ++d) {
              simplex[i][d] = simplex[lo][d] + 0.5 * (simplex[i][d] - simplex[lo][d]);
            }
            value[i] = loss(simplex[i]);
          }
        }
      }
    }
    int arg = 0;
    for (int i = 1; i <= kParams; ++i) {
      if (value[i] < value[arg]) arg = i;
    }
    const bool improved = value[arg] < best_value * (1 - 1e-9);
    best = simplex[arg];
    best_value = value[arg];
    if (!improved && restart > 0) break;
  }
  return to_efficiency(best);
}

}  // namespace flopcast
