// SPDX-License-Identifier: MIT
#include "flopcast/io/api.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <utility>

#include "flopcast/error.hpp"
#include "flopcast/io/fields.hpp"
#include "flopcast/serving.hpp"
#include "reader.hpp"
#include "specs.hpp"

#ifndef FLOPCAST_VERSION
#define FLOPCAST_VERSION "0.0.0"
#endif

namespace flopcast::io {

std::string version() { return FLOPCAST_VERSION; }

namespace {

template <std::size_t N>
json dtype_names_json(const std::array<DType, N>& types, bool gguf_only = false) {
  json out = json::array();
  for (DType t : types) {
    if (!gguf_only || is_gguf(t)) out.push_back(to_string(t));
  }
  return out;
}

template <typename E, std::size_t N>
json names_json(const std::array<Named<E>, N>& table) {
  json out = json::array();
  for (const Named<E>& n : table) out.push_back(n.name);
  return out;
}

/// The engine profiles a request may name (presets/engines/, in their preset order), read from
/// the presets' file names without parsing every embedded preset, so that a CLI building its help
/// from schema() starts without that cost.
json engine_names_json() {
  json out = json::array();
  for (const auto& [id, text] : detail::embedded_presets("engines")) out.push_back(std::string(id));
  return out;
}

/// The registry (flopcast/io/fields.hpp) as schema()'s `fields`: per field its path, type, unit,
/// the tasks that read it, its CLI flag and the schema() list of its values.
json fields_json() {
  json out = json::array();
  for (const RequestField& f : request_fields()) {
    json tasks = json::array();
    if (f.tasks & kInferenceField) tasks.push_back("inference");
    if (f.tasks & kServingField) tasks.push_back("serving");
    json field{{"path", f.path}, {"type", to_string(f.type)}, {"tasks", tasks}};
    if (!f.unit.empty()) field["unit"] = f.unit;
    if (!f.flag.empty()) field["flag"] = f.flag;
    if (!f.choices.empty()) field["choices"] = f.choices;
    out.push_back(std::move(field));
  }
  return out;
}

}  // namespace

std::optional<std::string> suggest(std::string_view word, const std::vector<std::string>& options) {
  return detail::nearest(word, options);
}

json schema() {
  return json{
      {"precision",
       {{"weights", dtype_names_json(kWeightTypes)},
        {"gguf_weights", dtype_names_json(kWeightTypes, true)},
        {"attention_weights", dtype_names_json(kAttentionWeightTypes)},
        {"kv_cache", dtype_names_json(kKvCacheTypes)},
        {"activations", dtype_names_json(kActivationTypes)},
        {"compute", dtype_names_json(kTrainingComputeTypes)}}},
      {"parallelism", {{"moe_dispatch", names_json(kMoeDispatchNames)}}},
      // What-if hardware: the figures `hardware.scale` multiplies, and by how much at most.
      {"hardware", {{"scale", detail::what_if_scale_keys()}}},
      {"engine",
       {{"name", engine_names_json()},
        {"policy", names_json(kSchedulePolicyNames)},
        {"batching", names_json(kBatchingNames)},
        {"capacity_policy", names_json(detail::kCapacityPolicyNames)}}},
      {"workload",
       {{"recompute", names_json(kRecomputeNames)},
        {"optimizer", names_json(kOptimizerNames)},
        {"arrival_kind", names_json(kArrivalKindNames)}}},
      {"serving",
       {{"mode", names_json(detail::kServingModeNames)}, {"router", names_json(kRouterNames)}}},
      // The longest request (JSON bytes) or link (characters) read: the page refuses a longer
      // link before handing it over (a megabyte costs ~12 ms to copy into the module).
      {"limits",
       {{"request_bytes", kMaxRequestBytes},
        {"what_if_scale", {detail::kWhatIfScaleMin, detail::kWhatIfScaleMax}}}},
      {"fields", fields_json()}};
}

namespace {

/// round6 through the C library: print six significant digits, read them back.
double round6_printf(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

}  // namespace

double round6(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  // The same double as round6_printf, without formatting, for |x| in [1e-16, 1e21]: with
  // y = |x|·10^k in [99999.5, 999999.5), the six digits are M = round(y); 10^|k| ≤ 10^22 is an
  // exact double, so y carries one rounding (error < 1e-10 at this size) and M / 10^k (or
  // M · 10^-k) is the correctly rounded value of the decimal M·10^-k, which strtod returns too.
  // Where y lies within 1e-6 of a half (a possible tie, decided by the exact binary value, or a
  // product rounded onto one), and outside that range, the C library decides.
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const double a = std::fabs(x);
  if (!(a >= 1e-16 && a <= 1e21)) return round6_printf(x);
  int k = 5 - static_cast<int>(std::floor(std::log10(a)));
  auto scaled = [&](int kk) { return kk >= 0 ? a * kPow10[kk] : a / kPow10[-kk]; };
  double y = scaled(k);
  // Which decade holds the six digits is a rounding decision too.
  if (std::fabs(y - 999999.5) < 1e-6 || std::fabs(y - 99999.5) < 1e-6) return round6_printf(x);
  if (y >= 999999.5) y = scaled(--k);  // log10 a hair high or low at a power of ten
  if (y < 99999.5) y = scaled(++k);
  if (k < -22 || k > 22 || y < 99999.5 || y >= 999999.5) return round6_printf(x);
  const double m = std::floor(y + 0.5);
  if (std::fabs(y - (m - 0.5)) < 1e-6) return round6_printf(x);
  const double r = k >= 0 ? m / kPow10[k] : m * kPow10[-k];
  return x < 0 ? -r : r;
}

json run(const json& request) {
  if (!request.is_object()) {
    throw SpecError(
        "", "a request must be a JSON object (got " + detail::describe_value(request) + ")");
  }
  if (auto it = request.find("schema_version"); it != request.end()) {
    if (detail::as_int(*it, "schema_version") != kSchemaVersion) {
      fail("schema_version", "must be 1", it->dump());
    }
  }
  auto task = request.find("task");
  if (task == request.end()) throw SpecError("task", "required key is missing");
  if (!task->is_string()) {
    throw SpecError("task", "must be a string (got " + detail::describe_value(*task) + ")");
  }
  const std::string name = task->get<std::string>();
  if (name == "inference") return detail::run_inference(request);
  if (name == "collective") return detail::run_collective(request);
  if (name == "training") return detail::run_training(request);
  if (name == "serving") return detail::run_serving(request);
  if (name == "search") {
    // search.target picks the search; the training one reports a bad or missing target.
    const auto search = request.find("search");
    if (search != request.end() && search->is_object() &&
        search->value("target", json()) == json("serving")) {
      return detail::run_serving_search(request);
    }
    if (search != request.end() && search->is_object() &&
        search->value("target", json()) == json("hardware")) {
      return detail::run_hardware_search(request);
    }
    return detail::run_training_search(request);
  }
  const std::vector<std::string> tasks{"inference", "collective", "training", "serving", "search"};
  std::string rule = "unknown task; supported: inference, collective, training, serving, search";
  if (auto guess = detail::nearest(name, tasks); guess && *guess != name) {
    rule += " (did you mean \"" + *guess + "\"?)";
  }
  fail("task", rule, "\"" + name + "\"");
}

json run_text(std::string_view text) { return run(parse_json(text)); }

ErrorInfo describe_current_exception() noexcept {
  try {
    throw;
  } catch (const NotModelledError& e) {
    return {"not_modelled", e.path(), e.what()};
  } catch (const SpecError& e) {
    const bool malformed =
        e.path().empty() && std::string(e.what()).rfind("malformed JSON", 0) == 0;
    return {malformed ? "invalid_json" : "invalid_request", e.path(), e.what()};
  } catch (const std::exception& e) {
    return {"internal", "", e.what()};
  } catch (...) {
    return {"internal", "", "unknown error"};
  }
}

json ok_envelope(json result) { return json{{"ok", true}, {"result", std::move(result)}}; }

json error_envelope(const ErrorInfo& e) {
  return json{{"ok", false},
              {"error", {{"code", e.code}, {"path", e.path}, {"message", e.message}}}};
}

std::string handle(std::string_view request_text) {
  return enveloped([&] { return run_text(request_text); });
}

}  // namespace flopcast::io
