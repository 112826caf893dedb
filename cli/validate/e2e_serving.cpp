// SPDX-License-Identifier: MIT
// Serving rows, and the offline / closed-loop inference rows, of the documented row schema: each
// becomes a `task: "serving"` simulation through io::run.
//
// What the row states is used; what it does not is the engine's documented default:
// - lengths: `measured_prompt_len_mean` / `output_len_nominal` where a client measured them,
//   else `input_len` / `output_len` (uniform on [ratio·L, L] with `random_range_ratio`, SGLang's
//   random dataset), else a ShareGPT dataset as log-normals (input mean 215, output mean 198,
//   sigma 1, clamped to 4..1024: the bench_serving filter; our estimate, not from the data; the
//   means the client counted, `related.total_input_tokens` / `total_output_tokens` per prompt,
//   where the row states them);
// - arrivals: `qps` as Poisson (constant when `arrival` says so); "offline" rows and an infinite
//   rate submit every prompt at once (a closed loop as wide as the prompt count);
//   `max_concurrency` / `concurrency` is a closed loop of that many clients;
// - vLLM before 0.8 (V0): prefill-first, chunked prefill off unless the row says on, a token
//   budget of max_model_len (4,096 when not stated); but a max_model_len over 32K turns V0's
//   chunked prefill on (decode-first, 512 tokens a step) for models without MLA; vLLM V1 and
//   unversioned: decode-first with chunked prefill; SGLang: prefill-first with chunked prefill;
//   TensorRT-LLM: its profile;
// - `max_num_seqs`, `max_num_batched_tokens`, `chunked_prefill`, `num_scheduler_steps`,
//   `max_batch_size`, `max_num_tokens`, `kv_cache_free_gpu_mem_fraction` from the row or from
//   "--flag N" in its engine string; a shared system prompt (`system_prompt_len`,
//   `gsp_system_prompt_len`) is served from the prefix cache.
// Each row simulates at most kMaxRequests requests, or two waves of a closed loop wider than
// that (at most kMaxClosedLoopRequests); rows of one run share a simulation.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <variant>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {
namespace {

using nlohmann::json;

constexpr int kMaxRequests = 1500;
// TensorRT-LLM's max-throughput runs keep up to 7,168 clients busy: fewer simulated requests
// than clients would measure a smaller batch than the run had.
constexpr int kMaxClosedLoopRequests = 16384;
// An offline run whose request count the row does not state is simulated at the size
// trtllm-bench's perf-overview gives its datasets "to guarantee that the system hit a steady
// state": about 6.5 million tokens (30,000 requests of 128 + 128 tokens, 3,000 of 128 + 2,048,
// 1,500 of 2,048 + 2,048; NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md
// @00f3768), never fewer than 1,000 requests nor more than 30,000. At 1,000 requests a batch of
// ~900 ran one wave, measuring the ramp and the drain instead of the engine.
constexpr double kSteadyStateTokens = 6.5e6;
constexpr int kMinSteadyStateRequests = 1000, kMaxSteadyStateRequests = 30000;

json sharegpt_length(double mean) {
  return json{{"kind", "lognormal"}, {"mean", mean}, {"sigma", 1.0}, {"min", 4}, {"max", 1024}};
}

/// "--max-model-len 91680" → 91680 in the row's engine string; NaN when absent.
double engine_flag(const json& wl, std::string_view flag) {
  const std::string e = json_string(wl, "engine");
  const std::size_t at = e.find(flag);
  if (at == std::string::npos) return NAN;
  std::size_t i = at + flag.size();
  while (i < e.size() && (e[i] == ' ' || e[i] == '=')) ++i;
  char* end = nullptr;
  const double v = std::strtod(e.c_str() + i, &end);
  return end == e.c_str() + i ? NAN : v;
}

/// The first finite of a row number and an engine-string flag.
double stated(const json& wl, const char* key, std::string_view flag) {
  const double v = row_number(wl, key);
  return std::isfinite(v) ? v : engine_flag(wl, flag);
}

// bugprone-exception-escape suspects the implicit noexcept move of its json members (nlohmann's
// assert_invariant); nothing in it throws.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Lengths {
  json prompt, output;
  int max_total = 0;  ///< longest prompt + output, for the model's context
  int shared_prefix = 0;
  double prefix_hit_rate = 1;  ///< share of requests whose prefix is in the cache
};

