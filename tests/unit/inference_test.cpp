// SPDX-License-Identifier: MIT
// Inference estimator against hand derivations (label: unit).
#include "flopcast/inference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::base_request;
using test::near_rel;

json run(const json& request) { return io::run(request); }

TEST(Memory, Llama2_7bWeightsAndKvCache) {
  // 6,738,415,616 parameters · 2 B (bf16) = 13.4768 GB.
  // KV per token = layers 32 · 2 (K,V) · 32 heads · 128 · 2 B = 524,288 B.
  // Context 128 + 128 = 256 tokens = 16 blocks of 16 -> 256 · 524,288 = 0.134218 GB.
  const json r = run(base_request());
  EXPECT_TRUE(near_rel(r["memory"]["weights_GB"], 13.4768, 1e-5));
  EXPECT_EQ(r["memory"]["kv_cache_bytes_per_token"], 524288);
  EXPECT_TRUE(near_rel(r["memory"]["kv_cache_GB"], 0.134218, 1e-5));
  EXPECT_TRUE(r["memory"]["fits"].get<bool>());
  // 0.9 · 84.99 GB, the memory CUDA gives programs on an A100 80GB (79.15 GiB).
  EXPECT_TRUE(near_rel(r["memory"]["budget_GB"], 76.491, 1e-9));
}

TEST(Memory, ASetupThatDoesNotFitSaysWhichChangeMakesItFit) {
  // Llama-3.1-70B in bf16 on one A100 80GB, 1,000 -> 200 tokens: 141.1 GB of weights against a
  // 76.491 GB budget (0.9 · 84.99 GB). At TP 2 a GPU holds 70.555 GB of weights + 0.197 GB of KV
  // a sequence (1,200 tokens · 163,840 B) + 0.120 GB of activations + 3.84 GB reserve (1.92 GB +
  // 1.92 GB per doubling of tp) = 74.71 GB for one: 1.78 GB more hold 6 in all. fp8 weights with
  // an fp8 KV cache at TP 1: 72.656 GB (the embedding and LM head stay bf16) + 1.92 GB reserve,
  // and per sequence 0.197 GB of KV (1,200 · 163,840 B: 80 layers · 2 · 8 heads · 128 · 1 B) and
  // 0.206 GB of activations (its 1,000-token prefill chunk): 4 sequences take 76.18 GB, 5 take
  // 76.59 > 76.491.
  json req = base_request();
  req["model"] = "llama-3.1-70b";
  req["workload"]["prompt_tokens"] = 1000;
  req["workload"]["output_tokens"] = 200;
  const json r = run(req);
  ASSERT_FALSE(r["memory"]["fits"].get<bool>());
  const std::string advice = r["memory"]["to_fit"];
  EXPECT_EQ(advice.rfind("Not even one sequence fits at this context. It fits with tensor "
                         "parallelism 2 (2 GPUs): a batch of up to 6; or with fp8 weights with "
                         "an fp8 KV cache: a batch of up to 4 at this context.",
                         0),
            0u)
      << advice;
  // Each option is a setup that fits: the TP 2 one at its six sequences.
  req["num_gpus"] = 2;
  req["parallelism"]["tp"] = 2;
  const json tp2 = run(req);
  EXPECT_TRUE(tp2["memory"]["fits"].get<bool>());
  EXPECT_EQ(tp2["memory"]["max_batch_size"], 6);
  EXPECT_FALSE(tp2["memory"].contains("to_fit"));
  // The same two changes as request fragments (the page's buttons): merged into the request,
  // each makes it fit with the batch it names.
  req["num_gpus"] = 1;
  req["parallelism"]["tp"] = 1;
  const json ways = r["memory"]["ways_to_fit"];
  EXPECT_EQ(ways, json::parse(R"([{"max_batch_size": 6, "num_gpus": 2, "parallelism": {"tp": 2}},
    {"max_batch_size": 4, "precision": {"kv_cache": "fp8", "weights": "fp8"}}])"));
  for (const json& way : ways) {
    json applied = req;
    json patch = way;
    patch.erase("max_batch_size");
    applied.merge_patch(patch);
    const json fitted = run(applied);
    EXPECT_TRUE(fitted["memory"]["fits"].get<bool>()) << way.dump();
    EXPECT_EQ(fitted["memory"]["max_batch_size"], way["max_batch_size"]) << way.dump();
  }
}

TEST(Memory, ABatchTooLargeOffersTheLargestThatFits) {
  // Llama-3.1-8B on one A100 80GB at 100,000 + 200 tokens: 131,072 B of bf16 KV a token (32
  // layers · 2 · 8 heads · 128 · 2 B) is 13.13 GB a sequence; 16.06 GB of weights and the 1.92 GB
  // reserve leave ~58.5 GB of the 76.49 GB budget: four fit, not 64. The first way out is that
  // batch, as it stands.
  json req = base_request();
  req["model"] = "llama-3.1-8b";
  req["workload"]["prompt_tokens"] = 100000;
  req["workload"]["output_tokens"] = 200;
  req["workload"]["batch_size"] = 64;
  const json r = run(req);
  ASSERT_FALSE(r["memory"]["fits"].get<bool>());
  EXPECT_EQ(r["memory"]["max_batch_size"], 4);
  EXPECT_EQ(r["memory"]["ways_to_fit"][0],
            json::parse(R"({"max_batch_size": 4, "workload": {"batch_size": 4}})"));
}

