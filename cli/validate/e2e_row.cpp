// SPDX-License-Identifier: MIT
// What every end-to-end predictor reads from a row of the documented schema (docs/validation.md):
// the model (a preset by name or alias, or an object from `arch`), the GPU (a preset by name or
// alias, or a preset with the row's stated differences), the precision named in `dtype`, the
// engine or framework named in `workload`, and numbers that sources write as strings.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>

#include "flopcast/io/api.hpp"
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

namespace {

/// "meta-llama/Llama-3.1-405B-Instruct-FP8 (Meta FP8)" → "llama-3.1-405b": the organisation,
/// anything in parentheses, and the suffixes of fine-tuned or re-quantised checkpoints (same
/// architecture) are dropped; spaces and underscores become dashes.
std::string normalize_model_name(std::string_view name) {
  std::string s = lower_case(name);
  if (const auto paren = s.find('('); paren != std::string::npos) s.erase(paren);
  if (const auto slash = s.rfind('/'); slash != std::string::npos) s.erase(0, slash + 1);
  for (char& c : s) {
    if (c == ' ' || c == '_') c = '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  static const char* const kSuffixes[] = {"-instruct", "-chat", "-hf",      "-base",  "-fp8-kv",
                                          "-fp8",      "-fp4",  "-nvfp4",   "-mxfp4", "-awq",
                                          "-gptq",     "-it",   "-dynamic", "-v0.1",  "-v0.2"};
  for (bool again = true; again;) {
    again = false;
    for (const char* suffix : kSuffixes) {
      if (ends_with(s, suffix)) {
        s.erase(s.size() - std::string_view(suffix).size());
        again = true;
      }
    }
  }
  return s;
}

/// GPT-style model object from a row's `arch` (MPT, Megatron GPT configs): plain GeLU FFN of 4h
/// unless stated, LayerNorm, learned positions sized to the run's sequence length. A row without
/// a head count gets 128-wide heads (it moves only the attention kernel's shape).
std::variant<json, std::string> arch_model(const json& arch, const std::string& name,
                                           int context_tokens) {
  const auto number = [&](const char* key) { return row_number(arch, key); };
  if (lower_case(json_string(arch, "attention")).find("mla") != std::string::npos) {
    return std::string("multi-head latent attention (MLA) is not modelled yet");
  }
  if (row_bool(arch, "shared_expert").value_or(false) || number("shared_experts") > 0) {
    return std::string("MoE with shared experts is not modelled yet");
  }
  // A LatentMoE model without a preset (Nemotron 3 Ultra): the row does not give its shapes.
  if (const std::string type = lower_case(json_string(arch, "type"));
      type.find("latent") != std::string::npos && type.find("moe") != std::string::npos) {
    return "no model preset for \"" + name +
           "\": a LatentMoE model whose shapes (latent, experts, Mamba heads) are not in the row";
  }
  if (!std::isfinite(number("layers")) || !std::isfinite(number("hidden")) ||
      !std::isfinite(number("vocab"))) {
    return "no model preset for \"" + name + "\" and its arch lacks layers, hidden or vocab";
  }
  // A size the row states is a whole count a model can have; anything else is the row's error.
  for (const char* key : {"layers", "hidden", "vocab", "heads", "kv_heads", "ffn"}) {
    const double v = number(key);
    if (std::isfinite(v) && !(v >= 1 && v <= 1e8 && v == std::floor(v))) {
      char got[32];
      std::snprintf(got, sizeof got, "%g", v);
      return "arch." + std::string(key) + ": must be a whole number in [1, 1e8] (got " + got + ")";
    }
  }
  const int hidden = static_cast<int>(number("hidden"));
  const int heads = std::isfinite(number("heads")) ? static_cast<int>(number("heads"))
                                                   : std::max(1, hidden / 128);
  const int kv_heads =
      std::isfinite(number("kv_heads")) ? static_cast<int>(number("kv_heads")) : heads;
  const int ffn = std::isfinite(number("ffn")) ? static_cast<int>(number("ffn")) : 4 * hidden;
  // MPT ties its input and output embeddings (llm-foundry's mpt yamls); Megatron GPT does not.
  const bool tied =
      row_bool(arch, "tie_embeddings").value_or(lower_case(name).rfind("mpt", 0) == 0);
  json m{{"name", name},
         {"num_layers", static_cast<int>(number("layers"))},
         {"hidden_size", hidden},
         {"num_heads", heads},
         {"num_kv_heads", kv_heads},
         {"intermediate_size", ffn},
         {"ffn", "plain"},
         {"vocab_size", static_cast<int>(number("vocab"))},
         {"tie_embeddings", tied},
         {"max_context_tokens", std::max(context_tokens, 2)},
         {"norm", "layernorm"},
         {"position_embedding", "learned"}};
  if (hidden % heads != 0) m["head_dim"] = hidden / heads;
  return m;
}

}  // namespace