std::variant<Lengths, std::string> lengths_of(const json& row, const json& wl) {
  Lengths l;
  const double measured = row_number(wl, "measured_prompt_len_mean");
  const double nominal = row_number(wl, "output_len_nominal");
  const double in = row_number(wl, "input_len"), out = row_number(wl, "output_len");
  const double ratio = row_number(wl, "random_range_ratio");
  if (std::isfinite(row_number(wl, "gsp_system_prompt_len"))) {
    // SGLang's generated-shared-prefix set: groups of prompts sharing a system prompt.
    const int system = static_cast<int>(row_number(wl, "gsp_system_prompt_len"));
    const int question = static_cast<int>(row_number(wl, "gsp_question_len"));
    const int output = static_cast<int>(row_number(wl, "gsp_output_len"));
    if (question <= 0 || output <= 0) return std::string("shared-prefix set without lengths");
    l.prompt = system + question;
    l.output = output;
    l.max_total = system + question + output;
    l.shared_prefix = system;
    return l;
  }
  if (std::isfinite(measured) && std::isfinite(nominal)) {
    l.prompt = static_cast<int>(std::lround(measured));
    l.output = static_cast<int>(nominal);
    l.max_total = static_cast<int>(std::lround(measured) + nominal);
    const double system = row_number(wl, "system_prompt_len");
    if (std::isfinite(system) && system > 0) l.shared_prefix = static_cast<int>(system);
    // inference-perf's shared_prefix data cycles through its num_unique_system_prompts x
    // users_per_system_prompt prompts (request i sends prompt i mod their count): once a run has
    // sent more requests than that, every prompt is back in the engine's prefix cache, all its
    // whole KV blocks (vLLM's 16 tokens) but the one holding its last token.
    const double distinct =
        row_number(wl, "num_unique_system_prompts") * row_number(wl, "users_per_system_prompt");
    const double sent = row_number(wl, "completed_requests");
    if (std::isfinite(distinct) && distinct >= 1 && std::isfinite(sent) && sent > 2 * distinct) {
      constexpr int kBlockTokens = 16;
      const int p = static_cast<int>(std::lround(measured));
      l.shared_prefix = std::max(l.shared_prefix, (p - 1) / kBlockTokens * kBlockTokens);
      // The first send of each prompt misses (all of it but the system prompt, which the others
      // of its group may have cached already: charged as a whole miss).
      l.prefix_hit_rate = 1 - distinct / sent;
    }
    return l;
  }
  if (std::isfinite(in) && std::isfinite(out) && in >= 1 && out >= 1) {
    const int pi = static_cast<int>(in), po = static_cast<int>(out);
    if (std::isfinite(ratio) && ratio > 0 && ratio < 1) {
      l.prompt = {
          {"kind", "uniform"}, {"min", std::max(1, static_cast<int>(ratio * pi))}, {"max", pi}};
      l.output = {
          {"kind", "uniform"}, {"min", std::max(1, static_cast<int>(ratio * po))}, {"max", po}};
    } else {
      l.prompt = pi;
      l.output = po;
    }
    l.max_total = pi + po;
    return l;
  }
  if (contains(lower_case(json_string(wl, "dataset")), "sharegpt")) {
    // Where the client counted the tokens of the run (vLLM's benchmark_serving prints
    // total_input_tokens and total_output_tokens), their means replace the filter's: outputs stop
    // at the model's end of sequence, well short of the dataset's lengths.
    const json related = row.value("related", json::object());
    const double n = row_number(wl, "num_prompts");
    const double in_total = row_number(related, "total_input_tokens");
    const double out_total = row_number(related, "total_output_tokens");
    const bool counted = std::isfinite(n) && n >= 1 && in_total >= n && out_total >= n;
    l.prompt = sharegpt_length(counted ? in_total / n : 215);
    l.output = sharegpt_length(counted ? out_total / n : 198);
    l.max_total = 2048;
    return l;
  }
  return std::string("no request lengths (input_len and output_len, or a ShareGPT dataset)");
}

