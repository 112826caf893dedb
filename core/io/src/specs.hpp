// SPDX-License-Identifier: MIT
#pragma once

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

namespace flopcast::io::detail {

using nlohmann::json;

class ObjectReader;

/// Strict readers: every key checked, units converted once to SI.
ModelSpec read_model(const json& j, const std::string& path);
/// The request's optional `cost_per_gpu_hour_usd` (0: not asked), checked to be 0..1e6.
double read_gpu_hour_price(const ObjectReader& r);
/// Adds `usd_per_million_output_tokens` to a result when a price was given (null when nothing
/// is produced to divide by); without a price the key is left out.
void add_cost_per_million(json& result, double usd_per_gpu_hour, int gpus,
                          double output_tokens_per_s);
/// The `energy` of a result (flopcast/energy.hpp): `gpus` GPUs at board power producing
/// `tokens_per_s` tokens a second, per output token (`per_output`) or per trained token; null
/// when the hardware states no board power or nothing is produced.
json energy_json(const HardwareSpec& hw, int gpus, double tokens_per_s, bool per_output);

/// A request's `network` object (nics_per_node, nic_bandwidth_Gbps, latency_us) over the
/// hardware's scale-out fields, each checked under its own key.
void read_network_fields(const ObjectReader& n, HardwareSpec& hw);

HardwareSpec read_hardware(const json& j, const std::string& path);
/// Resolves a preset id (string) or reads an object; `kind` is "models" or "hardware".
ModelSpec resolve_model(const json& j, const std::string& path);
HardwareSpec resolve_hardware(const json& j, const std::string& path);

json model_to_json(const ModelSpec& m);
json hardware_to_json(const HardwareSpec& h);

json run_inference(const json& request);
json run_collective(const json& request);
json run_training(const json& request);
json run_training_search(const json& request);  ///< task "search", target "training"
/// task "serving": analytic queueing model or discrete-event simulation (serving_json.cpp).
json run_serving(const json& request);
json run_serving_search(const json& request);  ///< task "search", target "serving"

/// Collective fits per link type (presets/collectives/fabrics.json).
void check_collective_fits(const json& doc);
/// Sets the hardware's scale-up and scale-out FabricModel from the fits of its link types.
void attach_collective_fits(HardwareSpec& h);

/// Engine profiles (presets/engines/<id>.json).
EngineProfile read_engine_profile(const json& doc, const std::string& path);
/// An `engine` object's optional `kernel_fixed_us` into `e` (validate(EngineProfile) checks it).
void read_kernel_fixed(const ObjectReader& r, EngineProfile& e);
/// The overrides an inference or serving request's `engine` object may give (memory utilization,
/// KV block size, token budget, chunked prefill, step / request / per-kernel overheads) on top of
/// the profile in `e`, then validate(e): one reader and one range check for both tasks.
void read_engine_overrides(const ObjectReader& en, EngineProfile& e);
/// The tier of a request's engine: the profile's, or 0 once the request sets any of the overheads
/// (step, request, per kernel) that a Tier-1 profile fitted.
int engine_tier(const ObjectReader& r, const EngineProfile& profile);
/// The embedded profile `id`; SpecError at `path` (with a suggestion) when there is none.
const EngineProfile& engine_profile(const std::string& id, const std::string& path);
/// The profile's settings as an `engine` object (`name` plus the keys a request may override).
json engine_profile_to_json(const EngineProfile& e);

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
};
std::optional<E2EBand> e2e_band(const std::string& kind, bool tier0);
/// The band kind of `kind` on hardware of `vendor`: AMD GPUs have bands of their own
/// ("<kind> (amd)"), since their kernel efficiencies are not measured.
std::string e2e_band_kind(const std::string& kind, const std::string& vendor);
/// The band of `kind` for an estimate on `hw` (e2e_band_kind).
std::optional<E2EBand> e2e_band(const std::string& kind, const HardwareSpec& hw, bool tier0);
/// {"low", "high"} of a time `value` under `band`, or of a rate when `rate` (a rate is slow when
/// it is low).
nlohmann::json band_json(double value, const E2EBand& band, bool rate);
/// Checks an embedded bands document (SpecError naming the field).
void check_bands(const nlohmann::json& doc);

}  // namespace flopcast::io::detail
