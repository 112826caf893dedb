// SPDX-License-Identifier: MIT
// Serving rows of e2e_dev.jsonl: each becomes a `task: "serving"` simulation through io::run.
//
// Engine settings assumed (stated by the sources or their defaults):
// - inference-sim-vllm-h100 (vLLM v0.15, V1 engine): max_num_seqs 128, max_num_batched_tokens
//   2048 (from the rows), chunked prefill on, decode-first; the shared system prompt is in the
//   prefix cache (hit rate 1); constant-rate arrivals; prompt = the measured mean prompt length,
//   output = the nominal length (ignore_eos); fp16.
// - sglang-vs-vllm-bench: Poisson arrivals; ShareGPT lengths as log-normals (input mean 215,
//   output mean 198 tokens, sigma 1.0, clamped to 4..1024, the bench_serving filter); SGLang
//   v0.3: prefill-first with chunked prefill (8192); vLLM v0.6 with --num-scheduler-steps 10:
//   prefill-first, no chunked prefill, max_num_batched_tokens = max_model_len 4096; bf16.
// Each row simulates at most kMaxRequests requests; rows of one experiment share a simulation.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <variant>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {
namespace {

using nlohmann::json;

constexpr int kMaxRequests = 1500;

json sharegpt_length(double mean) {
  return json{{"kind", "lognormal"}, {"mean", mean}, {"sigma", 1.0}, {"min", 4}, {"max", 1024}};
}

/// The serving request of a row, or a skip reason.
std::variant<json, std::string> request_of(const json& row, int tier) {
  const std::string model_name = json_string(row, "model");
  const auto model = model_preset_for(model_name);
  if (!model) return "no model preset for " + model_name;
  const auto hw = hardware_preset_for(json_string(row, "gpu"));
  if (!hw) return "no hardware preset for " + json_string(row, "gpu");
  const json par = row.value("parallelism", json::object());
  const int tp = par.contains("tp") ? par.at("tp").get<int>() : 1;
  const json wl = row.value("workload", json::object());
  const double qps = json_number(wl, "qps");
  if (!std::isfinite(qps) || qps <= 0) return std::string("no request rate");
  const std::string group = json_string(row, "group");
  json r{{"task", "serving"}, {"mode", "simulate"}, {"model", *model}, {"hardware", *hw},
         {"num_gpus", tp}, {"parallelism", {{"tp", tp}}}, {"max_tier", tier}};
  if (group == "inference-sim-vllm-h100") {
    const double prompt = json_number(wl, "measured_prompt_len_mean");
    const double output = json_number(wl, "output_len_nominal");
    const double system = json_number(wl, "system_prompt_len");
    if (!std::isfinite(prompt) || !std::isfinite(output)) return std::string("no lengths");
    const double completed =
        json_number(wl, "completed_requests") + json_number(wl, "failed_requests");
    r["precision"] = {{"weights", "fp16"}};
    r["workload"] = {{"arrival", {{"kind", "constant"}, {"rate_per_s", qps}}},
                     {"prompt_tokens", static_cast<int>(std::lround(prompt))},
                     {"output_tokens", static_cast<int>(output)},
                     {"num_requests", static_cast<int>(std::min<double>(
                                          kMaxRequests, std::isfinite(completed) ? completed
                                                                                 : kMaxRequests))}};
    r["engine"] = {{"name", "vllm"},
                   {"max_num_seqs", static_cast<int>(json_number(wl, "max_num_seqs"))},
                   {"max_num_batched_tokens",
                    static_cast<int>(json_number(wl, "max_num_batched_tokens"))},
                   {"chunked_prefill", true},
                   {"policy", "decode_first"}};
    if (std::isfinite(system) && system > 0) {
      r["features"] = {{"prefix_caching", {{"shared_prefix_tokens", static_cast<int>(system)}}}};
    }
    return r;
  }
  if (group == "sglang-vs-vllm-bench") {
    const std::string engine = json_string(wl, "engine");
    const double prompts = json_number(wl, "num_prompts");
    r["precision"] = {{"weights", "bf16"}};
    r["workload"] = {{"arrival", {{"kind", "poisson"}, {"rate_per_s", qps}}},
                     {"prompt_tokens", sharegpt_length(215)},
                     {"output_tokens", sharegpt_length(198)},
                     {"num_requests", static_cast<int>(std::min<double>(
                                          kMaxRequests, std::isfinite(prompts) ? prompts : 1000))}};
    if (engine.rfind("SGLang", 0) == 0) {
      r["engine"] = {{"name", "sglang"}, {"policy", "prefill_first"}, {"chunked_prefill", true}};
    } else if (engine.rfind("vLLM", 0) == 0) {
      r["engine"] = {{"name", "vllm"},
                     {"policy", "prefill_first"},
                     {"chunked_prefill", false},
                     {"max_num_batched_tokens", 4096},
                     {"num_scheduler_steps",
                      engine.find("num-scheduler-steps 10") != std::string::npos ? 10 : 1}};
    } else {
      return "engine not modelled: " + engine;
    }
    return r;
  }
  return "serving group not modelled: " + group;
}

}  // namespace