/// A TensorRT-LLM row measured with `trtllm-bench`.
bool trtllm_bench_row(const json& wl) {
  return row_engine(wl) == "trtllm" &&
         contains(lower_case(json_string(wl, "engine")), "trtllm-bench");
}

/// TensorRT-LLM's kv_cache_free_gpu_mem_fraction (a share of the memory left after loading, not
/// of the device): the row's, else trtllm-bench's 0.90 for its rows
/// (tensorrt_llm/bench: --kv_cache_free_gpu_mem_fraction); NaN where neither says.
double kv_free_fraction(const json& wl) {
  const double stated = row_number(wl, "kv_cache_free_gpu_mem_fraction");
  return std::isfinite(stated) || !trtllm_bench_row(wl) ? stated : 0.90;
}

/// `attention_ranks`: the data-parallel attention ranks of a replica (1 without DP attention);
/// `mla`: the model has multi-head latent attention.
json engine_of(const json& wl, const Lengths& lengths, int attention_ranks, bool mla) {
  const std::string name = row_engine(wl);
  json e{{"name", name}};
  if (name == "vllm") {
    const double version = engine_version(wl, "vllm");
    const bool v0 = std::isfinite(version) && version < 0.08;
    const auto chunked_row = row_bool(wl, "chunked_prefill");
    const std::string text = json_string(wl, "engine");
    const double max_model_len = stated(wl, "max_model_len", "max-model-len");
    double steps = stated(wl, "num_scheduler_steps", "num-scheduler-steps");
    if (!std::isfinite(steps)) steps = engine_flag(wl, "num-scheduler-step");
    // V0 turns chunked prefill on by itself where max_model_len > 32K ("Chunked prefill is
    // enabled by default for models with max_model_len > 32K", vllm/engine/arg_utils.py 0.5-0.7;
    // V0 kept MLA models out of it), with a budget of 512 tokens a step (SchedulerConfig;
    // max(max_model_len, 2048) under multi-step scheduling).
    const bool long_context_default = v0 && max_model_len > 32768 && !mla;
    bool chunked = !v0 || long_context_default;
    if (chunked_row) chunked = *chunked_row;
    if (text.find("enable-chunked-prefill=False") != std::string::npos ||
        text.find("chunked prefill off") != std::string::npos) {
      chunked = false;
    }
    if (text.find("chunked prefill on") != std::string::npos) chunked = true;
    e["chunked_prefill"] = chunked;
    // V0 schedules prefills first without chunking and running decodes first with it.
    e["policy"] = v0 && !chunked ? "prefill_first" : "decode_first";
    if (v0 && !chunked) {
      // V0 without chunking: one step may hold a whole prompt (budget = max_model_len).
      e["max_num_batched_tokens"] = static_cast<int>(
          std::max<double>(lengths.max_total, std::isfinite(max_model_len) ? max_model_len : 4096));
    } else if (v0) {
      e["max_num_batched_tokens"] =
          std::isfinite(steps) && steps > 1
              ? static_cast<int>(std::max(std::isfinite(max_model_len) ? max_model_len : 0, 2048.0))
              : 512;
    }
    if (std::isfinite(steps) && steps >= 1) e["num_scheduler_steps"] = static_cast<int>(steps);
    // Async scheduling became vLLM's default in 0.14.0.
    if (std::isfinite(version) && version < 0.14) e["async_scheduling"] = false;
  } else if (name == "sglang") {
    e["policy"] = "prefill_first";
    e["chunked_prefill"] = true;
    // The overlap scheduler became SGLang's default in late 2024 (v0.4); SGLang 0.4 turned it
    // off with DP attention (server_args: "Overlap schedule is disabled").
    const double version = engine_version(wl, "sglang");
    if ((std::isfinite(version) && version < 0.04) || attention_ranks > 1) {
      e["async_scheduling"] = false;
    }
  }
  // TensorRT-LLM's max_batch_size and max_num_tokens bound each attention-DP rank's own batch
  // (its PyTorch flow schedules every rank apart): the replica's are ranks times as large. The
  // blog rows say so themselves: concurrency 1,024 = 8 ranks × max_batch_size 128.
  const double per_rank = name == "trtllm" ? attention_ranks : 1;
  const double seqs = std::isfinite(row_number(wl, "max_num_seqs"))
                          ? row_number(wl, "max_num_seqs")
                          : per_rank * stated(wl, "max_batch_size", "max_batch_size");
  if (std::isfinite(seqs) && seqs >= 1) e["max_num_seqs"] = static_cast<int>(seqs);
  const double tokens = std::isfinite(row_number(wl, "max_num_batched_tokens"))
                            ? row_number(wl, "max_num_batched_tokens")
                            : per_rank * stated(wl, "max_num_tokens", "max_num_tokens");
  if (std::isfinite(tokens) && tokens >= 1) e["max_num_batched_tokens"] = static_cast<int>(tokens);
  const double fraction = kv_free_fraction(wl);
  if (std::isfinite(fraction) && fraction > 0 && fraction <= 1) {
    e["kv_cache_free_gpu_mem_fraction"] = fraction;
  }
  return e;
}

