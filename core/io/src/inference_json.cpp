// SPDX-License-Identifier: MIT
// Request document <-> InferenceSpec, InferenceResult -> response document (task "inference").
#include <algorithm>
#include <cmath>
#include <utility>

#include "common_json.hpp"
#include "flopcast/error.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/fields.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io::detail {
namespace {

struct Parsed {
  InferenceSpec spec;
  GpuHourPrice price;   // the request's cost_per_gpu_hour_usd, else the hardware's list price
  int engine_tier = 0;  // 1: the engine's overheads are a Tier-1 fit
  json resolved;        // the request with every default filled in
};

Parsed parse_request(const json& request) {
  static const std::vector<std::string> kKeys = field_keys("", kInferenceField);
  static const std::vector<std::string> kWorkloadKeys = field_keys("workload", kInferenceField);
  static const std::vector<std::string> kEngineKeys = field_keys("engine", kInferenceField);
  ObjectReader r(request, "", kKeys);
  Parsed p;
  InferenceSpec& s = p.spec;
  read_target(r, s.model, s.hardware, s.kernel);
  read_replica(r, s);

  ObjectReader wl(r.require("workload"), "workload", kWorkloadKeys);
  s.prompt_tokens = wl.integer("prompt_tokens");
  s.output_tokens = wl.integer("output_tokens");
  s.batch_size = wl.integer("batch_size", 1);

  // The engine profile gives the defaults; every key of `engine` overrides one of them.
  const json& engine_doc = object_or_empty(r, "engine");
  ObjectReader en(engine_doc, "engine", kEngineKeys);
  const EngineProfile& profile = engine_profile(en.string("name", "generic"), en.child("name"));
  s.engine = profile;
  read_engine_overrides(en, s.engine);
  // Kernels are priced with the engine's own measured kernels where the GPU has them, at the
  // engine's per-kernel cost.
  apply_engine(s.engine, s.kernel);
  p.engine_tier = engine_tier(profile, engine_doc);
  p.price = read_gpu_hour_price(r, s.hardware);
  const double reserve_GB = framework_reserve_bytes(s.engine, s.tp) / kGB;

  p.resolved = json{{"schema_version", kSchemaVersion},
                    {"task", "inference"},
                    {"model", request.at("model")},
                    {"hardware", request.at("hardware")},
                    {"num_gpus", s.num_gpus},
                    {"max_tier", s.kernel.use_calibration ? 2 : 0},
                    {"parallelism", parallelism_json(s)},
                    {"precision", precision_json(s)},
                    {"workload",
                     {{"prompt_tokens", s.prompt_tokens},
                      {"output_tokens", s.output_tokens},
                      {"batch_size", s.batch_size}}},
                    {"engine",
                     {{"name", profile.id},
                      {"gpu_memory_utilization", s.engine.gpu_memory_utilization},
                      {"kv_block_tokens", s.engine.kv_block_tokens},
                      {"max_num_batched_tokens", s.engine.max_num_batched_tokens},
                      {"chunked_prefill", s.engine.chunked_prefill},
                      {"cuda_graphs", s.engine.cuda_graphs},
                      {"step_overhead_us", round6(s.engine.step_overhead_s / kMicro)},
                      {"request_overhead_us", round6(s.engine.request_overhead_s / kMicro)},
                      {"framework_reserve_GB", round6(reserve_GB)}}}};
  if (s.kernel.engine_kernel_fixed_s) {
    p.resolved["engine"]["kernel_fixed_us"] = round6(*s.kernel.engine_kernel_fixed_s / kMicro);
  }
  if (s.engine.kv_cache_free_fraction > 0) {
    p.resolved["engine"]["kv_cache_free_gpu_mem_fraction"] =
        round6(s.engine.kv_cache_free_fraction);
  }
  if (s.engine.host_per_sequence_s > 0) {
    p.resolved["engine"]["host_us_per_sequence"] = round6(s.engine.host_per_sequence_s / kMicro);
  }
  if (p.price.from_request) p.resolved["cost_per_gpu_hour_usd"] = p.price.usd;
  return p;
}

json band_ms(const Band& b) {
  return json{{"low", round6(b.low_s / kMilli)}, {"high", round6(b.high_s / kMilli)}};
}

/// 80 % bands of the headline figures: the leave-one-source-out spread of end-to-end inference
/// rows (presets/bands/e2e.json: "inference latency" for TTFT, TPOT and E2E, "inference
/// throughput" for tokens/s; AMD GPUs apart; "@tier0" when no kernel fit priced the estimate),
/// else the kernels' residual bands summed as fully correlated errors.
json inference_interval(const InferenceResult& r, const InferenceSpec& s,
                        std::vector<std::string>& warnings) {
  // The default band describes default estimates, which the validator made with whatever fits
  // each GPU has (r.tier is 0 as soon as one op has none); the "@tier0" band describes
  // physics-only estimates: an estimate that no fit priced.
  const bool tier0 = !(r.tier2_time_share > 0);
  const auto latency = e2e_band("inference latency", s.hardware, s.model, tier0);
  const auto rate = e2e_band("inference throughput", s.hardware, s.model, tier0);
  if (latency) warn_band_coverage("the latency", *latency, warnings);
  if (rate) warn_band_coverage("the output throughput", *rate, warnings);
  warn_early_mla_engines("inference throughput", s.hardware, s.model, warnings);
  json out{{"coverage", 0.8}};
  out["ttft_ms"] = latency ? band_json(r.ttft_s / kMilli, *latency, false) : band_ms(r.ttft_band);
  out["tpot_ms"] = latency ? band_json(r.tpot_s / kMilli, *latency, false) : band_ms(r.tpot_band);
  out["e2e_ms"] = latency ? band_json(r.e2e_s / kMilli, *latency, false) : band_ms(r.e2e_band);
  out["output_tokens_per_s"] =
      rate ? band_json(r.output_tokens_per_s, *rate, true)
           : json{{"low", round6(r.output_tokens_per_s * r.e2e_s / r.e2e_band.high_s)},
                  {"high", round6(r.output_tokens_per_s * r.e2e_s / r.e2e_band.low_s)}};
  return out;
}

/// The sentence a setup that does not fit gets: how large a batch fits, and the changes that
/// make its batch fit (fit_options), each with the batch it then holds.
std::string fit_advice(const InferenceSpec& s, const MemoryResult& m,
                       const std::vector<FitOption>& options) {
  std::string out =
      m.max_batch_size > 0
          ? "A batch of " + std::to_string(m.max_batch_size) + " fits at this context. "
          : std::string("Not even one sequence fits at this context. ");
  if (options.empty()) {
    return out +
           "To fit: a smaller batch or context, or a GPU with more memory (neither tensor "
           "parallelism within a node nor fp8 or int4 weights with an fp8 KV cache holds "
           "this batch).";
  }
  out += "It fits with ";
  for (std::size_t i = 0; i < options.size(); ++i) {
    const FitOption& o = options[i];
    if (i > 0) out += "; or with ";
    if (o.tp != s.tp) {
      out += "tensor parallelism " + std::to_string(o.tp) + " (" + std::to_string(o.num_gpus) +
             " GPUs)";
    }
    if (o.weights != s.weights || o.kv_cache != s.kv_cache) {
      out += std::string(o.tp != s.tp ? " and " : "") + std::string(to_string(o.weights)) +
             " weights with an fp8 KV cache";
    }
    out += ": a batch of up to " + std::to_string(o.max_batch_size);
  }
  return out + " at this context.";
}

/// The changes of fit_advice as request fragments a client applies as they stand (the page's
/// "way out" buttons): each the keys it changes and the batch it then holds; first the largest
/// batch that fits as it is, where one does.
json ways_to_fit(const InferenceSpec& s, const MemoryResult& m,
                 const std::vector<FitOption>& options) {
  json out = json::array();
  if (m.max_batch_size > 0) {
    out.push_back(
        {{"workload", {{"batch_size", m.max_batch_size}}}, {"max_batch_size", m.max_batch_size}});
  }
  for (const FitOption& o : options) {
    json way{{"max_batch_size", o.max_batch_size}};
    if (o.tp != s.tp) {
      way["parallelism"]["tp"] = o.tp;
      way["num_gpus"] = o.num_gpus;
    }
    if (o.weights != s.weights) way["precision"]["weights"] = to_string(o.weights);
    if (o.kv_cache != s.kv_cache) way["precision"]["kv_cache"] = to_string(o.kv_cache);
    out.push_back(std::move(way));
  }
  return out;
}

}  // namespace