TEST(Memory, WhereNoChangeAloneFitsBothAreNamed) {
  // Llama-3.1-405B on one H100: bf16 811 GB, fp8 ~406 GB, int4 ~214 GB of weights; TP 2 and 4
  // alone (bf16) and int4 alone exceed 72 GB a GPU; TP 4 with int4 weights (~53 GB) fits.
  json req = base_request();
  req["model"] = "llama-3.1-405b";
  req["hardware"] = "h100-sxm";
  const std::string advice = run(req)["memory"]["to_fit"];
  EXPECT_NE(advice.find("It fits with tensor parallelism 4 (4 GPUs) and int4 weights with an fp8 "
                        "KV cache: a batch of up to "),
            std::string::npos)
      << advice;
}

TEST(Memory, TheReserveGrowsWithTheTensorParallelGroup) {
  // vLLM's start-up profiles: 1.79 GiB outside PyTorch at TP 1, 3.58 at TP 2, 7.16 at TP 8, i.e.
  // 1.92 GB · (1 + log2 tp): 1.92, 3.84, 5.76 (TP 4) and 7.68 GB per GPU.
  json req = base_request();
  req["model"] = "llama-2-70b";
  for (const auto& [tp, gb] : {std::pair{1, 1.92}, {2, 3.84}, {4, 5.76}, {8, 7.68}}) {
    req["num_gpus"] = tp;
    req["parallelism"]["tp"] = tp;
    const json r = run(req);
    EXPECT_TRUE(near_rel(r["memory"]["reserve_GB"], gb, 1e-9)) << tp;
    EXPECT_TRUE(near_rel(r["request"]["engine"]["framework_reserve_GB"], gb, 1e-9)) << tp;
  }
  // The request's own reserve replaces the engine's at any tp.
  req["engine"]["framework_reserve_GB"] = 2.5;
  EXPECT_TRUE(near_rel(run(req)["memory"]["reserve_GB"], 2.5, 1e-12));
}

TEST(Memory, KvCacheRoundsUpToWholeBlocks) {
  // 100 + 29 = 129 tokens -> 9 blocks = 144 tokens · 524,288 B = 75,497,472 B.
  json req = base_request();
  req["workload"]["prompt_tokens"] = 100;
  req["workload"]["output_tokens"] = 29;
  EXPECT_TRUE(near_rel(run(req)["memory"]["kv_cache_GB"], 0.0754975, 1e-5));
}

TEST(Memory, Int4WeightOnlyQuarterOfLinearWeights) {
  // Linear weights: 32 · (4·4096² + 3·4096·11008) = 6,476,005,376 at 0.5 B + one fp16 scale per
  // 128 (2/128 B) = 0.515625 B -> 3.339190 GB. 16-bit rest: embedding + LM head 2·32000·4096 =
  // 262,144,000, norms 65·4096 = 266,240 -> 262,410,240 · 2 B = 0.524820 GB. Total 3.864010 GB.
  json req = base_request();
  req["precision"]["weights"] = "int4";
  EXPECT_TRUE(near_rel(run(req)["memory"]["weights_GB"], 3.86401, 1e-5));
}

TEST(Memory, TensorParallelShardsWeightsAndKv) {
  // Llama-2-70B over TP 4: KV heads 8 / 4 = 2 per GPU -> KV/token = 80 · 2 · 2 · 128 · 2 =
  // 81,920 B. Weights: ≈ 68.977e9 · 2 / 4 with norms replicated ≈ 34.49 GB.
  json req = base_request();
  req["model"] = "llama-2-70b";
  req["num_gpus"] = 4;
  req["parallelism"]["tp"] = 4;
  const json r = run(req);
  EXPECT_EQ(r["memory"]["kv_cache_bytes_per_token"], 81920);
  EXPECT_TRUE(near_rel(r["memory"]["weights_GB"], 34.49, 1e-3));
}

TEST(Memory, KvHeadsReplicateWhenTpExceedsThem) {
  // Falcon-40B has 8 KV heads; at TP 8 each GPU keeps one: 60 · 2 · 1 · 64 · 2 = 15,360 B.
  json req = base_request();
  req["model"] = "falcon-40b";
  req["num_gpus"] = 8;
  req["parallelism"]["tp"] = 8;
  EXPECT_EQ(run(req)["memory"]["kv_cache_bytes_per_token"], 15360);
}

TEST(Memory, MaxBatchI31) {
  // I3.1: Llama-2-7B on A100-80G at 4096 tokens (4000 + 96). Per sequence KV = 4096 · 524,288 B
  // = 2.14748 GB. Budget 76.491 (0.9 · 84.99) − weights 13.4768 − reserve 1.92 (TP 1) −
  // activations of one 8192-token chunk (8192 · 2 B · (2·4096 + 3·11008) = 0.675 GB, plus
  // logits) = 60.42 GB -> 28 sequences.
  json req = base_request();
  req["workload"]["prompt_tokens"] = 4000;
  req["workload"]["output_tokens"] = 96;
  EXPECT_EQ(run(req)["memory"]["max_batch_size"], 28);
}

