// SPDX-License-Identifier: MIT
#pragma once
// The typed request API: models and hardware read from JSON (or named by preset) into the
// core's specs and written back, the embedded engine and training-framework profiles, the Tier-2
// calibrations and the 80% bands. The CLI, the benchmarks and any C++ program that builds core
// specs itself use these; the JSON entry point (flopcast/io/api.hpp) uses them too.

#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopcast/calibration.hpp"
#include "flopcast/engine.hpp"
#include "flopcast/hardware.hpp"
#include "flopcast/model.hpp"
#include "flopcast/training.hpp"

namespace flopcast::io {

using json = nlohmann::json;

/// Strict readers: every key checked, units converted once to SI; SpecError names the field
/// under `path`.
ModelSpec read_model(const json& j, const std::string& path);
HardwareSpec read_hardware(const json& j, const std::string& path);
/// A preset id (or alias), a what-if preset (`{"preset", "scale"}`, hardware only) or an object,
/// with the preset's Tier-2 and collective fits attached.
ModelSpec resolve_model(const json& j, const std::string& path);
HardwareSpec resolve_hardware(const json& j, const std::string& path);
json model_to_json(const ModelSpec& m);
json hardware_to_json(const HardwareSpec& h);
/// Sets the hardware's scale-up and scale-out FabricModel from the fits of its link types
/// (presets/collectives/fabrics.json).
void attach_collective_fits(HardwareSpec& h);

/// Engine profiles (presets/engines/<id>.json): read one, or the embedded `id` (SpecError at
/// `path`, with a suggestion, when there is none).
EngineProfile read_engine_profile(const json& doc, const std::string& path);
const EngineProfile& engine_profile(const std::string& id, const std::string& path);
/// The tier of `profile`'s overheads under a request's `engine` object: 0 where it sets one of
/// the overheads a Tier-1 profile fitted (step_overhead_us, request_overhead_us,
/// kernel_fixed_us), else the profile's own.
int engine_tier(const EngineProfile& profile, const json& overrides);

/// Training framework profiles (presets/frameworks/<id>.json). A profile with `same_as` comes
/// back with its id only (its constants are the named profile's).
TrainingFramework read_framework_profile(const json& doc, const std::string& path);
/// The embedded profile `id` (generic, fitted, pytorch_fsdp, megatron), or nullptr.
const TrainingFramework* framework_profile(std::string_view id);
/// Every profile id, for error messages.
std::vector<std::string> framework_profile_ids();

/// Tier-2 calibration files: presets/calibration/<hardware id>.json (written by `flopcast fit`).
Calibration read_calibration(const json& doc, const std::string& path);
json calibration_fit_to_json(const CalibratedEfficiency& e);
/// The embedded calibration of a hardware preset, or null.
std::shared_ptr<const Calibration> calibration_for(const std::string& hardware_id);
/// Tier-0 residual bands per op class (presets/calibration/tier0.json), or null.
const Calibration* tier0_residuals();

/// The 80% band of an end-to-end figure of `kind` ("training", "serving mean", "serving p50",
/// "serving tail", "serving throughput", ...; presets/bands/e2e.json): the 10th and 90th
/// percentile of the slowness ln(measured time / predicted time) of leave-one-source-out
/// predictions, `tier0` for max_tier 0. nullopt when the kind has none.
struct E2EBand {
  double slow_p10 = 0;
  double slow_p90 = 0;
  /// Share of the rows of sources the band was not built from that it held (leave-one-source-
  /// out, docs/validation.md); NaN where unchecked (one source, or the Tier-0 bands).
  double coverage_loso = std::numeric_limits<double>::quiet_NaN();
  /// The median slowness of those predictions (NaN where the file has none), and how many rows
  /// of how many sources the band was built from.
  double slow_median = std::numeric_limits<double>::quiet_NaN();
  int rows = 0;
  int sources = 0;
};
std::optional<E2EBand> e2e_band(const std::string& kind, bool tier0);
/// The band kind of `kind` on hardware of `vendor` for a model with multi-head latent attention
/// and routed experts (`mla_moe`, DeepSeek-V3 style): AMD GPUs have bands of their own ("<kind>
/// (amd)"), since their kernel efficiencies are not measured, and so do MLA + MoE inference and
/// serving on other GPUs ("<kind> (mla-moe)"), whose engine kernels differ from release to
/// release far more than dense models' (docs/validation.md). The MLA +
/// MoE rows of the engine releases of early 2025 (`early_engines`: SGLang <= 0.4.3, vLLM <= 0.7,
/// TensorRT-LLM <= 0.18, before their DeepSeek kernels) are a kind of their own, "<kind>
/// (mla-moe, early-2025 engines)": estimates use the later releases' band and warn with it.
/// Training is banded apart for models with routed experts, "training (moe)" (`moe`): their
/// newest trainers run them 30 % faster or slower than estimated where dense models hold ~10 %.
std::string e2e_band_kind(const std::string& kind, const std::string& vendor, bool mla_moe,
                          bool early_engines = false, bool moe = false);
/// The band of `kind` for an estimate of `model` on `hw` (e2e_band_kind).
std::optional<E2EBand> e2e_band(const std::string& kind, const HardwareSpec& hw,
                                const ModelSpec& model, bool tier0);
/// Adds to `warnings` that the band of `figure` held fewer than 73 % of the rows of
/// sources it was not built from, where its leave-one-source-out check says so.
void warn_band_coverage(const std::string& figure, const E2EBand& band,
                        std::vector<std::string>& warnings);
/// Adds to `warnings`, for an MLA + MoE model (DeepSeek-V3 style) on a GPU with measured-kernel
/// bands, how much slower the engine releases of early 2025 ran than estimated (the median of
/// the "<kind> (mla-moe, early-2025 engines)" band), where the bands hold that kind.
void warn_early_mla_engines(const std::string& kind, const HardwareSpec& hw, const ModelSpec& model,
                            std::vector<std::string>& warnings);

}  // namespace flopcast::io
