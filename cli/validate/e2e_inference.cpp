// SPDX-License-Identifier: MIT
// Inference rows of the documented row schema. A row with a fixed `workload.batch` and no prompt
// count is a static batch (TensorRT-LLM's gptSessionBenchmark, first-token latency at batch 1):
// one `task: "inference"` estimate. A row with `num_prompts` (vLLM benchmark_throughput: every
// prompt submitted at once) or a concurrency is continuous batching: the serving simulator.
#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {
namespace {

using nlohmann::json;

/// The figure `metric` of a static-batch inference response, for `replicas` copies of the
/// request's GPUs (a row's num_gpus / tp). Also its 80% band when the estimate has one.
std::optional<Outcome> static_metric(const json& r, const std::string& metric, double replicas,
                                     double batch, double prompt, double output) {
  const double gpus = r.at("num_gpus").get<double>();
  const auto banded = [&](const char* key, double scale) {
    Outcome o = Outcome::value(scale * r.at(key).get<double>(), r.value("tier", 0));
    const json& band = r.at("interval").at(key);
    o.low = scale * band.at("low").get<double>();
    o.high = scale * band.at("high").get<double>();
    return o;
  };
  if (metric == "ttft_ms") return banded("ttft_ms", 1.0);
  if (metric == "tpot_ms" || metric == "tpot_ms_mean") return banded("tpot_ms", 1.0);
  if (metric == "request_latency_ms_mean" || metric == "e2e_ms" || metric == "e2e_ms_mean") {
    return banded("e2e_ms", 1.0);
  }
  if (metric == "output_tokens_per_s_per_gpu") return banded("output_tokens_per_s", 1.0 / gpus);
  if (metric == "output_tokens_per_s" || metric == "output_tokens_per_s_total") {
    return banded("output_tokens_per_s", replicas);
  }
  if (metric == "total_tokens_per_s") {
    // batch · (prompt + output) tokens in one end-to-end latency.
    return Outcome::value(
        replicas * batch * (prompt + output) / (r.at("e2e_ms").get<double>() / 1e3),
        r.value("tier", 0));
  }
  // Energy (the power model, flopcast/energy.hpp): mean power of all the row's GPUs, and energy
  // per output token (the same for every replica).
  if (metric == "power_W" && r.at("energy").is_object()) {
    return Outcome::value(replicas * r.at("energy").at("power_W").get<double>(),
                          r.value("tier", 0));
  }
  if (metric == "joules_per_output_token" && r.at("energy").is_object()) {
    return Outcome::value(r.at("energy").at("joules_per_output_token").get<double>(),
                          r.value("tier", 0));
  }
  if (metric == "output_tokens_per_s_per_user") {
    // A user sees one token per TPOT.
    Outcome o = Outcome::value(1e3 / r.at("tpot_ms").get<double>(), r.value("tier", 0));
    const json& band = r.at("interval").at("tpot_ms");
    o.low = 1e3 / band.at("high").get<double>();
    o.high = 1e3 / band.at("low").get<double>();
    return o;
  }
  return std::nullopt;
}

Outcome predict_static(const json& row, Context& ctx) {
  const json wl = row.value("workload", json::object());
  const json par = row.value("parallelism", json::object());
  const double batch = row_number(wl, "batch");
  const double prompt = row_number(wl, "input_len"), output = row_number(wl, "output_len");
  if (!(prompt >= 1) || !(output >= 1)) return Outcome::skipped("no input_len / output_len");
  const auto basics = row_basics(row, static_cast<int>(prompt + output));
  if (const auto* reason = std::get_if<std::string>(&basics)) return Outcome::skipped(*reason);
  const RowBasics& b = std::get<RowBasics>(basics);
  const double num_gpus = row_number_or(row, "num_gpus", 1);
  double tp = row_number(par, "tp");
  const double pp = row_number_or(par, "pp", 1);
  if (!std::isfinite(tp)) {
    if (num_gpus > 1) return Outcome::skipped("parallel layout not stated");
    tp = 1;
  }
  if (pp > 1) return Outcome::skipped("pipeline parallelism for inference is not modelled yet");
  if (json_string(wl, "speculative") != "" || row_number(par, "mtp_layers") > 0) {
    return Outcome::skipped(kDraftAcceptanceUnknown);
  }
  const std::string engine = row_engine(wl);
  json engine_json{{"name", engine}};
  if (engine == "trtllm") {
    // TensorRT-LLM's static-batch benchmark runs the whole context phase in one pass (1e7 tokens
    // is the schema's limit, far above any batch × prompt here) with 95% of free memory for KV.
    engine_json["max_num_batched_tokens"] = 10000000;
    engine_json["gpu_memory_utilization"] = 0.95;
  }
  json request = static_inference_request(
      b.model, b.hardware, b.precision, static_cast<int>(tp), static_cast<int>(prompt),
      static_cast<int>(output), static_cast<int>(batch), engine_json, ctx.km().use_calibration);
  if (row_bool(par, "attention_dp").value_or(false)) request["parallelism"]["dp_attention"] = true;
  if (const double ep = row_number(par, "ep"); ep > 1) {
    request["parallelism"]["ep"] = static_cast<int>(ep);
  }
  ctx.apply_engine_override(request["engine"]);
  map_runtime(row, request["engine"]);
  ctx.note_request(row, request);
  try {
    const json r = io::run(request);
    if (!r.at("memory").at("fits").get<bool>()) {
      ctx.collector().warn(json_string(row, "group"), "memory.fits=false (predicted anyway)");
    }
    auto o = static_metric(r, json_string(row, "metric"), num_gpus / tp, batch, prompt, output);
    if (!o) return Outcome::skipped("metric not modelled: " + json_string(row, "metric"));
    o->engine = engine;
    return *o;
  } catch (const SpecError& e) {
    return Outcome::skipped(e.what());
  }
}

}  // namespace

Outcome predict_inference_row(const json& row, Context& ctx, std::string_view source) {
  (void)source;
  if (row_has_flag(row, "parallelism_not_stated") || row_has_flag(row, "parallelism_unknown")) {
    return Outcome::skipped("parallel layout not stated");
  }
  if (auto phase = predict_phase_row(row, ctx)) return *phase;
  const json wl = row.value("workload", json::object());
  const bool counted = std::isfinite(row_number(wl, "num_prompts")) ||
                       std::isfinite(row_number(wl, "num_requests")) ||
                       std::isfinite(row_number(wl, "concurrency"));
  if (std::isfinite(row_number(wl, "batch")) && !counted) return predict_static(row, ctx);
  return predict_simulated_row(row, ctx);
}

}  // namespace flopcast::cli::validate