/// trtllm-bench's own engine limits where the row states none: `trtllm-bench throughput` sizes
/// max_batch_size and max_num_tokens from the KV cache it expects at the dataset's ISL + OSL
/// (tensorrt_llm/bench/build/tuning.py, calc_engine_setting and finetune_setting, NVIDIA/
/// TensorRT-LLM @04cba88): engine size = parameters x bytes per weight (fp8 1, nvfp4 0.5, else 2),
/// KV memory = fraction x (device memory x GPUs - engine size), requests = KV memory / (bytes per
/// token x (ISL + OSL)), capped at 4,096; max_batch_size rounds it up (to 32 under 256, 128 under
/// 1,024, else 256; at least 64), max_num_tokens = requests x (1 + ISL / OSL), capped at 32,768
/// and rounded up (to 256 under 4,096, at least 2,048; 512 under 8,192; else 1,024). `request` is
/// the row's serving request (model, hardware, parallelism, precision, engine) and `fraction` its
/// KV share (the row's, else trtllm-bench's 0.90). With attention DP the limits bound each of the
/// `ranks` attention ranks (engine_of), so the replica's are `ranks` times as large: at one
/// replica-wide max_batch_size the MoE rows of the perf-overview ran in two or three waves of
/// equal-length requests instead of a steady batch.
void apply_trtllm_bench_limits(json& request, double isl, double osl, double fraction, int ranks) {
  json probe{{"task", "inference"},
             {"model", request.at("model")},
             {"hardware", request.at("hardware")},
             {"num_gpus", request.at("parallelism").at("tp")},
             {"parallelism", {{"tp", request.at("parallelism").at("tp")}}},
             {"precision", request.at("precision")},
             {"workload", {{"prompt_tokens", 1}, {"output_tokens", 1}}},
             {"max_tier", 0}};
  const json r = io::run(probe);
  const double gpus = request.at("parallelism").at("tp").get<double>();
  const std::string weights = request.at("precision").value("weights", "bf16");
  const double bytes_per_weight = weights == "fp8" ? 1.0 : weights == "fp4" ? 0.5 : 2.0;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double engine_gib =
      r.at("model").at("params_B").get<double>() * 1e9 * bytes_per_weight / kGiB;
  const double total_gib = r.at("memory").at("capacity_GB").get<double>() * 1e9 / kGiB * gpus;
  const double per_token_gib =
      r.at("memory").at("kv_cache_bytes_per_token").get<double>() * gpus / kGiB;
  const double requests =
      std::min(fraction * (total_gib - engine_gib) / (per_token_gib * (isl + osl)), 4096.0);
  if (!(requests >= 1)) return;  // the engine's own limits stand; the estimate says it does not fit
  const double tokens = std::min(requests * (1 + isl / osl), 32768.0);
  auto round_up = [](double x, double step) { return step * std::ceil(x / step); };
  const double max_bs = requests < 256    ? std::max(64.0, round_up(requests, 32))
                        : requests < 1024 ? round_up(requests, 128)
                                          : round_up(requests, 256);
  const double max_tokens = tokens < 4096   ? std::max(2048.0, round_up(tokens, 256))
                            : tokens < 8192 ? round_up(tokens, 512)
                                            : round_up(tokens, 1024);
  request["engine"]["max_num_seqs"] = static_cast<int>(max_bs) * ranks;
  request["engine"]["max_num_batched_tokens"] = static_cast<int>(max_tokens) * ranks;
}

