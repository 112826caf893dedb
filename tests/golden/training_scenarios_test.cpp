// SPDX-License-Identifier: MIT
// Benchmark scenarios T1–T4 (label: golden): the training estimator next to the physics hand
// calculation. Requests run at Tier 0 with the `generic` framework (no fitted constants): GEMMs
// at 0.8 · dense peak after tile and wave quantization, attention at 0.6 · peak (backward 2.5×
// the forward), 2 us per kernel, collectives at 0.8 of the link bandwidth. Where the benchmark
// suite's own expectation is physically wrong, the comment says why and the test follows physics.
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::near_rel;

json train(json request) {
  request["task"] = "training";
  request["max_tier"] = 0;
  return io::run(request);
}

/// Sum of the breakdown's time_ms over a phase and op ("" matches any).
double ms(const json& r, const std::string& phase, const std::string& op) {
  double t = 0;
  for (const json& b : r["breakdown"]) {
    if ((phase.empty() || b["phase"] == phase) && (op.empty() || b["op"] == op)) {
      t += b["time_ms"].get<double>();
    }
  }
  return t;
}

double flops(const json& r, const std::string& op) {
  double f = 0;
  for (const json& b : r["breakdown"]) {
    if (b["op"] == op) f += b["flops"].get<double>();
  }
  return f;
}

json llama7b_one_gpu(const std::string& hw, int seq, int batch) {
  return json{
      {"model", "llama-2-7b"},
      {"hardware", hw},
      {"num_gpus", 1},
      {"workload", {{"seq_len", seq}, {"global_batch_size", batch}, {"micro_batch_size", batch}}}};
}

// ---- T1: single-GPU kernels ----

TEST(ScenarioT1, T1_1AttentionForwardBackwardH100) {
  // Llama-2-7B, b=4, s=2048, H100 bf16. Forward FLOPs per layer (causal, QKᵀ and PV):
  // 4 · 2 · 128 · 32 · 2048 · 2049 = 1.3757e11. 16 query blocks · 32 heads · 4 = 2048 blocks on
  // 132 SMs: 16 waves, wave efficiency 2048/2112 = 0.9697. 1.3757e11 / (0.6 · 989.4e12 · 0.9697)
  // = 0.2390 ms + 2 us = 0.2410 ms; backward 2.5× = 0.6025 ms; together 0.8435 ms per layer.
  const json r = train(llama7b_one_gpu("h100-sxm", 2048, 4));
  EXPECT_TRUE(near_rel(ms(r, "forward", "attention") / 32, 0.2410, 0.005));
  EXPECT_TRUE(near_rel(ms(r, "backward", "attention") / 32, 0.6025, 0.005));
  EXPECT_TRUE(near_rel(flops(r, "attention") / 32, 1.3757e11 * 3.5, 0.001));
}

TEST(ScenarioT1, T1_2LongSequenceAttention) {
  // s=8192, b=1: 2 · 128 · 32 · 8192 · 8193 = 5.4986e11 FLOPs per layer forward, 3.9973× T1.1
  // (same tokens, each attending 4× as far). The suite's "~4× with FlashAttention because it is
  // linear in seq_len" gets the right factor for the wrong reason: FlashAttention's FLOPs stay
  // quadratic; what it makes linear is memory. 64 blocks · 32 heads = 2048 blocks as in T1.1:
  // 5.4986e11 / (593.64e12 · 0.9697) = 0.9552 ms + 2 us = 0.9572 ms.
  const json r = train(llama7b_one_gpu("h100-sxm", 8192, 1));
  EXPECT_TRUE(near_rel(ms(r, "forward", "attention") / 32, 0.9572, 0.005));
  const json t11 = train(llama7b_one_gpu("h100-sxm", 2048, 4));
  EXPECT_TRUE(near_rel(ms(r, "", "attention") / ms(t11, "", "attention"), 3.97, 0.01));
}