TEST(Memory, DoesNotFitIsAResultNotAnError) {
  // Llama-2-70B in bf16 (138 GB) on one 80 GB GPU.
  json req = base_request();
  req["model"] = "llama-2-70b";
  const json r = run(req);
  EXPECT_FALSE(r["memory"]["fits"].get<bool>());
  EXPECT_EQ(r["memory"]["max_batch_size"], 0);
  EXPECT_EQ(r["memory"]["max_context_tokens"], 0);
  EXPECT_EQ(r["memory"]["free_GB"], 0);
  EXPECT_FALSE(r["warnings"].empty());
}

TEST(Latency, DecodeIsWeightStreamingBound) {
  // Llama-2-7B, batch 1 on A100: every decode step streams 13.48 GB of weights at
  // 2039·0.85 = 1733 GB/s = 7.776 ms; plus KV reads (~0.1 ms at context ~190), 291 kernels ·
  // 2 us = 0.58 ms and 0.3 ms engine overhead ≈ 8.6 ms.
  const json r = run(base_request());
  EXPECT_TRUE(near_rel(r["tpot_ms"], 8.6, 0.02));
  // E2E = TTFT + 127 · TPOT; throughput = 128 / E2E.
  EXPECT_TRUE(
      near_rel(r["e2e_ms"], r["ttft_ms"].get<double>() + 127 * r["tpot_ms"].get<double>(), 1e-5));
  EXPECT_TRUE(near_rel(r["output_tokens_per_s"], 128 / (r["e2e_ms"].get<double>() / 1000), 1e-5));
}

TEST(Latency, PrefillIsComputeBound) {
  // I1.2-like: 4032 prompt tokens, Llama-2-7B, A100. Linear FLOPs 2 · 6.476e9 · 4032 = 5.222e13,
  // attention 32 · 2·128·32·4032·4033 = 4.263e12; at 312e12 · 0.8 ≈ 226 ms (+ wave/tile and
  // overheads, LM head) -> 240-270 ms.
  json req = base_request();
  req["workload"]["prompt_tokens"] = 4032;
  req["workload"]["output_tokens"] = 64;
  const double ttft = run(req)["ttft_ms"];
  EXPECT_GT(ttft, 240);
  EXPECT_LT(ttft, 270);
}

TEST(Latency, TpotAveragesTheGrowingContext) {
  // Decode cost grows with context, so TPOT over 64 -> 2112 must lie between the step times at
  // the two ends (a single-point evaluation at the prompt would underestimate it).
  json req = base_request();
  req["workload"]["prompt_tokens"] = 64;
  req["workload"]["output_tokens"] = 2048;
  const double tpot_long = run(req)["tpot_ms"];
  req["workload"]["output_tokens"] = 2;
  const double first_step = run(req)["tpot_ms"];
  EXPECT_GT(tpot_long, first_step);
  // KV read per step at mean context 1088: 1088 · 524,288 B / 1.733e12 = 0.329 ms more than at 65.
  EXPECT_TRUE(near_rel(tpot_long - first_step, (1088.5 - 65) * 524288 / 1.73315e12 * 1e3, 0.05));
}

TEST(Latency, TensorParallelAddsAllReducesButCutsTpot) {
  json req = base_request();
  req["model"] = "llama-2-13b";
  const double tp1 = run(req)["tpot_ms"];
  req["num_gpus"] = 2;
  req["parallelism"]["tp"] = 2;
  const json r2 = run(req);
  EXPECT_LT(r2["tpot_ms"].get<double>(), tp1);
  bool has_comm = false;
  for (const auto& b : r2["breakdown"]) has_comm |= b["op"] == "tp_comm";
  EXPECT_TRUE(has_comm);
}

TEST(Latency, ReplicasMultiplyThroughputNotLatency) {
  json req = base_request();
  const json one = run(req);
  req["num_gpus"] = 4;
  const json four = run(req);
  EXPECT_EQ(four["replicas"], 4);
  EXPECT_EQ(four["ttft_ms"], one["ttft_ms"]);
  EXPECT_TRUE(
      near_rel(four["output_tokens_per_s"], 4 * one["output_tokens_per_s"].get<double>(), 1e-5));
}

TEST(Latency, MoeDecodeTouchesOnlyRoutedExperts) {
  // Mixtral-8x7B at batch 1 reads 2 of 8 experts per layer: its decode step must be far below
  // streaming all 46.7 B parameters (93 GB / 1.733 TB/s / 2 GPUs ≈ 27 ms) and near the
  // 12.9 B active ones (≈ 25.8 GB / 2 / 1.733 TB/s ≈ 7.4 ms + overheads).
  json req = base_request();
  req["model"] = "mixtral-8x7b";
  req["num_gpus"] = 2;
  req["parallelism"]["tp"] = 2;
  const double tpot = run(req)["tpot_ms"];
  EXPECT_GT(tpot, 7.4);
  EXPECT_LT(tpot, 10.5);
}

// The moe_experts time of a phase in a Tier-2 DeepSeek-V3 estimate whose checkpoint scales its
// FP8 weights `scaling` ("block", as published, or "tensor").
double deepseek_moe_ms(const std::string& scaling, const std::string& hardware,
                       const std::string& engine, const std::string& dispatch, int gpus,
                       const std::string& phase) {
  json model = io::preset("models", "deepseek-v3", "model").at("model");
  model["checkpoint_weight_scaling"] = scaling;
  json req{{"task", "inference"},
           {"model", model},
           {"hardware", hardware},
           {"num_gpus", gpus},
           {"parallelism", {{"tp", gpus}, {"ep", gpus}, {"moe_dispatch", dispatch}}},
           {"engine", {{"name", engine}}},
           {"workload", {{"prompt_tokens", 2048}, {"output_tokens", 2}, {"batch_size", 8}}}};
  if (dispatch == "all_to_all") req["parallelism"]["dp_attention"] = true;
  const json out = run(req);  // held: a loop over run(req).at(...) would outlive it
  for (const json& op : out.at("breakdown")) {
    if (op.at("op") == "moe_experts" && op.at("phase") == phase) return op.at("time_ms");
  }
  return NAN;
}

