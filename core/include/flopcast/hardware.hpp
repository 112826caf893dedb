// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "flopcast/calibration.hpp"
#include "flopcast/dtype.hpp"
#include "flopcast/units.hpp"

namespace flopcast {

/// How well NCCL-style collectives use one fabric (scale-up or scale-out): an alpha-beta model
/// with two protocols, as NCCL's own tuner has. The low-latency protocols (LL/LL128) start fast
/// and reach `ll_efficiency` of the link; the Simple protocol pays `simple_latency_s` more and
/// reaches `efficiency`. A collective takes the faster of the two. Fitted per link type on the
/// train split of measured collectives (presets/collectives/fabrics.json); `fitted` false:
/// the Tier-0 values below (Simple only, efficiency from KernelModel::link_efficiency).
struct FabricModel {
  double efficiency = 0.80;     ///< Simple: fraction of per-direction link bandwidth
  double ll_efficiency = 0.40;  ///< LL/LL128: fraction of per-direction link bandwidth
  double base_latency_s = 0;    ///< fixed cost of one collective (launch, first sync)
  double hop_latency_s = 0;     ///< per step of the algorithm over this fabric
  double simple_latency_s = 0;  ///< extra fixed cost of the Simple protocol
  bool fitted = false;
};

/// One accelerator, the scale-up fabric that joins it to its node peers, and the scale-out
/// network (NICs) between nodes. SI units inside.
struct HardwareSpec {
  std::string name;
  std::string vendor;
  /// GPU architecture family (volta, turing, ampere, ada, hopper, blackwell, cdna2, cdna3,
  /// cdna4); "" when not stated. Training framework constants are fitted per family.
  std::string architecture;
  std::map<DType, FlopsPerSecond> dense_peak;  ///< dense (never 2:4 sparse) tensor/matrix peaks
  Bytes hbm_capacity;
  BytesPerSecond hbm_bandwidth;
  Bytes l2_cache;
  int num_sms = 0;  ///< streaming multiprocessors (NVIDIA) or compute units (AMD)
  /// Fewest GEMM rows a kernel computes at once: tensor-core MMA tiles pad a batch-1 GEMM to 16
  /// rows; GPUs without tensor cores run matrix-vector kernels (1). 0: the kernel model's (16).
  int min_gemm_rows = 0;
  std::string scaleup_link;
  BytesPerSecond scaleup_bandwidth;  ///< per GPU, per direction
  double scaleup_latency_s = 0;      ///< fixed cost of one small collective on the fabric
  int gpus_per_node = 0;
  /// Scale-out network of one node: `scaleout_nics` NICs of `scaleout_nic_bandwidth` each
  /// (per direction), e.g. DGX H100: 8 x 400 Gb/s ConnectX-7. 0 NICs: a single-node system.
  std::string scaleout_link;
  int scaleout_nics_per_node = 0;
  BytesPerSecond scaleout_nic_bandwidth;
  double scaleout_latency_s = 0;  ///< per hop between nodes (NIC, switch, wire)
  double tdp_W = 0;
  /// Board power limit below the TDP (`nvidia-smi -pl`, or a part sold power-capped such as
  /// Meta's 500 W H100); 0: none.
  double power_limit_W = 0;
  /// On-demand list price of one GPU-hour in US dollars, and where and when it was listed
  /// (presets: a cloud's public price page, dated); 0: none known. The default price of cost
  /// figures: a request's cost_per_gpu_hour_usd overrides it.
  double usd_per_gpu_hour = 0;
  std::string price_basis;
  /// Collective fits of the scale-up and scale-out link types (by `scaleup_link` and
  /// `scaleout_link`); Tier-0 values when the link type has none.
  FabricModel scaleup_fabric;
  FabricModel scaleout_fabric;
  /// Tier-2 efficiencies fitted to measurements of this GPU; null: Tier 0 only.
  std::shared_ptr<const Calibration> calibration;

  /// Dense peak for a math type, or nullopt when the hardware has no such tensor-core support.
  [[nodiscard]] std::optional<FlopsPerSecond> peak(DType t) const {
    auto it = dense_peak.find(t);
    if (it == dense_peak.end()) return std::nullopt;
    return it->second;
  }

  /// Whether the tensor cores apply per-block scales themselves (OCP MX formats: MXFP8, MXFP4):
  /// Blackwell's and CDNA4's, the generations that brought FP4; a dense fp4 peak marks them.
  [[nodiscard]] bool block_scaled_mma() const { return peak(DType::fp4).has_value(); }

  /// Sustained compute clock under `power_limit_W`, relative to the clock at the TDP the peaks
  /// are quoted for: dynamic power P ∝ C·V²·f with the voltage following the clock (V ∝ f) in
  /// the DVFS range, so f ∝ P^(1/3). 1 without a limit. Memory bandwidth is not scaled.
  [[nodiscard]] double power_clock_factor() const;
};

void validate(const HardwareSpec& h, const std::string& path);

/// What every estimate on non-NVIDIA hardware says about its Tier-0 efficiencies (fitted on
/// NVIDIA measurements): for AMD, how far the end-to-end measurements it was validated on ran
/// from its estimates; for other vendors, that they are unvalidated. Empty for NVIDIA.
std::string vendor_caveat(const HardwareSpec& h);

/// Fails at `path` unless `t` (mxfp8) finds tensor cores that apply its block scales
/// (HardwareSpec::block_scaled_mma); other types pass. Inference and training share the rule.
void check_block_scaled(const HardwareSpec& h, DType t, const std::string& path);

/// Bounds of the scale-out network, shared by validate() and the requests' `network` override
/// (which reports them under its own field names).
inline constexpr int kMaxNicsPerNode = 64;
inline constexpr double kMinNicGbps = 1e-3, kMaxNicGbps = 1e7;

/// `h` with `gpus_per_node` GPUs per node, each GPU keeping its own share of the node's NICs
/// (the preset's NICs per GPU): nics_per_node scales with gpus_per_node, rounded to a whole NIC
/// (at least 1, at most 64) whose bandwidth absorbs the rounding, so that
/// nics · nic_bandwidth / gpus_per_node is unchanged. A DGX H100 (8 GPUs, 8 × 400 Gb/s) at
/// 1 GPU per node has 1 × 400 Gb/s.
HardwareSpec with_gpus_per_node(HardwareSpec h, int gpus_per_node);

}  // namespace flopcast
