// SPDX-License-Identifier: MIT
// Training estimator: FLOPs per token, activation formulas, memory per ZeRO stage, pipeline
// bubble, micro-batch search and bad input.
#include "flopcast/training.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::Failure;
using test::failure_of;
using test::near_rel;

ModelSpec llama7b() { return io::resolve_model(json("llama-2-7b"), "model"); }

/// GPT-style model as in Korthikanti et al.: MHA, plain 4h FFN.
ModelSpec gpt(int layers, int h, int heads, int vocab) {
  ModelSpec m;
  m.name = "gpt";
  m.num_layers = layers;
  m.hidden_size = h;
  m.num_heads = heads;
  m.num_kv_heads = heads;
  m.head_dim = h / heads;
  m.intermediate_size = 4 * h;
  m.ffn = FfnKind::plain;
  m.vocab_size = vocab;
  m.max_context_tokens = 4096;
  m.norm = NormKind::layernorm;
  return m;
}

json request() {
  return json{
      {"task", "training"},
      {"model", "llama-2-7b"},
      {"hardware", "h100-sxm"},
      {"num_gpus", 8},
      {"max_tier", 0},
      {"parallelism", {{"zero", 0}}},
      {"workload", {{"seq_len", 4096}, {"global_batch_size", 64}, {"micro_batch_size", 1}}}};
}

TEST(TrainingFlops, MegatronFormulaForGpt) {
  // Narayanan et al. (2021): 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) per batch, i.e. per token
  // 72·l·h² + 12·l·h·s + 6·V·h. l=24, h=2048, s=4096, V=131072:
  // 72·24·2048² = 7.2478e9; 12·24·2048·4096 = 2.4159e9; 6·131072·2048 = 1.6106e9 → 1.12743e10.
  EXPECT_TRUE(near_rel(model_flops_per_token(gpt(24, 2048, 16, 131072), 4096), 1.12743e10, 1e-5));
}

TEST(TrainingFlops, Llama7bGatedGqaFree) {
  // N_matmul = 32 · (4 · 4096² + 3 · 4096 · 11008) + 32000 · 4096 = 6.476005e9 + 0.131072e9 =
  // 6.607077e9 (embedding lookup and norms excluded): 6N = 3.964246e10; attention 12 · 32 · 4096
  // · 2048 = 3.221225e9 → 4.286369e10 at s = 2048.
  EXPECT_TRUE(near_rel(model_flops_per_token(llama7b(), 2048), 4.286369e10, 1e-6));
}

TEST(TrainingActivations, KorthikantiWithoutDropout) {
  // MHA, FFN 4h, no FlashAttention, no dropout: s·b·h·(32 + 4·a·s/h) (Korthikanti's 34 + 5as/h
  // less the two hidden and the attention dropout masks). h=4096, a=32, s=2048, b=1:
  // 2048·4096·(32 + 4·32·2048/4096) = 8,388,608 · 96 = 805.31 MB.
  const ModelSpec m = gpt(1, 4096, 32, 50000);
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 1, false, Recompute::none, false),
                       805.306368e6, 1e-9));
  // Selective recomputation drops the s² term: 2048·4096·32 = 268.44 MB.
  EXPECT_TRUE(
      near_rel(activation_bytes_per_layer(m, 1, 2048, 1, false, Recompute::selective, false),
               268.435456e6, 1e-9));
  // TP=8 without SP: sbh·(8 + 24/8) + s²-term/8 = 8,388,608 · 11 + 4·32·2048²/8 = 159.38 MB.
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 8, false, Recompute::none, false),
                       8388608.0 * 11 + 4.0 * 32 * 2048 * 2048 / 8, 1e-9));
  // With SP everything is /8: 805.31 / 8 = 100.66 MB.
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 8, true, Recompute::none, false),
                       805.306368e6 / 8, 1e-9));
  // Full recomputation: the layer input only, 2·s·b·h = 16.78 MB (/8 under SP).
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 8, true, Recompute::full, true),
                       2.0 * 2048 * 4096 / 8, 1e-9));
  // FlashAttention keeps only the fp32 log-sum-exp: 268.44 MB + 4·32·2048 B.
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 1, false, Recompute::none, true),
                       268.435456e6 + 4.0 * 32 * 2048, 1e-9));
}

TEST(TrainingActivations, OpLevelCheckpointingKeepsEveryOtherMatmul) {
  // Llama-2-7B (h 4096, 32 heads of 128, MHA, gated FFN of 11008), PyTorch op-level SAC. The
  // layer's matmuls in order: q, k, v, o, w1, w3, w2; the 1st, 3rd, 5th and 7th outputs are
  // saved (q 4096, v 4096, w1 11008, w2 4096 = 23,296 per token), k, o and w3 recomputed.
  const ModelSpec m = llama7b();
  // Stored: the layer input (2h), the saved outputs and the attention output (32·128), 2 bytes
  // each, and FlashAttention's fp32 log-sum-exp: 2048·(8192 + 2·(23296 + 4096)) + 4·32·2048 =
  // 128,974,848 + 262,144 = 129,236,992 B, between full (16.8 MB) and none (2048·131,584 + 262,144
  // = 269.8 MB).
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 1, false, Recompute::op, true),
                       129236992.0, 1e-12));
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 1, false, Recompute::none, true),
                       269746176.0, 1e-12));
  // With TP 8 and SP, every term is /8 (the log-sum-exp is per head: /8 too).
  EXPECT_TRUE(near_rel(activation_bytes_per_layer(m, 1, 2048, 8, true, Recompute::op, true),
                       129236992.0 / 8, 1e-12));
}

double gb_of(const json& r, const char* key) { return r["memory_per_gpu"][key].get<double>(); }

TEST(TrainingMemory, ZeroStagesShardStates) {
  // Llama-2-7B (6.73842e9 params) over 8 data ranks: ZeRO-0 keeps 2 + 2 + 12 B per param;
  // ZeRO-1 divides the 12 B of AdamW by 8; ZeRO-2 also the gradients; ZeRO-3 also the weights.
  const double p = 6.73842e9;
  json req = request();
  for (int stage = 0; stage <= 3; ++stage) {
    req["parallelism"]["zero"] = stage;
    const json r = io::run(req);
    EXPECT_TRUE(near_rel(gb_of(r, "weights_GB"), 2 * p / (stage >= 3 ? 8 : 1) / 1e9, 1e-5));
    EXPECT_TRUE(near_rel(gb_of(r, "gradients_GB"), 2 * p / (stage >= 2 ? 8 : 1) / 1e9, 1e-5));
    EXPECT_TRUE(near_rel(gb_of(r, "optimizer_GB"), 12 * p / (stage >= 1 ? 8 : 1) / 1e9, 1e-5));
  }
}

TEST(TrainingMemory, OptimizersAndFsdp) {
  const double p = 6.73842e9;
  json req = request();
  req["optimizer"] = "sgd";  // fp32 master + momentum: 8 B
  EXPECT_TRUE(near_rel(gb_of(io::run(req), "optimizer_GB"), 8 * p / 1e9, 1e-5));
  req["optimizer"] = "adam_8bit";  // fp32 master + two 1-byte moments: 6 B
  EXPECT_TRUE(near_rel(gb_of(io::run(req), "optimizer_GB"), 6 * p / 1e9, 1e-5));
  req["optimizer"] = "adamw";
  req["parallelism"] = {{"fsdp", "shard_grad_op"}};  // = ZeRO-2
  const json r = io::run(req);
  EXPECT_TRUE(near_rel(gb_of(r, "weights_GB"), 2 * p / 1e9, 1e-5));
  EXPECT_TRUE(near_rel(gb_of(r, "gradients_GB"), 2 * p / 8 / 1e9, 1e-5));
  // Hybrid shard on 16 GPUs of 8 per node: sharded over the 8 ranks of a node only.
  req["num_gpus"] = 16;
  req["parallelism"] = {{"fsdp", "hybrid_shard"}};
  EXPECT_TRUE(near_rel(gb_of(io::run(req), "weights_GB"), 2 * p / 8 / 1e9, 1e-5));
}

TEST(TrainingMemory, TotalIsTheSumAndFitsIsAResult) {
  const json r = io::run(request());
  const json& m = r["memory_per_gpu"];
  const double sum = gb_of(r, "weights_GB") + gb_of(r, "gradients_GB") + gb_of(r, "optimizer_GB") +
                     gb_of(r, "activations_GB") + gb_of(r, "temporary_GB") + gb_of(r, "reserve_GB");
  EXPECT_TRUE(near_rel(m["total_GB"], sum, 1e-5));
  // 16 B · 6.738e9 = 107.8 GB > 80 GB without sharding: a result, not an error.
  EXPECT_FALSE(m["fits"]);
}

/// Sum of a breakdown's time_ms over the transformer layers' ops of phase forward and backward.
double layer_compute_ms(const json& r) {
  double t = 0;
  for (const json& b : r["breakdown"]) {
    const std::string op = b["op"];
    if ((b["phase"] == "forward" || b["phase"] == "backward") && op != "lm_head" &&
        op != "embedding") {
      t += b["time_ms"].get<double>();
    }
  }
  return t;
}