TEST(Latency, BlockScaledFp8CheckpointsRunTheBlockScaledKernels) {
  // DeepSeek-V3 on 8 H200 in TensorRT-LLM, 8 prompts of 2,048: the experts' prefill is
  // compute-bound. presets/calibration/h200-sxm.json fits TensorRT-LLM's block-scaled fused MoE
  // to compute efficiency 0.29296 (half-units 5.77) and its per-tensor one to 0.531934 (35.66):
  // 1.816x slower at the same FLOPs, 1.757x with the half-units of its ~900 tiles a layer
  // ((U + 5.77) / (U + 35.66) = 0.968) and the fixed terms.
  const double block = deepseek_moe_ms("block", "h200-sxm", "trtllm", "all_reduce", 8, "prefill");
  const double tensor = deepseek_moe_ms("tensor", "h200-sxm", "trtllm", "all_reduce", 8, "prefill");
  EXPECT_TRUE(near_rel(block / tensor, 1.757, 0.02));
  // SGLang behind DeepEP's all-to-all runs DeepGEMM, not the fused MoE the tables measured with
  // block scales: the experts keep the per-tensor pricing (32 H100s, LMSYS's prefill layout).
  EXPECT_DOUBLE_EQ(deepseek_moe_ms("block", "h100-sxm", "sglang", "all_to_all", 32, "prefill"),
                   deepseek_moe_ms("tensor", "h100-sxm", "sglang", "all_to_all", 32, "prefill"));
  EXPECT_GT(deepseek_moe_ms("block", "h100-sxm", "sglang", "all_reduce", 8, "prefill"),
            1.2 * deepseek_moe_ms("tensor", "h100-sxm", "sglang", "all_reduce", 8, "prefill"));
}

TEST(Latency, Fp8PrefillIsFasterOnH100) {
  json req = base_request();
  req["hardware"] = "h100-sxm";
  req["workload"]["prompt_tokens"] = 3968;
  const double bf16 = run(req)["ttft_ms"];
  req["precision"]["weights"] = "fp8";
  const double fp8 = run(req)["ttft_ms"];
  // GEMMs run at 2x the peak; attention stays bf16, so the gain is below 2x.
  EXPECT_LT(fp8, 0.75 * bf16);
  EXPECT_GT(fp8, 0.5 * bf16);
}

TEST(Memory, AttentionWeightsApartFromTheFfn) {
  // Llama-3.1-405B on TP 8, Meta's FP8 checkpoint: attention projections per layer
  // q 16384·16384 + k, v 2·16384·1024 + o 16384·16384 = 570,425,344; per GPU / 8 · 126 layers =
  // 8,984,199,168 parameters. In bf16 (2 B) instead of fp8 (1 B) they add 8.984199 GB per GPU.
  json req = base_request();
  req["model"] = "llama-3.1-405b";
  req["hardware"] = "h100-sxm";
  req["num_gpus"] = 8;
  req["parallelism"]["tp"] = 8;
  req["precision"]["weights"] = "fp8";
  const json all_fp8 = run(req);
  req["precision"]["attention_weights"] = "bf16";
  const json meta = run(req);
  EXPECT_EQ(meta["request"]["precision"]["attention_weights"], "bf16");
  EXPECT_EQ(all_fp8["request"]["precision"]["attention_weights"], "fp8");  // unset: the weights'
  EXPECT_TRUE(near_rel(
      meta["memory"]["weights_GB"].get<double>() - all_fp8["memory"]["weights_GB"].get<double>(),
      8.984199, 1e-4));
  // Decode streams the weights: 51.26 → 60.25 GB per GPU, so TPOT grows by at most that ratio
  // (1.175; KV reads and fixed costs do not grow) and by more than a third of it.
  const double ratio = meta["tpot_ms"].get<double>() / all_fp8["tpot_ms"].get<double>();
  EXPECT_GT(ratio, 1.06);
  EXPECT_LT(ratio, 1.176);
  // The attention projections' own rows read twice the weight bytes: up to twice the fp8 time
  // (the launch latency and the activations' bytes do not double), the MLP's rows do not move.
  auto decode_op = [](const json& r, const std::string& op) {
    for (const json& b : r["breakdown"]) {
      if (b["phase"] == "decode" && b["op"] == op) return b["time_ms"].get<double>();
    }
    return 0.0;
  };
  const double o_proj = decode_op(meta, "o_proj") / decode_op(all_fp8, "o_proj");
  EXPECT_GT(o_proj, 1.5);
  EXPECT_LT(o_proj, 2.01);
  EXPECT_TRUE(near_rel(decode_op(meta, "mlp"), decode_op(all_fp8, "mlp"), 1e-9));
}

