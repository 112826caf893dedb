// SPDX-License-Identifier: MIT
// Request document <-> TrainingSpec, TrainingResult -> response document (task "training").
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common_json.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/training.hpp"
#include "flopcast/training_search.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io::detail {
namespace {

// The FSDP strategy names (PyTorch's ShardingStrategy) are their own vocabulary: no_shard is
// what the core calls Sharding::none.
constexpr std::array<Named<Sharding>, 4> kFsdp{{{"no_shard", Sharding::none},
                                                {"full_shard", Sharding::full_shard},
                                                {"shard_grad_op", Sharding::shard_grad_op},
                                                {"hybrid_shard", Sharding::hybrid_shard}}};
/// The values `lora.method` and `precision.compute` allow, named by their enums' tables.
template <typename E, typename... V>
constexpr std::array<Named<E>, sizeof...(V)> subset(V... values) {
  return {{{to_string(values), values}...}};
}
constexpr auto kMethod = subset<Finetune>(Finetune::lora, Finetune::qlora);
constexpr auto kCompute =
    subset<DType>(DType::bf16, DType::fp16, DType::fp8, DType::mxfp8, DType::fp4);

struct Parsed {
  TrainingSpec spec;
  GpuHourPrice price;  // the request's cost_per_gpu_hour_usd, else the hardware's list price
  json resolved;
};

/// `zero` (0-3) or `fsdp` (a strategy name), not both.
Sharding read_sharding(const ObjectReader& pr) {
  const json* zero = pr.find("zero");
  const json* fsdp = pr.find("fsdp");
  if (zero && fsdp) {
    throw SpecError(pr.child("fsdp"), "give parallelism.zero or parallelism.fsdp, not both (got " +
                                          describe_value(*fsdp) + ")");
  }
  if (fsdp) return pr.choice("fsdp", kFsdp, Sharding::none);
  const int stage = pr.integer("zero", 0);
  if (stage < 0 || stage > 3) fail(pr.child("zero"), "must be between 0 and 3", stage);
  constexpr Sharding kStages[] = {Sharding::none, Sharding::zero1, Sharding::zero2,
                                  Sharding::zero3};
  return kStages[stage];
}

void read_parallelism(const ObjectReader& r, TrainingSpec& s) {
  ObjectReader pr(
      object_or_empty(r, "parallelism"), "parallelism",
      {"tp", "pp", "dp", "cp", "ep", "expert_tp", "sp", "vpp", "zero", "fsdp", "tp_comm_overlap",
       "ep_comm_overlap", "first_stage_layers", "last_stage_layers"});
  s.tp = pr.integer("tp", 1);
  s.pp = pr.integer("pp", 1);
  s.cp = pr.integer("cp", 1);
  s.ep = pr.integer("ep", 1);
  s.expert_tp = pr.integer("expert_tp", 0);
  if (pr.find("expert_tp") && s.expert_tp < 1) {
    fail(pr.child("expert_tp"), "must be 1 or parallelism.tp", s.expert_tp);
  }
  s.vpp = pr.integer("vpp", 1);
  s.pp_first_stage_layers = pr.integer("first_stage_layers", 0);
  s.pp_last_stage_layers = pr.integer("last_stage_layers", 0);
  s.sp = pr.boolean("sp", false);
  s.tp_comm_overlap = pr.boolean("tp_comm_overlap", false);
  s.ep_comm_overlap = pr.boolean("ep_comm_overlap", false);
  s.sharding = read_sharding(pr);
  if (pr.find("dp")) {
    s.dp = pr.integer("dp");
  } else {
    // dp defaults to the GPUs left over; a remainder is reported on num_gpus by the core.
    const long long model_parallel =
        1LL * std::max(1, s.tp) * std::max(1, s.pp) * std::max(1, s.cp);
    s.dp = static_cast<int>(std::max(1LL, s.num_gpus / model_parallel));
  }
}

/// Returns whether the workload states mtp_layers.
bool read_workload(const ObjectReader& r, TrainingSpec& s) {
  ObjectReader wl(r.require("workload"), "workload",
                  {"seq_len", "global_batch_size", "micro_batch_size", "total_tokens", "recompute",
                   "flash_attention", "mtp_layers"});
  s.seq_len = wl.integer("seq_len");
  s.global_batch_size = wl.integer("global_batch_size");
  s.micro_batch_size = 0;
  if (wl.find("micro_batch_size")) {
    s.micro_batch_size = wl.integer("micro_batch_size");
    if (s.micro_batch_size < 1) {
      fail(wl.child("micro_batch_size"), "must be >= 1 (omit it to search)", s.micro_batch_size);
    }
  }
  s.total_tokens = wl.number("total_tokens", 0);
  s.recompute = wl.choice("recompute", kRecomputeNames, Recompute::none);
  s.flash_attention = wl.boolean("flash_attention", true);
  s.mtp_layers = wl.integer("mtp_layers", 0);
  return wl.find("mtp_layers") != nullptr;
}

void read_finetune(const ObjectReader& r, TrainingSpec& s) {
  const json* lora = r.find("lora");
  if (!lora) return;
  ObjectReader lr(*lora, "lora", {"method", "rank", "targets"});
  s.finetune = lr.choice("method", kMethod, Finetune::lora);
  s.lora_rank = lr.integer("rank", s.lora_rank);
  s.lora_targets = lr.choice("targets", kLoraTargetNames, s.lora_targets);
}

/// 80% bands of the headline figures (presets/bands/e2e.json, kind "training" or "training
/// (moe)"); null without. A band whose hold on unseen sources is short or unmeasured warns.
json training_interval(const TrainingSpec& s, const TrainingResult& r,
                       std::vector<std::string>& warnings) {
  const auto band = e2e_band("training", s.hardware, s.model, r.tier == 0);
  if (!band) return nullptr;
  warn_band_coverage("the step time", *band, warnings);
  return json{{"step_time_s", band_json(r.step_time_s, *band, false)},
              {"tokens_per_s", band_json(r.tokens_per_s, *band, true)},
              {"tokens_per_s_per_gpu", band_json(r.tokens_per_s_per_gpu, *band, true)},
              {"mfu", band_json(r.mfu, *band, true)}};
}

void read_framework(const ObjectReader& r, TrainingSpec& s, bool fitted_constants) {
  ObjectReader fr(object_or_empty(r, "framework"), "framework",
                  {"profile", "comm_overlap", "step_overhead_ms", "compute_scale",
                   "attention_scale", "reserve_GB"});
  // Default: the measured constants ("fitted"); "generic" is physics only, and so is the
  // default under max_tier 0 (no fitted constant at all).
  s.framework = fr.string("profile", fitted_constants ? "fitted" : "generic");
  const TrainingFramework* f = framework_profile(s.framework);
  if (!f) {
    const std::vector<std::string> ids = framework_profile_ids();
    std::string rule = "unknown framework profile; one of";
    for (const std::string& id : ids) rule += " " + id;
    if (auto guess = nearest(s.framework, ids)) {
      rule += " (did you mean \"" + *guess + "\"?)";
    }
    fail(fr.child("profile"), rule, "\"" + s.framework + "\"");
  }
  if (!fitted_constants) {
    // max_tier 0 is physics alone, whatever profile was named.
    f = framework_profile("generic");
    s.framework = "generic";
  }
  s.comm_overlap = f->comm_overlap;
  s.step_overhead_s = f->step_overhead_s;
  const TrainingFramework::Scales* scales = f->scales_for(s.hardware.architecture);
  s.framework_fitted = f->tier == 1;
  s.compute_scale = scales ? scales->compute : f->unmeasured_scale;
  s.attention_scale = scales ? scales->attention : f->unmeasured_attention;
  if (!scales && f->tier == 1) {
    std::string measured;
    for (const TrainingFramework::Scales& sc : f->scales) {
      measured += (measured.empty() ? "" : ", ") + sc.family;
    }
    s.framework_warning =
        "too few training measurements on " +
        (s.hardware.architecture.empty() ? std::string("this hardware (no architecture given)")
                                         : s.hardware.architecture) +
        ": kernel times scaled by " + format_number(f->unmeasured_scale) +
        ", the mean of the architectures measured (" + measured + ")";
  }
  s.comm_overlap = fr.number("comm_overlap", s.comm_overlap);
  s.step_overhead_s = fr.number("step_overhead_ms", s.step_overhead_s / kMilli) * kMilli;
  s.compute_scale = fr.number("compute_scale", s.compute_scale);
  s.attention_scale = fr.number("attention_scale", s.attention_scale);
  s.framework_reserve_bytes = fr.number("reserve_GB", s.framework_reserve_bytes / kGB) * kGB;
}

/// Scale-out network: the hardware's unless overridden, with the keys of task "collective".
void read_network(const ObjectReader& r, TrainingSpec& s) {
  ObjectReader nr(object_or_empty(r, "network"), "network",
                  {"nics_per_node", "nic_bandwidth_Gbps", "latency_us"});
  HardwareSpec& hw = s.hardware;
  // Each GPU keeps its own NIC share: fewer GPUs per node, fewer NICs (unless `network` says).
  hw = with_gpus_per_node(hw, s.gpus_per_node);
  read_network_fields(nr, hw);
  s.cluster = cluster_of(hw);
  s.cluster.gpus_per_node = s.gpus_per_node;
}

Parsed parse_request(const json& request) {
  ObjectReader r(request, "",
                 {"schema_version", "task", "model", "hardware", "num_gpus", "gpus_per_node",
                  "parallelism", "workload", "precision", "optimizer", "lora", "moe", "framework",
                  "network", "cost_per_gpu_hour_usd", "max_tier"});
  Parsed p;
  TrainingSpec& s = p.spec;
  read_target(r, s.model, s.hardware, s.kernel);
  // Training prices GEMMs and elementwise ops at Tier 0 and applies the trainer constants fitted
  // on end-to-end training runs on top (max_tier 2, the default); max_tier 0 is physics alone.
  // Of the Tier-2 kernel fits (isolated inference-shaped benchmarks) only the attention ones are
  // used: left one source out, all of them made training worse (pooled median APE 17.0 % against
  // 14.2 %), the attention ones alone made every source better (10.9 → 10.0 %): FlashAttention's
  // share of the peak grows with the sequence, which one Tier-0 constant cannot follow.
  const bool fitted_constants = s.kernel.use_calibration;
  s.kernel.calibrated_attention_only = true;
  // What the kernels themselves measured still bounds them: a GPU whose 16-bit GEMMs never reach
  // the Tier-0 share of the peak is priced at the share they reach.
  if (fitted_constants) {
    s.kernel.gemm_efficiency = measured_gemm_ceiling(s.hardware, s.kernel.gemm_efficiency);
  }
  s.num_gpus = r.integer("num_gpus");
  if (s.num_gpus < 1) fail("num_gpus", "must be >= 1", s.num_gpus);
  s.gpus_per_node = r.integer("gpus_per_node", s.hardware.gpus_per_node);
  if (s.gpus_per_node < 1) fail("gpus_per_node", "must be >= 1", s.gpus_per_node);
  read_parallelism(r, s);
  const bool mtp_given = read_workload(r, s);

  ObjectReader pc(object_or_empty(r, "precision"), "precision",
                  {"compute", "grad_reduce", "bf16_last_layers"});
  const DType half = s.hardware.peak(DType::bf16) ? DType::bf16 : DType::fp16;
  s.compute = pc.choice("compute", kCompute, half);
  s.bf16_last_layers = pc.integer("bf16_last_layers", 0);
  s.grad_reduce_bytes = pc.choice<double>("grad_reduce", {{"bf16", 2.0}, {"fp32", 4.0}}, 2.0);
  s.optimizer = r.choice("optimizer", kOptimizerNames, Optimizer::adamw);
  read_finetune(r, s);
  // Pre-training trains the model's MTP modules (DeepSeek-V3); adapters leave them out.
  if (!mtp_given) s.mtp_layers = s.finetune == Finetune::full ? s.model.mtp_layers : 0;
  ObjectReader mr(object_or_empty(r, "moe"), "moe", {"capacity_factor"});
  s.moe_capacity_factor = mr.number("capacity_factor", s.moe_capacity_factor);
  read_framework(r, s, fitted_constants);
  read_network(r, s);
  p.price = read_gpu_hour_price(r, s.hardware);
  s.cost_per_gpu_hour_usd = p.price.usd;

  json parallelism{
      {"tp", s.tp}, {"pp", s.pp}, {"dp", s.dp},   {"cp", s.cp},
      {"ep", s.ep}, {"sp", s.sp}, {"vpp", s.vpp}, {"tp_comm_overlap", s.tp_comm_overlap}};
  if (s.ep_comm_overlap) parallelism["ep_comm_overlap"] = true;
  if (s.experts_tp() != s.tp) parallelism["expert_tp"] = s.experts_tp();
  if (s.pp_first_stage_layers > 0) parallelism["first_stage_layers"] = s.pp_first_stage_layers;
  if (s.pp_last_stage_layers > 0) parallelism["last_stage_layers"] = s.pp_last_stage_layers;
  const bool fsdp = request.contains("parallelism") && request.at("parallelism").is_object() &&
                    request.at("parallelism").contains("fsdp");
  if (fsdp) {
    parallelism["fsdp"] = s.sharding == Sharding::none ? "no_shard" : to_string(s.sharding);
  } else {
    parallelism["zero"] = static_cast<int>(s.sharding);  // none, zero1, zero2, zero3 = 0..3
  }
  json workload{{"seq_len", s.seq_len},
                {"global_batch_size", s.global_batch_size},
                {"recompute", to_string(s.recompute)},
                {"mtp_layers", s.mtp_layers},
                {"flash_attention", s.flash_attention}};
  if (s.micro_batch_size > 0) workload["micro_batch_size"] = s.micro_batch_size;
  if (s.total_tokens > 0) workload["total_tokens"] = s.total_tokens;
  p.resolved =
      json{{"schema_version", kSchemaVersion},
           {"task", "training"},
           {"model", request.at("model")},
           {"hardware", request.at("hardware")},
           {"num_gpus", s.num_gpus},
           {"gpus_per_node", s.gpus_per_node},
           {"max_tier", fitted_constants ? 2 : 0},
           {"parallelism", parallelism},
           {"workload", workload},
           {"precision",
            {{"compute", to_string(s.compute)},
             {"bf16_last_layers", s.bf16_last_layers},
             {"grad_reduce", s.grad_reduce_bytes == 4 ? "fp32" : "bf16"}}},
           {"optimizer", to_string(s.optimizer)},
           {"moe", {{"capacity_factor", s.moe_capacity_factor}}},
           {"framework",
            {{"profile", s.framework},
             {"comm_overlap", s.comm_overlap},
             {"step_overhead_ms", round6(s.step_overhead_s / kMilli)},
             {"compute_scale", s.compute_scale},
             {"attention_scale", s.attention_scale},
             {"reserve_GB", round6(s.framework_reserve_bytes / kGB)}}},
           {"network",
            {{"nics_per_node", s.hardware.scaleout_nics_per_node},
             {"nic_bandwidth_Gbps", round6(s.hardware.scaleout_nic_bandwidth.value * 8 / kGB)},
             {"latency_us", round6(s.hardware.scaleout_latency_s / kMicro)}}}};
  // A list price is the hardware's: echoed only when the request gave its own.
  if (p.price.from_request) p.resolved["cost_per_gpu_hour_usd"] = p.price.usd;
  if (s.finetune != Finetune::full) {
    p.resolved["lora"] = {{"method", to_string(s.finetune)},
                          {"rank", s.lora_rank},
                          {"targets", to_string(s.lora_targets)}};
  }
  return p;
}

json gb(double bytes) { return round6(bytes / kGB); }

json memory_json(const TrainingMemory& m) {
  return json{{"total_GB", gb(m.total_bytes)},
              {"capacity_GB", gb(m.capacity_bytes)},
              {"fits", m.fits},
              {"weights_GB", gb(m.weights_bytes)},
              {"gradients_GB", gb(m.gradients_bytes)},
              {"optimizer_GB", gb(m.optimizer_bytes)},
              {"activations_GB", gb(m.activations_bytes)},
              {"activations_per_layer_GB", gb(m.activations_per_layer_bytes)},
              {"temporary_GB", gb(m.temporary_bytes)},
              {"reserve_GB", gb(m.reserve_bytes)}};
}

json optional_number(bool present, double v) { return present ? json(round6(v)) : json(nullptr); }

}  // namespace

