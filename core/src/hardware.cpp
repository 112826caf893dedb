// SPDX-License-Identifier: MIT
#include "flopcast/hardware.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"

namespace flopcast {
namespace {

constexpr double kMinPowerLimitFraction = 0.3;

// Checks in SI, reports in the JSON field's unit: `scale` converts SI to that unit.
void positive(const std::string& path, double si_value, double scale) {
  if (!std::isfinite(si_value) || !(si_value > 0)) fail(path, "must be > 0", si_value * scale);
}

void non_negative(const std::string& path, double si_value, double scale) {
  if (!std::isfinite(si_value) || si_value < 0) fail(path, "must be >= 0", si_value * scale);
}

/// Positive, then within physical bounds given in the field's unit: below `lo` times overflow or
/// nothing could run, above `hi` capacities overflow the counts derived from them.
void bounded(const std::string& path, double si_value, double scale, double lo, double hi) {
  positive(path, si_value, scale);
  const double v = si_value * scale;
  if (!(v >= lo && v <= hi)) {
    fail(path, "must be between " + format_number(lo) + " and " + format_number(hi), v);
  }
}

}  // namespace

void check_block_scaled(const HardwareSpec& h, DType t, const std::string& path) {
  if (t == DType::mxfp8 && !h.block_scaled_mma()) {
    fail(path,
         "mxfp8 needs tensor cores that apply block scales (Blackwell, CDNA4: the GPUs with a "
         "dense fp4 peak); use fp8",
         "mxfp8");
  }
}

void validate(const HardwareSpec& h, const std::string& path) {
  const std::string p = path + ".";
  if (h.dense_peak.empty()) {
    throw SpecError(p + "dense_peak_TFLOPS", "must name at least one data type (got {})");
  }
  for (const auto& [type, peak] : h.dense_peak) {
    // 1 GFLOP/s (a microcontroller) to 1 EFLOP/s per device.
    bounded(p + "dense_peak_TFLOPS." + std::string(to_string(type)), peak.value, 1 / kTera, 1e-3,
            1e6);
  }
  bounded(p + "hbm_GB", h.hbm_capacity.value, 1 / kGB, 1e-3, 1e5);  // 1 MB to 100 TB
  bounded(p + "hbm_bandwidth_GBps", h.hbm_bandwidth.value, 1 / kGB, 0.1, 1e6);
  non_negative(p + "l2_cache_MB", h.l2_cache.value, 1 / kMB);
  if (h.l2_cache.value / kMB > 1e5)
    fail(p + "l2_cache_MB", "must be <= 100000", h.l2_cache.value / kMB);
  if (h.num_sms < 1 || h.num_sms > 100'000) {
    fail(p + "num_sms", "must be between 1 and 100000", h.num_sms);
  }
  if (h.min_gemm_rows < 0 || h.min_gemm_rows > 128) {
    fail(p + "min_gemm_rows", "must be between 0 and 128", h.min_gemm_rows);
  }
  bounded(p + "scaleup_bandwidth_GBps", h.scaleup_bandwidth.value, 1 / kGB, 1e-3, 1e6);
  non_negative(p + "scaleup_latency_us", h.scaleup_latency_s, 1 / kMicro);
  if (h.gpus_per_node < 1 || h.gpus_per_node > 1024) {
    fail(p + "gpus_per_node", "must be between 1 and 1024", h.gpus_per_node);
  }
  if (h.scaleout_nics_per_node < 0 || h.scaleout_nics_per_node > kMaxNicsPerNode) {
    fail(p + "scaleout_nics_per_node", "must be between 0 and " + std::to_string(kMaxNicsPerNode),
         h.scaleout_nics_per_node);
  }
  if (h.scaleout_nics_per_node > 0) {
    bounded(p + "scaleout_nic_bandwidth_Gbps", h.scaleout_nic_bandwidth.value, 8 / kGB, kMinNicGbps,
            kMaxNicGbps);
  } else {
    non_negative(p + "scaleout_nic_bandwidth_Gbps", h.scaleout_nic_bandwidth.value, 8 / kGB);
  }
  non_negative(p + "scaleout_latency_us", h.scaleout_latency_s, 1 / kMicro);
  // 0: not stated (no energy figures); else a board's power, 1 W (an accelerator stick) to
  // 100 kW (a whole rack counted as one device): below it the energy per token overflows.
  if (h.tdp_W != 0) bounded(p + "tdp_W", h.tdp_W, 1, 1, 1e5);
  if (h.power_limit_W != 0) {
    if (!(h.tdp_W > 0)) {
      fail(p + "power_limit_W", "needs tdp_W, the power the peaks are quoted at", h.power_limit_W);
    }
    // Below ~30 % of the TDP the clocks sit at their floor and the cube law no longer holds.
    const double lo = kMinPowerLimitFraction * h.tdp_W;
    if (!(h.power_limit_W >= lo && h.power_limit_W <= h.tdp_W)) {
      fail(p + "power_limit_W",
           "must be between 0.3 x tdp_W (" + format_number(lo) + ") and tdp_W (" +
               format_number(h.tdp_W) + ")",
           h.power_limit_W);
    }
  }
}

std::string vendor_caveat(const HardwareSpec& h) {
  if (h.vendor == "nvidia") return "";
  const std::string borrowed = "Tier-0 efficiencies come from NVIDIA measurements; ";
  if (h.vendor == "amd") {
    // docs/validation.md: the AMD rows of the dstack sources, left one source out (median
    // throughput 2.1x and 4.0x the measured, mean latencies 0.19x).
    return borrowed +
           "on AMD GPUs the end-to-end measurements they were checked against (dstack: vLLM and "
           "SGLang on ROCm, MI300X, 2024-25) ran 2-5x slower than flopcast estimates";
  }
  return borrowed + "they are unvalidated on " +
         (h.vendor.empty() ? std::string("this vendor") : h.vendor) + " hardware";
}

double HardwareSpec::power_clock_factor() const {
  if (power_limit_W <= 0 || tdp_W <= 0 || power_limit_W >= tdp_W) return 1.0;
  return std::cbrt(power_limit_W / tdp_W);
}

HardwareSpec with_gpus_per_node(HardwareSpec h, int gpus_per_node) {
  if (gpus_per_node == h.gpus_per_node || h.gpus_per_node <= 0 || gpus_per_node <= 0) {
    if (gpus_per_node > 0) h.gpus_per_node = gpus_per_node;
    return h;
  }
  if (h.scaleout_nics_per_node > 0) {
    const double per_gpu =
        h.scaleout_nics_per_node * h.scaleout_nic_bandwidth.value / h.gpus_per_node;
    const double exact =
        static_cast<double>(h.scaleout_nics_per_node) * gpus_per_node / h.gpus_per_node;
    const int nics = std::clamp(static_cast<int>(std::lround(exact)), 1, 64);
    h.scaleout_nics_per_node = nics;
    h.scaleout_nic_bandwidth = BytesPerSecond(per_gpu * gpus_per_node / nics);
  }
  h.gpus_per_node = gpus_per_node;
  return h;
}

}  // namespace flopcast