TEST(Memory, GptOss120bCheckpointOnOneH100) {
  // gpt-oss-120b as published: MXFP4 experts, everything else bf16. Experts 36 layers · 128 ·
  // 3 · 2880² = 114.65e9 at 0.53125 B = 60.91 GB; attention 36 · (2 · 2880 · 4096 + 2 · 2880 ·
  // 512) = 0.9555e9 in bf16 = 1.911 GB; embedding and LM head 2 · 201088 · 2880 · 2 B = 2.317 GB;
  // routers and expert biases 36 · (2880 · 128 + 128 · 3 · 2880) · 2 B = 0.107 GB: 65.25 GB, in
  // the 80 GB of one H100 (the checkpoint's files are about 65 GB).
  json req = base_request();
  req["model"] = "gpt-oss-120b";
  req["hardware"] = "h100-sxm";
  req["precision"] = {{"weights", "mxfp4"}, {"attention_weights", "bf16"}};
  const json r = run(req);
  EXPECT_TRUE(near_rel(r["memory"]["weights_GB"], 65.25, 2e-3));
  EXPECT_TRUE(r["memory"]["fits"].get<bool>());
  // Attention in MXFP4 as well would save 0.9555e9 · (2 − 0.53125) B = 1.403 GB.
  req["precision"].erase("attention_weights");
  EXPECT_TRUE(near_rel(
      r["memory"]["weights_GB"].get<double>() - run(req)["memory"]["weights_GB"].get<double>(),
      1.403, 5e-3));
}

TEST(Memory, Mxfp8AddsAScaleBytePer32Weights) {
  // Llama-2-7B on one B200: MXFP8 stores an E8M0 scale per 32 weights beside fp8's per-tensor
  // scale, 1/32 B more per linear weight: 6,476,005,376 / 32 = 0.202375 GB. Embedding and LM head
  // stay 16-bit in both. Decode reads the weights: the MLP step takes longer, by at most 1/32.
  json req = base_request();
  req["hardware"] = "b200";
  req["precision"] = {{"weights", "fp8"}};
  const json fp8 = run(req);
  req["precision"] = {{"weights", "mxfp8"}};
  const json mx = run(req);
  EXPECT_TRUE(
      near_rel(mx["memory"]["weights_GB"].get<double>() - fp8["memory"]["weights_GB"].get<double>(),
               0.202375, 1e-4));
  const double ratio = mx["tpot_ms"].get<double>() / fp8["tpot_ms"].get<double>();
  EXPECT_GT(ratio, 1.0);
  EXPECT_LT(ratio, 1.03125);
  // H100's FP8 tensor cores do not apply block scales: named, not guessed.
  req["hardware"] = "h100-sxm";
  try {
    run(req);
    ADD_FAILURE() << "mxfp8 on H100 must fail";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.path(), "precision.weights");
    EXPECT_NE(std::string(e.what()).find("block scales"), std::string::npos) << e.what();
  }
}

/// Bytes of the breakdown's `op` rows in prefill and in decode.
std::pair<double, double> phase_bytes(const json& r, const std::string& op) {
  double prefill = 0, decode = 0;
  for (const json& b : r["breakdown"]) {
    if (b["op"] != op) continue;
    (b["phase"] == "prefill" ? prefill : decode) += b["bytes"].get<double>();
  }
  return {prefill, decode};
}

json nano_request(int prompt_tokens) {
  json req = base_request();
  req["model"] = "nemotron-3-nano-30b-a3b";
  req["hardware"] = "h200-sxm";
  req["workload"] = {{"prompt_tokens", prompt_tokens}, {"output_tokens", 128}, {"batch_size", 4}};
  return req;
}

TEST(HybridInference, KvOnlyForAttentionLayersAndAStateFlatInContext) {
  // Nemotron 3 Nano, bf16, one H200, a batch of 4.
  // KV per token: only the 6 attention layers, 2 (K, V) · 2 KV heads · 128 · 2 B = 6,144 B.
  // Mamba state per sequence: 23 layers · (SSM 64·64·128 · 4 B = 2,097,152 + conv (4 − 1) ·
  // (4096 + 2·8·128) · 2 B = 36,864) = 49,082,368 B; four sequences 0.196329 GB.
  // Weights: 31,577,937,344 parameters · 2 B = 63.1559 GB.
  const json r = run(nano_request(128));
  EXPECT_EQ(r["memory"]["kv_cache_bytes_per_token"], 6144);
  EXPECT_TRUE(near_rel(r["memory"]["state_bytes_per_sequence"], 49082368, 1e-5));
  EXPECT_TRUE(near_rel(r["memory"]["state_GB"], 0.196329, 1e-5));
  EXPECT_TRUE(near_rel(r["memory"]["weights_GB"], 63.1559, 1e-5));
  // 128 + 128 tokens = 16 blocks: 4 · 256 · 6,144 B = 6.29146 MB of KV.
  EXPECT_TRUE(near_rel(r["memory"]["kv_cache_GB"], 0.00629146, 1e-5));
  // At 128k of context the state is the same; the KV grows 512-fold (4 · 131,072 · 6,144 B).
  const json long_context = run(nano_request(131072 - 128));
  EXPECT_EQ(long_context["memory"]["state_GB"], r["memory"]["state_GB"]);
  EXPECT_TRUE(near_rel(long_context["memory"]["kv_cache_GB"], 3.22123, 1e-5));
  // A transformer's KV at that context would be 52/6 of it on every layer; the largest batch
  // that fits counts the state and the KV per sequence: 49.08 MB + 131,072 · 6,144 B = 854.4 MB.
  const json m = long_context["memory"];
  const double per_sequence = 0.049082368 + 131072 * 6144 / 1e9;
  const double room = m["budget_GB"].get<double>() - m["weights_GB"].get<double>() -
                      m["reserve_GB"].get<double>() - m["activations_GB"].get<double>();
  EXPECT_NEAR(m["max_batch_size"].get<double>(), std::floor(room / per_sequence), 1.0);
}