double bubble_ms(const json& r) {
  for (const json& b : r["breakdown"]) {
    if (b["phase"] == "pipeline") return b["time_ms"];
  }
  return 0;
}

TEST(TrainingPipeline, BubbleOf1F1BAndInterleaving) {
  // pp=4, 16 micro-batches of 1: the bubble is (p − 1) = 3 micro-batch slots of a stage, i.e.
  // 3/16 of the stage's layer compute over the step; interleaved with v=2: (p − 1)/v = 1.5 slots.
  json req = request();
  req["parallelism"] = {{"pp", 4}, {"dp", 2}};
  req["workload"]["global_batch_size"] = 32;
  const json r = io::run(req);
  EXPECT_EQ(r["num_micro_batches"], 16);
  EXPECT_TRUE(near_rel(bubble_ms(r), 3.0 / 16 * layer_compute_ms(r), 1e-4));
  EXPECT_LT(r["bubble_fraction"].get<double>(), 3.0 / 19);  // (p − 1)/(m + p − 1) of compute only
  req["parallelism"]["vpp"] = 2;
  const json v2 = io::run(req);
  EXPECT_TRUE(near_rel(bubble_ms(v2), 1.5 / 16 * layer_compute_ms(v2), 1e-4));
  // The fill and drain wait for their sends: the first micro-batch crosses p − 1 = 3 stage
  // boundaries, and with v = 2 every one of the p·v − 1 = 7 chunk boundaries, each way. The same
  // activations per transfer, so the exposed send/recv time grows by 7/3.
  const auto send_recv_ms = [](const json& res) {
    for (const json& b : res["breakdown"]) {
      if (b["op"] == "pp_send_recv") return b["time_ms"].get<double>();
    }
    return 0.0;
  };
  ASSERT_GT(send_recv_ms(r), 0);
  EXPECT_TRUE(near_rel(send_recv_ms(v2), 7.0 / 3 * send_recv_ms(r), 1e-4));
}

TEST(TrainingSearch, LargestFastestMicroBatch) {
  // ZeRO-3 over 8 GPUs: 16 B · 6.738e9 / 8 = 13.5 GB of states, 2 GB reserve; a sequence of
  // 4096 keeps 32 · 4096 · 131,712 B = 17.3 GB of activations. b = 2: 34.5 GB (+ 3.8 GB of
  // gathered layers and logits) fits; b = 4: 69 GB does not. Of {1, 2} the larger is faster.
  json req = request();
  req["parallelism"] = {{"zero", 3}};
  req["workload"].erase("micro_batch_size");
  const json r = io::run(req);
  EXPECT_TRUE(r["micro_batch_searched"]);
  EXPECT_EQ(r["max_micro_batch_size"], 2);
  EXPECT_EQ(r["micro_batch_size"], 2);
  req["workload"]["recompute"] = "full";  // 2·4096·4096 B · 32 = 1.07 GB per sequence
  const json full = io::run(req);
  EXPECT_EQ(full["max_micro_batch_size"], 8);
  EXPECT_TRUE(full["memory_per_gpu"]["fits"]);
}

// Issue 12, defect 4: framework.compute_scale 0.1 (then allowed) gave MFU 3.23. The trainer
// scales multiply the kernel model's times; below 1 a trainer would beat the roofline.
TEST(TrainingErrors, TrainerScalesBelowOneAreRefused) {
  json req = request();
  req["framework"] = {{"compute_scale", 0.1}};
  try {
    (void)io::run(req);
    ADD_FAILURE() << "compute_scale 0.1 was accepted";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "framework.compute_scale: must be between 1 and 10 (got 0.1)");
  }
  req["framework"] = {{"compute_scale", 1.0}, {"attention_scale", 1.0}};
  EXPECT_LE(io::run(req).at("mfu").get<double>(), 1.0);
}

TEST(TrainingMfu, MfuAndHfuDefinitions) {
  // MFU = model FLOPs per token · tokens/s/GPU / peak; full recompute adds the forward of the
  // layers (1/3 of the layers' FLOPs) to HFU only.
  json req = request();
  req["parallelism"] = {{"zero", 3}};
  req["workload"]["recompute"] = "full";
  const json r = io::run(req);
  const double mfu =
      r["model_flops_per_token"].get<double>() * r["tokens_per_s_per_gpu"].get<double>() / 989.4e12;
  EXPECT_TRUE(near_rel(r["mfu"], mfu, 1e-5));
  // Megatron's hardware FLOPs add the recomputed layers' forward, attention over the square:
  // 2 · 6.476005e9 + 4 · 32 · 4096 · 4096 = 1.50995e10.
  const double square = 12.0 * 32 * 4096 * 4096, executed = square * 4097 / 8192;
  EXPECT_TRUE(near_rel(
      r["hardware_flops_per_token"].get<double>() - r["model_flops_per_token"].get<double>(),
      2 * 6.476005e9 + square / 3, 1e-4));
  // HFU counts what the causal kernel computes, 4097 / 8192 of the square (3.22201e9 of
  // 6.44245e9 per token): model − square + executed + 2 · 6.476005e9 + executed / 3 per token.
  const double executed_per_token =
      r["model_flops_per_token"].get<double>() - square + executed + 2 * 6.476005e9 + executed / 3;
  EXPECT_TRUE(near_rel(
      r["hfu"], executed_per_token * r["tokens_per_s_per_gpu"].get<double>() / 989.4e12, 1e-4));
  // Issue 12: a million-token sequence at Tier 0 (attention at 60 % of the peak, causal) gave
  // HFU 1.057 when the hardware FLOPs counted the whole square; executed work stays below 1.
  json longest{
      {"task", "training"},
      {"model", "llama-3.1-8b"},
      {"hardware", "h100-sxm"},
      {"num_gpus", 8},
      {"max_tier", 0},
      {"parallelism", {{"cp", 8}}},
      {"workload", {{"seq_len", 1048576}, {"global_batch_size", 1}, {"recompute", "selective"}}}};
  const json l = io::run(longest);
  EXPECT_LT(l["hfu"].get<double>(), 1.0);
  EXPECT_LT(l["mfu"].get<double>(), 1.0);
}

TEST(TrainingErrors, ConsistencyAndUnknownKeys) {
  json req = request();
  req["parallelism"] = {{"tp", 2}, {"dp", 2}};
  Failure f = failure_of(req);
  EXPECT_EQ(f.path, "num_gpus");
  EXPECT_EQ(f.message, "num_gpus: must equal parallelism tp·pp·dp·cp (2·1·2·1 = 4) (got 8)");
  // Issue 45: ep is not a fourth factor of the GPU count, and the message says so.
  req = request();
  req["model"] = "qwen3-30b-a3b";
  req["num_gpus"] = 32;
  req["parallelism"] = {{"dp", 4}, {"ep", 8}};
  EXPECT_EQ(failure_of(req).message,
            "num_gpus: must equal parallelism tp·pp·dp·cp (1·1·4·1 = 4); expert parallelism adds "
            "no GPUs: it splits dp·cp (ep 8 needs dp·cp a multiple of 8) (got 32)");
  // pp·vpp against the layers, the numbers in the order the rule states them: Llama-3.1-405B's
  // 126 layers do not split into 16·8 = 128 chunks.
  req = request();
  req["model"] = "llama-3.1-405b";
  req["num_gpus"] = 128;
  req["parallelism"] = {{"pp", 16}, {"vpp", 8}, {"dp", 8}};
  EXPECT_EQ(failure_of(req).message,
            "parallelism.pp: pp·vpp must divide model.num_layers (126), or set "
            "parallelism.first_stage_layers / last_stage_layers (got 16·8 = 128)");

  req = request();
  req["workload"]["micro_batch_sise"] = 2;
  f = failure_of(req);
  EXPECT_EQ(f.path, "workload.micro_batch_sise");
  EXPECT_NE(f.message.find("did you mean \"micro_batch_size\""), std::string::npos);

  req = request();
  req["parallelism"] = {{"zero", 1}, {"fsdp", "full_shard"}};
  EXPECT_EQ(failure_of(req).path, "parallelism.fsdp");

  req = request();
  req["workload"]["micro_batch_size"] = 3;  // 64 / 8 = 8 per rank
  f = failure_of(req);
  EXPECT_EQ(f.path, "workload.micro_batch_size");
  EXPECT_EQ(f.message,
            "workload.micro_batch_size: must divide global_batch_size / dp (64 / 8 = 8) (got 3)");

  req = request();
  req["parallelism"] = {{"tp", 3}, {"dp", 1}};
  req["num_gpus"] = 3;
  EXPECT_EQ(failure_of(req).path, "parallelism.tp");

  req = request();
  req["parallelism"] = {{"ep", 2}};
  EXPECT_EQ(failure_of(req).message, "parallelism.ep: must be 1 for a dense model (got 2)");

  req = request();
  req["precision"] = {{"compute", "fp8"}};
  req["hardware"] = "a100-sxm-80g";
  EXPECT_EQ(failure_of(req).path, "precision.compute");

  req = request();
  req["framework"] = {{"profile", "megatrn"}};
  EXPECT_NE(failure_of(req).message.find("did you mean \"megatron\""), std::string::npos);

  req = request();
  req["workload"]["seq_len"] = 0;
  EXPECT_EQ(failure_of(req).path, "workload.seq_len");
}