json run_training_search(const json& request) {
  ObjectReader r(request, "",
                 {"schema_version", "task", "search", "model", "hardware", "num_gpus",
                  "gpus_per_node", "workload", "precision", "optimizer", "lora", "moe", "framework",
                  "network", "cost_per_gpu_hour_usd", "max_tier"});
  ObjectReader sr(r.require("search"), "search",
                  {"target", "top", "tp", "pp", "vpp", "cp", "ep", "zero", "recompute", "compute",
                   "micro_batch_size"});
  const std::string target = sr.string("target");
  if (target != "training") {
    fail(sr.child("target"), "must be \"training\", \"serving\" or \"hardware\"",
         describe_value(sr.require("target")));
  }
  const int top = sr.integer("top", 10);
  TrainingSearchSpace space;
  space.tp = read_positive_list(sr, "tp");
  space.pp = read_positive_list(sr, "pp");
  space.vpp = read_positive_list(sr, "vpp");
  space.cp = read_positive_list(sr, "cp");
  space.ep = read_positive_list(sr, "ep");
  space.micro_batch_size = read_positive_list(sr, "micro_batch_size");
  space.sharding = read_list<Sharding>(sr, "zero", [](const json& v, const std::string& path) {
    const int stage = as_int(v, path);
    if (stage < 0 || stage > 3) fail(path, "must be between 0 and 3", stage);
    constexpr Sharding kStages[] = {Sharding::none, Sharding::zero1, Sharding::zero2,
                                    Sharding::zero3};
    return kStages[stage];
  });
  space.recompute = read_list<Recompute>(
      sr, "recompute",
      [](const json& v, const std::string& path) { return choice_of(v, path, kRecomputeNames); });
  space.compute = read_list<DType>(sr, "compute", [](const json& v, const std::string& path) {
    return choice_of(v, path, kCompute);
  });
  if (!space.compute.empty()) {
    if (const json* pc = r.find("precision"); pc && pc->is_object() && pc->contains("compute")) {
      fail("precision.compute",
           "is searched by task \"search\" (pin it with search.compute, or run task "
           "\"training\")",
           describe_value(pc->at("compute")));
    }
  }
  // The searched keys come from the search; the workload must leave them to it.
  const json& wl = r.require("workload");
  for (const char* key : {"micro_batch_size", "recompute"}) {
    if (wl.is_object() && wl.contains(key)) {
      fail(std::string("workload.") + key,
           std::string("is searched by task \"search\" (pin it with search.") + key +
               ", or run task \"training\")",
           describe_value(wl.at(key)));
    }
  }
  json base = request;
  base.erase("search");
  base["task"] = "training";
  const Parsed p = parse_request(base);
  const TrainingSearchResult found = search_training(p.spec, space, top);

  json candidates = json::array();
  for (const TrainingCandidate& c : found.best) {
    const TrainingSpec& s = c.spec;
    const TrainingResult& res = c.result;
    json parallelism{
        {"tp", s.tp}, {"pp", s.pp}, {"vpp", s.vpp}, {"dp", s.dp},
        {"cp", s.cp}, {"ep", s.ep}, {"sp", s.sp},   {"zero", static_cast<int>(s.sharding)}};
    json one = base;
    one["parallelism"] = parallelism;
    one["workload"]["recompute"] = to_string(s.recompute);
    one["workload"]["micro_batch_size"] = s.micro_batch_size;
    if (!space.compute.empty()) one["precision"]["compute"] = to_string(s.compute);
    candidates.push_back({{"parallelism", parallelism},
                          {"recompute", to_string(s.recompute)},
                          {"compute", to_string(s.compute)},
                          {"micro_batch_size", s.micro_batch_size},
                          {"num_micro_batches", res.num_micro_batches},
                          {"step_time_s", round6(res.step_time_s)},
                          {"tokens_per_s_per_gpu", round6(res.tokens_per_s_per_gpu)},
                          {"mfu", round6(res.mfu)},
                          {"bubble_fraction", round6(res.bubble_fraction)},
                          {"memory_GB", gb(res.memory.total_bytes)},
                          {"capacity_GB", gb(res.memory.capacity_bytes)},
                          {"tier", res.tier},
                          {"request", one}});
  }
  const json rejected = rejected_json(found.rejected);
  json resolved = p.resolved;
  resolved["task"] = "search";
  resolved.erase("parallelism");
  resolved["workload"].erase("recompute");
  resolved["workload"].erase("micro_batch_size");
  if (!space.compute.empty()) resolved["precision"].erase("compute");
  resolved["search"] = request.at("search");
  return json{{"schema_version", kSchemaVersion},
              {"task", "search"},
              {"target", "training"},
              {"evaluated", found.evaluated},
              {"fitting", found.fitting},
              {"micro_batches_priced", found.micro_batches_priced},
              {"candidates", candidates},
              {"rejected", rejected},
              {"warnings", found.best.empty() ? json::array({"no layout fits in memory"})
                                              : json(found.best.front().result.warnings)},
              {"request", resolved}};
}