/// The number after `tag` in `text` ("tp2 x ep4", "ep" -> 4); NaN when there is none.
double number_after(const std::string& text, const std::string& tag) {
  const auto at = text.find(tag);
  if (at == std::string::npos) return std::numeric_limits<double>::quiet_NaN();
  std::size_t i = at + tag.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == 'x')) ++i;
  std::size_t j = i;
  while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
  return j > i ? std::stod(text.substr(i, j - i)) : std::numeric_limits<double>::quiet_NaN();
}

/// The acceptance rate a of k draft tokens whose mean accepted length per verify step is L:
/// (1 - a^(k+1)) / (1 - a) = L, by bisection (L rises with a from 1 to k + 1).
double acceptance_for(int k, double accepted) {
  double lo = 0, hi = 0.999;
  for (int i = 0; i < 60; ++i) {
    const double a = 0.5 * (lo + hi);
    ((1 - std::pow(a, k + 1)) / (1 - a) < accepted ? lo : hi) = a;
  }
  return 0.5 * (lo + hi);
}

/// A row's speculative decoding as `features.speculative`: none, DeepSeek MTP with k draft
/// tokens ("MTP x3") and the mean accepted length the source states (TensorRT-LLM calls it the
/// acceptance rate: `related.mtp_acceptance_rate`), or a reason to skip.
std::variant<std::optional<json>, std::string> speculative_of(const json& row) {
  const json wl = row.value("workload", json::object());
  const std::string text = lower_case(json_string(wl, "speculative"));
  // A draft named only by a flag or the launch command (`--speculative-algorithm NEXTN`) still
  // ran: pricing the row without it would be a silent default.
  const bool drafted = row_number(row.value("parallelism", json::object()), "mtp_layers") > 0 ||
                       row_has_flag(row, "speculative_decoding_mtp") ||
                       contains(json_string(wl, "launch"), "--speculative-algorithm");
  if (text.empty() && drafted) {
    return std::string(kDraftAcceptanceUnknown);
  }
  if (text.empty() || text == "none") return std::optional<json>();
  const double accepted = row_number(row.value("related", json::object()), "mtp_acceptance_rate");
  const double k = number_after(text, "mtp");
  if (!contains(text, "mtp") || !std::isfinite(k) || k < 1 || !std::isfinite(accepted) ||
      accepted < 1 || accepted > k + 1) {
    return std::string(kDraftAcceptanceUnknown);
  }
  return std::optional<json>(
      json{{"num_tokens", static_cast<int>(k)},
           {"acceptance_rate", acceptance_for(static_cast<int>(k), accepted)},
           {"draft", "mtp"}});
}

}  // namespace