Outcome predict_serving_row(const nlohmann::json& row, Context& ctx, std::string_view source) {
  (void)source;
  const int tier = ctx.km().use_calibration ? 2 : 0;
  const auto req = request_of(row, tier);
  if (const auto* reason = std::get_if<std::string>(&req)) return Outcome::skipped(*reason);
  json request = std::get<json>(req);
  ctx.apply_engine_override(request["engine"]);
  // Rows of one experiment (one metric each) share one simulation. Bounded: `fit --engines`
  // prices the same experiments under many candidate overheads.
  static std::map<std::string, json> cache;
  if (cache.size() > 256) cache.clear();
  const std::string key = request.dump();
  auto it = cache.find(key);
  if (it == cache.end()) {
    try {
      it = cache.emplace(key, io::run(request)).first;
    } catch (const SpecError& e) {
      return Outcome::skipped(e.what());
    }
  }
  const json& r = it->second;
  const auto flags = row.value("flags", json::array());
  if (std::find(flags.begin(), flags.end(), "overloaded") != flags.end()) {
    return Outcome::skipped(std::string("overloaded in the source (requests failed); flopcast ") +
                            (r.at("saturated").get<bool>() ? "agrees: saturated"
                                                            : "predicts not saturated"));
  }
  const std::string metric = json_string(row, "metric");  // e.g. ttft_ms_p90
  const auto cut = metric.rfind('_');
  if (cut == std::string::npos) return Outcome::skipped("metric not modelled: " + metric);
  const std::string base = metric.substr(0, cut), stat = metric.substr(cut + 1);
  if (base != "ttft_ms" && base != "tpot_ms" && base != "e2e_ms") {
    return Outcome::skipped("metric not modelled: " + metric);
  }
  if (r.at(base).is_null()) return Outcome::skipped("no latency predicted (saturated)");
  const int model_tier = r.value("tier", 0);
  const bool derived_tpot = row.value("derived", false) && base == "tpot_ms" && stat == "mean";
  if (derived_tpot) {
    // As the source derived it: (mean E2E − mean TTFT) / (nominal output − 1).
    const double out = json_number(row.value("workload", json::object()), "output_len_nominal");
    Outcome o = Outcome::value((r.at("e2e_ms").at("mean").get<double>() -
                                r.at("ttft_ms").at("mean").get<double>()) /
                                   (out - 1),
                               model_tier);
    o.engine = request["engine"].value("name", "");
    return o;
  }
  if (!r.at(base).contains(stat)) return Outcome::skipped("metric not modelled: " + metric);
  Outcome o = Outcome::value(r.at(base).at(stat).get<double>(), model_tier);
  o.engine = request["engine"].value("name", "");
  return o;
}

}  // namespace flopcast::cli::validate
