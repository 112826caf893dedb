// SPDX-License-Identifier: MIT
// `flopcast train`: step time, throughput, MFU, total time and memory per GPU of a training run.
// Builds a `task: "training"` request from the flags (or takes --request) and runs it through
// io::run like every front end; defaults are left to the core.
#include <cstdio>
#include <iostream>
#include <limits>

#include "commands.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "human.hpp"

namespace flopcast::cli {
namespace {

json build_train_request(const TrainOptions& o) {
  if (!o.request_file.empty()) return read_task_file(o.request_file, "training", "train");
  json r{{"task", "training"}};
  put_model_and_hardware(
      r, {o.model, o.model_file, o.hf_config, o.hardware, o.hardware_file, o.what_if}, false,
      false);
  if (!o.num_gpus) throw SpecError("num_gpus", "give --num-gpus");
  if (!o.seq_len || !o.global_batch_size) {
    throw SpecError("workload", "give --seq-len and --global-batch-size");
  }
  r["num_gpus"] = *o.num_gpus;
  if (o.gpus_per_node) r["gpus_per_node"] = *o.gpus_per_node;
  json par = json::object();
  for (const auto& [key, value] : {std::pair{"tp", o.tp},
                                   {"pp", o.pp},
                                   {"dp", o.dp},
                                   {"cp", o.cp},
                                   {"ep", o.ep},
                                   {"vpp", o.vpp},
                                   {"zero", o.zero},
                                   {"first_stage_layers", o.first_stage_layers},
                                   {"last_stage_layers", o.last_stage_layers}}) {
    if (value) par[key] = *value;
  }
  if (o.sp) par["sp"] = true;
  if (o.tp_comm_overlap) par["tp_comm_overlap"] = true;
  if (o.ep_comm_overlap) par["ep_comm_overlap"] = true;
  if (!o.fsdp.empty()) par["fsdp"] = o.fsdp;
  if (!par.empty()) r["parallelism"] = par;
  json wl{{"seq_len", *o.seq_len}, {"global_batch_size", *o.global_batch_size}};
  if (o.micro_batch_size) wl["micro_batch_size"] = *o.micro_batch_size;
  if (o.total_tokens) wl["total_tokens"] = *o.total_tokens;
  if (!o.recompute.empty()) wl["recompute"] = o.recompute;
  if (o.mtp_layers) wl["mtp_layers"] = *o.mtp_layers;
  if (o.flash_attention) wl["flash_attention"] = *o.flash_attention == "on";
  r["workload"] = wl;
  if (!o.precision.empty()) r["precision"]["compute"] = o.precision;
  if (!o.grad_reduce.empty()) r["precision"]["grad_reduce"] = o.grad_reduce;
  if (o.bf16_last_layers) r["precision"]["bf16_last_layers"] = *o.bf16_last_layers;
  if (!o.optimizer.empty()) r["optimizer"] = o.optimizer;
  if (!o.lora.empty()) {
    json lora{{"method", o.lora}};
    if (o.lora_rank) lora["rank"] = *o.lora_rank;
    if (!o.lora_targets.empty()) lora["targets"] = o.lora_targets;
    r["lora"] = lora;
  } else if (o.lora_rank || !o.lora_targets.empty()) {
    throw SpecError("lora", "--lora-rank and --lora-targets need --lora");
  }
  if (o.moe_capacity_factor) r["moe"]["capacity_factor"] = *o.moe_capacity_factor;
  if (!o.framework.empty()) r["framework"]["profile"] = o.framework;
  for (const auto& [key, value] : {std::pair{"comm_overlap", o.comm_overlap},
                                   {"step_overhead_ms", o.step_overhead_ms},
                                   {"compute_scale", o.compute_scale},
                                   {"attention_scale", o.attention_scale},
                                   {"reserve_GB", o.reserve_GB}}) {
    if (value) r["framework"][key] = *value;
  }
  put_network(r, o.network);
  if (o.cost_per_gpu_hour_usd) r["cost_per_gpu_hour_usd"] = *o.cost_per_gpu_hour_usd;
  if (o.max_tier) r["max_tier"] = *o.max_tier;
  return r;
}

/// --search: the same request as task "search"; the layout flags given pin their dimension
/// (search.tp = [--tp], …), the others are searched.
json build_search_request(const TrainOptions& o) {
  json r = build_train_request(o);
  if (!o.request_file.empty() && r.value("task", "") == "search") return r;
  json search{{"target", "training"}};
  if (o.search_top) search["top"] = *o.search_top;
  const json par = r.value("parallelism", json::object());
  for (const char* key : {"tp", "pp", "vpp", "cp", "ep", "zero"}) {
    if (par.contains(key)) search[key] = json::array({par.at(key)});
  }
  // An FSDP strategy pins the ZeRO stage it equals (full_shard = 3, shard_grad_op = 2); with
  // --zero too it is the training request's own error (one of them, not both).
  bool fsdp_pinned = false;
  if (par.contains("fsdp") && par.at("fsdp").is_string() && !par.contains("zero")) {
    const std::string f = par.at("fsdp").get<std::string>();
    for (const auto& [name, stage] :
         {std::pair{"full_shard", 3}, {"shard_grad_op", 2}, {"no_shard", 0}}) {
      if (f == name) search["zero"] = json::array({stage});
      fsdp_pinned = fsdp_pinned || f == name;
    }
  }
  if (par.contains("fsdp") && par.contains("zero")) {
    throw SpecError(
        "parallelism.fsdp",
        "give parallelism.zero or parallelism.fsdp, not both (got " + par.at("fsdp").dump() + ")");
  }
  for (const char* key : {"dp", "fsdp", "sp", "first_stage_layers", "last_stage_layers"}) {
    if (par.contains(key) && !(std::string(key) == "fsdp" && fsdp_pinned)) {
      throw SpecError(std::string("parallelism.") + key,
                      "not searched: --search sets dp from the GPUs, even pipeline stages, no "
                      "hybrid sharding, and sequence parallelism with every TP > 1 (got " +
                          par.at(key).dump() + ")");
    }
  }
  r.erase("parallelism");
  if (r["workload"].contains("recompute")) {
    search["recompute"] = json::array({r["workload"]["recompute"]});
    r["workload"].erase("recompute");
  }
  if (r["workload"].contains("micro_batch_size")) {
    search["micro_batch_size"] = json::array({r["workload"]["micro_batch_size"]});
    r["workload"].erase("micro_batch_size");
  }
  if (!o.search_compute.empty()) {
    if (!o.precision.empty()) {
      throw SpecError("--search-compute",
                      "give --precision (one type) or --search-compute (types to try), not both");
    }
    search["compute"] = o.search_compute;
  }
  r["task"] = "search";
  r["search"] = search;
  return r;
}

std::string num(const json& v) { return v.is_null() ? "-" : v.dump(); }

void print_search_table(const json& r) {
  const json& q = r.at("request");
  std::printf(
      "fastest layouts of %s x %s: %s considered, %s fit, %s micro-batch sizes priced\n",
      num(q.at("num_gpus")).c_str(),
      q.at("hardware").is_string() ? q.at("hardware").get<std::string>().c_str() : "hardware",
      num(r.at("evaluated")).c_str(), num(r.at("fitting")).c_str(),
      num(r.at("micro_batches_priced")).c_str());
  // Every layout key a row needs to be run again (sp included: without it the top 405B row
  // re-ran 0.7 % slower and 8.6 GB larger).
  std::printf("  %4s %3s %3s %3s %4s %3s %3s %3s %4s %-9s %-7s %3s %10s %10s %7s %7s\n", "rank",
              "tp", "pp", "vpp", "dp", "cp", "ep", "sp", "zero", "recompute", "compute", "mb",
              "step", "tok/s/GPU", "MFU", "mem_GB");
  int rank = 0;
  for (const json& c : r.at("candidates")) {
    const json& p = c.at("parallelism");
    std::printf("  %4d %3s %3s %3s %4s %3s %3s %3s %4s %-9s %-7s %3s %10s %10s %7s %7s\n", ++rank,
                num(p.at("tp")).c_str(), num(p.at("pp")).c_str(), num(p.at("vpp")).c_str(),
                num(p.at("dp")).c_str(), num(p.at("cp")).c_str(), num(p.at("ep")).c_str(),
                p.value("sp", false) ? "on" : "off", num(p.at("zero")).c_str(),
                c.at("recompute").get<std::string>().c_str(),
                c.at("compute").get<std::string>().c_str(), num(c.at("micro_batch_size")).c_str(),
                human::duration(c.at("step_time_s").get<double>()).c_str(),
                human::si(c.at("tokens_per_s_per_gpu").get<double>()).c_str(),
                human::percent(c.at("mfu").get<double>()).c_str(),
                human::sig(c.at("memory_GB").get<double>()).c_str());
  }
  for (const json& x : r.at("rejected")) {
    std::printf("  rejected %s: %s\n", num(x.at("count")).c_str(),
                x.at("reason").get<std::string>().c_str());
  }
  for (const json& w : r.at("warnings"))
    std::printf("  warning: %s\n", w.get<std::string>().c_str());
}

void print_table(const json& r) {
  using namespace human;
  // null (not computed) prints as "-": human:: formats a non-finite number that way.
  const auto d = [](const json& v) {
    return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
  };
  const json& m = r.at("memory_per_gpu");
  std::printf("%s on %s x %s (tier %s)\n", r.at("model").at("name").get<std::string>().c_str(),
              num(r.at("num_gpus")).c_str(), r.at("hardware").at("name").get<std::string>().c_str(),
              num(r.at("tier")).c_str());
  if (!m.at("fits").get<bool>()) {
    std::printf("  DOES NOT FIT: %s of %s GB per GPU (the numbers below assume it did)\n",
                sig(d(m.at("total_GB"))).c_str(), sig(d(m.at("capacity_GB"))).c_str());
  }
  std::printf("  step time        %s (micro-batch %s x %s)",
              duration(d(r.at("step_time_s"))).c_str(), num(r.at("micro_batch_size")).c_str(),
              num(r.at("num_micro_batches")).c_str());
  if (const json& band = r.at("interval").at("step_time_s"); band.is_object()) {
    std::printf(", 80%% band %s-%s", duration(d(band.at("low"))).c_str(),
                duration(d(band.at("high"))).c_str());
  }
  std::printf("\n  tokens/s         %s (%s per GPU)\n", si(d(r.at("tokens_per_s"))).c_str(),
              si(d(r.at("tokens_per_s_per_gpu"))).c_str());
  // MFU counts attention over the whole s x s square (PaLM, Megatron); HFU is the work executed
  // (causal half, recomputation included), so without recomputation it can be the lower one.
  std::printf("  MFU / HFU        %s / %s (HFU: FLOPs executed, causal attention)\n",
              percent(d(r.at("mfu"))).c_str(), percent(d(r.at("hfu"))).c_str());
  if (!r.at("total_time_s").is_null()) {
    std::printf("  total time       %s (%s GPU-hours", duration(d(r.at("total_time_s"))).c_str(),
                si(d(r.at("gpu_hours"))).c_str());
    if (!r.at("cost_usd").is_null()) std::printf(", %s", money(d(r.at("cost_usd"))).c_str());
    std::printf(")\n");
  }
  if (r.at("cost_basis").is_object()) {
    std::printf("  price            %s per GPU-hour: %s\n",
                money(d(r.at("cost_basis").at("usd_per_gpu_hour"))).c_str(),
                r.at("cost_basis").at("basis").get<std::string>().c_str());
  }
  if (r.at("energy").is_object()) {
    const json& e = r.at("energy");
    std::printf("  energy           %s per step (GPUs at %s of %s board power)",
                si_unit(d(e.at("joules_per_step")), "J").c_str(),
                si_unit(d(e.at("power_W")), "W").c_str(),
                si_unit(d(e.at("board_power_W")), "W").c_str());
    if (!e.at("total_MWh").is_null())
      std::printf(", %s in all", si_unit(d(e.at("total_MWh")) * 1e6, "Wh").c_str());
    std::printf("\n");
  }
  std::printf("  memory per GPU   %s of %s GB (%s)\n", sig(d(m.at("total_GB"))).c_str(),
              sig(d(m.at("capacity_GB"))).c_str(),
              m.at("fits").get<bool>() ? "fits" : "does not fit");
  for (const char* k : {"weights_GB", "gradients_GB", "optimizer_GB", "activations_GB",
                        "temporary_GB", "reserve_GB"}) {
    std::printf("    %-16s %s\n", k, sig(d(m.at(k))).c_str());
  }
  std::printf("  %-14s %-20s %12s %8s  %s\n", "phase", "op", "time", "share", "bound");
  for (const json& b : r.at("breakdown")) {
    std::printf("  %-14s %-20s %12s %8s  %s\n", b.at("phase").get<std::string>().c_str(),
                b.at("op").get<std::string>().c_str(), duration(d(b.at("time_ms")) / 1e3).c_str(),
                percent(d(b.at("share"))).c_str(), b.at("bound").get<std::string>().c_str());
  }
  for (const json& w : r.at("warnings"))
    std::printf("  warning: %s\n", w.get<std::string>().c_str());
}

void print_csv(const json& r) {
  const char* const keys[] = {"step_time_s",  "tokens_per_s", "tokens_per_s_per_gpu", "mfu", "hfu",
                              "total_time_s", "gpu_hours",    "micro_batch_size"};
  std::string header, row;
  for (const char* k : keys) {
    header += (header.empty() ? "" : ",") + std::string(k);
    row += (row.empty() ? "" : ",") + csv_field(r.at(k));
  }
  std::cout << header << ",memory_total_GB,fits\n"
            << row << "," << csv_field(r.at("memory_per_gpu").at("total_GB")) << ","
            << csv_field(r.at("memory_per_gpu").at("fits")) << "\n";
  std::cout << "phase,op,time_ms,share,bound\n";
  for (const json& b : r.at("breakdown")) {
    std::cout << csv_field(b.at("phase")) << "," << csv_field(b.at("op")) << ","
              << csv_field(b.at("time_ms")) << "," << csv_field(b.at("share")) << ","
              << csv_field(b.at("bound")) << "\n";
  }
}

}  // namespace

void setup_train(CLI::App& app, TrainOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "train", "Training step time, tokens/s, MFU, total time and memory per GPU");
  sub->add_option("--request", o.request_file, "A task \"training\" request (file or -)");
  sub->add_option("--model", o.model, "Model preset id");
  sub->add_option("--model-file", o.model_file, "Model object (JSON file)");
  sub->add_option("--hf-config", o.hf_config, "Hugging Face config.json of the model");
  sub->add_option("--hardware", o.hardware, "Hardware preset id");
  sub->add_option("--hardware-file", o.hardware_file, "Hardware object (JSON file)");
  add_what_if_option(*sub, o.what_if);
  sub->add_option("--num-gpus", o.num_gpus, "GPUs in the run");
  sub->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node (default: the hardware's)");
  sub->add_option("--tp", o.tp, "Tensor parallelism");
  sub->add_option("--pp", o.pp, "Pipeline stages");
  sub->add_option("--dp", o.dp, "Data parallelism (default: the GPUs left)");
  sub->add_option("--cp", o.cp, "Context parallelism");
  sub->add_option("--ep", o.ep, "Expert parallelism (MoE)");
  sub->add_option("--vpp", o.vpp, "Virtual pipeline stages (interleaved 1F1B)");
  sub->add_option("--first-stage-layers", o.first_stage_layers,
                  "Layers of the first pipeline stage (uneven split; default: even)");
  sub->add_option("--last-stage-layers", o.last_stage_layers,
                  "Layers of the last pipeline stage (uneven split; default: even)");
  sub->add_flag("--sp", o.sp, "Sequence parallelism with TP");
  sub->add_option("--zero", o.zero, "ZeRO stage 0-3");
  sub->add_option("--fsdp", o.fsdp, "FSDP: full_shard, shard_grad_op, hybrid_shard, no_shard");
  sub->add_option("--seq-len", o.seq_len, "Tokens per sequence");
  sub->add_option("--global-batch-size", o.global_batch_size, "Sequences per optimizer step");
  sub->add_option("--micro-batch-size", o.micro_batch_size,
                  "Sequences per micro-batch (default: searched; with --search it pins every "
                  "layout's)");
  sub->add_option("--total-tokens", o.total_tokens, "Token budget for total time and GPU-hours");
  sub->add_option("--recompute", o.recompute,
                  "none (default), selective (attention core), op (PyTorch op-level SAC), full");
  sub->add_option(
      "--precision", o.precision,
      "bf16 (default), fp16, fp8, mxfp8 (Blackwell, CDNA4), fp4 (NVFP4 on GPUs with FP4 "
      "tensor cores)");
  sub->add_option("--bf16-last-layers", o.bf16_last_layers,
                  "With fp8 or fp4: the last layers whose linears stay in 16 bits");
  sub->add_option("--mtp-layers", o.mtp_layers,
                  "Multi-token-prediction modules trained (default: the model's)");
  sub->add_option("--optimizer", o.optimizer, "adamw (default), sgd, adam_8bit");
  sub->add_option("--lora", o.lora, "lora or qlora (frozen base, adapters only)");
  sub->add_option("--lora-rank", o.lora_rank, "LoRA rank (default 16)");
  sub->add_option("--lora-targets", o.lora_targets,
                  "LoRA targets: qv (default), attention, all_linear");
  sub->add_option("--framework", o.framework,
                  "fitted (default), generic, pytorch_fsdp, megatron (presets/frameworks)");
  sub->add_option("--comm-overlap", o.comm_overlap,
                  "Share of concurrent compute a DP/FSDP/CP collective hides behind (0-1)");
  sub->add_option("--step-overhead-ms", o.step_overhead_ms, "Framework time per optimizer step");
  sub->add_option("--compute-scale", o.compute_scale, "Kernel-time multiplier (1-2.5)");
  sub->add_option("--attention-scale", o.attention_scale, "Attention-time multiplier (1-3)");
  sub->add_option("--reserve-GB", o.reserve_GB, "Memory per GPU outside the model (default 2)");
  sub->add_flag("--tp-comm-overlap", o.tp_comm_overlap,
                "TP collectives overlapped with GEMMs (Transformer Engine userbuffers)");
  sub->add_flag("--ep-comm-overlap", o.ep_comm_overlap,
                "EP all-to-alls hidden behind another micro-batch's compute (DualPipe, "
                "Megatron-Core --overlap-moe-expert-parallel-comm)");
  sub->add_option("--flash-attention", o.flash_attention, "on (default) or off")
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--grad-reduce", o.grad_reduce, "Gradient reduction type: bf16 (default), fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}));
  sub->add_option("--moe-capacity-factor", o.moe_capacity_factor,
                  "Tokens an expert rank gets relative to balanced routing (1-100)");
  add_network_options(*sub, o.network);
  sub->add_option("--cost-per-gpu-hour-usd", o.cost_per_gpu_hour_usd,
                  "$ per GPU-hour (default: the GPU's dated on-demand list price, where known)");
  sub->add_option("--max-tier", o.max_tier, "2: Tier-2 kernel fits (default); 0: Tier 0");
  sub->add_flag("--search", o.search,
                "Search the layouts (tp, pp, vpp, cp, ep, ZeRO stage, recompute, micro-batch) for "
                "the fastest that fit; --tp etc. pin a dimension");
  sub->add_option("--top", o.search_top, "With --search: layouts listed (default 10)");
  sub->add_option("--search-compute", o.search_compute,
                  "With --search: compute types to try, e.g. bf16,fp8 (default: --precision)")
      ->delimiter(',');
  sub->add_option("--format", o.format, "Output: table (default), json, csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  note_request_flags(*sub, o.request_flag, {"--format", "--search", "--top", "--search-compute"});
}

int run_train(const TrainOptions& o) {
  try {
    refuse_request_flags(o.request_file, o.request_flag);
    if (o.search) {
      if (o.format == "csv")
        throw SpecError("--format", "csv is not available with --search (got csv)");
      const json r = io::run(build_search_request(o));
      if (o.format == "json") {
        std::cout << r.dump(2) << "\n";
      } else {
        print_search_table(r);
      }
      return kOk;
    }
    if (o.search_top)
      throw SpecError("--top", "needs --search (got " + std::to_string(*o.search_top) + ")");
    const json r = io::run(build_train_request(o));
    const bool search = r.contains("candidates");  // a --request file of task "search"
    if (o.format == "json") {
      std::cout << r.dump(2) << "\n";
    } else if (search && o.format == "csv") {
      throw SpecError("--format", "csv is not available for a search (got csv)");
    } else if (search) {
      print_search_table(r);
    } else if (o.format == "csv") {
      print_csv(r);
    } else {
      print_table(r);
    }
    return kOk;
  } catch (...) {
    return report_error(o.format);
  }
}

}  // namespace flopcast::cli
