// SPDX-License-Identifier: MIT
#pragma once

/// Leave-one-source-out accuracy of the end-to-end figures (`flopcast validate --by-source`):
/// for each source, every parameter fitted on end-to-end rows is refitted (or, where the other
/// sources cannot support a fit, dropped to Tier 0) without that source, and the source's rows are
/// predicted with it. Beside it, the same rows at Tier 0 (physics, no fitted constant) and the
/// default estimate. The 80% band of a source comes from the residuals of the other sources of
/// the same kind. Method: docs/validation.md.

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace flopcast::cli::validate {

/// The report: {"sources":[{source, kind, rows, median_ape, tier0_median_ape,
/// default_median_ape, band_coverage_80, fitted}], "kinds":[{kind, sources, rows, median_ape,
/// tier0_median_ape, band_coverage_80, worst_source}], "training_scales": {...}, "notes": [...]}.
/// `engine_folds`: the engine overheads refitted without each source (`flopcast fit
/// --engine-folds`, {"folds": {"<source>": {"<engine>": {step_overhead_us, request_overhead_us,
/// kernel_fixed_us} or null (too few rows elsewhere: Tier 0)}}}); null: the committed fit stands
/// in for a refit wherever the other sources hold most of the engine's rows (an approximation the
/// report names).
/// An engine whose profile is Tier 0 (its fit lost to Tier 0 out of source, see `fit
/// --engine-folds`) is priced at Tier 0 by default, so its folds are not used, unless
/// `folds_for_tier0_profiles` (what the gate itself compares).
/// `request_overhead` false: vLLM's and SGLang's request overhead is 0 in every fold (Tier 0), the
/// other side of `fit --request-overhead`'s gate.
nlohmann::json leave_one_source_out(const std::vector<std::string>& files,
                                    const nlohmann::json& engine_folds = nullptr,
                                    bool folds_for_tier0_profiles = false,
                                    bool request_overhead = true);

/// The source of an end-to-end group "e2e/<source>/<GPU>/<metric>" (TensorRT-LLM v0.9's two
/// tables are one source, and so are Megatron-Bridge's per-container performance summaries: one
/// publisher, the same recipes re-measured on each NeMo container, so leaving one container out
/// while its siblings stay in would leak the held-out layouts into the fit).
std::string source_of(const std::string& group);

/// The engines whose overheads `flopcast fit --engines` fits.
inline const char* const kFittedEngines[] = {"vllm", "sglang", "trtllm"};

/// The engines measured through their OpenAI-compatible HTTP server in Python (receive,
/// tokenize, admit, stream the first chunk), whose profiles carry that server's per-request
/// latency (`fit --request-overhead`, fit_request_overhead).
inline const char* const kHttpEngines[] = {"vllm", "sglang"};

/// "<kind>/<source>" → median APE of its leave-one-source-out predictions, for the ratchet.
std::map<std::string, double> loso_medians(const nlohmann::json& report);

/// Text table of the report.
std::string format_loso_table(const nlohmann::json& report);

/// The per-request latency of vLLM's and SGLang's OpenAI-compatible HTTP servers (what `flopcast
/// fit --request-overhead` writes into their profiles' engine.request_overhead_us): per source,
/// the median (measured − predicted) TTFT of its light-load TTFT rows of those engines (dense
/// models, GPUs with measured kernels, predicted without the overhead), summed over the sources
/// plus one pseudo-source at 0 and clamped to [0, 20 ms]. {"request_overhead_us",
/// "source_median_residual_us": {"<source>": µs}}.
nlohmann::json fit_request_overhead(const std::vector<std::string>& files);

/// The framework-agnostic training constants fitted on every training source (what `flopcast fit
/// --training` turns into presets/frameworks/fitted.json): {"attention_scale",
/// "unmeasured_compute_scale", "architectures": {"<architecture>": {"compute_scale" (null when
/// too few sources), "sources", "rows"}}}.
nlohmann::json fit_training_scales(const std::vector<std::string>& files);

}  // namespace flopcast::cli::validate