TEST(HybridInference, DecodeUpdatesEachSequencesStateAndNotTheContext) {
  // One decode step per sequence and Mamba layer: SSM state read and written 2 · 2,097,152, conv
  // state read and written 2 · 36,864, the token's x, z, B, C, dt read (2·4096 + 2·1024 + 64) · 2
  // = 20,608 and y written 8,192, the gated norm 3 · 4096 · 2 = 24,576: 4,321,408 B; 23 layers
  // and 4 sequences: 397,569,536 B a step, the same at 128k of context.
  for (int prompt : {128, 131072 - 128}) {
    double bytes = 0;
    const json r = run(nano_request(prompt));
    for (const json& b : r["breakdown"]) {
      if (b["phase"] == "decode" && b["op"] == "mamba_scan") bytes += b["bytes"].get<double>();
    }
    EXPECT_TRUE(near_rel(bytes, 397569536.0, 1e-5)) << prompt;  // 6 significant digits
  }
}

/// nano_request's workload for another hybrid model, on two H200s at TP 2.
json tp2_hybrid_request(const char* model, int prompt_tokens) {
  json req = nano_request(prompt_tokens);
  req["model"] = model;
  req["num_gpus"] = 2;
  req["parallelism"] = {{"tp", 2}};
  return req;
}

json qwen3_next_request(int prompt_tokens) {
  return tp2_hybrid_request("qwen3-next-80b-a3b", prompt_tokens);
}

TEST(HybridInference, GatedDeltaNetHoldsAFixedStateAndTheAttentionLayersTheKv) {
  // Qwen3-Next 80B-A3B, bf16, two H200s at TP 2, a batch of 4.
  // KV per token and GPU: the 12 gated-attention layers only, 2 (K, V) · 2 / 2 KV heads · 256 ·
  // 2 B = 1,024 B a layer, 12,288 B. State per sequence and GPU: 36 gated DeltaNet layers ·
  // (16 value heads · 128 · 128 · 4 B = 1,048,576 + conv (4 − 1) · (2·2048 + 4096) / 2 · 2 B =
  // 24,576) = 38,633,472 B.
  const json r = run(qwen3_next_request(128));
  EXPECT_EQ(r["memory"]["kv_cache_bytes_per_token"], 12288);
  EXPECT_TRUE(near_rel(r["memory"]["state_bytes_per_sequence"], 38633472, 1e-5));
  const json long_context = run(qwen3_next_request(131072 - 128));
  EXPECT_EQ(long_context["memory"]["state_GB"], r["memory"]["state_GB"]);
  // 4 · 131,072 · 12,288 B of KV at 128k: 6.44245 GB.
  EXPECT_TRUE(near_rel(long_context["memory"]["kv_cache_GB"], 6.44245, 1e-5));
  // The largest batch counts the state and the KV per sequence: 38.63 MB + 1.611 GB.
  const json m = long_context["memory"];
  const double per_sequence = 0.038633472 + 131072 * 12288 / 1e9;
  const double room = m["budget_GB"].get<double>() - m["weights_GB"].get<double>() -
                      m["reserve_GB"].get<double>() - m["activations_GB"].get<double>();
  EXPECT_NEAR(m["max_batch_size"].get<double>(), std::floor(room / per_sequence), 1.0);
}

TEST(HybridInference, GatedDeltaNetPrefillAndDecodeTraffic) {
  // Prefill, per token and gated DeltaNet layer on one of 2 GPUs (16 value heads of 128; q, k
  // 1024 wide and v 2048 on the rank; chunks of 64): conv1d 2 · 4096 · 2 = 16,384; L2 norm of q,
  // k 4 · 1024 · 2 = 8,192; q, k repeated to 16 heads (2·1024 + 2·2048) · 2 = 12,288; gates
  // 2·16·2 + 5·16 = 144; cumsum 8·16 = 128; the intra-chunk step (k, v in twice over: w, u out)
  // 2 · 4096 · 2 + β 32 + g 64 + A 16·64·2 = 18,528; the state pass (k, w, u in; v_new out; chunk
  // states 16·128·128·2 / 64 = 8,192) 12,288 + 64 + 8,192 + 4,096 = 24,640; the output (q, k,
  // v_new, states in; o out) 24,640; gated norm 3 · 2048 · 2 = 12,288: 117,232 B. 512 tokens ·
  // 36 layers: 2,160,820,224 B.
  const auto [prefill, decode] = phase_bytes(run(qwen3_next_request(128)), "gdn_scan");
  EXPECT_TRUE(near_rel(prefill, 2160820224.0, 1e-5));
  // Decode, per sequence and layer: the fp32 state read and written 2 · 1,048,576, the conv state
  // 2 · 24,576, the in_proj outputs read (2·1024 + 2·2048 + 2·16) · 2 = 12,352, o written 4,096,
  // the gated norm 12,288: 2,175,040 B; 36 layers and 4 sequences: 313,205,760 B a step.
  EXPECT_TRUE(near_rel(decode, 313205760.0, 1e-5));
}