TEST(TrainingResult, EchoesResolvedRequestAndStaysFinite) {
  json req = request();
  req["workload"]["total_tokens"] = 1e9;
  const json r = io::run(req);
  EXPECT_EQ(r["request"]["parallelism"]["dp"], 8);
  EXPECT_EQ(r["request"]["framework"]["profile"], "generic");
  EXPECT_EQ(r["request"]["precision"]["compute"], "bf16");
  for (const char* k : {"step_time_s", "tokens_per_s", "mfu", "hfu", "total_time_s", "gpu_hours"}) {
    EXPECT_TRUE(std::isfinite(r[k].get<double>())) << k;
    EXPECT_GT(r[k].get<double>(), 0) << k;
  }
  // No price given: the H100 preset's list price ($3.49 a GPU-hour) prices the run.
  EXPECT_TRUE(near_rel(r["cost_usd"].get<double>(), 3.49 * r["gpu_hours"].get<double>(), 1e-5));
  EXPECT_EQ(r["cost_basis"]["usd_per_gpu_hour"], 3.49);
  req["hardware"] = io::hardware_object("h100-sxm");
  req["hardware"].erase("on_demand_price");
  EXPECT_TRUE(io::run(req)["cost_usd"].is_null());
}

}  // namespace
}  // namespace flopcast

