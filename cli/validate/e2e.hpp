// SPDX-License-Identifier: MIT
#pragma once

/// End-to-end rows of e2e_dev.jsonl, one predictor per row kind. Each turns a row into a flopcast
/// request through io::run (so validation prices exactly what a user would get) or a skip with
/// its reason.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "validate/collector.hpp"
#include "validate/loaders.hpp"

namespace flopcast::cli::validate {

/// The model preset id of a row's public model name, or nullopt when flopcast has none.
std::optional<std::string> model_preset_for(std::string_view model);

/// A row's string field, or "" when it is absent or not a string.
std::string json_string(const nlohmann::json& j, const char* key);
/// A row's number field, or NaN when it is absent or not a number.
double json_number(const nlohmann::json& j, const char* key);

/// `kind: "training"` rows (llm-foundry, Megatron-LM).
Outcome predict_training_row(const nlohmann::json& row, Context& ctx, std::string_view source);

/// `kind: "serving"` rows (inference-sim vLLM, SGLang vs vLLM).
Outcome predict_serving_row(const nlohmann::json& row, Context& ctx, std::string_view source);

}  // namespace flopcast::cli::validate