TEST(ScenarioT1, T1_3MlpForwardBackward) {
  // T = 4 · 2048 = 8192 tokens; SwiGLU: 3 GEMMs of 2 · T · 4096 · 11008 = 7.3873e11 FLOPs
  // forward, and backward = dgrad + wgrad = 2× forward: 6.6486e12 FLOPs per layer. The suite's
  // 2.9 TFLOP counts the backward as one forward (and misplaces a factor); at 0.8 · 989.4e12 and
  // wave efficiencies 0.97-0.99 the layer takes 6.6486e12 / 791.5e12 / ~0.984 = 8.54 ms.
  const json r = train(llama7b_one_gpu("h100-sxm", 2048, 4));
  EXPECT_TRUE(near_rel(flops(r, "mlp") / 32, 6.6486e12, 0.001));
  const double layer_ms = (ms(r, "forward", "mlp") + ms(r, "backward", "mlp")) / 32;
  EXPECT_GT(layer_ms, 6.6486e12 / 791.52e12 * 1e3);  // 8.40 ms at 100% wave efficiency
  EXPECT_TRUE(near_rel(layer_ms, 8.54, 0.01));
}

TEST(ScenarioT1, T1_4AttentionA100VersusH100) {
  // A100: 0.6 · 312e12 = 187.2e12; 2048 blocks on 108 SMs: 19 waves, 2048/2052 = 0.9981.
  // 1.3757e11 / (187.2e12 · 0.9981) = 0.7363 ms + 2 us = 0.7383 ms forward per layer. H100 is
  // 0.7383 / 0.2410 = 3.06× faster: the dense-peak ratio 3.17 less H100's wave quantization (the
  // suite's 2-3× credits bandwidth and L2, which compute-bound FlashAttention hardly uses).
  const json a100 = train(llama7b_one_gpu("a100-sxm-80g", 2048, 4));
  const json h100 = train(llama7b_one_gpu("h100-sxm", 2048, 4));
  EXPECT_TRUE(near_rel(ms(a100, "forward", "attention") / 32, 0.7383, 0.005));
  EXPECT_TRUE(near_rel(ms(a100, "", "attention") / ms(h100, "", "attention"), 3.06, 0.01));
}

