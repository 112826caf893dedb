// SPDX-License-Identifier: MIT
// Training rows of the documented row schema, whatever their source: each becomes a
// `task: "training"` request through io::run, priced on the row's own quantity.
//
// Read from the row: the model (preset or `arch`), GPU, `num_gpus`, `parallelism` (tp, pp, dp,
// cp, ep, vp, fsdp as a strategy, a flag or a group size, async_tp), `dtype` (fp8 / float8 /
// mxfp8 compute, else 16 bit), `workload` (seq_len; global_batch, global_batch_tokens,
// local_batch or micro_batch · grad_accum for the batch; micro_batch; activation_checkpointing as
// a flag or none / selective / op / full; fsdp_mixed_precision_mode) and `workload.framework`,
// which picks the framework profile: Megatron-LM and NeMo → megatron; llm-foundry, Composer,
// torchtitan, DeepSpeed and other PyTorch data-parallel trainers → pytorch_fsdp; anything else →
// the estimator's default for the layout.
//
// One source convention is not in the schema and is applied by group: Megatron-LM's 2021 table
// (SC21) counts the FLOPs of full recomputation and ran without FlashAttention or sequence
// parallelism.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "validate/e2e.hpp"
#include "validate/megatron_recipes.hpp"

namespace flopcast::cli::validate {
namespace {

using nlohmann::json;

/// The framework profile `workload.framework` names ("" when none of the known ones).
std::string profile_of(const json& wl) {
  const std::string f = lower_case(json_string(wl, "framework"));
  if (contains(f, "megatron") || contains(f, "nemo")) return "megatron";
  if (contains(f, "foundry") || contains(f, "composer") || contains(f, "torchtitan") ||
      contains(f, "fsdp") || contains(f, "deepspeed") || contains(f, "pytorch")) {
    return "pytorch_fsdp";
  }
  return "";
}

/// Recomputation named by `activation_checkpointing`, read the way the row's framework means
/// it; nullopt when not stated and the framework has no default. torchtitan's `selective` is
/// op-level unless it says `layer` (its Llama and Qwen train configs set selective_ac_option =
/// "op", and they are what a run that does not restate it uses); Megatron's is the attention core
/// (Korthikanti et al.) and its default is none.
std::optional<std::string> recompute_of(const json& wl, const std::string& profile) {
  const bool torchtitan = contains(lower_case(json_string(wl, "framework")), "torchtitan");
  if (const auto b = row_bool(wl, "activation_checkpointing")) return *b ? "full" : "none";
  const std::string ac = lower_case(json_string(wl, "activation_checkpointing"));
  if (contains(ac, "per-op") || contains(ac, "(op)") || contains(ac, "sac")) return "op";
  if (contains(ac, "selective")) return torchtitan && !contains(ac, "layer") ? "op" : "selective";
  if (contains(ac, "full")) return "full";
  if (ac == "none" || ac == "no" || ac == "off") return "none";
  if (torchtitan) return "op";
  // Megatron-Core recomputes nothing unless told (TransformerConfig.recompute_granularity
  // defaults to None), and Megatron-Bridge's performance recipes (perf_recipes/, at 067f987)
  // either keep it off (Llama 3, Qwen3 MoE) or name op-level modules (mla_up_proj, layernorm,
  // moe_act) whose recomputation is a small elementwise cost, never the attention core.
  if (profile == "megatron") return "none";
  return std::nullopt;
}

/// Layers whose linears stay in BF16 under an fp8 / fp4 recipe: `workload.bf16_last_layers`, or
/// a dtype that names them ("NVFP4 linears in layers 0-26, layers 27-31 + LM head BF16" → 5).
int bf16_tail_of(const json& row) {
  const double stated = row_number(row.value("workload", json::object()), "bf16_last_layers");
  if (std::isfinite(stated) && stated >= 0) return static_cast<int>(stated);
  const std::string d = lower_case(json_string(row, "dtype"));
  // A published recipe that keeps a tail in BF16 when the table does not say: Megatron-Bridge's
  // Nemotron 3 Super NVFP4 (training/mixed_precision.py, nemotron_3_super_bf16_with_nvfp4_mixed:
  // num_layers_at_end_in_bf16 14).
  if (d.find("nvfp4") != std::string::npos &&
      lower_case(json_string(row, "model")).find("nemotron-3-super") != std::string::npos) {
    return 14;
  }
  const std::size_t comma = d.find(", layers ");
  if (comma == std::string::npos || d.find("bf16", comma) == std::string::npos) return 0;
  int first = 0, last = -1;
  if (std::sscanf(d.c_str() + comma + 9, "%d-%d", &first, &last) != 2 || last < first) return 0;
  return last - first + 1;
}

/// The response's value of the row's metric, in the row's unit; nullopt when not comparable.
std::optional<double> training_metric(const json& r, const json& row, bool hardware_flops) {
  const std::string metric = json_string(row, "metric");
  if (metric == "tokens_per_s_per_gpu") return r.at("tokens_per_s_per_gpu").get<double>();
  if (metric == "tokens_per_s" || metric == "tokens_per_s_total") {
    return r.at("tokens_per_s").get<double>();
  }
  if (metric == "tflops_per_gpu") {
    if (!hardware_flops) return r.at("model_tflops_per_gpu").get<double>();
    // The FLOPs of the recomputed forward counted in: 96·B·s·l·h²(1 + s/6h + V/16lh).
    return r.at("hardware_flops_per_token").get<double>() *
           r.at("tokens_per_s_per_gpu").get<double>() / 1e12;
  }
  if (metric == "mfu") {
    const bool percent = json_string(row, "unit").find('%') != std::string::npos;
    return r.at("mfu").get<double>() * (percent ? 100.0 : 1.0);
  }
  if (metric == "step_time_s") return r.at("step_time_s").get<double>();
  if (metric == "step_time_ms") return r.at("step_time_s").get<double>() * 1e3;
  return std::nullopt;
}

}  // namespace

namespace {

/// A row's layout as a request's `parallelism`, with the data-parallel and pipeline sizes the
/// batch needs.
struct RowLayout {
  json parallelism;
  double dp = 1, pp = 1;
};

std::variant<RowLayout, std::string> row_layout(const json& row, const std::string& profile,
                                                bool sc21) {
  const json par = row.value("parallelism", json::object());
  const double num_gpus = row_number_or(row, "num_gpus", 1);
  const double tp = row_number_or(par, "tp", 1), pp = row_number_or(par, "pp", 1),
               cp = row_number_or(par, "cp", 1);
  const double ep = row_number_or(par, "ep", 1), vp = row_number_or(par, "vp", 1);
  // Every size a whole number a request can hold (what a published table states, or a typo).
  constexpr double kMaxSize = 1 << 20;
  for (const double size : {num_gpus, tp, pp, cp, ep, vp}) {
    if (!(size >= 1 && size <= kMaxSize) || size != std::round(size)) {
      return std::string("num_gpus and the parallel sizes must be whole numbers from 1 to 1048576");
    }
  }
  const double dp = row_number_or(par, "dp", num_gpus / (tp * pp * cp));
  if (!(dp >= 1 && dp <= kMaxSize) || std::fabs(dp - std::round(dp)) > 1e-9) {
    return std::string("num_gpus is not a multiple of tp·pp·cp");
  }
  json parallelism{{"tp", static_cast<int>(tp)},
                   {"pp", static_cast<int>(pp)},
                   {"dp", static_cast<int>(dp)},
                   {"cp", static_cast<int>(cp)}};
  if (ep > 1) parallelism["ep"] = static_cast<int>(ep);
  // An EP group larger than the data ranks can only span the TP ranks too, with whole experts
  // (Megatron-Core's MoE parallel folding, expert_tensor_parallel_size 1, which the
  // Megatron-Bridge MoE performance recipes set).
  const double ep_fits = std::fmod(dp * cp, ep);
  if (ep > 1 && tp > 1 && ep_fits != 0 && std::fmod(tp * dp * cp, ep) == 0) {
    parallelism["expert_tp"] = 1;
  }
  if (vp > 1) parallelism["vpp"] = static_cast<int>(vp);
  // FSDP: a strategy name, a flag, or the size of the sharding group (torchtitan's dp_shard).
  // `false` and 0 say it was off: the framework's own optimizer sharding stands.
  const auto fsdp_it = par.find("fsdp");
  if (fsdp_it != par.end() && fsdp_it->is_string()) {
    const std::string s = lower_case(fsdp_it->get<std::string>());
    if (s == "full_shard" || s == "shard_grad_op" || s == "hybrid_shard" || s == "no_shard") {
      parallelism["fsdp"] = s;
    } else {
      return "FSDP strategy \"" + fsdp_it->get<std::string>() + "\" not modelled";
    }
  } else if (fsdp_it != par.end() && (fsdp_it->is_number() || fsdp_it->is_boolean())) {
    // torchtitan shards over its dp_shard x cp ranks (FSDP on the "dp_shard_cp" mesh when
    // context parallelism is on: torchtitan/distributed/parallel_dims.py): a stated dp_shard of
    // 1 with cp 8 still shards every parameter 8 ways.
    const bool titan = contains(
        lower_case(json_string(row.value("workload", json::object()), "framework")), "torchtitan");
    const double group = fsdp_it->is_number() ? fsdp_it->get<double>() * (titan ? cp : 1)
                                              : (fsdp_it->get<bool>() ? dp * cp : 0);
    if (group > 1) parallelism["fsdp"] = group < dp * cp ? "hybrid_shard" : "full_shard";
  }
  if (!parallelism.contains("fsdp") && profile == "megatron" && !sc21) {
    // Megatron-Core: distributed optimizer, sequence parallelism with TP.
    parallelism["zero"] = 1;
  }
  if (profile == "megatron" && !sc21 && tp > 1) {
    parallelism["sp"] = true;
    parallelism["tp_comm_overlap"] = true;  // TE userbuffers, on in Megatron-Core/NeMo recipes
  }
  if (row_bool(par, "async_tp").value_or(false) && tp > 1) parallelism["tp_comm_overlap"] = true;
  if (sc21) parallelism["zero"] = 0;
  return RowLayout{std::move(parallelism), dp, pp};
}

/// A row's batch and recomputation as a request's `workload`.
std::variant<json, std::string> row_training_workload(const json& wl, double seq,
                                                      const RowLayout& layout,
                                                      const std::string& profile, bool sc21) {
  const double dp = layout.dp, pp = layout.pp;
  // Batch in sequences per optimizer step.
  double global = row_number(wl, "global_batch");
  if (!std::isfinite(global) && std::isfinite(row_number(wl, "global_batch_tokens"))) {
    global = row_number(wl, "global_batch_tokens") / seq;
  }
  if (!std::isfinite(global) && std::isfinite(row_number(wl, "local_batch"))) {
    global = row_number(wl, "local_batch") * dp;
  }
  const double micro = row_number(wl, "micro_batch");
  if (!std::isfinite(global) && std::isfinite(micro)) {
    global = micro * row_number_or(wl, "grad_accum", 1) * dp;
  }
  if (!(global >= 1)) return std::string("global batch not stated");
  json workload{{"seq_len", static_cast<int>(seq)},
                {"global_batch_size", static_cast<int>(global)}};
  if (std::isfinite(micro) && micro >= 1) {
    workload["micro_batch_size"] = static_cast<int>(micro);
  } else if (pp > 1 && contains(lower_case(json_string(wl, "framework")), "torchtitan")) {
    // torchtitan splits a rank's batch into as many micro-batches as pipeline stages unless
    // told otherwise (parallelism.pipeline_parallel_microbatches defaults to the stage count).
    const double per_rank = global / dp;
    const double stage_micro = per_rank / pp;
    if (stage_micro >= 1 && std::fabs(stage_micro - std::round(stage_micro)) < 1e-9) {
      workload["micro_batch_size"] = static_cast<int>(stage_micro);
    }
  }
  if (sc21) {
    workload["recompute"] = "full";
    workload["flash_attention"] = false;  // FlashAttention (2022) postdates the 2021 runs
  } else if (const auto rc = recompute_of(wl, profile)) {
    workload["recompute"] = *rc;
  }
  return workload;
}

/// A row's compute type (and gradient reduction) as a request's `precision`.
std::variant<json, std::string> row_training_precision(const json& row, const json& wl,
                                                       const RowPrecision& precision,
                                                       const std::string& profile) {
  const std::string& compute = precision.compute;
  if (compute == "mxfp4") return std::string("MXFP4 training compute is not modelled");
  json prec{
      {"compute", compute == "fp8" || compute == "mxfp8" || compute == "fp4" ? compute : "bf16"}};
  if (const int tail = bf16_tail_of(row); tail > 0) prec["bf16_last_layers"] = tail;
  if (profile == "pytorch_fsdp") {
    // PyTorch FSDP mixed precision reduces gradients in fp32 unless told otherwise (Composer's
    // DEFAULT, torchtitan's mixed_precision_reduce); Composer's PURE reduces in bf16.
    prec["grad_reduce"] = json_string(wl, "fsdp_mixed_precision_mode") == "PURE" ? "bf16" : "fp32";
  }
  return prec;
}

/// Megatron-Core's split where pp·vpp does not divide the layers: the published layouts count the
/// embedding and the loss as one pipeline layer each (`account_for_embedding_in_pipeline_split`,
/// `account_for_loss_in_pipeline_split`) and the MTP modules as layers of the last stage, so
/// layers + 2 + MTP split evenly into pp·vpp chunks of k and the first and last stages hold one
/// chunk's slot (and the last its MTP modules) fewer: first = k·vpp − 1, last = k·vpp − 1 − MTP.
/// Where the slots do not split evenly either, Megatron-Bridge's ceiling-chunk layout (below).
/// Sets first/last_stage_layers in `parallelism`; a reason when no such split exists.
std::optional<std::string> megatron_stage_split(const json& model, const std::string& profile,
                                                json& parallelism) {
  const int pp = parallelism.value("pp", 1), vpp = parallelism.value("vpp", 1);
  const int layers = model.value("num_layers", 0);
  if (profile != "megatron" || pp == 1 || layers <= 0 || layers % (pp * vpp) == 0) {
    return std::nullopt;
  }
  const int mtp = model.value("mtp_layers", 0);
  const int chunks = pp * vpp;
  const int slots = layers + 2 + mtp;
  if (slots % chunks != 0) {
    // Megatron-Bridge's other published layout (Kimi-K2's `_get_kimi_k2_pipeline_layout` for
    // every pp, vpp it lists): chunks of ⌈layers / (pp·vpp)⌉ decoder layers, the last chunk the
    // remainder. The last pipeline rank holds it with vpp − 1 full chunks.
    const int k = (layers + chunks - 1) / chunks;
    const int rest = layers - k * (chunks - 1);
    if (mtp > 0 || rest < 1) {
      return "pp·vpp (" + std::to_string(chunks) + ") divides neither the " +
             std::to_string(layers) +
             " layers nor them with the embedding, loss and MTP counted (" + std::to_string(slots) +
             "): the stage split is not stated";
    }
    parallelism["first_stage_layers"] = k * vpp;
    parallelism["last_stage_layers"] = k * (vpp - 1) + rest;
    return std::nullopt;
  }
  const int k = slots / chunks;
  if (k * vpp - 1 - mtp < 1) {
    return "pp·vpp (" + std::to_string(chunks) + ") leaves the last stage no layer";
  }
  parallelism["first_stage_layers"] = k * vpp - 1;
  parallelism["last_stage_layers"] = k * vpp - 1 - mtp;
  return std::nullopt;
}

}  // namespace

Outcome predict_training_row(const json& row, Context& ctx, std::string_view source) {
  if (row_has_flag(row, "parallelism_unknown"))
    return Outcome::skipped("parallel layout not stated");
  if (row_has_flag(row, "per_gpu_unit_not_stated")) {
    return Outcome::skipped("per-GPU or whole-run unit not stated");
  }
  const json wl = row.value("workload", json::object());
  // Parameter-efficient fine-tuning freezes the base weights: no weight-gradient GEMMs, gradients
  // or optimizer state for them, which full-parameter pricing would charge (25-33 % slow on
  // Megatron-Bridge's LoRA rows). LoRA is priced as the row's trainer runs it where that is known:
  // Megatron-Bridge's LoRA() defaults, rank 32 on every linear layer (target_modules linear_qkv,
  // linear_proj, linear_fc1, linear_fc2; src/megatron/bridge/peft/lora.py), which its finetuning
  // recipes take (default_peft_config("lora") = LoRA()). Other PEFT methods, or LoRA of another
  // trainer whose rank and targets the row does not state, are not guessed.
  std::optional<json> lora;
  if (const std::string task = lower_case(json_string(wl, "task"));
      contains(task, "lora") || contains(task, "peft")) {
    if (task != "lora" || !contains(lower_case(json_string(wl, "framework")), "megatron-bridge")) {
      return Outcome::skipped(
          "PEFT fine-tuning whose method, rank and targets the row does not state");
    }
    lora = json{{"method", "lora"}, {"rank", 32}, {"targets", "all_linear"}};
  }
  const double seq = row_number(wl, "seq_len");
  if (!(seq >= 1)) return Outcome::skipped("no seq_len");
  const auto basics = row_basics(row, static_cast<int>(seq));
  if (const auto* reason = std::get_if<std::string>(&basics)) return Outcome::skipped(*reason);
  const RowBasics& b = std::get<RowBasics>(basics);
  const bool sc21 = json_string(row, "group") == "megatron-lm-readme-2021";
  const std::string profile = profile_of(wl);
  auto layout = row_layout(row, profile, sc21);
  if (const auto* reason = std::get_if<std::string>(&layout)) return Outcome::skipped(*reason);
  const auto workload = row_training_workload(wl, seq, std::get<RowLayout>(layout), profile, sc21);
  if (const auto* reason = std::get_if<std::string>(&workload)) return Outcome::skipped(*reason);
  const auto prec = row_training_precision(row, wl, b.precision, profile);
  if (const auto* reason = std::get_if<std::string>(&prec)) return Outcome::skipped(*reason);

  json& parallelism = std::get<RowLayout>(layout).parallelism;
  // Expert-parallel all-to-alls under another micro-batch's compute: stated by the row, or set by
  // the Megatron-Bridge performance recipe of its container (validate/megatron_recipes.cpp).
  const bool ep_overlap =
      row_bool(row.value("parallelism", json::object()), "ep_comm_overlap").value_or(false) ||
      row_bool(wl, "moe_a2a_overlap").value_or(false) ||
      megatron_bridge_ep_overlap(nemo_container(json_string(wl, "framework")),
                                 json_string(row, "model"), b.hardware.id, b.precision.compute,
                                 std::get<json>(workload).value("global_batch_size", 0));
  if (ep_overlap && parallelism.value("ep", 1) > 1) parallelism["ep_comm_overlap"] = true;
  if (const auto reason = megatron_stage_split(b.model, profile, parallelism)) {
    return Outcome::skipped(*reason);
  }
  json framework = json::object();
  if (!profile.empty()) framework["profile"] = profile;
  ctx.apply_training_override(framework, b.hardware.id);
  json request{{"task", "training"},
               {"model", b.model},
               {"hardware", b.hardware.spec},
               {"num_gpus", static_cast<int>(row_number_or(row, "num_gpus", 1))},
               {"parallelism", parallelism},
               {"workload", std::get<json>(workload)},
               {"precision", std::get<json>(prec)},
               {"max_tier", ctx.km().use_calibration ? 2 : 0}};
  if (!framework.empty()) request["framework"] = framework;
  if (lora) request["lora"] = *lora;
  ctx.note_request(row, request);
  try {
    const json r = io::run(request);
    if (const json& mem = r.at("memory_per_gpu"); !mem.at("fits").get<bool>()) {
      // Which side overflows: the activations alone past what the model states leave (the run
      // recomputed or offloaded more than the row states, e.g. Megatron-Bridge's FSDP recipes
      // offload 5-40 layers' activations to the CPU), or the states themselves.
      const double states = mem.at("weights_GB").get<double>() +
                            mem.at("gradients_GB").get<double>() +
                            mem.at("optimizer_GB").get<double>();
      const bool states_fit = states < mem.at("capacity_GB").get<double>();
      ctx.collector().warn(source,
                           std::string("training memory_per_gpu.fits=false (predicted anyway): ") +
                               (states_fit ? "activations over what the model states leave"
                                           : "weights, gradients and optimizer state alone"));
    }
    const auto v = training_metric(r, row, sc21);
    if (!v) return Outcome::skipped("metric not modelled: " + json_string(row, "metric"));
    Outcome o = Outcome::value(*v, r.value("tier", 0));
    o.engine = "training:" + (profile.empty() ? std::string("default") : profile);
    // The estimate's band: the step time's for a time, the throughput's for every rate.
    const bool time = contains(json_string(row, "metric"), "step_time");
    const char* figure = time ? "step_time_s" : "tokens_per_s";
    if (const auto it = r.find("interval"); it != r.end() && it->contains(figure)) {
      scale_band(o, it->at(figure), r.at(figure).get<double>());
    }
    return o;
  } catch (const SpecError& e) {
    return Outcome::skipped(e.what());
  }
}

}  // namespace flopcast::cli::validate