json jamba_request(int prompt_tokens) {
  return tp2_hybrid_request("jamba-1.5-mini", prompt_tokens);
}

TEST(HybridInference, Mamba1HoldsAStateInTheActivationsType) {
  // Jamba 1.5 Mini, bf16, two H200s at TP 2, a batch of 4. KV per token and GPU: the 4 attention
  // layers, 2 (K, V) · 8 / 2 KV heads · 128 · 2 B = 2,048 B a layer, 8,192 B. State per sequence
  // and GPU: 28 Mamba-1 layers · (4096 channels · 16 · 2 B = 131,072 + conv (4 − 1) · 4096 · 2 B =
  // 24,576) = 4,358,144 B, the same at 128k.
  const json r = run(jamba_request(128));
  EXPECT_EQ(r["memory"]["kv_cache_bytes_per_token"], 8192);
  EXPECT_TRUE(near_rel(r["memory"]["state_bytes_per_sequence"], 4358144, 1e-5));
  const json long_context = run(jamba_request(131072 - 128));
  EXPECT_EQ(long_context["memory"]["state_GB"], r["memory"]["state_GB"]);
}

TEST(HybridInference, Mamba1PrefillAndDecodeTraffic) {
  // Prefill, per token and Mamba-1 layer on one of 2 GPUs (4096 channels, state 16, dt rank
  // 256): conv1d 2 · 4096 · 2 = 16,384; the RMSNorms of dt, B, C 2 · (256 + 32) · 2 = 1,152; the
  // selective scan (x, Δ, z, B, C in; y out) (4 · 4096 + 32) · 2 = 32,832: 50,368 B. 512 tokens
  // · 28 layers: 722,075,648 B.
  const json r = run(jamba_request(128));
  const auto [prefill, decode] = phase_bytes(r, "mamba1_scan");
  EXPECT_TRUE(near_rel(prefill, 722075648.0, 1e-5));
  // Decode, per sequence and layer: the bf16 state read and written 2 · 131,072, the conv state
  // 2 · 24,576, the norms 1,152, the token's inputs and output 32,832: 345,280 B; 28 layers and 4
  // sequences: 38,671,360 B a step.
  EXPECT_TRUE(near_rel(decode, 38671360.0, 1e-5));
  // x_proj and dt_proj are priced beside in_proj and out_proj.
  bool x_proj = false, dt_proj = false;
  for (const json& b : r["breakdown"]) {
    x_proj = x_proj || b["op"] == "mamba1_x_proj";
    dt_proj = dt_proj || b["op"] == "mamba1_dt_proj";
  }
  EXPECT_TRUE(x_proj && dt_proj);
}

TEST(HybridInference, KimiDeltaAttentionMovesItsGatePerKeyChannel) {
  // Qwen3-Next's layers with 32 key heads (q, k, v all 32 heads of 128), as a gated DeltaNet and
  // as Kimi Delta Attention (gdn_channel_gate), on 2 H200s at TP 2: 16 heads of 128 a GPU. The
  // decay gate g grows from one fp32 value per head (16) to one per key channel (2048): every
  // kernel that moves it moves 2032 more elements a token, the gate's input (2 B) and g in fp32
  // (4 B) out of the gate step, through the cumsum (8 B), into the WY step, the state pass and the
  // output (4 B each): 2032 · 26 = 52,832 B a token and layer; 512 prompt tokens · 36 layers:
  // 973,799,424 B more. A decode step reads the gate's input once more per channel: 2032 · 2 B ·
  // 36 layers · 4 sequences = 585,216 B.
  json gdn = tp2_hybrid_request("qwen3-next-80b-a3b", 128);
  gdn["model"] = io::preset("models", "qwen3-next-80b-a3b", "model").at("model");
  gdn["model"]["gdn_key_heads"] = 32;
  json kda = gdn;
  kda["model"]["gdn_channel_gate"] = true;
  const auto [gdn_prefill, gdn_decode] = phase_bytes(run(gdn), "gdn_scan");
  const auto [kda_prefill, kda_decode] = phase_bytes(run(kda), "kda_scan");
  // (The results carry 6 significant digits: each difference is good to a few units of the
  // larger sum's sixth digit.)
  EXPECT_NEAR(kda_prefill - gdn_prefill, 973799424.0, 2e4);
  EXPECT_NEAR(kda_decode - gdn_decode, 585216.0, 1e3);
}

TEST(Breakdown, SharesSumToOnePerPhase) {
  const json r = run(base_request());
  double prefill = 0, decode = 0;
  for (const auto& b : r["breakdown"])
    (b["phase"] == "prefill" ? prefill : decode) += b["share"].get<double>();
  EXPECT_TRUE(near_rel(prefill, 1.0, 1e-4));
  EXPECT_TRUE(near_rel(decode, 1.0, 1e-4));
}