TEST(ScenarioT1, T1_5Gpt3LayerIteration) {
  // One GPT-3 layer: 12 h² + 13 h = 1.812e9 weights (the suite's 1.8 B); b=1, s=2048:
  // 6 · 1.812e9 · 2048 = 2.2266e13 FLOPs of linears plus attention 3.5 · 2·128·96·2048·2049 =
  // 3.61e11 → 2.2627e13 FLOPs per layer. At 0.8 · 989.4e12 that is 28.6 ms; tile and wave
  // quantization and the memory-bound norms/GeLU bring it to ~30.1 ms.
  const json r = train(
      json{{"model", "gpt-3-175b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 1},
           {"workload", {{"seq_len", 2048}, {"global_batch_size", 1}, {"micro_batch_size", 1}}}});
  double layer_flops = 0, layer_ms = 0;
  for (const char* op : {"qkv_proj", "o_proj", "mlp", "attention", "norm_elementwise"}) {
    layer_flops += flops(r, op) / 96;
    layer_ms += ms(r, "", op) / 96;
  }
  EXPECT_TRUE(near_rel(layer_flops, 2.2627e13, 0.002));
  EXPECT_GT(layer_ms, 28.6);
  EXPECT_LT(layer_ms, 28.6 * 1.08);
}

// ---- T2: communication ----

TEST(ScenarioT2, T2_1DataParallelAllReduce) {
  // Llama-2-7B gradients in bf16: 2 · 6.7384e9 = 13.477 GB (the suite's 28 GB is fp32). Ring:
  // 2 · 7/8 · 13.477e9 / (0.8 · 450e9) = 65.5 ms (suite: 54 ms at 900 GB/s, NVLink's two
  // directions added). comm_overlap 0 leaves the whole all-reduce exposed.
  const json r = train(
      json{{"model", "llama-2-7b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 8},
           {"parallelism", {{"dp", 8}}},
           {"framework", {{"comm_overlap", 0}}},
           {"workload", {{"seq_len", 4096}, {"global_batch_size", 8}, {"micro_batch_size", 1}}}});
  EXPECT_TRUE(near_rel(ms(r, "communication", "dp_all_reduce"), 65.5, 0.01));
}

TEST(ScenarioT2, T2_2TensorParallelCollectives) {
  // Llama-2-70B, TP=8 with SP, b=1, s=4096: each of 4 all-gathers + 4 reduce-scatters per layer
  // (2 forward, 2 backward) moves 7/8 of 4096 · 8192 · 2 B = 67.1 MB: 0.1631 ms at 360 GB/s.
  // 80 layers · 8 · 0.1631 = 104.4 ms plus one latency per collective.
  const json r = train(
      json{{"model", "llama-2-70b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 8},
           {"parallelism", {{"tp", 8}, {"sp", true}}},
           {"workload", {{"seq_len", 4096}, {"global_batch_size", 1}, {"micro_batch_size", 1}}}});
  const double t = ms(r, "communication", "tp_collectives");
  EXPECT_GT(t, 104.4);
  EXPECT_LT(t, 104.4 * 1.08);
}

TEST(ScenarioT2, T2_3PipelineBubble) {
  // GPT-3, PP=8, DP=8, 64 micro-batches of 1 per step: 1F1B bubble = (p − 1) stage slots over
  // m + p − 1: 7/71 = 9.86% (a little less of the step, which also holds the optimizer and
  // communication). Interleaved with v=2: 3.5/67.5 = 5.19%: the suite's "< 15% with interleaving"
  // holds, and plain 1F1B already gets there with 64 micro-batches.
  json req{{"model", "gpt-3-175b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 64},
           {"parallelism", {{"pp", 8}, {"dp", 8}}},
           {"workload", {{"seq_len", 2048}, {"global_batch_size", 512}, {"micro_batch_size", 1}}}};
  const json plain = train(req);
  EXPECT_EQ(plain["num_micro_batches"], 64);
  EXPECT_TRUE(near_rel(plain["bubble_fraction"], 7.0 / 71, 0.05));
  req["parallelism"]["vpp"] = 2;
  EXPECT_TRUE(near_rel(train(req)["bubble_fraction"], 3.5 / 67.5, 0.05));
}

TEST(ScenarioT2, T2_4FsdpOverlap) {
  // Llama-2-13B FSDP full shard on 8 H100: per micro-batch the 40 layers' 12.69e9 weights are
  // gathered twice (forward, backward) and their gradients reduce-scattered: each 7/8 · 25.4 GB
  // / 360 GB/s = 61.7 ms, against ~322 ms forward and ~656 ms backward compute, so prefetch
  // hides all but the first layer's gather: 61.7/40 = 1.54 ms per pass, 2 micro-batches →
  // 3.08 ms exposed of 370 ms moved (99.2% overlapped).
  const json r = train(
      json{{"model", "llama-2-13b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 8},
           {"parallelism", {{"fsdp", "full_shard"}}},
           {"workload", {{"seq_len", 4096}, {"global_batch_size", 16}, {"micro_batch_size", 1}}}});
  EXPECT_TRUE(near_rel(ms(r, "communication", "fsdp_forward"), 3.08, 0.03));
  EXPECT_TRUE(near_rel(ms(r, "communication", "fsdp_backward"), 3.08, 0.03));
}

TEST(ScenarioT2, T2_5ExpertParallelAllToAll) {
  // Mixtral-8x7B, EP=8 within a node: per MoE layer a rank sends its 4096 tokens × top-2 ×
  // 4096 · 2 B = 67.1 MB in dispatch and again in combine, forward and backward: 4 all-to-alls,
  // each 7/8 · 67.1 MB / 360 GB/s = 0.163 ms; 32 layers · 4 · 0.163 = 20.9 ms plus latencies.
  const json r = train(
      json{{"model", "mixtral-8x7b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 32},
           {"parallelism", {{"dp", 32}, {"ep", 8}, {"zero", 1}}},
           {"workload", {{"seq_len", 4096}, {"global_batch_size", 32}, {"micro_batch_size", 1}}}});
  const double t = ms(r, "communication", "ep_all_to_all");
  EXPECT_GT(t, 20.9);
  EXPECT_LT(t, 20.9 * 1.08);
}

TEST(ScenarioT2, T2_6CrossNodeVersusNvlink) {
  // Llama-2-70B TP=8, DP=4 on 4 nodes: each GPU all-reduces its 8.62e9 weights' bf16 gradients
  // with one peer per node: 2 · 3/4 · 17.24 GB = 25.87 GB over IB NDR 400 Gb/s = 50 GB/s
  // (0.8 → 40 GB/s): 647 ms; the same in one 32-GPU NVLink domain: 25.87 / 360 = 71.9 ms: 9×,
  // the per-direction bandwidth ratio 450/50 (the suite's 18× sets NVLink's two directions
  // against one direction of IB).
  json req{{"model", "llama-2-70b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 32},
           {"parallelism", {{"tp", 8}, {"dp", 4}}},
           {"framework", {{"comm_overlap", 0}}},
           {"workload", {{"seq_len", 4096}, {"global_batch_size", 4}, {"micro_batch_size", 1}}}};
  const double ib = ms(train(req), "communication", "dp_all_reduce");
  req["gpus_per_node"] = 32;
  const double nvlink = ms(train(req), "communication", "dp_all_reduce");
  EXPECT_TRUE(near_rel(ib, 647, 0.02));
  EXPECT_TRUE(near_rel(nvlink, 71.9, 0.02));
  EXPECT_TRUE(near_rel(ib / nvlink, 9.0, 0.02));
}

// ---- T3: scaling and memory ----

TEST(ScenarioT3, T3_1MaxBatchLlama7bA100) {
  // AdamW with fp32 master weights and two fp32 moments: 2 + 2 + 12 = 16 B/param · 6.738e9 =
  // 107.8 GB before any activation: does not fit 80 GB at any batch. The suite's "bs ≈ 3"
  // forgets the master weights (counts 14 + 28 + 14 = 56 GB). With 8-bit Adam (2 + 2 + 4 + 2 =
  // 10 B/param = 67.4 GB) + 2 GB reserve, one sequence of 2048 tokens needs 32 layers ·
  // 2048 · 131,712 B = 8.63 GB of activations (+0.39 GB of logits at 6 B · 2048 · 32000, +0.017
  // GB embedding output): 78.43 GB, b=1 fits, b=2 not;
  // with full recomputation each sequence keeps 32 · 2048 · 8192 B = 0.54 GB, plus one layer's
  // 0.27 GB while it is recomputed and 0.39 GB of logits: b = 8 → 67.39 + 2 + 8 · 1.20 = 79.0 GB
  // fits, b = 16 does not.
  json req{{"model", "llama-2-7b"},
           {"hardware", "a100-sxm-80g"},
           {"num_gpus", 1},
           {"workload", {{"seq_len", 2048}, {"global_batch_size", 64}}}};
  const json adamw = train(req);
  EXPECT_FALSE(adamw["memory_per_gpu"]["fits"]);
  EXPECT_EQ(adamw["max_micro_batch_size"], 0);
  req["optimizer"] = "adam_8bit";
  const json adam8 = train(req);
  EXPECT_EQ(adam8["max_micro_batch_size"], 1);
  EXPECT_TRUE(near_rel(adam8["memory_per_gpu"]["total_GB"], 78.43, 0.002));
  req["workload"]["recompute"] = "full";
  EXPECT_EQ(train(req)["max_micro_batch_size"], 8);
}

TEST(ScenarioT3, T3_2CheckpointingTradeoff) {
  // Llama-2-13B, b=1, s=4096. Activations per layer: none 4096 · (8 · 5120 + 2 · 120 · 128 +
  // 2 · 40 · 128 + 6 · 13824 + 4 · 40 (fp32 log-sum-exp)) = 4096 · 165,024 B = 0.6759 GB; full:
  // 4096 · 2 · 5120 = 0.0419 GB: 16.1× less (the suite's ~5×; Korthikanti's 34·sbh vs 2·sbh is
  // 17×). Recomputing the forward adds a third to the compute: throughput 1.31× lower. Neither fits
  // one H100: weights, gradients and AdamW states alone are 16 B · 13.0e9 = 208 GB.
  json req{{"model", "llama-2-13b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 1},
           {"workload", {{"seq_len", 4096}, {"global_batch_size", 8}, {"micro_batch_size", 1}}}};
  const json none = train(req);
  req["workload"]["recompute"] = "full";
  const json full = train(req);
  EXPECT_TRUE(near_rel(none["memory_per_gpu"]["activations_per_layer_GB"], 0.6759, 0.002));
  EXPECT_TRUE(near_rel(full["memory_per_gpu"]["activations_per_layer_GB"], 0.041943, 0.001));
  EXPECT_TRUE(near_rel(none["tokens_per_s"].get<double>() / full["tokens_per_s"].get<double>(),
                       1.31, 0.02));
  EXPECT_FALSE(none["memory_per_gpu"]["fits"]);
  EXPECT_FALSE(full["memory_per_gpu"]["fits"]);
}

TEST(ScenarioT3, T3_3StrongScaling) {
  // Llama-2-70B, TP=8 + SP, ZeRO-1, 64 sequences of 4096 per step. 8 GPUs do not fit: 8.62e9
  // weights per GPU · (2 + 2 + 12/dp) B = 138 GB at dp = 1 (99.8 GB at dp = 2). Per-GPU throughput
  // stays within ~1% from 8 to 16 GPUs and falls to ~89% at 64: the gradient reduce-scatter and
  // all-gather (17 GB each way over 50 GB/s IB per GPU) stop hiding behind the one micro-batch
  // backward they overlap once each rank has only 8 micro-batches.
  auto run = [](int gpus) {
    return train(json{{"model", "llama-2-70b"},
                      {"hardware", "h100-sxm"},
                      {"num_gpus", gpus},
                      {"parallelism", {{"tp", 8}, {"sp", true}, {"zero", 1}}},
                      {"workload",
                       {{"seq_len", 4096},
                        {"global_batch_size", 64},
                        {"micro_batch_size", 1},
                        {"recompute", "selective"}}}});
  };
  const json g8 = run(8), g16 = run(16), g64 = run(64);
  EXPECT_FALSE(g8["memory_per_gpu"]["fits"]);
  EXPECT_TRUE(g64["memory_per_gpu"]["fits"]);
  const double e16 =
      g16["tokens_per_s_per_gpu"].get<double>() / g8["tokens_per_s_per_gpu"].get<double>();
  const double e64 =
      g64["tokens_per_s_per_gpu"].get<double>() / g8["tokens_per_s_per_gpu"].get<double>();
  EXPECT_GT(e16, 0.98);
  EXPECT_GT(e64, 0.85);
  EXPECT_LT(e64, 0.93);
}

TEST(ScenarioT3, T3_4TrainingTime) {
  // Llama-3-8B at s=8192: N_matmul = 32 · (2 · 4096² + 2 · 4096 · 1024 + 3 · 4096 · 14336) +
  // 128256 · 4096 = 7.504e9; model FLOPs per token 6 · 7.504e9 + 12 · 32 · 4096 · 8192 = 5.791e10
  // (the suite's 6 · 8e9 = 4.8e10 leaves out the attention, 22% at this length). Time =
  // 1e12 · 5.791e10 / (64 · 989.4e12 · MFU): 17.6 days would be MFU 0.6 on these FLOPs (21.2
  // days MFU 0.5); the Tier-0 physics-only estimate is faster (MFU ≈ 0.75, 14.2 days).
  // GPU-hours = time · 64 / 3600.
  const json r = train(
      json{{"model", "llama-3-8b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 64},
           {"parallelism", {{"fsdp", "full_shard"}}},
           {"workload", {{"seq_len", 8192}, {"global_batch_size", 512}, {"total_tokens", 1e12}}},
           {"cost_per_gpu_hour_usd", 2.5}});
  EXPECT_TRUE(near_rel(r["model_flops_per_token"], 5.791e10, 0.001));
  const double t = r["total_time_s"];
  EXPECT_TRUE(near_rel(t, 1e12 / r["tokens_per_s"].get<double>(), 1e-5));
  EXPECT_TRUE(near_rel(t, 1e12 * 5.791e10 / (64 * 989.4e12 * r["mfu"].get<double>()), 0.001));
  EXPECT_TRUE(near_rel(r["gpu_hours"], t * 64 / 3600, 1e-5));
  EXPECT_TRUE(near_rel(r["cost_usd"], r["gpu_hours"].get<double>() * 2.5, 1e-5));
  EXPECT_GT(t / 86400, 12);
  EXPECT_LT(t / 86400, 17.6);
  EXPECT_TRUE(r["memory_per_gpu"]["fits"]);
}

TEST(ScenarioT3, T3_5H100VersusA100) {
  // Same FSDP run of Llama-2-7B on 8 GPUs: compute-bound, so the ratio is the dense-peak ratio
  // 989.4/312 = 3.17 times the A100's better wave efficiency (108 SMs): ~2.97. The suite's
  // 2.5-3× is what eager frameworks measure (llm-foundry 7B: 2.3×; the pytorch_fsdp profile's
  // fitted scales reproduce that), not the hardware's ratio.
  auto run = [](const char* hw) {
    return train(json{
        {"model", "llama-2-7b"},
        {"hardware", hw},
        {"num_gpus", 8},
        {"parallelism", {{"fsdp", "full_shard"}}},
        {"workload", {{"seq_len", 4096}, {"global_batch_size", 64}, {"micro_batch_size", 2}}}});
  };
  const double ratio = run("h100-sxm")["tokens_per_s"].get<double>() /
                       run("a100-sxm-80g")["tokens_per_s"].get<double>();
  EXPECT_TRUE(near_rel(ratio, 2.97, 0.02));
}

// ---- T4: advanced ----

TEST(ScenarioT4, T4_1Fp8VersusBf16) {
  // fp8 halves GEMM time (mlp forward 364.9 → 182.9 ms over 32 layers) but attention stays
  // bf16 and casting activations to fp8 adds memory traffic (elementwise forward 63.6 → 89.3 ms
  // over the 8 micro-batches); the weights are cast once per step (6.89 ms: 3 B · 6.476e9 /
  // (3350e9 · 0.85) + 32 · 2 us), not per micro-batch and pass as before (1.37×): 1.515× overall,
  // not the suite's ~2×. Master weights and AdamW states are kept: the optimizer memory is
  // unchanged (80.86 GB = 12 B · 6.738e9).
  json req = llama7b_one_gpu("h100-sxm", 4096, 8);
  req["workload"]["micro_batch_size"] = 1;
  const json bf16 = train(req);
  req["precision"] = {{"compute", "fp8"}};
  const json fp8 = train(req);
  EXPECT_TRUE(near_rel(ms(fp8, "forward", "mlp") / ms(bf16, "forward", "mlp"), 0.50, 0.02));
  EXPECT_TRUE(near_rel(ms(fp8, "forward", "fp8_weight_cast"), 6.887, 0.001));
  EXPECT_TRUE(near_rel(fp8["tokens_per_s"].get<double>() / bf16["tokens_per_s"].get<double>(),
                       1.515, 0.01));
  EXPECT_EQ(fp8["memory_per_gpu"]["optimizer_GB"], bf16["memory_per_gpu"]["optimizer_GB"]);
  EXPECT_TRUE(near_rel(bf16["memory_per_gpu"]["optimizer_GB"], 80.861, 0.001));
}

TEST(ScenarioT4, T4_2SequenceParallel) {
  // Llama-3-70B, TP=8, s=32768, selective recompute. Per token per layer without SP: the norm
  // and GEMM inputs 8 · 8192 = 65,536 B stay replicated on every TP rank, the TP-sharded part is
  // (2 · (64 + 16) · 128 + 2 · 64 · 128 + 6 · 28672) / 8 = 26,112 B: 91,648 B. SP shards the
  // replicated part too: 8,192 + 26,112 = 34,304 B: 2.67× less, not the suite's 8× (TP already
  // divides most activations). SP's all-gather + reduce-scatter move the bytes of the all-reduce
  // they replace: the TP communication time stays the same (± latency).
  json req{{"model", "llama-3-70b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 8},
           {"parallelism", {{"tp", 8}}},
           {"workload",
            {{"seq_len", 32768},
             {"global_batch_size", 1},
             {"micro_batch_size", 1},
             {"recompute", "selective"}}}};
  const json tp = train(req);
  req["parallelism"]["sp"] = true;
  const json sp = train(req);
  // 32768 · (91,648 + 4 · 64/8) B = 3.00417 GB; with SP 32768 · (34,304 + 32) = 1.12512 GB.
  EXPECT_TRUE(near_rel(tp["memory_per_gpu"]["activations_per_layer_GB"], 3.00417, 1e-4));
  EXPECT_TRUE(near_rel(sp["memory_per_gpu"]["activations_per_layer_GB"], 1.12512, 1e-4));
  EXPECT_TRUE(near_rel(ms(sp, "communication", "tp_collectives"),
                       ms(tp, "communication", "tp_collectives"), 0.01));
}

TEST(ScenarioT4, T4_3GradientAccumulation) {
  // 8 H100, ZeRO-1, micro-batch 1 × 64 accumulation steps = 512 sequences of 4096 per step
  // (2,097,152 tokens). Accumulation changes the effective batch, not the work per token: the
  // same step with micro-batch 8 × 8 is only ~2% faster (larger GEMMs, fewer kernel launches).
  json req{{"model", "llama-2-7b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 8},
           {"parallelism", {{"zero", 1}}},
           {"workload",
            {{"seq_len", 4096},
             {"global_batch_size", 512},
             {"micro_batch_size", 1},
             {"recompute", "full"}}}};
  const json mb1 = train(req);
  EXPECT_EQ(mb1["num_micro_batches"], 64);
  EXPECT_EQ(mb1["tokens_per_step"], 2097152);  // 512 · 4096, exact (a count, not rounded)
  EXPECT_TRUE(mb1["memory_per_gpu"]["fits"]);
  req["workload"]["micro_batch_size"] = 8;
  const json mb8 = train(req);
  const double gain = mb8["tokens_per_s"].get<double>() / mb1["tokens_per_s"].get<double>();
  EXPECT_GT(gain, 1.0);
  EXPECT_LT(gain, 1.05);
}

TEST(ScenarioT4, T4_4LoraLlama70b) {
  // LoRA r=16 on q_proj and v_proj: 80 · 16 · ((8192 + 8192) + (8192 + 1024)) = 32.77 M
  // trainable parameters (the suite's 41.9 M takes v_proj as 8192×8192; GQA makes it 8192×1024).
  // Adapters' gradients 2 B and AdamW 12 B: 0.066 + 0.393 GB. The bf16 base alone is 2 ·
  // 68.98e9 = 138 GB: does not fit one A100-80G. QLoRA's NF4 base (0.53125 B/weight on the
  // linears) brings it to 37.5 GB and fits.
  json req{{"model", "llama-2-70b"},
           {"hardware", "a100-sxm-80g"},
           {"num_gpus", 1},
           {"lora", {{"method", "lora"}, {"rank", 16}}},
           {"workload", {{"seq_len", 2048}, {"global_batch_size", 8}, {"recompute", "full"}}}};
  const json lora = train(req);
  EXPECT_TRUE(near_rel(lora["model"]["trainable_params_B"], 0.032768, 1e-5));
  EXPECT_TRUE(near_rel(lora["memory_per_gpu"]["optimizer_GB"], 0.393216, 1e-5));
  EXPECT_FALSE(lora["memory_per_gpu"]["fits"]);
  req["lora"]["method"] = "qlora";
  const json qlora = train(req);
  EXPECT_TRUE(qlora["memory_per_gpu"]["fits"]);
  EXPECT_TRUE(near_rel(qlora["memory_per_gpu"]["weights_GB"], 37.48, 0.002));
}

TEST(ScenarioT4, T4_5ContextExtension) {
  // Llama-3-8B at s=32768 (RoPE scaling changes no shape): attention 12 · 32 · 4096 · 32768 =
  // 5.154e10 FLOPs per token against 6 · 7.504e9 = 4.502e10 of linears: attention is more than
  // half the model FLOPs (9.656e10 per token). Per GPU with FSDP over 8 and full recompute:
  // one sequence fits, and the logits of 32768 tokens × 128,256 vocabulary (bf16 output + fp32
  // log-softmax, 6 B each: 25.2 GB) are the largest temporary.
  const json r = train(
      json{{"model", "llama-3-8b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 8},
           {"parallelism", {{"fsdp", "full_shard"}}},
           {"workload", {{"seq_len", 32768}, {"global_batch_size", 8}, {"recompute", "full"}}}});
  EXPECT_TRUE(near_rel(r["model_flops_per_token"], 9.656e10, 0.001));
  EXPECT_EQ(r["micro_batch_size"], 1);
  EXPECT_TRUE(r["memory_per_gpu"]["fits"]);
  EXPECT_GT(r["memory_per_gpu"]["temporary_GB"].get<double>(), 25.2);
  EXPECT_GT(ms(r, "", "attention"), ms(r, "", "mlp"));
}

}  // namespace
}  // namespace flopcast