std::string json_string(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double json_number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>()
                                          : std::numeric_limits<double>::quiet_NaN();
}

double row_number(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return std::numeric_limits<double>::quiet_NaN();
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string s = it->get<std::string>();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && *end == '\0' && std::isfinite(v)) return v;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double row_number_or(const json& j, const char* key, double fallback) {
  const double v = row_number(j, key);
  return std::isfinite(v) ? v : fallback;
}

bool row_has_flag(const json& row, std::string_view flag) {
  const auto it = row.find("flags");
  return it != row.end() && it->is_array() && std::find(it->begin(), it->end(), flag) != it->end();
}

std::string lower_case(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

std::optional<bool> row_bool(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_string()) {
    const std::string s = lower_case(it->get<std::string>());
    if (s == "true" || s == "on" || s == "yes" || s == "1") return true;
    if (s == "false" || s == "off" || s == "no" || s == "0") return false;
  }
  return std::nullopt;
}

std::optional<std::string> model_preset_for(std::string_view model) {
  // Names of the original LLaMA-2 tables and sources that predate a version suffix.
  static const std::pair<const char*, const char*> kAliases[] = {
      {"llama-7b", "llama-2-7b"},
      {"llama-13b", "llama-2-13b"},
      {"llama-70b", "llama-2-70b"},
      {"codellama-34b", "codellama-34b"},
      {"meta-llama-3-8b", "llama-3-8b"},
      {"meta-llama-3-70b", "llama-3-70b"},
      {"meta-llama-3.1-8b", "llama-3.1-8b"},
      {"meta-llama-3.1-70b", "llama-3.1-70b"},
      {"meta-llama-3.1-405b", "llama-3.1-405b"},
      {"code-llama-34b", "codellama-34b"}};
  const std::string id = normalize_model_name(model);
  if (id.empty()) return std::nullopt;
  for (const auto& [alias, preset] : kAliases) {
    if (id == alias) return std::string(preset);
  }
  if (io::find_preset("models", id)) return id;
  // A base name whose preset is its instruct checkpoint, the same architecture ("Kimi-K2").
  if (io::find_preset("models", id + "-instruct")) return id + "-instruct";
  // "DeepSeek-V3/R1": two checkpoints of one architecture, not an organisation and a model.
  std::string whole = lower_case(model.substr(0, model.find('(')));
  while (!whole.empty() && whole.back() == ' ') whole.pop_back();
  if (contains(whole, "/") && !contains(whole, " ")) {
    const std::string first = normalize_model_name(whole.substr(0, whole.find('/')));
    if (first != id && io::find_preset("models", first)) return first;
  }
  // A dated checkpoint of the same architecture (DeepSeek-R1-0528, DeepSeek-V3-0324,
  // Qwen3-235B-A22B-Instruct-2507) is its base model, unless the date is in a preset's id.
  const std::size_t n = id.size();
  if (n > 5 && id[n - 5] == '-' && std::all_of(id.end() - 4, id.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    return model_preset_for(id.substr(0, n - 5));
  }
  return std::nullopt;
}

std::variant<json, std::string> row_model(const json& row, int context_tokens) {
  const std::string name = json_string(row, "model");
  if (const auto id = model_preset_for(name)) {
    json model = io::preset("models", *id, "model").at("model");
    // A preset's context limit is its checkpoint's; a benchmark row ran what it ran.
    if (context_tokens > model.value("max_context_tokens", 0)) {
      model["max_context_tokens"] = context_tokens;
    }
    return model;
  }
  if (row.contains("arch") && row.at("arch").is_object()) {
    return arch_model(row.at("arch"), name, context_tokens);
  }
  return "no model preset for \"" + name + "\" and no arch in the row";
}

namespace {

std::optional<std::string> find_hardware_preset(std::string_view gpu) {
  const std::string g = lower_case(gpu);
  // A preset by id or alias ("B300-SXM", "RTX-PRO-6000-BSE", "H800").
  if (const json* p = io::find_preset("hardware", g)) return p->at("id").get<std::string>();
  // Order matters: "gb200" contains "b200", "l40s" contains "l4".
  if (contains(g, "gb200"))
    return io::find_preset("hardware", "gb200") ? "gb200" : std::optional<std::string>();
  if (contains(g, "b200")) return "b200";
  if (contains(g, "h200")) return "h200-sxm";
  if (contains(g, "h20")) return "h20";  // H20-96G, after the check for "h200"
  if (contains(g, "h800")) return "h800-sxm";
  if (contains(g, "h100")) return contains(g, "pcie") ? "h100-pcie" : "h100-sxm";
  if (contains(g, "a100")) {
    if (contains(g, "pcie")) return "a100-pcie-80g";
    return contains(g, "40g") ? "a100-sxm-40g" : "a100-sxm-80g";
  }
  if (contains(g, "l40s")) return "l40s";
  if (contains(g, "mi300x")) return "mi300x";
  if (contains(g, "mi250x")) return "mi250x";
  if (contains(g, "v100")) return "v100-sxm";
  if (contains(g, "l4")) return "l4";
  if (contains(g, "t4")) return "t4";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> hardware_preset_for(std::string_view gpu) {
  // A run asks for the same few GPU names once per row and fold: remember each answer (the
  // passes of `--by-source` ask from several threads).
  static std::map<std::string, std::optional<std::string>, std::less<>> known;
  static std::mutex guard;
  const std::lock_guard<std::mutex> lock(guard);
  auto it = known.find(gpu);
  if (it == known.end()) it = known.emplace(std::string(gpu), find_hardware_preset(gpu)).first;
  return it->second;
}

std::variant<RowHardware, std::string> row_hardware(const json& row) {
  const std::string gpu = json_string(row, "gpu");
  const auto id = hardware_preset_for(gpu);
  if (!id) return "no hardware preset for \"" + gpu + "\"";
  RowHardware hw{json(*id), *id, ""};
  const std::string g = lower_case(gpu);
  // Meta's Grand Teton H100: 96 GB of HBM2e at 2.4 TB/s, power-limited to 500 W (the ground
  // truth's README and torchtitan's benchmark notes): the 700 W part's peaks at the clock a
  // 500 W limit sustains (hardware.power_limit_W: (500/700)^(1/3) = 0.894).
  if (*id == "h100-sxm" && (contains(g, "hbm2e") || contains(g, "96g") || contains(g, "95g"))) {
    json spec = io::preset("hardware", *id, "hardware").at("hardware");
    spec["name"] = gpu;
    spec["hbm_GB"] = 96;
    spec["hbm_bandwidth_GBps"] = 2400;
    spec["power_limit_W"] = 500;
    hw.spec = spec;
    hw.note = "H100 96 GB HBM2e limited to 500 W: bandwidth 2.4 TB/s, peaks at 0.894 of the clock";
  } else if (!contains(g, "sxm") && *id == "a100-sxm-80g" && contains(g, "not stated")) {
    hw.note = "A100 80 GB form factor not stated: SXM assumed";
  }
  return hw;
}

std::variant<RowPrecision, std::string> row_precision(const json& row) {
  const std::string dtype = json_string(row, "dtype");
  std::string d = lower_case(dtype);
  RowPrecision p;
  // NVIDIA's ModelOpt checkpoints carry an FP8 KV cache unless their maker turned it off:
  // ModelOpt's export quantizes it by default (examples/llm_ptq/hf_ptq.py `--kv_cache_qformat`,
  // default "fp8", NVIDIA/TensorRT-Model-Optimizer @05ab948) and writes `kv_cache_quant_algo:
  // FP8` into hf_quant_config.json, which TensorRT-LLM, vLLM and SGLang read as the cache dtype.
  const bool modelopt = contains(d, "modelopt") && !contains(d, "16-bit kv");
  if (contains(d, "fp4")) {
    // NVFP4 or MXFP4 weights (the MoE experts of the FP4 DeepSeek checkpoints hold nearly all of
    // them); the math is the weights' format, which training does not model (its error says so).
    p.weights = p.compute = contains(d, "mxfp4") ? "mxfp4" : "fp4";
    p.kv_cache = contains(d, "fp8 kv") || modelopt ? "fp8" : "bf16";
    // NVIDIA's FP4 DeepSeek-R1 checkpoints quantize "only the weights and activations of the
    // linear operators within transformer blocks in MoE" (nvidia/DeepSeek-R1-FP4 model card):
    // attention stays in bf16.
    if (contains(d, "moe weights")) p.attention_weights = "bf16";
    if (contains(d, "fp8 attention")) p.attention_weights = "fp8";
    if (contains(d, "bf16 attention")) p.attention_weights = "bf16";
    return p;
  }
  if (contains(d, "fp8") || contains(d, "float8")) {
    // OCP MXFP8 (E8M0 scale per 32): its own type, on Blackwell's block-scaled tensor cores.
    p.weights = p.compute = contains(d, "mxfp8") ? "mxfp8" : "fp8";
    p.kv_cache = (contains(d, "kv") && !contains(d, "16-bit kv")) || modelopt ? "fp8" : "bf16";
    // Meta's Llama 3.1 FP8 checkpoints (fbgemm row-wise FP8) quantize the FFNs only: "we do not
    // perform quantization in the self-attention layers" (Llama 3 paper, section 6.2; the
    // checkpoint's quantization_config lists every self_attn projection as not converted).
    if (contains(d, "meta-llama/") || contains(d, "fbgemm")) p.attention_weights = "bf16";
    // "BF16 attention + FP8 MoE/GEMM" (SGLang's GB200 posts): the attention projections apart.
    if (contains(d, "bf16 attention")) p.attention_weights = "bf16";
    return p;
  }
  if (contains(d, "int4") || contains(d, "awq") || contains(d, "gptq") || contains(d, "w4a16")) {
    p.weights = "int4";
    return p;
  }
  if (contains(d, "int8") || contains(d, "w8a8")) {
    p.weights = "int8";
    return p;
  }
  if (contains(d, "bf16") || contains(d, "bfloat16")) return p;
  // "16-bit (vLLM dtype auto)": vLLM's auto takes the checkpoint's torch_dtype, float16 for the
  // Llama 2 family these rows ran (the source's metadata says FP16).
  if (contains(d, "fp16") || contains(d, "float16") || contains(d, "auto")) {
    p.weights = p.kv_cache = p.compute = "fp16";
    return p;
  }
  if (contains(d, "16-bit") || contains(d, "half") || d.empty()) return p;
  return "precision \"" + dtype + "\" not recognised";
}

std::variant<RowBasics, std::string> row_basics(const json& row, int context_tokens) {
  auto model = row_model(row, context_tokens);
  if (auto* reason = std::get_if<std::string>(&model)) return std::move(*reason);
  auto hw = row_hardware(row);
  if (auto* reason = std::get_if<std::string>(&hw)) return std::move(*reason);
  auto precision = row_precision(row);
  if (auto* reason = std::get_if<std::string>(&precision)) return std::move(*reason);
  return RowBasics{std::move(std::get<json>(model)), std::move(std::get<RowHardware>(hw)),
                   std::move(std::get<RowPrecision>(precision))};
}

json inference_precision(const RowPrecision& p) {
  json out{{"weights", p.weights}, {"kv_cache", p.kv_cache}};
  if (!p.attention_weights.empty()) out["attention_weights"] = p.attention_weights;
  return out;
}

json static_inference_request(const json& model, const RowHardware& hw,
                              const RowPrecision& precision, int tp, int prompt, int output,
                              int batch, json engine, bool calibrated) {
  return json{
      {"task", "inference"},
      {"model", model},
      {"hardware", hw.spec},
      {"num_gpus", tp},
      {"parallelism", {{"tp", tp}}},
      {"precision", inference_precision(precision)},
      {"workload", {{"prompt_tokens", prompt}, {"output_tokens", output}, {"batch_size", batch}}},
      {"engine", std::move(engine)},
      {"max_tier", calibrated ? 2 : 0}};
}

std::string row_engine(const json& workload) {
  const std::string e = lower_case(json_string(workload, "engine"));
  if (contains(e, "tensorrt") || contains(e, "trt-llm") || contains(e, "trtllm")) return "trtllm";
  if (contains(e, "sglang")) return "sglang";
  if (contains(e, "vllm")) return "vllm";
  return "generic";
}

std::optional<std::array<long, 3>> engine_release(const json& workload,
                                                  std::string_view engine_name) {
  const std::string e = lower_case(json_string(workload, "engine"));
  const std::size_t at = e.find(engine_name);
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + engine_name.size();
  while (i < e.size() && (e[i] == ' ' || e[i] == 'v')) ++i;
  // major "." minor ["." patch]: a missing minor or patch (".post1", ".dev") reads 0.
  std::array<long, 3> v{0, 0, 0};
  const char* p = e.c_str() + i;
  for (std::size_t k = 0; k < v.size(); ++k) {
    char* end = nullptr;
    v[k] = std::strtol(p, &end, 10);
    if (end == p) return k >= 1 ? std::optional(v) : std::nullopt;
    if (*end != '.') return k >= 1 ? std::optional(v) : std::nullopt;
    p = end + 1;
  }
  return v;
}

double engine_version(const json& workload, std::string_view engine_name) {
  const auto v = engine_release(workload, engine_name);
  if (!v) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>((*v)[0]) + static_cast<double>((*v)[1]) / 100.0;  // 0.6 → 0.06
}

void scale_band(Outcome& o, const json& band, double reference) {
  if (!band.is_object() || !(reference > 0) || !band.contains("low") || !band.contains("high")) {
    return;
  }
  o.low = o.predicted * band.at("low").get<double>() / reference;
  o.high = o.predicted * band.at("high").get<double>() / reference;
}

bool early_mla_engine(const json& workload) {
  const std::string e = lower_case(json_string(workload, "engine"));
  if (contains(e, "early 2025") || contains(e, "deepseek branch")) return true;
  // The release after the name: "sglang 0.4.3.post2", "vllm 0.7.4.dev181", "tensorrt-llm 0.17".
  const std::array<long, 3> first_sglang{0, 4, 4}, first_vllm{0, 8, 0}, first_trtllm{0, 19, 0};
  if (const auto v = engine_release(workload, "sglang")) return *v < first_sglang;
  if (const auto v = engine_release(workload, "vllm")) return *v < first_vllm;
  if (const auto v = engine_release(workload, "tensorrt-llm")) return *v < first_trtllm;
  if (const auto v = engine_release(workload, "trt-llm")) return *v < first_trtllm;
  return false;
}

}  // namespace flopcast::cli::validate