namespace flopcast {
namespace {

/// Time of (phase, op) summed over a training response's breakdown, in ms.
double breakdown_ms(const json& r, const std::string& phase, const std::string& op) {
  double ms = 0;
  for (const json& b : r.at("breakdown")) {
    if (b.at("phase") == phase && b.at("op") == op) ms += b.at("time_ms").get<double>();
  }
  return ms;
}

json fitted_request(const char* hardware) {
  json r = request();
  r.erase("max_tier");  // default: Tier-0 kernels with the fitted trainer scale
  r["hardware"] = hardware;
  return r;
}

TEST(TrainingParallelism, TensorParallelAcrossNodes) {
  // Llama-2-7B, TP16 over two 8-GPU H100 nodes, 64 micro-batches of one 4096-token sequence.
  // Without SP or TP overlap each micro-batch runs 4 all-reduces of one [4096 x 4096] bf16
  // activation (33.55 MB) in each of 32 layers, all exposed: tp_collectives = 64 · 32 · 4 ·
  // AR(33.55 MB over 16 ranks, 8 per node), the all-reduce priced by estimate_collective on the
  // hardware's cluster (two levels: NVLink inside a node, the NICs between the two).
  json req = request();
  req["num_gpus"] = 16;
  req["parallelism"] = {{"tp", 16}, {"zero", 0}};
  req["gpus_per_node"] = 8;
  const json r = io::run(req);
  const HardwareSpec hw = io::resolve_hardware("h100-sxm", "hardware");
  KernelModel km;
  km.use_calibration = false;
  const ClusterSpec c = cluster_of(hw);
  const Bytes act(4096.0 * 4096 * 2);
  const double across = estimate_collective(CollectiveKind::all_reduce, act, 16, c, km).time.value;
  const double within = estimate_collective(CollectiveKind::all_reduce, act, 8, c, km).time.value;
  EXPECT_GT(across, within);  // the NIC hop costs more than TP8's NVLink-only ring
  EXPECT_TRUE(near_rel(breakdown_ms(r, "communication", "tp_collectives"),
                       64 * 32 * 4 * across * 1e3, 1e-5));

  req["num_gpus"] = 12;
  req["parallelism"]["tp"] = 12;
  EXPECT_EQ(failure_of(req).message,
            "parallelism.tp: must be a multiple of gpus_per_node (8) when it spans nodes (got 12)");
}

TEST(TrainingFitted, ScaleOfTheArchitectureMultipliesKernelTime) {
  // The default prices GEMMs at Tier 0 (capped at the share of the peak the H100's own bf16
  // GEMMs measured, 0.7893 against 0.8), attention with the H100's measured attention-kernel fit
  // (0.537 of the peak at full occupancy against Tier 0's 0.6, 13.2 us a kernel: 1.205x the
  // Tier-0 time at llama-2-7b's 32 heads x 32 query tiles), then multiplies attention by
  // hopper's 2.5 and every kernel by hopper's 1.18662; max_tier 0 is physics alone.
  const json physics = io::run(request());
  json unscaled_req = fitted_request("h100-sxm");
  unscaled_req["framework"] = {{"attention_scale", 1}, {"compute_scale", 1}};
  const json unscaled = io::run(unscaled_req);
  const json fitted = io::run(fitted_request("h100-sxm"));
  EXPECT_EQ(physics.at("tier"), 0);
  EXPECT_EQ(fitted.at("tier"), 1);
  EXPECT_EQ(fitted.at("request").at("framework").at("profile"), "fitted");
  // Compute-bound GEMMs: 0.8 / 0.789262 = 1.0136 of the physics time before the scale.
  const double mlp = breakdown_ms(physics, "forward", "mlp");
  EXPECT_NEAR(breakdown_ms(unscaled, "forward", "mlp") / mlp, 1.0136, 2e-4);
  EXPECT_NEAR(breakdown_ms(fitted, "forward", "mlp") / breakdown_ms(unscaled, "forward", "mlp"),
              1.18662, 1e-5);
  // Attention: the measured kernels, then 2.5 x 1.18662 = 2.96655.
  const double attn = breakdown_ms(unscaled, "forward", "attention");
  EXPECT_NEAR(attn / breakdown_ms(physics, "forward", "attention"), 1.205, 0.005);
  EXPECT_NEAR(breakdown_ms(fitted, "forward", "attention") / attn, 2.5 * 1.18662, 1e-5);
  EXPECT_NEAR(breakdown_ms(fitted, "backward", "attention") /
                  breakdown_ms(unscaled, "backward", "attention"),
              2.5 * 1.18662, 1e-5);
}

TEST(TrainingFitted, GemmsPricedAtMostAtTheShareTheirKernelsMeasured) {
  // The committed gemm/bf16 fits reach 0.687125 of GB200's dense peak, 0.789262 of H100's and
  // 0.795837 of H200's; A100's is capped at the Tier-0 0.8.
  const auto ceiling = [](const char* id) {
    return measured_gemm_ceiling(io::resolve_hardware(json(id), "hardware"), 0.8);
  };
  EXPECT_NEAR(ceiling("gb200"), 0.687125, 1e-9);
  EXPECT_NEAR(ceiling("h100-sxm"), 0.789262, 1e-9);
  EXPECT_NEAR(ceiling("a100-sxm-80g"), 0.8, 1e-12);
  EXPECT_NEAR(ceiling("h200-sxm"), 0.795837, 1e-9);
  // The default training estimate says so; physics (max_tier 0) keeps the Tier-0 constant.
  auto gemm_assumption = [](const json& r) {
    for (const json& a : r.at("assumptions")) {
      if (a.at("name") == "gemm_efficiency") return a.at("value").get<double>();
    }
    return 0.0;
  };
  EXPECT_NEAR(gemm_assumption(io::run(fitted_request("gb200"))), 0.687125, 1e-9);
  json physics = fitted_request("gb200");
  physics["max_tier"] = 0;
  EXPECT_NEAR(gemm_assumption(io::run(physics)), 0.8, 1e-12);
}

TEST(TrainingFitted, UnmeasuredArchitectureGetsTheMeanScaleAndSaysSo) {
  // L40S (ada) has no training source: the unmeasured scale of fitted.json, 1.18916.
  const json r = io::run(fitted_request("l40s"));
  EXPECT_NEAR(r.at("request").at("framework").at("compute_scale").get<double>(), 1.18916, 1e-5);
  bool said = false;
  for (const json& w : r.at("warnings")) {
    said = said ||
           w.get<std::string>().find("too few training measurements on ada") != std::string::npos;
  }
  EXPECT_TRUE(said) << r.at("warnings").dump();
}

TEST(TrainingFitted, BandIsTheLeaveOneSourceOutSpread) {
  // interval = value · exp(±slowness quantiles) of presets/bands/e2e.json ("training"): a time
  // spans [t·e^p10, t·e^p90], a rate [x·e^-p90, x·e^-p10].
  const auto band = io::e2e_band("training", false);
  ASSERT_TRUE(band.has_value());
  const json r = io::run(fitted_request("h100-sxm"));
  const double t = r.at("step_time_s").get<double>();
  const double x = r.at("tokens_per_s_per_gpu").get<double>();
  EXPECT_TRUE(near_rel(r.at("interval").at("step_time_s").at("low").get<double>(),
                       t * std::exp(band->slow_p10), 1e-5));
  EXPECT_TRUE(near_rel(r.at("interval").at("tokens_per_s_per_gpu").at("low").get<double>(),
                       x * std::exp(-band->slow_p90), 1e-5));
  EXPECT_LT(r.at("interval").at("tokens_per_s_per_gpu").at("low").get<double>(), x);
}

TEST(TrainingFitted, MoeModelsTakeTheirOwnBand) {
  // A model with routed experts is banded by "training (moe)" (its trainers' rows miss by ~30 %
  // where dense models' miss by ~10 %), a dense one by "training": the interval is the estimate
  // times each band's own quantiles.
  const auto dense = io::e2e_band("training", false);
  const auto moe = io::e2e_band("training (moe)", false);
  ASSERT_TRUE(dense.has_value());
  ASSERT_TRUE(moe.has_value());
  EXPECT_GT(moe->slow_p90 - moe->slow_p10, dense->slow_p90 - dense->slow_p10);
  json req = fitted_request("h100-sxm");
  req["model"] = "qwen3-30b-a3b";
  const json r = io::run(req);
  const double t = r.at("step_time_s").get<double>();
  EXPECT_TRUE(near_rel(r.at("interval").at("step_time_s").at("high").get<double>(),
                       t * std::exp(std::max(moe->slow_p90, 0.0)), 1e-5));
  EXPECT_TRUE(near_rel(r.at("interval").at("step_time_s").at("low").get<double>(),
                       t * std::exp(std::min(moe->slow_p10, 0.0)), 1e-5));
}

TEST(TrainingFitted, T34DefaultMfuIsWhatTrainersMeasure) {
  // T3.4: Llama-3-8B, 64 H100, FSDP full shard, seq 8192, 512 sequences per step. Physics alone
  // gives MFU 0.72; trainers measure 0.35-0.55 (llm-foundry, torchtitan): the default must too.
  const json r = io::run(json{{"task", "training"},
                              {"model", "llama-3-8b"},
                              {"hardware", "h100-sxm"},
                              {"num_gpus", 64},
                              {"parallelism", {{"fsdp", "full_shard"}}},
                              {"workload", {{"seq_len", 8192}, {"global_batch_size", 512}}}});
  EXPECT_GE(r.at("mfu").get<double>(), 0.35);
  EXPECT_LE(r.at("mfu").get<double>(), 0.60);
}

TEST(TrainingFp8, CachedWeightCopiesTakeMemory) {
  // Llama-2-7B on 8 H100, fp8: each linear weight (202,375,168 per layer) is cached cast, with
  // its transpose for dgrad, 1 B each. Replicated weights (DDP): 32 layers · 2 · 202,375,168 =
  // 12.952011 GB more weights per GPU. FSDP: only the two gathered layers, 0.809501 GB of
  // temporaries.
  json req = request();
  const json bf16 = io::run(req);
  req["precision"] = {{"compute", "fp8"}};
  const json fp8 = io::run(req);
  EXPECT_NEAR(gb_of(fp8, "weights_GB") - gb_of(bf16, "weights_GB"), 12.952011, 2e-5);
  req["parallelism"] = {{"fsdp", "full_shard"}};
  const json sharded = io::run(req);
  req["precision"] = {{"compute", "bf16"}};
  const json sharded16 = io::run(req);
  EXPECT_NEAR(gb_of(sharded, "temporary_GB") - gb_of(sharded16, "temporary_GB"), 0.809501, 2e-5);
  EXPECT_NEAR(gb_of(sharded, "weights_GB"), gb_of(sharded16, "weights_GB"), 1e-9);
}

TEST(TrainingFp8, WeightsAreCastOncePerStep) {
  // Llama-2-7B on 8 H100 (DDP, tp 1), fp8, Tier 0. Linear weights per layer: 4 · 4096² +
  // 3 · 4096 · 11008 = 202,375,168; the cast reads 2 B and writes 1 B: 607,125,504 B /
  // (3350e9 B/s · 0.85) = 0.213214 ms + 2 us = 0.215214 ms per layer; 32 layers: 6.88683 ms per
  // step, the same with 1 or 8 micro-batches (TE/torchao cache the fp8 weights for the step).
  json req = request();
  req["precision"] = {{"compute", "fp8"}};
  for (int gbs : {8, 64}) {
    req["workload"]["global_batch_size"] = gbs;
    const json r = io::run(req);
    double cast_ms = 0;
    for (const json& b : r["breakdown"]) {
      if (b["op"] == "fp8_weight_cast") cast_ms += b["time_ms"].get<double>();
    }
    EXPECT_EQ(r["num_micro_batches"], gbs / 8);
    EXPECT_TRUE(near_rel(cast_ms, 6.88683, 1e-4)) << gbs << ": " << cast_ms;
  }
}

TEST(TrainingRecompute, OpLevelRecomputesTheUnsavedMatmulsAndTheElementwiseOps) {
  // Llama-2-7B on 8 H100, Tier 0: the backward re-runs 1/3 of the fused QKV GEMM (k), the whole
  // o_proj, half of the fused gate+up GEMM (w3; the two halves are priced as the fused GEMM's
  // share) and every elementwise op of the forward; no attention (its output is saved).
  json req = request();
  req["workload"]["recompute"] = "op";
  const json op = io::run(req);
  EXPECT_EQ(op["request"]["workload"]["recompute"], "op");
  EXPECT_TRUE(near_rel(breakdown_ms(op, "recompute", "qkv_proj"),
                       breakdown_ms(op, "forward", "qkv_proj") / 3, 1e-5));  // 6 digits
  EXPECT_TRUE(near_rel(breakdown_ms(op, "recompute", "o_proj"),
                       breakdown_ms(op, "forward", "o_proj"), 1e-5));
  EXPECT_TRUE(near_rel(breakdown_ms(op, "recompute", "norm_elementwise"),
                       breakdown_ms(op, "forward", "norm_elementwise"), 1e-5));
  EXPECT_EQ(breakdown_ms(op, "recompute", "attention"), 0.0);
  // Slower than none, faster than full; its memory in between.
  req["workload"]["recompute"] = "none";
  const json none = io::run(req);
  req["workload"]["recompute"] = "full";
  const json full = io::run(req);
  EXPECT_GT(op["step_time_s"].get<double>(), none["step_time_s"].get<double>());
  EXPECT_LT(op["step_time_s"].get<double>(), full["step_time_s"].get<double>());
  EXPECT_LT(gb_of(op, "activations_GB"), gb_of(none, "activations_GB"));
  EXPECT_GT(gb_of(op, "activations_GB"), gb_of(full, "activations_GB"));
  // Hardware FLOPs add the recomputed matmuls' forward: 2 · 32 layers · 78,643,200 weights.
  EXPECT_TRUE(near_rel(
      op["hardware_flops_per_token"].get<double>() - none["hardware_flops_per_token"].get<double>(),
      2.0 * 32 * 78643200, 1e-4));  // a difference of 6-digit values
  // Mixtral 8x7B: the grouped expert GEMMs are not aten.mm, so they are always recomputed; the
  // router is the 5th matmul (q, k, v, o, router) and is saved.
  req["model"] = "mixtral-8x7b";
  req["workload"]["recompute"] = "op";
  const json moe = io::run(req);
  EXPECT_TRUE(near_rel(breakdown_ms(moe, "recompute", "moe_experts"),
                       breakdown_ms(moe, "forward", "moe_experts"), 1e-5));
  EXPECT_GT(breakdown_ms(moe, "forward", "moe_router"), 0.0);
  EXPECT_EQ(breakdown_ms(moe, "recompute", "moe_router"), 0.0);
}

TEST(TrainingMoe, TokenPermutationIsPricedAsItsTraffic) {
  // Mixtral 8x7B on 8 H100 (DP 8), one 4,096-token micro-batch per GPU, Tier 0. Per MoE layer
  // the dispatcher gathers the 2 routed copies of each token into expert order and scatters them
  // back: 2 · (4,096 + 8,192) tokens · 4,096 · 2 B = 201,326,592 B at 0.85 · 3,350 GB/s =
  // 70.703 us, plus 4 kernels · 2 us = 78.703 us; 32 layers: 2.51850 ms per micro-batch, and a
  // step has 64 / 8 = 8 of them: 20.1480 ms, forward and backward.
  json req = request();
  req["model"] = "mixtral-8x7b";
  const json r = io::run(req);
  EXPECT_NEAR(breakdown_ms(r, "forward", "moe_permute"), 20.1480, 2e-3);
  EXPECT_NEAR(breakdown_ms(r, "backward", "moe_permute"), 20.1480, 2e-3);
  // A dense model has none.
  EXPECT_EQ(breakdown_ms(io::run(request()), "forward", "moe_permute"), 0.0);
}

TEST(TrainingMoe, EpAllToAllHidesBehindAnotherMicroBatchOnlyWhenAsked) {
  // Mixtral 8x7B on 8 H100, DP 8 = EP 8, eight 4,096-token micro-batches per GPU, Tier 0. One
  // all-to-all moves 4,096 tokens · 2 routed copies · 4,096 · 2 B = 64 MiB over 8 NVLink ranks:
  // 7/8 of it at 0.8 · 450 GB/s = 163.1 us plus the ring's latency, 171.112 us (`flopcast
  // collective --op all_to_all --bytes 64MiB --ranks 8 --max-tier 0`). Dispatch and combine,
  // forward and backward, in 32 MoE layers and 8 micro-batches: 4 · 32 · 8 · 171.112 us =
  // 175.219 ms, all on the critical path of a plain 1F1B schedule.
  json req = request();
  req["model"] = "mixtral-8x7b";
  req["parallelism"]["ep"] = 8;
  const json plain = io::run(req);
  EXPECT_NEAR(breakdown_ms(plain, "communication", "ep_all_to_all"), 175.219, 2e-3);
  // Overlapped (DualPipe, Megatron-Core's EP overlap), each micro-batch's 21.9 ms of all-to-all
  // runs under another's ~0.4 s of compute: none stays exposed and, with one stage (no bubble),
  // the step is exactly that much shorter.
  req["parallelism"]["ep_comm_overlap"] = true;
  const json hidden = io::run(req);
  EXPECT_EQ(breakdown_ms(hidden, "communication", "ep_all_to_all"), 0.0);
  EXPECT_NEAR(hidden.at("step_time_s").get<double>(),
              plain.at("step_time_s").get<double>() - 0.175219, 2e-6);
  EXPECT_EQ(hidden.at("request").at("parallelism").at("ep_comm_overlap"), true);
  // One micro-batch per step and one stage: there is no other micro-batch to hide behind.
  req["workload"]["global_batch_size"] = 8;
  const json alone = io::run(req);
  EXPECT_NEAR(breakdown_ms(alone, "communication", "ep_all_to_all"), 175.219 / 8, 1e-3);
  // Without expert parallelism there is nothing to overlap.
  req["parallelism"]["ep"] = 1;
  EXPECT_EQ(failure_of(req).message,
            "parallelism.ep_comm_overlap: needs parallelism.ep > 1 (a MoE model's "
            "expert-parallel all-to-alls to overlap) (got true)");
}

/// request() on B200s with one micro-batch per GPU.
json b200_one_micro_batch() {
  json req = request();
  req["hardware"] = "b200";
  req["workload"]["global_batch_size"] = 8;
  return req;
}

TEST(TrainingHybrid, MambaScanIsPricedAsItsTraffic) {
  // Nemotron 3 Nano on 8 H100 (DP 8), one 4,096-token micro-batch per GPU, Tier 0. Per token a
  // Mamba-2 layer's conv1d, SSD scan and gated norm move (d_in 4096, G·N 1024, 64 heads, chunk
  // 128, 2-byte activations, fp32 chunk states of 64·64·128·4/128 = 16,384 B per token):
  //   conv1d 2·6144·2 = 24,576; chunk cumsum 64·2 + 64·8 = 640; chunk state (4096 + 1024)·2 +
  //   512 + 16,384 = 27,136; state passing 2·16,384 = 32,768; C·Bᵀ 2·1024·2 + 4·8·128 = 8,192;
  //   chunk scan 4,096 + (2·4096 + 1024)·2 + 16,384 + 512 + 4096·2 = 47,616; norm 3·4096·2 =
  //   24,576: 165,504 B.
  // 4,096 tokens: 677,904,384 B at 0.85 · 3,350 GB/s = 238.070 us, plus 7 kernels · 2 us =
  // 252.070 us; 23 Mamba layers: 5.79761 ms per micro-batch; 64 / 8 = 8 micro-batches:
  // 46.3809 ms forward.
  // The backward (mamba_ssm's _mamba_chunk_scan_combined_bwd, conv1d and norm backward; dt 512,
  // C·Bᵀ 4,096 B per token): recomputed cumsum 640, C·Bᵀ 8,192, chunk state 27,136, state
  // passing 32,768; dz 6·4096·2 = 49,152; dstates 10,240 + 512 + 16,384 = 27,136; state passing
  // 3·16,384 = 49,152; dx 26,624 + 4,096 + 1,024 + 16,384 = 48,128; dB and dC 12,288 + 512 +
  // 16,384 = 29,184 each; d(C·Bᵀ) 16,384 + 512 + 4,096 = 20,992; C·Bᵀ backward 2·(6,144 + 4,096)
  // = 20,480; d(dt·A) 16,384 + 4,096 + 1,024 = 21,504; cumsum 128 + 1,024 = 1,152; conv1d
  // 3·6144·2 = 36,864; norm 5·4096·2 = 40,960: 442,624 B per token. 4,096 tokens at 2,847.5 GB/s
  // = 636.69 us + 17 kernels · 2 us = 670.69 us; ·23 layers ·8 micro-batches = 123.408 ms.
  json req = request();
  req["model"] = "nemotron-3-nano-30b-a3b";
  const json r = io::run(req);
  EXPECT_NEAR(breakdown_ms(r, "forward", "mamba_scan"), 46.3809, 2e-3);
  EXPECT_NEAR(breakdown_ms(r, "backward", "mamba_scan"), 123.408, 4e-3);
  // Attention runs in the 6 '*' layers only (next test), the in_proj in the 23 'M' ones.
  EXPECT_GT(breakdown_ms(r, "forward", "attention"), 0.0);
  EXPECT_GT(breakdown_ms(r, "forward", "mamba_in_proj"), 0.0);
  EXPECT_EQ(breakdown_ms(r, "forward", "mlp"), 0.0);  // no '-' layer
}

TEST(TrainingHybrid, GatedDeltaNetIsPricedAsItsTraffic) {
  // Qwen3-Next on 8 H100 (DP 8), one 4,096-token micro-batch per GPU, Tier 0 (the step's memory
  // does not fit; the times are what they would be). Per token a gated DeltaNet layer (32 value
  // heads of 128, q and k 2048 wide, v 4096, conv 8192 channels, chunks of 64, bf16 chunk states
  // 32·128·128·2/64 = 16,384 B) moves forward: conv1d 2·8192·2 = 32,768; L2 norm 4·2048·2 =
  // 16,384; repeat (4096 + 8192)·2 = 24,576; gates 2·32·2 + 5·32 = 288; cumsum 256; the WY step
  // 2·8192·2 + 64 + 128 + 32·64·2 = 37,056; the state pass 12,288·2 + 128 + 16,384 + 8,192 =
  // 49,280; the output 49,280; the gated norm 3·4096·2 = 24,576: 234,464 B. 4,096 tokens at 0.85 ·
  // 3,350 GB/s = 337.266 us + 9 kernels · 2 us; · 36 layers · 8 micro-batches = 102.317 ms.
  // Backward: the WY step and state pass again 86,336; local dv (2·4096 + 2·4096)·2 + 128 =
  // 32,896; the state gradients 49,152 + 128 + 16,384 = 65,664; dq, dk, dw, dg 49,152 + 32,768 +
  // 128 + 24,576 + 128 = 106,752; the WY backward 32,768 + 64 + 4,096 + 16,384 + 256 + 16,384 + 64
  // = 70,016; the sums and reverse cumsum 24,576 + 384 + 256 = 25,216; the input steps
  // 2·(4096 + 8192)·2 + 16,384 + 128 + 160 = 65,824; conv1d 3·8192·2 = 49,152; norm 5·4096·2 =
  // 40,960: 542,816 B (2.32x the forward). 780.816 us + 14 kernels · 2 us; · 36 · 8 = 232.939 ms.
  json req = request();
  req["model"] = "qwen3-next-80b-a3b";
  const json r = io::run(req);
  EXPECT_NEAR(breakdown_ms(r, "forward", "gdn_scan"), 102.317, 2e-3);
  EXPECT_NEAR(breakdown_ms(r, "backward", "gdn_scan"), 232.939, 4e-3);
  EXPECT_GT(breakdown_ms(r, "forward", "gdn_in_proj"), 0.0);
  EXPECT_EQ(breakdown_ms(r, "forward", "mamba_scan"), 0.0);
}

TEST(TrainingHybrid, Mamba1IsPricedAsItsTraffic) {
  // Jamba 1.5 Mini on 8 H100 (DP 8), one 4,096-token micro-batch per GPU, Tier 0 (the step's
  // memory does not fit; the times are what they would be). Per token a Mamba-1 layer (8192
  // channels, state 16, dt rank 256) moves forward: conv1d 2·8192·2 = 32,768; the RMSNorms of
  // dt, B, C 2·288·2 = 1,152; the selective scan (4·8192 + 32)·2 = 65,600: 99,520 B. 4,096
  // tokens at 0.85 · 3,350 GB/s = 143.155 us + 5 kernels · 2 us; · 28 layers · 8 micro-batches =
  // 34.307 ms. Backward: the scan's inputs and dy in, dx, dΔ, dz, dB, dC out (5·8192 + 32 +
  // 3·8192 + 32)·2 = 131,200; conv1d 3·8192·2 = 49,152; the norms 3·288·2 = 1,728: 182,080 B,
  // 261.914 us + 5 · 2 us; · 28 · 8 = 60.909 ms.
  json req = request();
  req["model"] = "jamba-1.5-mini";
  const json r = io::run(req);
  EXPECT_NEAR(breakdown_ms(r, "forward", "mamba1_scan"), 34.307, 2e-3);
  EXPECT_NEAR(breakdown_ms(r, "backward", "mamba1_scan"), 60.909, 2e-3);
  EXPECT_GT(breakdown_ms(r, "forward", "mamba1_x_proj"), 0.0);
  EXPECT_EQ(breakdown_ms(r, "forward", "mamba_scan"), 0.0);
}

TEST(TrainingHybrid, AttentionOnlyWhereThePatternAttends) {
  // Nano's 6 attention layers cost what 6 layers of the same attention cost in a transformer:
  // the attention kernel time scales with the layers that attend (Tier 0, same shapes).
  json hybrid = request();
  hybrid["model"] = "nemotron-3-nano-30b-a3b";
  json transformer = hybrid;
  transformer["model"] = io::preset("models", "nemotron-3-nano-30b-a3b", "model").at("model");
  transformer["model"].erase("layer_pattern");
  for (const char* k : {"mamba_heads", "mamba_head_dim", "mamba_state_dim", "mamba_groups",
                        "mamba_conv_kernel", "mamba_chunk_tokens"}) {
    transformer["model"].erase(k);
  }
  const double per_layer_hybrid = breakdown_ms(io::run(hybrid), "forward", "attention") / 6;
  const double per_layer_dense = breakdown_ms(io::run(transformer), "forward", "attention") / 52;
  EXPECT_TRUE(near_rel(per_layer_hybrid, per_layer_dense, 1e-9))
      << per_layer_hybrid << " vs " << per_layer_dense;
}

TEST(TrainingHybrid, WhatIsNotModelledIsRefusedByName) {
  json req = request();
  req["model"] = "nemotron-3-nano-30b-a3b";
  req["num_gpus"] = 8;
  req["parallelism"]["cp"] = 2;
  test::Failure f = failure_of(req);
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "parallelism.cp");
  EXPECT_NE(f.message.find("context parallelism over Mamba-2 layers"), std::string::npos)
      << f.message;
  req = request();
  req["model"] = "nemotron-3-nano-30b-a3b";
  req["workload"]["recompute"] = "op";
  f = failure_of(req);
  EXPECT_EQ(f.path, "workload.recompute");
  // Data-parallel attention in a hybrid model's inference is refused, not guessed.
  json inf = test::base_request();
  inf["model"] = "nemotron-3-nano-30b-a3b";
  inf["num_gpus"] = 2;
  inf["parallelism"] = {{"tp", 2}, {"dp_attention", true}};
  f = failure_of(inf);
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "parallelism.dp_attention");
  // A pattern character flopcast does not know is named with its layer.
  json bad = req;
  bad["model"] = io::preset("models", "nemotron-3-nano-30b-a3b", "model").at("model");
  bad["model"]["layer_pattern"] = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEMD";
  f = failure_of(bad);
  EXPECT_EQ(f.path, "model.layer_pattern");
  EXPECT_NE(f.message.find("found 'D' at layer 52"), std::string::npos) << f.message;
}

