// SPDX-License-Identifier: MIT
#pragma once

/// The one JSON layer shared by the CLI and the WebAssembly module: both call these functions, so
/// the same request gives the same response, byte for byte.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flopcast::io {

using nlohmann::json;

inline constexpr int kSchemaVersion = 1;

/// Version of flopcast (semantic version of the request/response schema and estimators).
std::string version();

/// A number rounded to six significant digits, as every flopcast output carries it: estimates
/// hold no more, and it keeps the native and WebAssembly outputs byte-identical even where their
/// libm differ in the last bit. Zero and non-finite values pass through.
double round6(double x);

/// Runs one request document (any task) and returns the response object.
/// Throws flopcast::SpecError (invalid input, with the field's path) or flopcast::Error.
json run(const json& request);

/// Limits a request document is held to before any work (docs/schema.md, "Input limits").
inline constexpr std::size_t kMaxRequestBytes = std::size_t{1} << 20;  ///< 1 MiB
inline constexpr int kMaxJsonDepth = 64;  ///< nested objects and arrays

/// Parses a request document strictly: at most kMaxRequestBytes and kMaxJsonDepth levels, no
/// duplicate key, nothing but whitespace after the value. SpecError with path "" and a message
/// starting "malformed JSON[ in <where>]: " on malformed or oversized text; with the key's path
/// on a duplicate key.
json parse_json(std::string_view text, std::string_view where = {});

/// Parses `text` with parse_json and runs it.
json run_text(std::string_view text);

/// Machine-readable description of a caught exception.
struct ErrorInfo {
  std::string code;  ///< invalid_json | invalid_request | not_modelled | internal
  std::string path;  ///< dotted JSON path of the field, "" when not tied to one
  std::string message;
};
ErrorInfo describe_current_exception() noexcept;  ///< call inside a catch block

/// The envelope every front end answers in (the CLI's --format json errors, the WebAssembly
/// functions, handle): {"ok":true,"result":...} or {"ok":false,"error":{code,path,message}}.
json ok_envelope(json result);
json error_envelope(const ErrorInfo& e);
/// Runs `f` (returning json) and gives its envelope as JSON text, invalid UTF-8 replaced: the
/// result, or the error of what it threw. Never throws.
template <typename F>
std::string enveloped(F&& f) {
  try {
    return ok_envelope(f()).dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (...) {
    return error_envelope(describe_current_exception())
        .dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

/// Never throws: the envelope of run_text(request_text).
std::string handle(std::string_view request_text);

/// A size as people write it: a number with an optional unit, B, KB/MB/GB/TB (1000^k) or
/// KiB/MiB/GiB/TiB (1024^k), between 0 and 1e15 bytes ("64MiB" is 67,108,864). The bytes, or
/// nullopt with `why` set to the rule and the text. The CLI's --bytes and --sweep and the page's
/// message-size field read sizes through this one function.
std::optional<double> parse_size(const std::string& text, std::string& why);

/// Every preset: {"models":[...],"hardware":[...],"scenarios":[...],"setups":[...],...}, each
/// file as written (setups: named starting requests; scenarios: the benchmark suite's).
const json& presets();

/// The values of the request keys that take one of a list, from the core's own tables (the page
/// builds its choices from these): {"precision": {"weights", "gguf_weights", "attention_weights",
/// "kv_cache", "activations", "compute"}, "parallelism": {"moe_dispatch"}, "engine": {"name"},
/// "workload": {"recompute", "optimizer"}}, each a list of names in the order to offer them.
json schema();

/// The option nearest to a misspelled `word` (a prefix first, else the smallest edit distance
/// within a third of its length), for "did you mean" hints; none when nothing is close.
std::optional<std::string> suggest(std::string_view word, const std::vector<std::string>& options);
/// The preset of a kind named by its id or one of its `aliases` (any case), or null.
const json* find_preset(std::string_view kind, std::string_view name);
/// One preset by kind ("models", "hardware", "scenarios", "setups") and id or alias; SpecError with
/// a "did you mean" suggestion when unknown.
const json& preset(std::string_view kind, std::string_view id, const std::string& path);

/// Shareable-link fragment (without '#') for a request: `v=1&model=llama-2-7b&parallelism.tp=1…`.
/// Inference requests carry the inference fields only (unknown keys are errors); training,
/// serving and collective requests carry every leaf by its dotted path, `task` included (the
/// page's training, serving and collective views share these; their readers check the keys).
std::string encode_link(const json& request);
/// Decodes a fragment into {"request": {...valid fields...}, "errors": [{path, message}, ...]}:
/// each invalid field is reported and left out; the rest is kept. Never throws for bad content.
/// A link whose `task` is not inference is read leaf by leaf (numbers, booleans, objects and
/// arrays by type, the rest as text; keys must be dotted lower-case paths).
json decode_link(std::string_view fragment);

/// The hardware object a request's `hardware` value stands for, with the figures an estimate
/// uses: a preset's (by id or alias), a what-if preset's scaled ones, or an object as read. The
/// page draws its roofline from it. SpecError paths start with "hardware".
json hardware_object(const json& hardware);

/// Converts a Hugging Face config.json (Llama 2–4, Mistral, Mixtral, Qwen2/3 and their MoE,
/// DeepSeek-V2/V3, gpt-oss, Gemma 2/3, Phi-3/4, Falcon, GPT-2-style keys) into a flopcast model
/// object. Its name is the config's `_name_or_path`, else `file_name` without directories and
/// ".json" (the CLI passes the path, the page the dropped file's name), else "custom model".
/// SpecError paths start with "hf_config.".
json model_from_hf_config(const json& config, std::string_view file_name = {});

/// The weight precision a config's `quantization_config` implies: {} when it has none, else
/// {"weights": dtype}: AWQ and 4-bit GPTQ "int4", 8-bit GPTQ "int8", "fp8" and "fbgemm_fp8"
/// "fp8", "mxfp4" (gpt-oss) "mxfp4", compressed-tensors from its config groups' weights (4- or
/// 8-bit int: "int4", "int8"; 8-bit float: "fp8"; 4-bit float in groups of 16: "fp4", i.e.
/// NVFP4; in groups of 32: "mxfp4"). Any other method is a NotModelledError at
/// hf_config.quantization_config.quant_method. Where the config leaves every layer's attention
/// unquantized (`modules_to_not_convert` / `ignore` naming self_attn by pattern or for at least
/// half of the layers: gpt-oss, Meta's Llama 3.1 FP8) it adds "attention_weights": the config's
/// torch_dtype, "bf16" or "fp16". FP8 scaled per block of the matrix (`weight_block_size`, or
/// compressed-tensors' "block" strategy) adds "weight_scaling": "block".
json precision_from_hf_config(const json& config);

}  // namespace flopcast::io
