// SPDX-License-Identifier: MIT
// Phase-isolated rows: the prefill-only or decode-only instance of a disaggregated deployment
// (SGLang / vLLM / Dynamo prefill-decode disaggregation), or a run that generates one token per
// prompt. Such an instance runs one phase in steady state, so the row is one `task: "inference"`
// estimate of a full step of that phase on the instance's GPUs:
// - prefill: a step of `tokens_per_device_batch` prompt tokens per attention rank (the row's
//   `max_num_batched_tokens`, else the engine profile's token budget), as whole prompts of
//   `input_len`, or the row's stated `batch`; input tokens/s = batch · input_len / TTFT;
// - decode: `batch_per_device` or `concurrency_per_rank` sequences per attention rank (or the
//   stated total) at `kv_cache_length` (else `input_len`) of context, decoding `output_len`
//   tokens; output tokens/s = batch / TPOT.
// The layout: an attention data-parallel instance (`dp_attention: N`, vLLM's DP + EP) is N
// GPUs with the MoE over all of them (`ep` groups, else tensor-parallel: SGLang's default), its
// tokens moved by all-to-all where the row's engine names DeepEP; otherwise `tp` GPUs. A per-GPU,
// per-rank or per-node figure divides the instance's by its GPUs or nodes.
#include <cmath>