json run_inference(const json& request) {
  Parsed p = parse_request(request);
  const InferenceSpec& s = p.spec;
  const InferenceResult r = estimate_inference(s);
  std::vector<std::string> warnings = r.warnings;

  json model = identity(request.at("model"), s.model.name);
  model["params_B"] = round6(r.params.total / 1e9);
  model["active_params_B"] = round6(r.params.active / 1e9);
  const MemoryResult& m = r.memory;
  json breakdown = json::array();
  for (const auto& b : r.breakdown) {
    json row = breakdown_row(b);
    row["bytes"] = round6(b.bytes);
    breakdown.push_back(std::move(row));
  }
  json out{{"schema_version", kSchemaVersion},
           {"task", "inference"},
           {"tier", r.tier},
           {"engine_tier", p.engine_tier},
           {"tier2_time_share", round6(r.tier2_time_share)},
           {"model", std::move(model)},
           {"hardware", identity(request.at("hardware"), s.hardware.name)},
           {"num_gpus", s.num_gpus},
           {"replicas", r.replicas},
           {"interval", inference_interval(r, s, warnings)},
           {"outside_calibrated_range", r.outside_calibrated_range},
           {"ttft_ms", round6(r.ttft_s / kMilli)},
           {"tpot_ms", round6(r.tpot_s / kMilli)},
           {"e2e_ms", round6(r.e2e_s / kMilli)},
           {"output_tokens_per_s", round6(r.output_tokens_per_s)},
           {"prefill_tokens_per_s", round6(r.prefill_tokens_per_s)},
           {"memory",
            {{"capacity_GB", round6(m.capacity_bytes / kGB)},
             {"budget_GB", round6(m.budget_bytes / kGB)},
             {"weights_GB", round6(m.weights_bytes / kGB)},
             {"kv_cache_GB", round6(m.kv_cache_bytes / kGB)},
             {"state_GB", round6(m.state_bytes / kGB)},
             {"activations_GB", round6(m.activations_bytes / kGB)},
             {"reserve_GB", round6(m.reserve_bytes / kGB)},
             {"free_GB", round6(m.free_bytes / kGB)},
             {"fits", m.fits},
             {"max_batch_size", m.max_batch_size},
             {"max_context_tokens", m.max_context_tokens},
             {"kv_cache_bytes_per_token", round6(m.kv_cache_bytes_per_token)},
             {"state_bytes_per_sequence", round6(m.state_bytes_per_sequence)}}},
           {"breakdown", std::move(breakdown)},
           {"assumptions", assumptions_json(r.assumptions)},
           {"warnings", warnings},
           {"request", std::move(p.resolved)}};
  if (!m.fits) {
    // What is missing and what would make it fit, said once for the CLI and the page.
    const double need =
        m.weights_bytes + m.kv_cache_bytes + m.state_bytes + m.activations_bytes + m.reserve_bytes;
    json& mem = out["memory"];
    mem["short_GB"] = round6(std::max(0.0, need - m.budget_bytes) / kGB);
    const std::vector<FitOption> options =
        fit_options(s);  // once for the sentence and the fragments
    mem["to_fit"] = fit_advice(s, m, options);
    mem["ways_to_fit"] = ways_to_fit(s, m, options);
  }
  add_cost_per_million(out, p.price, s.num_gpus, r.output_tokens_per_s);
  if (p.price.usd > 0) {
    // The cheapest batch at this context: the largest that fits (null when none does).
    double best = 0;
    if (m.max_batch_size == s.batch_size) {
      best = r.output_tokens_per_s;
    } else if (m.max_batch_size > 0) {
      InferenceSpec largest = s;
      largest.batch_size = m.max_batch_size;
      best = estimate_inference(largest).output_tokens_per_s;
    }
    out["cost_basis"]["max_batch_size"] = m.max_batch_size;
    out["cost_basis"]["usd_per_million_output_tokens_at_max_batch"] =
        usd_per_million_json(p.price, s.num_gpus, best);
  }
  out["energy"] = energy_json(estimate_energy(s.hardware, s.num_gpus, r.output_tokens_per_s,
                                              inference_activity(r, s.output_tokens)),
                              true, s.output_tokens);
  return out;
}

}  // namespace flopcast::io::detail