TEST(TrainingHybrid, LatentMoeFlopsCountTheLatentExperts) {
  // Nemotron 3 Super at 8,192 tokens. Weights a token touches (6 FLOPs each): a LatentMoE layer
  // 22 experts · 2·1024·2688 + router 4096·512 + latent projections 2·4096·1024 + shared expert
  // 2·4096·5376 = 175,636,480, 40 of them 7,025,459,200; Mamba-2 in_proj 4096·18560 + out_proj
  // 8192·4096 = 109,576,192, 40 of them 4,383,047,680; attention 35,651,584 · 8 = 285,212,672;
  // LM head 131072·4096 = 536,870,912: N = 12,230,590,464, 6N = 73,383,542,784. Attention
  // 6·32·(128 + 128)·8192 = 402,653,184 a layer, 8 of them 3,221,225,472; the SSD scan 3 ·
  // (128·(4·128·64 + 2·128·64) + 2·8·128·128) = 19,660,800 a layer, 40 of them 786,432,000:
  // 77,391,200,256 in all. With the experts on the 4096-wide hidden state instead, each routed
  // expert would be 4x as large: 40 · 22 · 3 · 5,505,024 · 6 = 87,199,580,160 more.
  const ModelSpec super = io::resolve_model(json("nemotron-3-super-120b-a12b"), "model");
  EXPECT_TRUE(near_rel(model_flops_per_token(super, 8192), 77391200256.0, 1e-12));
  ModelSpec wide = super;
  wide.moe_latent_size = 0;
  EXPECT_TRUE(near_rel(model_flops_per_token(wide, 8192) - model_flops_per_token(super, 8192),
                       87199580160.0 - 6.0 * 40 * 8388608, 1e-12));
}