std::variant<json, std::string> serving_request_of(const json& row, int tier) {
  const json wl = row.value("workload", json::object());
  const json par = row.value("parallelism", json::object());
  const auto lengths = lengths_of(row, wl);
  if (const auto* reason = std::get_if<std::string>(&lengths)) return *reason;
  const Lengths& len = std::get<Lengths>(lengths);
  const auto basics = row_basics(row, len.max_total);
  if (const auto* reason = std::get_if<std::string>(&basics)) return *reason;
  const RowBasics& b = std::get<RowBasics>(basics);
  // TensorRT-LLM's blog layouts name attention's TP and the MoE's "TPa x EPb" apart.
  const double tp = std::isfinite(row_number(par, "tp")) ? row_number(par, "tp")
                                                         : row_number_or(par, "attention_tp", 1);
  double ep = row_number(par, "ep");
  if (!std::isfinite(ep)) ep = number_after(lower_case(json_string(par, "moe")), "ep");
  const double pp = row_number_or(par, "pp", 1);
  if (pp > 1) return std::string("pipeline parallelism in serving is not modelled yet");
  // The TensorRT-LLM perf-overview rows say it in their notes: "Attention-DP enabled for MoE
  // models" (its llm_options.yml for MoE sets enable_attention_dp: true).
  const bool moe = b.model.is_object() && b.model.value("num_experts", 0) > 0;
  const bool dp_attention = row_bool(par, "attention_dp")
                                .value_or(moe && tp > 1 &&
                                          contains(lower_case(json_string(row, "notes")),
                                                   "attention-dp enabled for moe models"));
  const auto speculative = speculative_of(row);
  if (const auto* reason = std::get_if<std::string>(&speculative)) return *reason;
  const double num_gpus = row_number(row, "num_gpus");
  json r{{"task", "serving"},
         {"mode", "simulate"},
         {"model", b.model},
         {"hardware", b.hardware.spec},
         {"num_gpus", std::isfinite(num_gpus) ? static_cast<int>(num_gpus) : static_cast<int>(tp)},
         {"parallelism", {{"tp", static_cast<int>(tp)}}},
         {"precision", inference_precision(b.precision)},
         {"max_tier", tier}};
  const double completed = row_number(wl, "completed_requests") + row_number(wl, "failed_requests");
  double prompts = std::isfinite(completed) ? completed : row_number(wl, "num_prompts");
  if (!std::isfinite(prompts)) prompts = row_number(wl, "num_requests");
  if (dp_attention) r["parallelism"]["dp_attention"] = true;
  if (ep > 1) r["parallelism"]["ep"] = static_cast<int>(ep);
  const double qps = row_number(wl, "qps");
  const double concurrency = std::isfinite(row_number(wl, "max_concurrency"))
                                 ? row_number(wl, "max_concurrency")
                                 : row_number(wl, "concurrency");
  const double cap = std::isfinite(concurrency) ? std::clamp(2 * concurrency, double(kMaxRequests),
                                                             double(kMaxClosedLoopRequests))
                                                : kMaxRequests;
  const bool offline =
      contains(lower_case(json_string(wl, "mode")), "offline") || json_string(wl, "qps") == "inf" ||
      (std::isfinite(concurrency) && std::isfinite(prompts) && concurrency >= prompts);
  int n = static_cast<int>(std::min(cap, std::isfinite(prompts) ? prompts : 1000.0));
  if (offline && !std::isfinite(prompts) && len.max_total > 0) {
    n = static_cast<int>(std::clamp(std::round(kSteadyStateTokens / len.max_total),
                                    double(kMinSteadyStateRequests),
                                    double(kMaxSteadyStateRequests)));
  }
  json arrival;
  if (offline) {
    arrival = {{"kind", "concurrency"}, {"concurrency", n}};  // every prompt at t = 0
  } else if (std::isfinite(concurrency) && concurrency >= 1) {
    arrival = {{"kind", "concurrency"},
               {"concurrency", std::min(n, static_cast<int>(concurrency))}};
  } else if (std::isfinite(qps) && qps > 0) {
    const bool constant = json_string(wl, "arrival").find("constant") != std::string::npos;
    arrival = {{"kind", constant ? "constant" : "poisson"}, {"rate_per_s", qps}};
  } else {
    return std::string("no request rate, concurrency or offline mode");
  }
  r["workload"] = {{"arrival", arrival},
                   {"prompt_tokens", len.prompt},
                   {"output_tokens", len.output},
                   {"num_requests", n}};
  const json& model_spec = r["model"];
  const bool mla = model_spec.is_object() && model_spec.value("kv_lora_rank", 0) > 0;
  r["engine"] = engine_of(wl, len, dp_attention ? static_cast<int>(tp) : 1, mla);
  const bool bench_limits = trtllm_bench_row(wl) && !r["engine"].contains("max_num_seqs") &&
                            !r["engine"].contains("max_num_batched_tokens");
  if (bench_limits && len.prompt.is_number() && len.output.is_number()) {
    apply_trtllm_bench_limits(r, len.prompt.get<double>(), len.output.get<double>(),
                              kv_free_fraction(wl), dp_attention ? static_cast<int>(tp) : 1);
  }
  if (const auto& draft = std::get<std::optional<json>>(speculative)) {
    r["features"]["speculative"] = *draft;
  }
  if (len.shared_prefix > 0) {
    r["features"]["prefix_caching"] = {{"shared_prefix_tokens", len.shared_prefix}};
    if (len.prefix_hit_rate < 1) r["features"]["prefix_caching"]["hit_rate"] = len.prefix_hit_rate;
  }
  return r;
}