TEST(InferenceBands, MlaMoeModelsTakeTheirOwnBand) {
  // presets/bands/e2e.json keeps MLA + MoE inference apart ("inference throughput (mla-moe)"):
  // DeepSeek-V3 on 8 H200 spans [x·e^-p90, x·e^-p10] of that band, a dense model the plain one.
  json r = base_request();
  r["model"] = "deepseek-v3";
  r["hardware"] = "h200-sxm";
  r["num_gpus"] = 8;
  r["parallelism"] = {{"tp", 8}};
  r["precision"] = {{"weights", "fp8"}};
  r["workload"] = {{"prompt_tokens", 1000}, {"output_tokens", 1000}, {"batch_size", 64}};
  // (An estimate that priced any op at Tier 0 takes the kind's "@tier0" band.)
  const auto rate_low = [](const json& res) {
    return res.at("interval").at("output_tokens_per_s").at("low").get<double>() /
           res.at("output_tokens_per_s").get<double>();
  };
  const json ds = io::run(r);
  const json llama = io::run(base_request());
  const auto mla = io::e2e_band("inference throughput (mla-moe)", ds.at("tier") == 0);
  const auto dense = io::e2e_band("inference throughput", llama.at("tier") == 0);
  ASSERT_TRUE(mla.has_value());
  ASSERT_TRUE(dense.has_value());
  EXPECT_TRUE(near_rel(rate_low(ds), std::exp(-std::max(mla->slow_p90, 0.0)), 1e-5));
  EXPECT_TRUE(near_rel(rate_low(llama), std::exp(-std::max(dense->slow_p90, 0.0)), 1e-5));
  EXPECT_FALSE(near_rel(rate_low(ds), rate_low(llama), 1e-3));
}

TEST(InferenceBands, OtherMoeModelsTakeTheMoeThroughputBand) {
  // Max-throughput rows of MoE models without MLA (Llama 4, Qwen3 MoE, Mixtral) scatter twice as
  // wide as dense ones: their throughput takes "inference throughput (moe)", wider than the dense
  // band; TTFT and TPOT keep the one latency band (two MoE rows could not make one of their own).
  json r = base_request();
  r["model"] = "qwen3-30b-a3b";
  r["hardware"] = "h100-sxm";
  r["precision"] = {{"weights", "fp8"}};
  r["workload"] = {{"prompt_tokens", 1000}, {"output_tokens", 1000}, {"batch_size", 64}};
  const json moe = io::run(r);
  const auto band = io::e2e_band("inference throughput (moe)", moe.at("tier") == 0);
  const auto dense = io::e2e_band("inference throughput", moe.at("tier") == 0);
  ASSERT_TRUE(band.has_value());
  ASSERT_TRUE(dense.has_value());
  const double x = moe.at("output_tokens_per_s").get<double>();
  // A rate of x whose time is e^s times the estimate's: [x·e^-p90, x·e^-p10].
  EXPECT_TRUE(near_rel(moe.at("interval").at("output_tokens_per_s").at("low").get<double>(),
                       x * std::exp(-std::max(band->slow_p90, 0.0)), 1e-5));
  EXPECT_GT(band->slow_p90 - band->slow_p10, dense->slow_p90 - dense->slow_p10);
}

/// Llama-3.1-8B on one H100 at `rate` req/s of 1,000-token prompts and 200-token outputs.
json llama_8b_serving(double rate) {
  return json{{"task", "serving"},
              {"model", "llama-3.1-8b"},
              {"hardware", "h100-sxm"},
              {"workload",
               {{"arrival", {{"kind", "poisson"}, {"rate_per_s", rate}}},
                {"prompt_tokens", 1000},
                {"output_tokens", 200},
                {"num_requests", 200}}}};
}

TEST(ServingBands, P99BandIsNeverBelowTheP50Band) {
  // The p50 band reaches higher (serving p50: 3.67x wide) than the p99's (serving tail) on the
  // same estimate; a p99 cannot be below its p50, so neither edge of its band is.
  const json r = io::run(llama_8b_serving(5));
  for (const char* figure : {"ttft_ms", "tpot_ms", "e2e_ms"}) {
    const json& band = r.at("interval").at(figure);
    for (const char* edge : {"low", "high"}) {
      EXPECT_GE(band.at("p99").at(edge).get<double>(), band.at("p50").at(edge).get<double>())
          << figure << " " << edge;
    }
    // Each band still holds its own estimate.
    EXPECT_LE(band.at("p99").at("low").get<double>(), r.at(figure).at("p99").get<double>());
    EXPECT_GE(band.at("p99").at("high").get<double>(), r.at(figure).at("p99").get<double>());
  }
}

TEST(ServingBands, UncheckedThroughputBandTakesTheSimulatorsMaxThroughputBand) {
  // "serving throughput" rests on one source (presets/bands/e2e.json: no coverage_loso), so a
  // serving estimate's throughput band is the "inference throughput" kind's, the same simulator
  // checked on five sources: [x·e^-p90, x·e^-p10] of that band.
  const json r = io::run(llama_8b_serving(4));
  const auto own = io::e2e_band("serving throughput", false);
  ASSERT_TRUE(own.has_value());
  EXPECT_TRUE(std::isnan(own->coverage_loso));
  const auto used = io::e2e_band("inference throughput", false);
  ASSERT_TRUE(used.has_value());
  ASSERT_EQ(r.at("tier"), 2);
  const double x = r.at("throughput").at("output_tokens_per_s").get<double>();
  EXPECT_TRUE(near_rel(r.at("interval").at("output_tokens_per_s").at("low").get<double>(),
                       x * std::exp(-std::max(used->slow_p90, 0.0)), 1e-5));
}

}  // namespace
}  // namespace flopcast