TEST(TrainingHybrid, MtpModuleIsAnAttentionAndAnFfnBlock) {
  // A hybrid model's MTP module (Nemotron 3 Super's "*E") is priced as one attention block and
  // one FFN block of the model's kind, plus the projection, norms and LM head of any MTP module:
  // Nano with one module, beside Nano without, adds to the model FLOPs per token 6 · (attention
  // 2688·4096 + 2·2688·256 + 4096·2688 = 23,396,352; 6 experts · 2·2688·1856 + shared 2·2688·3712
  // + router 2688·128 = 80,166,912; projection 2·2688² = 14,450,688; head 131072·2688 =
  // 352,321,536) = 2,822,012,928, plus the attention of one layer 6·32·256·4096 = 201,326,592
  // (the response's figures have 6 significant digits).
  json req = request();
  req["model"] = "nemotron-3-nano-30b-a3b";
  req["workload"]["global_batch_size"] = 8;
  const json base = io::run(req);
  req["workload"]["mtp_layers"] = 1;
  const json mtp = io::run(req);
  EXPECT_TRUE(near_rel(mtp.at("model_flops_per_token").get<double>() -
                           base.at("model_flops_per_token").get<double>(),
                       2822012928.0 + 201326592.0, 1e-4));
  EXPECT_GT(breakdown_ms(mtp, "forward", "mtp_module"), 0);
}

TEST(TrainingMoe, ParallelFoldingSpansTheTensorRanksWithWholeExperts) {
  // Mixtral 8x7B on 8 H100, tp 2 (SP), dp 4, Tier 0: EP 4 over the data ranks with each expert
  // split over the 2 TP ranks (Megatron-Core's default expert_tensor_parallel_size = tp), or EP 8
  // over all 8 GPUs with whole experts (expert_tp 1, MoE parallel folding). Either way a GPU holds
  // one expert's weights a layer (8/4 halves or 8/8 wholes) and does the same FLOPs; under
  // folding each GPU permutes and dispatches only its own sequence shard, T/2 tokens.
  json folded{
      {"task", "training"},
      {"model", "mixtral-8x7b"},
      {"hardware", "h100-sxm"},
      {"num_gpus", 8},
      {"max_tier", 0},
      {"parallelism", {{"tp", 2}, {"dp", 4}, {"ep", 8}, {"expert_tp", 1}, {"sp", true}}},
      {"workload", {{"seq_len", 4096}, {"global_batch_size", 64}, {"micro_batch_size", 1}}}};
  json split = folded;
  split["parallelism"]["ep"] = 4;
  split["parallelism"].erase("expert_tp");
  const json a = io::run(folded), b = io::run(split);
  EXPECT_EQ(a.at("memory_per_gpu").at("weights_GB"), b.at("memory_per_gpu").at("weights_GB"));
  EXPECT_EQ(a.at("model_flops_per_token"), b.at("model_flops_per_token"));
  // moe_permute moves 2·(T + 2T)·h·2 B a layer: half the bytes under folding, the same 4
  // kernels · 2 us a layer and micro-batch (32 layers · 16 micro-batches: 4.096 ms).
  const double kernels_ms = 32 * 16 * 4 * 2e-3;
  EXPECT_NEAR(breakdown_ms(a, "forward", "moe_permute") - kernels_ms,
              (breakdown_ms(b, "forward", "moe_permute") - kernels_ms) / 2, 1e-3);
  EXPECT_LT(breakdown_ms(a, "communication", "ep_all_to_all"),
            breakdown_ms(b, "communication", "ep_all_to_all"));
  // EP 8 does not divide dp 4 without folding; expert_tp is 1 or tp.
  json bad = folded;
  bad["parallelism"].erase("expert_tp");
  test::Failure f = failure_of(bad);
  EXPECT_EQ(f.path, "parallelism.ep");
  EXPECT_NE(f.message.find("expert_tp 1"), std::string::npos) << f.message;
  bad["parallelism"]["expert_tp"] = 3;
  EXPECT_EQ(failure_of(bad).path, "parallelism.expert_tp");
}