json run_training(const json& request) {
  Parsed p = parse_request(request);
  const TrainingSpec& s = p.spec;
  const TrainingResult r = estimate_training(s);
  std::vector<std::string> warnings = r.warnings;
  json interval = training_interval(s, r, warnings);

  json model = identity(request.at("model"), s.model.name);
  model["params_B"] = round6(r.params.total / 1e9);
  model["trainable_params_B"] = round6(r.trainable_params / 1e9);
  json breakdown = json::array();
  for (const auto& b : r.breakdown) breakdown.push_back(breakdown_row(b));
  const bool total = s.total_tokens > 0;
  // The power model over the step: per trained token, per step, and over the whole run.
  const std::optional<Energy> e =
      estimate_energy(s.hardware, s.num_gpus, r.tokens_per_s, training_activity(r));
  json energy = energy_json(e, false);
  if (e) {
    energy["joules_per_step"] = round6(e->power_W * r.step_time_s);
    energy["total_MWh"] = optional_number(total, e->power_W * r.total_time_s / 3.6e9);
  }
  return json{
      {"schema_version", kSchemaVersion},
      {"task", "training"},
      {"tier", r.tier},
      {"model", std::move(model)},
      {"hardware", identity(request.at("hardware"), s.hardware.name)},
      {"num_gpus", s.num_gpus},
      {"step_time_s", round6(r.step_time_s)},
      // A count (global batch × sequence): exact, not rounded to 6 significant digits.
      {"tokens_per_step", static_cast<long long>(std::llround(r.tokens_per_step))},
      {"tokens_per_s", round6(r.tokens_per_s)},
      {"tokens_per_s_per_gpu", round6(r.tokens_per_s_per_gpu)},
      {"mfu", round6(r.mfu)},
      {"hfu", round6(r.hfu)},
      {"model_flops_per_token", round6(r.model_flops_per_token)},
      {"hardware_flops_per_token", round6(r.hardware_flops_per_token)},
      {"model_tflops_per_gpu", round6(r.model_flops_per_token * r.tokens_per_s_per_gpu / kTera)},
      {"peak_tflops_per_gpu", round6(r.peak_flops_per_gpu / kTera)},
      {"total_time_s", optional_number(total, r.total_time_s)},
      {"gpu_hours", optional_number(total, r.gpu_hours)},
      {"cost_usd", optional_number(total && s.cost_per_gpu_hour_usd > 0, r.cost_usd)},
      {"cost_basis", p.price.usd > 0 ? cost_basis_json(p.price) : json(nullptr)},
      {"energy", std::move(energy)},
      {"micro_batch_size", r.micro_batch_size},
      {"micro_batch_searched", r.micro_batch_searched},
      {"max_micro_batch_size", r.max_micro_batch_size},
      {"num_micro_batches", r.num_micro_batches},
      {"bubble_fraction", round6(r.bubble_fraction)},
      {"interval", std::move(interval)},
      {"memory_per_gpu", memory_json(r.memory)},
      {"breakdown", std::move(breakdown)},
      {"assumptions", assumptions_json(r.assumptions)},
      {"warnings", std::move(warnings)},
      {"request", std::move(p.resolved)}};
}

}  // namespace flopcast::io::detail