namespace {

/// A latency metric's figure and statistic in a serving response: "ttft_ms_p50" → (ttft_ms,
/// p50); the schema's short names ttft_ms, tpot_ms and request_latency_ms_mean are means.
std::optional<std::pair<std::string, std::string>> latency_statistic(const std::string& metric) {
  const std::string m = metric == "request_latency_ms_mean" ? "e2e_ms_mean"
                        : metric == "ttft_ms"               ? "ttft_ms_mean"
                        : metric == "tpot_ms"               ? "tpot_ms_mean"
                                                            : metric;
  const auto cut = m.rfind('_');
  if (cut == std::string::npos) return std::nullopt;
  std::string base = m.substr(0, cut), stat = m.substr(cut + 1);
  if (base != "ttft_ms" && base != "tpot_ms" && base != "e2e_ms") return std::nullopt;
  return std::pair{std::move(base), std::move(stat)};
}

}  // namespace

std::optional<double> serving_metric(const json& r, const std::string& metric, const json& row) {
  const json& tput = r.at("throughput");
  if (metric == "output_tokens_per_s" || metric == "output_tokens_per_s_total") {
    return tput.at("output_tokens_per_s").get<double>();
  }
  if (metric == "output_tokens_per_s_per_gpu") {
    return tput.at("output_tokens_per_s").get<double>() /
           r.at("request").at("num_gpus").get<double>();
  }
  if (metric == "total_tokens_per_s") {
    return tput.at("output_tokens_per_s").get<double>() +
           tput.at("input_tokens_per_s").get<double>();
  }
  if (metric == "requests_per_s") return tput.at("requests_per_s").get<double>();
  if ((metric == "power_W" || metric == "joules_per_output_token") && r.at("energy").is_object()) {
    return r.at("energy").at(metric).get<double>();
  }
  if (metric == "output_tokens_per_s_per_user") {  // a user sees one token per TPOT
    if (r.at("tpot_ms").is_null()) return std::nullopt;
    return 1000.0 / r.at("tpot_ms").at("mean").get<double>();
  }
  const auto figure = latency_statistic(metric);
  if (!figure) return std::nullopt;
  const auto& [base, stat] = *figure;
  if (r.at(base).is_null() || !r.at(base).contains(stat)) return std::nullopt;
  if (row.value("derived", json()) == true && base == "tpot_ms" && stat == "mean") {
    // As the source derived it: (mean E2E − mean TTFT) / (nominal output − 1).
    const double out = row_number(row.value("workload", json::object()), "output_len_nominal");
    if (std::isfinite(out) && out > 1) {
      return (r.at("e2e_ms").at("mean").get<double>() - r.at("ttft_ms").at("mean").get<double>()) /
             (out - 1);
    }
  }
  return r.at(base).at(stat).get<double>();
}