TEST(TrainingFp4, GemmsRunAtTheFp4PeakAndEveryCastIsCounted) {
  // Llama-2-7B on 8 B200 (DDP), one 4,096-token micro-batch per GPU, Tier 0. The forward MLP,
  // [4096 x 4096]·[4096 x 22016] and [4096 x 11008]·[11008 x 4096], is compute-bound in both
  // formats with the same tiles and waves, so less its 2 kernels x 2 us per layer it is
  // 9000 / 2250 = 4x faster on the NVFP4 tensor cores. The casts of the GEMM inputs add to the
  // forward elementwise work 7.125 B (three 2-byte reads: amax, row-wise and column-wise cast;
  // two 0.5625-byte writes) per input element: Σk = 4096 (qkv) + 4096 (o) + 4096 (gate/up) +
  // 11008 (down) = 23,296 per token, x 4096 tokens = 679,870,464 B / (8000e9 · 0.85 B/s) =
  // 0.0999809 ms per layer, 3.19939 ms over 32. Weights are cast once per step: 202,375,168
  // linear weights per layer x 7.125 B / 6.8e12 B/s = 0.212047 ms + 2 us, x 32 = 6.84952 ms.
  json req = b200_one_micro_batch();
  const json bf16 = io::run(req);
  req["precision"] = {{"compute", "fp4"}};
  const json fp4 = io::run(req);
  const double fixed_ms = 32 * 2 * 0.002;
  EXPECT_TRUE(near_rel((breakdown_ms(bf16, "forward", "mlp") - fixed_ms) /
                           (breakdown_ms(fp4, "forward", "mlp") - fixed_ms),
                       4.0, 1e-4));
  EXPECT_TRUE(near_rel(breakdown_ms(fp4, "forward", "norm_elementwise") -
                           breakdown_ms(bf16, "forward", "norm_elementwise"),
                       3.19939, 1e-4));
  EXPECT_TRUE(near_rel(breakdown_ms(fp4, "forward", "fp4_weight_cast"), 6.84952, 1e-4));
  EXPECT_EQ(fp4.at("request").at("precision").at("compute"), "fp4");
  // MFU against the fp4 peak, 4x the bf16 one.
  EXPECT_TRUE(near_rel(fp4.at("peak_tflops_per_gpu").get<double>(), 9000, 1e-12));
}

TEST(TrainingMxfp8, Fp8TensorCoresWithTwoCastsPerOperand) {
  // Llama-2-7B on 8 B200 (DDP), one 4,096-token micro-batch per GPU, Tier 0, MXFP8 against fp8
  // tensorwise. The GEMMs run on the same FP8 tensor cores and are compute-bound, so the forward
  // MLP takes the same time. Each GEMM input is cast twice (row-wise for the forward / dgrad
  // GEMM, column-wise for wgrad: the E8M0 scales run along the reduction dimension), each
  // reading 2 B and writing 1 + 1/32 B: 6.0625 B per element against fp8's 3 B. The difference,
  // 3.0625 B x Σk 23,296 x 4,096 tokens = 292,225,024 B / (8000e9 · 0.85 B/s) = 0.0429743 ms
  // per layer, is 1.37518 ms over 32. Weights are cast once per step: 202,375,168 linear
  // weights per layer x 6.0625 B / 6.8e12 B/s = 0.180428 ms + 2 us, x 32 = 5.83764 ms.
  json req = b200_one_micro_batch();
  req["precision"] = {{"compute", "fp8"}};
  const json fp8 = io::run(req);
  req["precision"] = {{"compute", "mxfp8"}};
  const json mx = io::run(req);
  EXPECT_TRUE(near_rel(breakdown_ms(mx, "forward", "mlp"), breakdown_ms(fp8, "forward", "mlp"),
                       1e-5));  // the response rounds to 6 digits
  EXPECT_TRUE(near_rel(breakdown_ms(mx, "forward", "norm_elementwise") -
                           breakdown_ms(fp8, "forward", "norm_elementwise"),
                       1.37518, 1e-4));
  EXPECT_TRUE(near_rel(breakdown_ms(mx, "forward", "mxfp8_weight_cast"), 5.83764, 1e-4));
  EXPECT_EQ(breakdown_ms(mx, "forward", "fp8_weight_cast"), 0.0);
  // MFU against the fp8 peak (B200: 4,500 TFLOPS dense).
  EXPECT_TRUE(near_rel(mx.at("peak_tflops_per_gpu").get<double>(), 4500, 1e-12));
  EXPECT_GT(mx.at("step_time_s").get<double>(), fp8.at("step_time_s").get<double>());
}

