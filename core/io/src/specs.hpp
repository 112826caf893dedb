// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopcast/calibration.hpp"
#include "flopcast/energy.hpp"
#include "flopcast/engine.hpp"
#include "flopcast/hardware.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/model.hpp"
#include "flopcast/names.hpp"
#include "flopcast/training.hpp"

namespace flopcast::io::detail {

/// What-if hardware (`{"preset", "scale"}`): the keys of `scale` in the order to offer them, and
/// the range of each factor.
std::vector<std::string> what_if_scale_keys();
inline constexpr double kWhatIfScaleMin = 0.01;
inline constexpr double kWhatIfScaleMax = 100;

/// A serving request's `mode`: "analytic" (false) or "simulate" (true).
inline constexpr std::array<Named<bool>, 2> kServingModeNames{
    {{"analytic", false}, {"simulate", true}}};

/// `capacity_policy`: "max_utilization" (false) or "guaranteed_no_evict" (true; EngineProfile).
inline constexpr std::array<Named<bool>, 2> kCapacityPolicyNames{
    {{"max_utilization", false}, {"guaranteed_no_evict", true}}};

using nlohmann::json;

/// The embedded presets of one kind (models, hardware, scenarios, setups, calibration, engines,
/// frameworks, collectives, bands), each kind parsed and checked on its first use, once, by
/// whichever thread asks first. Error for a kind that does not exist.
const json& preset_list(std::string_view kind);

/// The ids of the embedded presets of `kind`, in their embedded order, each with its file's
/// JSON text, without parsing any: an id is its file's name (`<kind>/<id>.json`), which the
/// preset loader holds every preset to.
std::vector<std::pair<std::string_view, const char*>> embedded_presets(std::string_view kind);

// The typed API is public (flopcast/io/specs.hpp); the JSON layer calls it unqualified.
using io::attach_collective_fits;
using io::calibration_fit_to_json;
using io::calibration_for;
using io::e2e_band;
using io::e2e_band_kind;
using io::E2EBand;
using io::engine_profile;
using io::framework_profile;
using io::framework_profile_ids;
using io::hardware_to_json;
using io::model_to_json;
using io::read_calibration;
using io::read_engine_profile;
using io::read_framework_profile;
using io::read_hardware;
using io::read_model;
using io::resolve_hardware;
using io::resolve_model;
using io::tier0_residuals;

class ObjectReader;

/// The price of one GPU-hour the cost figures use: the request's `cost_per_gpu_hour_usd`
/// (checked to be 0..1e6) where given, else the hardware's on-demand list price; usd 0: none.
struct GpuHourPrice {
  double usd = 0;
  std::string basis;  ///< where the price comes from (a request, or a dated price page)
  bool from_request = false;
};
GpuHourPrice read_gpu_hour_price(const ObjectReader& r, const HardwareSpec& hw);
/// Adds `usd_per_million_output_tokens` (null when nothing is produced to divide by) and its
/// `cost_basis` to a result when a price is known; without one both keys are left out.
void add_cost_per_million(json& result, const GpuHourPrice& price, int gpus,
                          double output_tokens_per_s);
/// $ per million output tokens of `gpus` GPUs at `price` producing `output_tokens_per_s`, rounded;
/// null when nothing is produced to divide by.
json usd_per_million_json(const GpuHourPrice& price, int gpus, double output_tokens_per_s);
/// `{usd_per_gpu_hour, basis}` of a price.
json cost_basis_json(const GpuHourPrice& price);
/// The `energy` of a result (estimate_energy, flopcast/energy.hpp) per output token (`per_output`)
/// or per trained token, and `joules_per_request` where a request's tokens are given (> 0); null
/// when there is none (no board power, nothing produced).
json energy_json(const std::optional<Energy>& e, bool per_output, double tokens_per_request = 0);

/// A request's `network` object (nics_per_node, nic_bandwidth_Gbps, latency_us) over the
/// hardware's scale-out fields, each checked under its own key.
void read_network_fields(const ObjectReader& n, HardwareSpec& hw);

json run_inference(const json& request);
json run_collective(const json& request);
json run_training(const json& request);
json run_training_search(const json& request);  ///< task "search", target "training"
/// task "serving": analytic queueing model or discrete-event simulation (serving_json.cpp).
json run_serving(const json& request);
json run_serving_search(const json& request);  ///< task "search", target "serving"
/// task "search", target "hardware": each GPU type at the smallest tensor parallelism that fits
/// an inference request (hardware_search_json.cpp).
json run_hardware_search(const json& request);

/// Collective fits per link type (presets/collectives/fabrics.json).
void check_collective_fits(const json& doc);

/// An `engine` object's optional `kernel_fixed_us` into `e` (validate(EngineProfile) checks it).
void read_kernel_fixed(const ObjectReader& r, EngineProfile& e);
/// The overrides an inference or serving request's `engine` object may give (memory utilization,
/// KV block size, token budget, chunked prefill, step / request / per-kernel overheads) on top of
/// the profile in `e`, then validate(e): one reader and one range check for both tasks.
void read_engine_overrides(const ObjectReader& en, EngineProfile& e);
/// The profile's settings as an `engine` object (`name` plus the keys a request may override).
json engine_profile_to_json(const EngineProfile& e);

/// One edge of `band` as a factor of the estimate: the low edge when `low`, of a rate when `rate`
/// (a rate is slow when it is low). It need not hold the estimate: Tier 0 lies below every
/// measured time, and its band above it.
double band_edge_factor(const E2EBand& band, bool rate, bool low);
/// {"low", "high"} of a time `value` under `band`, or of a rate when `rate` (a rate is slow when
/// it is low).
nlohmann::json band_json(double value, const E2EBand& band, bool rate);
/// Checks an embedded bands document (SpecError naming the field).
void check_bands(const nlohmann::json& doc);

}  // namespace flopcast::io::detail
