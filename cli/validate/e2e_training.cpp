// SPDX-License-Identifier: MIT
// Training rows of e2e_dev.jsonl (llm-foundry FSDP benchmarks, Megatron-LM weak-scaling tables):
// each becomes a `task: "training"` request through io::run, priced on the row's own quantity.
#include <cmath>
#include <cstdlib>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {
namespace {

using nlohmann::json;

bool has_number(const json& j, const char* key) { return std::isfinite(json_number(j, key)); }

/// A GPT-style model object from a row's `arch` (MPT, Megatron GPT): plain GeLU FFN of 4h unless
/// stated, LayerNorm, learned positions sized to the run's sequence length. Megatron 2021 rows
/// state no head count: 128-wide heads are assumed (it moves only the attention kernel's shape).
std::optional<json> arch_model(const json& row, const std::string& name, int seq_len,
                               bool tied) {
  const json arch = row.value("arch", json::object());
  if (!has_number(arch, "layers") || !has_number(arch, "hidden") || !has_number(arch, "vocab")) {
    return std::nullopt;
  }
  const int hidden = static_cast<int>(json_number(arch, "hidden"));
  const int heads = has_number(arch, "heads") ? static_cast<int>(json_number(arch, "heads"))
                                              : std::max(1, hidden / 128);
  const int kv_heads =
      has_number(arch, "kv_heads") ? static_cast<int>(json_number(arch, "kv_heads")) : heads;
  const int ffn = has_number(arch, "ffn") ? static_cast<int>(json_number(arch, "ffn")) : 4 * hidden;
  json m{{"name", name},
         {"num_layers", static_cast<int>(json_number(arch, "layers"))},
         {"hidden_size", hidden},
         {"num_heads", heads},
         {"num_kv_heads", kv_heads},
         {"intermediate_size", ffn},
         {"ffn", "plain"},
         {"vocab_size", static_cast<int>(json_number(arch, "vocab"))},
         {"tie_embeddings", tied},
         {"max_context_tokens", seq_len},
         {"norm", "layernorm"},
         {"position_embedding", "learned"}};
  if (hidden % heads != 0) m["head_dim"] = hidden / heads;
  return m;
}

/// What to compare: the predicted value of the row's metric, from the response.
using Metric = double (*)(const json& response);

double tokens_per_s_per_gpu(const json& r) { return r.at("tokens_per_s_per_gpu").get<double>(); }
double model_tflops(const json& r) { return r.at("model_tflops_per_gpu").get<double>(); }
/// Megatron 2021 counts the FLOPs of the recomputed forward (96·B·s·l·h²(1 + s/6h + V/16lh)):
/// the hardware FLOPs of full recomputation.
double hardware_tflops(const json& r) {
  return r.at("hardware_flops_per_token").get<double>() *
         r.at("tokens_per_s_per_gpu").get<double>() / 1e12;
}

/// `flopcast` refits (scripts/fit_training.py) set FLOPCAST_TRAINING_FIT to
/// {"<profile>": {framework keys}}: those keys replace the profile's constants in every request.
/// Keys "<profile>@<family>" (a family of TrainingFramework::scales) apply to that family only.
void apply_fit_override(json& request, const std::string& gpu) {
  static const json overrides = [] {
    const char* env = std::getenv("FLOPCAST_TRAINING_FIT");
    if (env == nullptr) return json::object();
    json j = json::parse(env, nullptr, false);
    return j.is_object() ? j : json::object();
  }();
  json& framework = request["framework"];
  const std::string profile = framework.value("profile", "generic");
  const std::string family = gpu.find("H100") != std::string::npos  ? "H100"
                             : gpu.find("A100-SXM-80G") != std::string::npos ? "A100 SXM4 80GB"
                                                                            : "A100";
  for (const std::string& key : {profile, profile + "@" + family}) {
    const auto it = overrides.find(key);
    if (it == overrides.end() || !it->is_object()) continue;
    for (const auto& [k, value] : it->items()) framework[k] = value;
  }
}

Outcome run_request(json request, Metric metric, Context& ctx, std::string_view source,
                    const std::string& gpu) {
  apply_fit_override(request, gpu);
  try {
    const json r = io::run(request);
    if (!r.at("memory_per_gpu").at("fits").get<bool>()) {
      ctx.collector().warn(source, "training memory_per_gpu.fits=false (predicted anyway)");
    }
    return Outcome::value(metric(r), r.value("tier", 0));
  } catch (const SpecError& e) {
    return Outcome::skipped(e.what());
  }
}

Outcome predict_foundry(const json& row, Context& ctx, std::string_view source,
                        const std::string& hw) {
  const json wl = row.value("workload", json::object());
  const json par = row.value("parallelism", json::object());
  const std::string fsdp = json_string(par, "fsdp");
  std::string strategy;
  if (fsdp == "FULL_SHARD") strategy = "full_shard";
  else if (fsdp == "SHARD_GRAD_OP") strategy = "shard_grad_op";
  else return Outcome::skipped("FSDP strategy \"" + fsdp + "\" not modelled");
  const int seq = static_cast<int>(json_number(wl, "seq_len"));
  const auto model = arch_model(row, json_string(row, "model"), seq, true);
  if (!model) return Outcome::skipped("arch without layers/hidden/vocab");
  const std::string dtype = json_string(row, "dtype");
  const bool fp8 = dtype.find("FP8") != std::string::npos;
  // Composer's FSDP mixed precision: DEFAULT reduces gradients in fp32, PURE in bf16.
  const bool pure = json_string(wl, "fsdp_mixed_precision_mode") == "PURE";
  const json request{
      {"task", "training"},
      {"model", *model},
      {"hardware", hw},
      {"num_gpus", row.value("num_gpus", json(1))},
      {"parallelism", {{"fsdp", strategy}}},
      {"workload",
       {{"seq_len", seq},
        {"global_batch_size", wl.value("global_batch", json(nullptr))},
        {"micro_batch_size", wl.value("micro_batch", json(nullptr))},
        {"recompute", wl.value("activation_checkpointing", false) ? "full" : "none"}}},
      {"precision", {{"compute", fp8 ? "fp8" : "bf16"}, {"grad_reduce", pure ? "bf16" : "fp32"}}},
      {"framework", {{"profile", "pytorch_fsdp"}}},
      {"max_tier", ctx.km().use_calibration ? 2 : 0}};
  return run_request(request, tokens_per_s_per_gpu, ctx, source, json_string(row, "gpu"));
}

Outcome predict_megatron(const json& row, Context& ctx, std::string_view source,
                         const std::string& hw, bool year_2021) {
  const json par = row.value("parallelism", json::object());
  if (!has_number(par, "tp") || !has_number(par, "dp")) {
    return Outcome::skipped("parallel layout not stated");
  }
  if (json_string(row, "metric") != "tflops_per_gpu") {
    return Outcome::skipped("metric not modelled");
  }
  const json wl = row.value("workload", json::object());
  const int seq = static_cast<int>(json_number(wl, "seq_len"));
  const auto model = arch_model(row, json_string(row, "model"), seq, false);
  if (!model) return Outcome::skipped("arch without layers/hidden/vocab");
  const int tp = static_cast<int>(json_number(par, "tp"));
  const int pp = has_number(par, "pp") ? static_cast<int>(json_number(par, "pp")) : 1;
  json parallelism{{"tp", tp}, {"pp", pp}, {"dp", static_cast<int>(json_number(par, "dp"))}};
  if (year_2021) {
    // SC21 (Narayanan et al.): full recomputation, no sequence parallelism, no ZeRO.
    parallelism["zero"] = 0;
  } else {
    // Megatron-Core r0.8: distributed optimizer with overlapped grad reduce / param gather,
    // sequence parallelism with TP, TP communication overlap (the README's configuration).
    parallelism["zero"] = 1;
    parallelism["sp"] = tp > 1;
    parallelism["tp_comm_overlap"] = tp > 1;
  }
  const json request{
      {"task", "training"},
      {"model", *model},
      {"hardware", hw},
      {"num_gpus", row.value("num_gpus", json(1))},
      {"parallelism", parallelism},
      {"workload",
       {{"seq_len", seq},
        {"global_batch_size", wl.value("global_batch", json(nullptr))},
        {"recompute", year_2021 ? "full" : "selective"},
        // FlashAttention (2022) postdates the 2021 runs: fused softmax, scores in HBM.
        {"flash_attention", !year_2021}}},
      {"precision", {{"compute", "bf16"}}},
      {"framework", {{"profile", "megatron"}}},
      {"max_tier", ctx.km().use_calibration ? 2 : 0}};
  return run_request(request, year_2021 ? hardware_tflops : model_tflops, ctx, source,
                     json_string(row, "gpu"));
}

}  // namespace

Outcome predict_training_row(const nlohmann::json& row, Context& ctx, std::string_view source) {
  const std::string gpu = json_string(row, "gpu");
  const auto hw = hardware_preset_for(gpu);
  if (!hw) return Outcome::skipped("no hardware preset for " + gpu);
  const std::string group = json_string(row, "group");
  if (group == "llm-foundry") return predict_foundry(row, ctx, source, *hw);
  if (group == "megatron-lm-readme-2024") return predict_megatron(row, ctx, source, *hw, false);
  if (group == "megatron-lm-readme-2021") return predict_megatron(row, ctx, source, *hw, true);
  return Outcome::skipped("training group " + group + " not modelled");
}

}  // namespace flopcast::cli::validate
