// SPDX-License-Identifier: MIT
#pragma once

/// End-to-end rows in the documented row schema (docs/validation.md; ../shared/groundtruth/e2e),
/// one predictor per row `kind`, whatever the row's `group`. Each turns a row into a flopcast
/// request through io::run (so validation prices exactly what a user would get) or a skip with a
/// reason a user can act on.

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "validate/collector.hpp"
#include "validate/loaders.hpp"

namespace flopcast::cli::validate {

/// The model preset id of a public model name ("meta-llama/Llama-3.1-8B-Instruct",
/// "Llama-3.1-405B (Meta FP8)", "LLaMA 70B"), or nullopt when flopcast has none.
std::optional<std::string> model_preset_for(std::string_view model);
/// The row's model as a request's `model` object: the preset of its name, or one built from its
/// `arch` (sized to `context_tokens`); else why not.
std::variant<nlohmann::json, std::string> row_model(const nlohmann::json& row, int context_tokens);

/// A mean or median TTFT metric ("ttft_ms", "ttft_ms_mean", "ttft_ms_p50"): the figures the
/// API server's per-request latency is fitted on (tails also carry step-to-step jitter).
inline bool central_ttft_metric(std::string_view metric) {
  return metric == "ttft_ms" || metric == "ttft_ms_mean" || metric == "ttft_ms_p50";
}

/// The row's GPU as a request's `hardware` (a preset id, or a preset object with the row's stated
/// differences), its preset id, and a note on what was assumed ("" when nothing).
struct RowHardware {
  nlohmann::json spec;
  std::string id;
  std::string note;
};
std::variant<RowHardware, std::string> row_hardware(const nlohmann::json& row);

/// The precision named in a row's `dtype`, as request values.
struct RowPrecision {
  std::string weights = "bf16";
  std::string kv_cache = "bf16";
  std::string compute = "bf16";  ///< training GEMMs
  /// Attention projections where the checkpoint keeps them apart from `weights`; empty: the same.
  std::string attention_weights;
};
std::variant<RowPrecision, std::string> row_precision(const nlohmann::json& row);

/// A row's model (sized to `context_tokens`, row_model), GPU and precision.
struct RowBasics {
  nlohmann::json model;
  RowHardware hardware;
  RowPrecision precision;
};
/// The three, or the reason the first that cannot be read gives.
std::variant<RowBasics, std::string> row_basics(const nlohmann::json& row, int context_tokens);

/// The `precision` object of an inference or serving request for this row's precision.
nlohmann::json inference_precision(const RowPrecision& p);

/// One batch of `batch` prompts of `prompt` tokens generating `output` each, of the row's
/// `model` on `tp` of its GPUs in its precision, as a `task: "inference"` request (`max_tier` 2
/// where `calibrated`).
nlohmann::json static_inference_request(const nlohmann::json& model, const RowHardware& hw,
                                        const RowPrecision& precision, int tp, int prompt,
                                        int output, int batch, nlohmann::json engine,
                                        bool calibrated);

/// The engine profile (trtllm, vllm, sglang, generic) that `workload.engine` names.
std::string row_engine(const nlohmann::json& workload);
/// "vLLM 0.6.3.post2" → {0, 6, 3}: the release after the engine's name (lower case, e.g.
/// "vllm") in `workload.engine`; a missing minor or patch reads 0; nullopt without one.
std::optional<std::array<long, 3>> engine_release(const nlohmann::json& workload,
                                                  std::string_view engine_name);
/// "vLLM 0.6.3.post2" → 0.06 (major + minor / 100), NaN when no version follows the name.
double engine_version(const nlohmann::json& workload, std::string_view engine_name);

/// Whether a row's engine is a release of early 2025, before the engines' DeepSeek (MLA + MoE)
/// kernels: SGLang <= 0.4.3, vLLM <= 0.7, TensorRT-LLM <= 0.18 or its DeepSeek preview branch,
/// or an image the row dates to early 2025.
bool early_mla_engine(const nlohmann::json& workload);

/// Sets `o`'s band to the band `band` ({low, high}) of the response figure `reference`, scaled to
/// the row's figure (o.predicted / reference): the same relative band, in the row's unit.
void scale_band(Outcome& o, const nlohmann::json& band, double reference);

/// A row's string field, or "" when it is absent or not a string.
std::string json_string(const nlohmann::json& j, const char* key);
/// A row's number field, or NaN when it is absent or not a number.
double json_number(const nlohmann::json& j, const char* key);
/// A number, or a string holding one ("512"); NaN otherwise.
double row_number(const nlohmann::json& j, const char* key);
/// row_number, or `fallback` when the row does not state it.
double row_number_or(const nlohmann::json& j, const char* key, double fallback);
/// Whether the row's `flags` list holds `flag`.
bool row_has_flag(const nlohmann::json& row, std::string_view flag);
/// ASCII lower case, for matching the free text of rows (engine, framework, dtype, ...).
std::string lower_case(std::string_view s);
/// Whether `s` ends with `suffix`.
bool ends_with(std::string_view s, std::string_view suffix);
/// Whether `text` contains `needle`.
bool contains(std::string_view text, std::string_view needle);
/// A boolean, or a string "TRUE"/"false"/"on"/...; nullopt otherwise.
std::optional<bool> row_bool(const nlohmann::json& j, const char* key);

/// How the row's engine ran. An eager run (its `workload.launch` or `engine` names SGLang's
/// --disable-cuda-graph or vLLM's --enforce-eager) launches every kernel from the CPU: its request
/// says `cuda_graphs: false`. A TensorRT-LLM run on a TensorRT engine (releases before 1.0 or
/// `trtllm-build`, unless it names the PyTorch flow) ran the C++ executor, without the PyTorch
/// executor's host time per sequence: `host_us_per_sequence: 0`.
void map_runtime(const nlohmann::json& row, nlohmann::json& engine);

/// Why a row with a speculative draft is not predicted: the draft's acceptance is not stated.
inline constexpr const char* kDraftAcceptanceUnknown =
    "speculative decoding rows need the draft's acceptance; not predicted";

/// `kind: "training"` rows: a `task: "training"` request.
Outcome predict_training_row(const nlohmann::json& row, Context& ctx, std::string_view source);

/// `kind: "inference"` rows: a static batch (`workload.batch`) through `task: "inference"`, an
/// offline run (`workload.num_prompts`, all submitted at once) or a closed loop
/// (`workload.concurrency`) through the serving simulator.
Outcome predict_inference_row(const nlohmann::json& row, Context& ctx, std::string_view source);

/// A prefill-only or decode-only instance (`workload.phase`, or one generated token per
/// prompt): one `task: "inference"` estimate of a step of that phase; nullopt for other rows.
std::optional<Outcome> predict_phase_row(const nlohmann::json& row, Context& ctx);

/// `kind: "serving"` rows: a `task: "serving"` simulation at the row's request rate or
/// concurrency.
Outcome predict_serving_row(const nlohmann::json& row, Context& ctx, std::string_view source);

/// The serving request of an offline, closed-loop or open-loop run of a row (shared by the
/// inference and serving predictors), or why it cannot be expressed.
std::variant<nlohmann::json, std::string> serving_request_of(const nlohmann::json& row, int tier);
/// A row predicted by simulating serving_request_of(row) (one simulation per distinct request).
Outcome predict_simulated_row(const nlohmann::json& row, Context& ctx);
/// The predicted value of `metric` (ttft_ms_mean, output_tokens_per_s_total, ...) from a serving
/// response; nullopt when flopcast has no such figure.
std::optional<double> serving_metric(const nlohmann::json& response, const std::string& metric,
                                     const nlohmann::json& row);

}  // namespace flopcast::cli::validate