namespace {

/// One simulation per distinct request: the rows of one run (one metric each) share it, and the
/// leave-one-source-out passes the runs they price alike. Bounded (`fit --engines` prices the same
/// runs under many candidate overheads), at a size that holds every request of one pass over
/// ../shared: at 512 the cache was cleared several times a pass and `validate --by-source`
/// simulated TensorRT-LLM's long runs again and again (47 s instead of 25; 68 MB at most).
/// Shared by the passes of `--by-source`, which run on several threads: a request another pass is
/// simulating is waited for, not simulated again.
std::variant<json, std::string> simulate_cached(const json& request) {
  using Answer = std::variant<json, std::string>;
  static std::map<std::string, std::shared_future<Answer>> cache;
  static std::mutex guard;
  const std::string key = request.dump();
  std::promise<Answer> mine;
  std::shared_future<Answer> answer;
  bool simulate = false;
  {
    const std::lock_guard<std::mutex> lock(guard);
    if (const auto it = cache.find(key); it != cache.end()) {
      answer = it->second;
    } else {
      if (cache.size() > 4096) cache.clear();
      answer = mine.get_future().share();
      cache.emplace(key, answer);
      simulate = true;
    }
  }
  if (simulate) {
    try {
      mine.set_value(io::run(request));
    } catch (const SpecError& e) {
      mine.set_value(std::string(e.what()));
    } catch (...) {
      mine.set_exception(std::current_exception());
    }
  }
  return answer.get();
}

}  // namespace

Outcome predict_simulated_row(const json& row, Context& ctx) {
  const int tier = ctx.km().use_calibration ? 2 : 0;
  const auto req = serving_request_of(row, tier);
  if (const auto* reason = std::get_if<std::string>(&req)) return Outcome::skipped(*reason);
  json request = std::get<json>(req);
  ctx.apply_engine_override(request["engine"]);
  map_runtime(row, request["engine"]);
  ctx.note_request(row, request);
  const auto sim = simulate_cached(request);
  if (const auto* reason = std::get_if<std::string>(&sim)) return Outcome::skipped(*reason);
  const json& r = std::get<json>(sim);
  if (row_has_flag(row, "overloaded")) {
    return Outcome::skipped(
        std::string("overloaded in the source (requests failed); flopcast ") +
        (r.at("saturated").get<bool>() ? "agrees: saturated" : "predicts not saturated"));
  }
  const std::string metric = json_string(row, "metric");
  const auto v = serving_metric(r, metric, row);
  if (!v) {
    return Outcome::skipped(r.at("saturated").get<bool>() && metric.find("_ms") != std::string::npos
                                ? "no latency predicted (saturated)"
                                : "metric not modelled: " + metric);
  }
  Outcome o = Outcome::value(*v, r.value("tier", 0));
  o.engine = request["engine"].value("name", "");
  // The estimate's band where it has one: the throughput's for a rate, the latency statistic's
  // (mean, p50, p99) for a latency.
  if (const auto it = r.find("interval"); it != r.end() && it->is_object()) {
    if (contains(metric, "tokens_per_s") && it->contains("output_tokens_per_s")) {
      scale_band(o, it->at("output_tokens_per_s"),
                 r.at("throughput").at("output_tokens_per_s").get<double>());
    } else if (const auto figure = latency_statistic(metric)) {
      const auto& [base, stat] = *figure;
      if (it->contains(base) && it->at(base).contains(stat) && r.at(base).is_object()) {
        scale_band(o, it->at(base).at(stat), r.at(base).at(stat).get<double>());
      }
    }
  }
  // A mean or median TTFT under light load: arrivals at a rate under 70 % of the rate the setup
  // saturates at (the analytic engine's figure), so that the TTFT is the request's own path and
  // prefill, not a queue (tails carry the step-to-step jitter a constant does not describe).
  if (central_ttft_metric(metric) &&
      request["workload"]["arrival"].value("kind", "") != "concurrency") {
    json analytic = request;
    analytic["mode"] = "analytic";
    const auto a = simulate_cached(analytic);
    if (const json* ar = std::get_if<json>(&a); ar && ar->at("utilization").is_number()) {
      o.light_load_ttft = ar->at("utilization").get<double>() < 0.7;
    }
  }
  return o;
}

Outcome predict_serving_row(const json& row, Context& ctx, std::string_view source) {
  (void)source;
  if (auto phase = predict_phase_row(row, ctx)) return *phase;
  return predict_simulated_row(row, ctx);
}

}  // namespace flopcast::cli::validate