#include "flopcast/error.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/io/api.hpp"
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {
namespace {

using nlohmann::json;

enum class Phase { none, prefill, decode };

Phase phase_of(const json& row) {
  const json wl = row.value("workload", json::object());
  const std::string p = lower_case(json_string(wl, "phase"));
  if (p.rfind("prefill", 0) == 0) return Phase::prefill;
  if (p.rfind("decode", 0) == 0) return Phase::decode;
  // A token rate of a run that generates one token per prompt measures prefill alone (its
  // latencies are TTFTs, which the other predictors read).
  if (p.empty() && row_number(wl, "output_len") == 1 &&
      contains(json_string(row, "metric"), "tokens_per_s")) {
    return Phase::prefill;
  }
  return Phase::none;
}

/// The instance's layout as request values, or why it is not stated.
struct Layout {
  int gpus = 1;       ///< GPUs of one instance (the request's tp)
  int instances = 1;  ///< like instances the row's figure spans
  int ranks = 1;      ///< attention ranks: each takes its own sequences
  int ep = 1;         ///< MoE expert-parallel groups
  bool dp_attention = false;
  bool all_to_all = false;
};

std::variant<Layout, std::string> layout_of(const json& row) {
  const json par = row.value("parallelism", json::object());
  const json wl = row.value("workload", json::object());
  const double gpus = row_number(row, "num_gpus");
  if (!(gpus >= 1)) return std::string("parallel layout not stated");
  Layout l;
  // A row over several like instances (4 prefill instances of 2 GPUs) states one's GPUs.
  double instance = row_number(par, "gpus_per_prefill_instance");
  if (!std::isfinite(instance)) instance = row_number(par, "gpus_per_decode_instance");
  if (!std::isfinite(instance)) instance = row_number(par, "ranks_per_prefill_instance");
  if (!std::isfinite(instance)) instance = gpus;
  if (!(instance >= 1) || std::fmod(gpus, instance) != 0) {
    return std::string("GPUs per instance do not divide the row's GPUs");
  }
  l.gpus = static_cast<int>(instance);
  l.instances = static_cast<int>(gpus / instance);
  // `dp_attention: 72` (its size), `attention_dp: true`, or vLLM's `dp: 2` with expert
  // parallelism (data-parallel attention, the experts over every rank).
  const double dp_size = row_number(par, "dp_attention");
  const double ep = row_number(par, "ep");
  l.dp_attention =
      (std::isfinite(dp_size) && dp_size > 1) || row_bool(par, "dp_attention").value_or(false) ||
      row_bool(par, "attention_dp").value_or(false) || (row_number(par, "dp") > 1 && ep > 1);
  if (l.dp_attention && std::isfinite(dp_size) && dp_size > 1 && dp_size != l.gpus) {
    return std::string("attention data-parallel size (") + std::to_string(int(dp_size)) +
           ") differs from the instance's GPUs (" + std::to_string(l.gpus) + ")";
  }
  if (!l.dp_attention && std::isfinite(row_number(par, "tp")) && row_number(par, "tp") != l.gpus) {
    return std::string("tensor-parallel size differs from the instance's GPUs");
  }
  l.ranks = l.dp_attention ? l.gpus : 1;
  if (std::isfinite(ep) && ep > 1) l.ep = static_cast<int>(ep);
  const std::string engine = lower_case(json_string(wl, "engine"));
  l.all_to_all = l.dp_attention && l.ep == l.gpus &&
                 (contains(engine, "deepep") || wl.contains("deepep_mode"));
  return l;
}

/// The instance's figure `metric` scaled to the row's unit: whole instance, per GPU (rank) or
/// per node (the row's `workload.nodes`, else the GPUs a node of the preset holds).
std::optional<double> per_unit(double instance, const std::string& metric, const Layout& l,
                               const json& row, int gpus_per_node) {
  const double total = instance * l.instances;
  if (ends_with(metric, "_per_gpu") || ends_with(metric, "_per_rank")) return instance / l.gpus;
  if (ends_with(metric, "_per_node")) {
    const double stated = row_number(row.value("workload", json::object()), "nodes");
    const double nodes = std::isfinite(stated) && stated >= 1
                             ? stated
                             : std::ceil(double(l.gpus * l.instances) / std::max(1, gpus_per_node));
    return total / nodes;
  }
  if (ends_with(metric, "_per_s") || ends_with(metric, "_per_s_total")) return total;
  return std::nullopt;
}

}  // namespace

std::optional<Outcome> predict_phase_row(const json& row, Context& ctx) {
  const json wl = row.value("workload", json::object());
  const Phase phase = phase_of(row);
  if (phase == Phase::none) return std::nullopt;
  if (row_has_flag(row, "unit_scope_not_stated")) {
    return Outcome::skipped("per-GPU, per-node or whole-instance unit not stated");
  }
  if (row_has_flag(row, "simulated_routing") || row_has_flag(row, "simulated_mtp")) {
    return Outcome::skipped("simulated routing or MTP in the source: not the model as served");
  }
  if (row_has_flag(row, "speculative_decoding_mtp") || wl.value("mtp", json()).is_object()) {
    return Outcome::skipped(kDraftAcceptanceUnknown);
  }
  const std::string metric = json_string(row, "metric");
  const bool input_metric = contains(metric, "input_tokens") || contains(metric, "total_tokens");
  if (input_metric != (phase == Phase::prefill) || !contains(metric, "tokens_per_s")) {
    return Outcome::skipped("metric not modelled for a " +
                            std::string(phase == Phase::prefill ? "prefill" : "decode") +
                            " instance: " + metric);
  }
  const auto layout = layout_of(row);
  if (const auto* reason = std::get_if<std::string>(&layout)) return Outcome::skipped(*reason);
  const Layout& l = std::get<Layout>(layout);
  const double isl = row_number(wl, "input_len");
  if (!(isl >= 1)) return Outcome::skipped("no input_len");
  double context = isl, output = 1, batch = NAN;
  if (phase == Phase::prefill) {
    double tokens = row_number(wl, "tokens_per_device_batch");
    if (!std::isfinite(tokens)) tokens = row_number(wl, "max_num_batched_tokens");
    if (!std::isfinite(tokens)) {
      tokens = io::preset("engines", row_engine(wl), "engine")
                   .at("engine")
                   .at("max_num_batched_tokens")
                   .get<double>();
    }
    batch = row_number(wl, "batch");
    if (!std::isfinite(batch)) batch = std::max(1.0, std::floor(tokens * l.ranks / isl));
  } else {
    const double kv = row_number(wl, "kv_cache_length");
    if (std::isfinite(kv) && kv >= 1) context = kv;
    const double out = row_number(wl, "output_len");
    output = std::isfinite(out) && out >= 2 ? out : 2;
    const double per_rank = std::isfinite(row_number(wl, "batch_per_device"))
                                ? row_number(wl, "batch_per_device")
                                : row_number(wl, "concurrency_per_rank");
    batch = std::isfinite(per_rank) ? per_rank * l.ranks : row_number(wl, "concurrency_total");
    if (!std::isfinite(batch)) batch = row_number(wl, "batch");
    if (!(batch >= 1)) {
      return Outcome::skipped(
          "decode batch not stated: a decode instance's throughput is set by it");
    }
  }
  const auto basics = row_basics(row, static_cast<int>(context + output));
  if (const auto* reason = std::get_if<std::string>(&basics)) return Outcome::skipped(*reason);
  const RowBasics& b = std::get<RowBasics>(basics);
  // Expert-parallel groups that do not divide the experts hold replicas of busy ones (EPLB:
  // DeepSeek's 32 redundant experts over EP 72): the fewest slots that divide.
  const int experts = b.model.value("num_experts", 0);
  const int redundant = l.ep > 1 && experts > 0 ? fewest_redundant_experts(experts, l.ep) : 0;
  const std::string engine = row_engine(wl);
  json engine_json{{"name", engine}};
  // Prefill: the step's prompts in one pass (the token budget above is the step).
  if (phase == Phase::prefill) {
    engine_json["max_num_batched_tokens"] = static_cast<int>(std::min(batch * isl, 1e7));
  }
  json request = static_inference_request(
      b.model, b.hardware, b.precision, l.gpus, static_cast<int>(context), static_cast<int>(output),
      static_cast<int>(batch), engine_json, ctx.km().use_calibration);
  if (l.dp_attention) request["parallelism"]["dp_attention"] = true;
  if (l.ep > 1) request["parallelism"]["ep"] = l.ep;
  if (redundant > 0) request["parallelism"]["redundant_experts"] = redundant;
  if (l.all_to_all) request["parallelism"]["moe_dispatch"] = "all_to_all";
  ctx.apply_engine_override(request["engine"]);
  map_runtime(row, request["engine"]);
  ctx.note_request(row, request);
  try {
    const json r = io::run(request);
    const std::string& id = b.hardware.id;
    const int gpus_per_node =
        io::preset("hardware", id, "hardware").at("hardware").value("gpus_per_node", 8);
    // Instance throughput from the phase's step time, and its band from the time's.
    const char* key = phase == Phase::prefill ? "ttft_ms" : "tpot_ms";
    // A prefill row's total tokens count the one generated token per prompt too.
    const double tokens = phase == Phase::decode             ? batch
                          : contains(metric, "total_tokens") ? batch * (isl + 1)
                                                             : batch * isl;
    const auto rate = [&](double ms) {
      return per_unit(tokens / (ms / 1e3), metric, l, row, gpus_per_node);
    };
    const auto value = rate(r.at(key).get<double>());
    if (!value) return Outcome::skipped("metric not modelled: " + metric);
    Outcome o = Outcome::value(*value, r.value("tier", 0));
    const json& band = r.at("interval").at(key);
    o.low = *rate(band.at("high").get<double>());
    o.high = *rate(band.at("low").get<double>());
    o.engine = engine;
    if (!r.at("memory").at("fits").get<bool>()) {
      ctx.collector().warn(json_string(row, "group"), "memory.fits=false (predicted anyway)");
    }
    return o;
  } catch (const SpecError& e) {
    return Outcome::skipped(e.what());
  }
}

}  // namespace flopcast::cli::validate