TEST(TrainingMxfp8, NeedsBlockScaledTensorCores) {
  json req = request();
  req["precision"] = {{"compute", "mxfp8"}};  // H100: FP8 tensor cores without block scales
  const Failure f = failure_of(req);
  EXPECT_EQ(f.path, "precision.compute");
  EXPECT_NE(f.message.find("block scales"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("(got mxfp8)"), std::string::npos) << f.message;
}

TEST(TrainingBounds, MfuIsAgainstTheFastestPeakTheStepUses) {
  // A custom GPU whose fp4 peak (1 TFLOP/s) sits below its bf16 one (989.4): the step's attention
  // runs at the bf16 peak, so MFU against the fp4 peak came out 3.97 (issue 46). Against the
  // fastest peak in use (989.4 TFLOP/s) MFU and HFU are at most 1.
  json req = request();
  req["hardware"] =
      json{{"name", "custom gpu"},       {"vendor", "nvidia"}, {"hbm_GB", 80},
           {"hbm_bandwidth_GBps", 3350}, {"num_sms", 132},     {"scaleup_bandwidth_GBps", 450},
           {"scaleup_latency_us", 8},    {"gpus_per_node", 8}};
  req["hardware"]["dense_peak_TFLOPS"] = {{"bf16", 989.4}, {"fp4", 1}};
  req["precision"] = {{"compute", "fp4"}};
  const json r = io::run(req);
  EXPECT_DOUBLE_EQ(r.at("peak_tflops_per_gpu").get<double>(), 989.4);
  EXPECT_LE(r.at("mfu").get<double>(), 1.0);
  EXPECT_LE(r.at("hfu").get<double>(), 1.0);
}

TEST(TrainingBounds, MfuAboveOneAtExtremeSequenceIsANamedError) {
  // Qwen3-30B-A3B at 10M tokens per sequence on 64 H100 (FSDP, Tier 0): MFU's s x s attention
  // term (twice the causal work executed) gave MFU 1.03 at HFU 0.51; it is refused by name.
  json req = request();
  req["model"] = "qwen3-30b-a3b";
  req["num_gpus"] = 64;
  req["parallelism"] = {{"fsdp", "full_shard"}};
  req["workload"] = {{"seq_len", 10000000}, {"global_batch_size", 64}};
  const Failure f = failure_of(req);
  EXPECT_EQ(f.path, "workload.seq_len");
  EXPECT_NE(f.message.find("> 1 (HFU 0.51"), std::string::npos) << f.message;
}

TEST(TrainingFp4, Bf16LastLayersAreA16BitShareOfTheLayers) {
  // All 32 layers kept in BF16 is the BF16 step: the same GEMMs, no cast of inputs and no weight
  // cast. Half of them (16) puts the forward MLP halfway between the two.
  json req = b200_one_micro_batch();
  const json bf16 = io::run(req);
  req["precision"] = {{"compute", "fp4"}};
  const json fp4 = io::run(req);
  req["precision"]["bf16_last_layers"] = 32;
  const json all16 = io::run(req);
  EXPECT_TRUE(
      near_rel(all16.at("step_time_s").get<double>(), bf16.at("step_time_s").get<double>(), 1e-12));
  req["precision"]["bf16_last_layers"] = 16;
  const json half = io::run(req);
  EXPECT_TRUE(
      near_rel(breakdown_ms(half, "forward", "mlp"),
               0.5 * (breakdown_ms(bf16, "forward", "mlp") + breakdown_ms(fp4, "forward", "mlp")),
               1e-5));  // the response rounds to 6 digits
  EXPECT_TRUE(near_rel(breakdown_ms(half, "forward", "fp4_weight_cast"),
                       0.5 * breakdown_ms(fp4, "forward", "fp4_weight_cast"),
                       1e-5));  // the response rounds to 6 digits
}

TEST(TrainingFp4, BadPrecisionIsNamed) {
  json req = request();
  req["precision"] = {{"compute", "fp4"}};  // H100: no FP4 tensor cores
  EXPECT_EQ(failure_of(req).path, "precision.compute");
  req["hardware"] = "b200";
  req["precision"] = {{"compute", "bf16"}, {"bf16_last_layers", 4}};
  const Failure f = failure_of(req);
  EXPECT_EQ(f.path, "precision.bf16_last_layers");
  EXPECT_NE(f.message.find("needs precision.compute fp8, mxfp8 or fp4"), std::string::npos)
      << f.message;
  req["precision"] = {{"compute", "fp4"}, {"bf16_last_layers", 33}};
  EXPECT_EQ(failure_of(req).path, "precision.bf16_last_layers");
}

TEST(TrainingMtp, ModuleCostsALayerAProjectionAndTheHeadAgain) {
  // Llama-2-7B on 8 H100 (DDP), one 4,096-token micro-batch, Tier 0, one MTP module. Its forward
  // is one layer's forward (the mean of the 32 without MTP), the embedding and LM head forward
  // again, the projection [4096 x 8192]·[8192 x 4096]: 2.74878e11 FLOPs / (989.4e12 · 0.8 ·
  // 1024 tiles / (8 waves · 132 SMs)) = 0.358131 ms + 2 us; and the two norms, 2 · 4 · 4096 ·
  // 4096 · 2 B / (3.35e12 · 0.85) = 0.0942706 ms + 2 · 2 us.
  json req = request();
  req["workload"]["global_batch_size"] = 8;
  req["workload"]["mtp_layers"] = 0;
  const json base = io::run(req);
  double layers_fwd = 0;
  for (const json& b : base.at("breakdown")) {
    if (b.at("phase") == "forward" && b.at("op") != "embedding" && b.at("op") != "lm_head") {
      layers_fwd += b.at("time_ms").get<double>();
    }
  }
  req["workload"]["mtp_layers"] = 1;
  const json mtp = io::run(req);
  const double expected = layers_fwd / 32 + breakdown_ms(base, "forward", "embedding") +
                          breakdown_ms(base, "forward", "lm_head") + 0.360131 + 0.0982706;
  EXPECT_TRUE(near_rel(breakdown_ms(mtp, "forward", "mtp_module"), expected, 1e-4));
  // Model FLOPs per token: 6 · (attention 4h² = 67,108,864 + FFN 3·h·I = 135,266,304 + projection
  // 2h² = 33,554,432 + head V·h = 131,072,000) + attention 12 · 32 · 128 · 4096 = 201,326,592:
  // 2,403,336,192 more.
  EXPECT_TRUE(near_rel(mtp.at("model_flops_per_token").get<double>() -
                           base.at("model_flops_per_token").get<double>(),
                       2.403336192e9, 1e-4));
  // Weights: 67,108,864 + 135,266,304 + 2 · 4096 (layer norms) + 33,554,432 + 3 · 4096 (its
  // norms) = 235,950,080 parameters x 2 B = 0.471900 GB more on the (one) stage.
  EXPECT_TRUE(near_rel(mtp.at("memory_per_gpu").at("weights_GB").get<double>() -
                           base.at("memory_per_gpu").at("weights_GB").get<double>(),
                       0.4719, 1e-3));
}

TEST(TrainingMtp, DeepSeekTrainsItsModuleUnlessAdaptersOrTheRequestSayOtherwise) {
  json req{{"task", "training"},
           {"model", "deepseek-v3"},
           {"hardware", "h200"},
           {"num_gpus", 256},
           {"parallelism", {{"pp", 8}, {"ep", 32}, {"zero", 1}}},
           {"workload", {{"seq_len", 4096}, {"global_batch_size", 1024}, {"micro_batch_size", 1}}},
           {"precision", {{"compute", "fp8"}}}};
  const json r = io::run(req);
  EXPECT_EQ(r.at("request").at("workload").at("mtp_layers"), 1);  // the preset's one module
  EXPECT_GT(breakdown_ms(r, "forward", "mtp_module"), 0);
  req["workload"]["mtp_layers"] = 0;
  EXPECT_EQ(breakdown_ms(io::run(req), "forward", "mtp_module"), 0);
  req["workload"].erase("mtp_layers");
  req["lora"] = {{"method", "lora"}};
  EXPECT_EQ(io::run(req).at("request").at("workload").at("mtp_layers"), 0);
  req["workload"]["mtp_layers"] = 1;
  EXPECT_EQ(failure_of(req).path, "workload.mtp_layers");
  req.erase("lora");
  req["workload"]["mtp_layers"] = 17;
  EXPECT_EQ(failure_of(req).path, "workload.mtp_layers");
}

// ---- Framework profiles: presets/frameworks/<id>.json, read by the JSON layer ----

TEST(TrainingFrameworkPresets, FittedConstantsAreTheCommittedOnes) {
  // presets/frameworks/fitted.json: per architecture measured by two sources or more, attention
  // 1.75 and compute 1.08968 on Ampere, attention 2.5 and compute 1.18662 on Hopper (over the
  // measured attention kernels: FlashAttention-2 in training reaches a smaller share of the
  // H100's peak than the inference kernels measured), attention 1.5 and compute 1.23184 on
  // Blackwell; elsewhere the fit over all sources at one common attention factor, 1.75, and the
  // geometric mean of the architecture scales fitted at that factor, 1.18916; overlap 1, no
  // overhead.
  const TrainingFramework* f = io::framework_profile("fitted");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->tier, 1);
  ASSERT_NE(f->scales_for("hopper"), nullptr);
  EXPECT_TRUE(near_rel(f->scales_for("hopper")->compute, 1.18662, 1e-9));
  EXPECT_TRUE(near_rel(f->scales_for("hopper")->attention, 2.5, 1e-9));
  EXPECT_TRUE(near_rel(f->scales_for("ampere")->compute, 1.08968, 1e-9));
  EXPECT_TRUE(near_rel(f->scales_for("ampere")->attention, 1.75, 1e-9));
  // Blackwell is measured by two sources now (torchtitan and Megatron-Bridge): its trainers need
  // an attention factor of 1.5 and a compute scale of 1.23184.
  ASSERT_NE(f->scales_for("blackwell"), nullptr);
  EXPECT_TRUE(near_rel(f->scales_for("blackwell")->compute, 1.23184, 1e-9));
  EXPECT_TRUE(near_rel(f->scales_for("blackwell")->attention, 1.5, 1e-9));
  EXPECT_TRUE(near_rel(f->unmeasured_scale, 1.18916, 1e-9));
  EXPECT_TRUE(near_rel(f->unmeasured_attention, 1.75, 1e-9));
  EXPECT_DOUBLE_EQ(f->comm_overlap, 1.0);
  EXPECT_DOUBLE_EQ(f->step_overhead_s, 0.0);
  // The former per-trainer profiles take the same constants under their own ids.
  for (const char* id : {"pytorch_fsdp", "megatron"}) {
    const TrainingFramework* alias = io::framework_profile(id);
    ASSERT_NE(alias, nullptr) << id;
    EXPECT_EQ(alias->id, id);
    EXPECT_EQ(alias->tier, 1);
    ASSERT_NE(alias->scales_for("hopper"), nullptr);
    EXPECT_DOUBLE_EQ(alias->scales_for("hopper")->compute, f->scales_for("hopper")->compute);
    EXPECT_DOUBLE_EQ(alias->unmeasured_scale, f->unmeasured_scale);
  }
  const TrainingFramework* generic = io::framework_profile("generic");
  ASSERT_NE(generic, nullptr);
  EXPECT_EQ(generic->tier, 0);
  EXPECT_TRUE(generic->scales.empty());
  EXPECT_DOUBLE_EQ(generic->unmeasured_scale, 1.0);
  EXPECT_EQ(io::framework_profile("fsdp"), nullptr);
}

json framework_doc() {
  return json{{"schema_version", 1},
              {"id", "custom"},
              {"name", "n"},
              {"source", "s"},
              {"notes", "n"},
              {"tier", 0},
              {"framework",
               {{"comm_overlap", 1.0},
                {"step_overhead_ms", 0},
                {"architectures", {{"hopper", {{"compute_scale", 1.2}, {"attention_scale", 2}}}}},
                {"unmeasured", {{"compute_scale", 1.1}, {"attention_scale", 1.5}}}}}};
}

std::string framework_error(const json& doc) {
  try {
    (void)io::read_framework_profile(doc, "");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TrainingFrameworkPresets, FilesAreReadStrictly) {
  const TrainingFramework f = io::read_framework_profile(framework_doc(), "");
  ASSERT_EQ(f.scales.size(), 1u);
  EXPECT_EQ(f.scales[0].family, "hopper");
  EXPECT_DOUBLE_EQ(f.scales[0].compute, 1.2);
  EXPECT_DOUBLE_EQ(f.unmeasured_attention, 1.5);

  json d = framework_doc();
  d["framework"]["architectures"]["hopper"]["compute_scale"] = 0.9;
  EXPECT_EQ(framework_error(d),
            "framework.architectures.hopper.compute_scale: must be between 1 and 2.5 (got 0.9)");
  d = framework_doc();
  d["framework"]["unmeasured"]["attention_scale"] = 3.5;
  EXPECT_EQ(framework_error(d),
            "framework.unmeasured.attention_scale: must be between 1 and 3 (got 3.5)");
  d = framework_doc();
  d["framework"]["compute_scale"] = 1.2;
  EXPECT_EQ(framework_error(d).rfind("framework.compute_scale: unknown key", 0), 0u)
      << framework_error(d);
  d = framework_doc();
  d["framework"]["architectures"]["hoper"] = d["framework"]["architectures"]["hopper"];
  EXPECT_EQ(framework_error(d),
            "framework.architectures.hoper: unknown key (did you mean \"hopper\"?)");
  d = framework_doc();
  d["tier"] = 1;
  EXPECT_EQ(framework_error(d), "fit: a Tier-1 profile must say how it was fitted");
  d = framework_doc();
  d["framework"]["comm_overlap"] = 1.5;
  EXPECT_EQ(framework_error(d), "framework.comm_overlap: must be between 0 and 1 (got 1.5)");
}

}  // namespace
}  // namespace flopcast
