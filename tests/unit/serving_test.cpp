// SPDX-License-Identifier: MIT
// Serving: samplers, the per-step cost API, the analytic queueing model and the discrete-event
// simulator (hand-simulated cases with a constant step time), and bad input.
#include "flopcast/serving.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "flopcast/error.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::near_rel;

// ---- Bad input ----

std::string error_of(const json& request) {
  try {
    (void)io::run(request);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ServingErrors, MtpDraftNeedsMtpLayersAndIsOneChoiceOfThree) {
  json r{{"task", "serving"},
         {"model", "llama-3-8b"},
         {"hardware", "h100-sxm"},
         {"features",
          {{"speculative", {{"num_tokens", 1}, {"acceptance_rate", 0.8}, {"draft", "mtp"}}}}},
         {"workload",
          {{"arrival", {{"kind", "poisson"}, {"rate_per_s", 1}}},
           {"prompt_tokens", 100},
           {"output_tokens", 100}}}};
  EXPECT_EQ(error_of(r),
            "features.speculative.draft: needs a model with multi-token-prediction layers "
            "(model.mtp_layers > 0: DeepSeek-V3 and R1 have 1) (got \"mtp\")");
  r["features"]["speculative"]["draft"] = "eagle";
  EXPECT_EQ(error_of(r), "features.speculative.draft: must be one of mtp (got \"eagle\")");
  r["model"] = "deepseek-v3";
  r["features"]["speculative"]["draft"] = "mtp";
  r["features"]["speculative"]["draft_cost_fraction"] = 0.1;
  EXPECT_EQ(error_of(r),
            "features.speculative.draft_cost_fraction: give draft, draft_model or "
            "draft_cost_fraction, not two");
}

// Issue 12, defect 5: a valid 652-byte request (200,000 requests x 100,000 output tokens) ran the
// simulator for 5 minutes. Its work, 2·10^10 generated tokens, is refused before any step; the
// same request at 2,000 requests x 100 tokens (2·10^5) runs.
TEST(ServingErrors, SimulationWorkIsBoundedBeforeAnyStep) {
  json r{{"task", "serving"},
         {"mode", "simulate"},
         {"model", "llama-3.1-8b"},
         {"hardware", "h100-sxm"},
         {"workload",
          {{"arrival", {{"kind", "concurrency"}, {"concurrency", 256}}},
           {"prompt_tokens", 100},
           {"output_tokens", 100000},
           {"num_requests", 200000}}}};
  EXPECT_EQ(error_of(r),
            "workload.num_requests: the simulation may generate at most 2e8 tokens in all "
            "(num_requests x output_tokens); simulate fewer or shorter requests (got 20000000000)");
  r["workload"]["output_tokens"] = 100;
  r["workload"]["num_requests"] = 2000;
  EXPECT_EQ(error_of(r), "no error");
}

// ---- Samplers ----

struct Moments {
  double mean = 0, var = 0;
};

template <typename Draw>
Moments moments(Draw draw, int n) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    s += x;
    s2 += x * x;
  }
  const double mean = s / n;
  return {mean, s2 / n - mean * mean};
}

TEST(Sampler, UniformHasMeanHalfAndVarianceOneTwelfth) {
  Sampler rng(7);
  const Moments m = moments([&] { return rng.uniform01(); }, 200000);
  EXPECT_TRUE(near_rel(m.mean, 0.5, 0.01));      // E[U] = 1/2
  EXPECT_TRUE(near_rel(m.var, 1.0 / 12, 0.02));  // Var[U] = 1/12
}

TEST(Sampler, ExponentialHasMeanAndVarianceOfItsRate) {
  Sampler rng(1);
  const Moments m = moments([&] { return rng.exponential(2.0); }, 200000);
  EXPECT_TRUE(near_rel(m.mean, 2.0, 0.01));  // E = mean = 2
  EXPECT_TRUE(near_rel(m.var, 4.0, 0.03));   // Var = mean² = 4
}

TEST(Sampler, NormalIsStandard) {
  Sampler rng(3);
  const Moments m = moments([&] { return rng.normal(); }, 200000);
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  EXPECT_TRUE(near_rel(m.var, 1.0, 0.02));
}

TEST(Sampler, GammaHasMeanShapeTimesScale) {
  Sampler rng(5);
  // shape 4, scale 0.5: mean 2, variance 4 · 0.25 = 1.
  const Moments a = moments([&] { return rng.gamma(4, 0.5); }, 200000);
  EXPECT_TRUE(near_rel(a.mean, 2.0, 0.01));
  EXPECT_TRUE(near_rel(a.var, 1.0, 0.03));
  // shape 0.25 (cv 2, bursty arrivals), scale 4: mean 1, variance 0.25 · 16 = 4.
  const Moments b = moments([&] { return rng.gamma(0.25, 4); }, 400000);
  EXPECT_TRUE(near_rel(b.mean, 1.0, 0.02));
  EXPECT_TRUE(near_rel(b.var, 4.0, 0.06));
}

TEST(Sampler, LognormalHasTheRequestedMean) {
  Sampler rng(9);
  // mean 100, σ 0.5: Var = mean² · (e^{σ²} − 1) = 10⁴ · 0.284025 = 2840.25.
  const Moments m = moments([&] { return rng.lognormal(100, 0.5); }, 400000);
  EXPECT_TRUE(near_rel(m.mean, 100, 0.01));
  EXPECT_TRUE(near_rel(m.var, 2840.25, 0.04));
}

TEST(Sampler, NormalQuantileMatchesTables) {
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(normal_quantile(0.9), 1.2815515655, 1e-9);
  EXPECT_NEAR(normal_quantile(0.99), 2.3263478740, 1e-9);
  EXPECT_NEAR(normal_quantile(0.001), -3.0902323062, 1e-9);
}

TEST(Sampler, SameSeedSameSequence) {
  Sampler a(42), b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.gamma(0.7, 1.3), b.gamma(0.7, 1.3));
}

// ---- Per-step cost API ----

InferenceSpec llama7b_a100() {
  InferenceSpec s;
  s.model = io::resolve_model("llama-2-7b", "model");
  s.hardware = io::resolve_hardware("a100-sxm-80g", "hardware");
  s.kernel.use_calibration = false;  // Tier-0 physics
  return s;
}

TEST(StepTimeModel, DecodeStepEqualsEstimateInference) {
  // estimate_inference with 2 output tokens prices exactly one decode step of b sequences at
  // context prompt + 1; the step API with the same shape must give the same time.
  InferenceSpec s = llama7b_a100();
  s.prompt_tokens = 500;
  s.output_tokens = 2;
  s.batch_size = 24;
  const InferenceResult r = estimate_inference(s);
  StepTimeModel m(s);
  StepShape step;
  step.decode_sequences = 24;
  step.decode_context_tokens = 24 * 501.0;
  EXPECT_TRUE(near_rel(m.step_time_s(step), r.tpot_s, 1e-9));
}

TEST(StepTimeModel, PrefillStepEqualsEstimateInference) {
  // 4 prompts of 300 tokens fit one 8192-token chunk: TTFT is one step with 4 sequences.
  InferenceSpec s = llama7b_a100();
  s.prompt_tokens = 300;
  s.output_tokens = 2;
  s.batch_size = 4;
  const InferenceResult r = estimate_inference(s);
  StepTimeModel m(s);
  const PrefillChunk chunks[4] = {{300, 0}, {300, 0}, {300, 0}, {300, 0}};
  StepShape step;
  step.prefills = chunks;
  step.num_prefills = 4;
  EXPECT_TRUE(near_rel(m.step_time_s(step), r.ttft_s, 1e-9));
}

/// Llama 3.2 1B on an H100 at Tier 0: `batch` 16-token prompts, one decode step.
InferenceSpec llama1b_h100_one_decode_step(int batch) {
  InferenceSpec s;
  s.model = io::resolve_model("llama-3.2-1b", "model");
  s.hardware = io::resolve_hardware("h100-sxm", "hardware");
  s.kernel.use_calibration = false;
  s.prompt_tokens = 16;
  s.output_tokens = 2;
  s.batch_size = batch;
  return s;
}

TEST(StepTimeModel, HostWorkPerSequenceFloorsTheStep) {
  // TensorRT-LLM's PyTorch executor spends 29.4 us of host time per running request and step
  // while the GPU runs the step before. Llama 3.2 1B on an H100 at batch 1,024 over 17-token
  // contexts: the GPU needs ~5 ms (2 · 1.24e9 · 1,024 FLOP = 2.5 TFLOP of GEMMs at 791 TFLOPS,
  // 2.5 GB of weights), the host 1,024 · 29.4 us = 30.1056 ms: the step takes the host's time, in
  // estimate_inference (its `host_per_sequence` op the difference) and in the step API alike. At
  // batch 16 the host needs 0.47 ms, less than the GPU: it costs nothing.
  InferenceSpec s = llama1b_h100_one_decode_step(1024);
  const InferenceResult gpu = estimate_inference(s);
  s.engine.host_per_sequence_s = 29.4e-6;
  const InferenceResult host = estimate_inference(s);
  EXPECT_LT(gpu.tpot_s, 10e-3);
  EXPECT_TRUE(near_rel(host.tpot_s, 1024 * 29.4e-6, 1e-9));
  bool named = false;
  for (const BreakdownItem& i : host.breakdown) named = named || i.op == "host_per_sequence";
  EXPECT_TRUE(named);
  StepTimeModel m(s);
  StepShape decode;
  decode.decode_sequences = 1024;
  decode.decode_context_tokens = 1024 * 17.0;
  EXPECT_TRUE(near_rel(m.step_time_s(decode), 1024 * 29.4e-6, 1e-9));

  s.batch_size = 16;
  const InferenceResult small = estimate_inference(s);
  s.engine.host_per_sequence_s = 0;
  EXPECT_TRUE(near_rel(small.tpot_s, estimate_inference(s).tpot_s, 1e-12));
}

TEST(StepTimeModel, EagerStepsWaitForTheirKernelLaunches) {
  // Llama 3.2 1B launches 1 (embedding) + 16 layers x 9 (q/k/v, attention, o_proj, gate_up,
  // down, four norm and residual kernels) + 2 (final norm, lm_head) = 147 kernels a step, 1.47 ms
  // at 10 us each without CUDA graphs. At batch 1 an H100 runs a decode step (2.5 GB of bf16
  // weights at 3.35 TB/s x 85 %, 0.87 ms, plus 147 x 2 us of fixed cost) in ~1.2 ms: the GPU waits
  // for the launches, and the step takes them plus the 300 us step overhead, in
  // estimate_inference (its `eager_launch` op the difference) and in the step API alike. At
  // batch 256 over 2,048-token contexts the kernels outlast the launches: eager costs nothing.
  InferenceSpec s = llama1b_h100_one_decode_step(1);
  const InferenceResult graphs = estimate_inference(s);
  s.engine.cuda_graphs = false;
  const InferenceResult eager = estimate_inference(s);
  EXPECT_LT(graphs.tpot_s - 300e-6, 1.47e-3);
  EXPECT_TRUE(near_rel(eager.tpot_s, 1.47e-3 + 300e-6, 1e-9));
  // The estimate states the launch cost it rests on, only where it applies.
  auto launch_us = [](const InferenceResult& r) {
    for (const Assumption& a : r.assumptions) {
      if (a.name == "eager_launch") return a.value;
    }
    return -1.0;
  };
  EXPECT_TRUE(near_rel(launch_us(eager), 10.0, 1e-12));
  EXPECT_EQ(launch_us(graphs), -1.0);
  StepTimeModel m(s);
  StepShape decode;
  decode.decode_sequences = 1;
  decode.decode_context_tokens = 17;
  EXPECT_TRUE(near_rel(m.step_time_s(decode), 1.47e-3 + 300e-6, 1e-9));

  s.prompt_tokens = 2048;
  s.batch_size = 256;
  const InferenceResult busy = estimate_inference(s);
  s.engine.cuda_graphs = true;
  EXPECT_GT(busy.tpot_s, 1.47e-3 + 300e-6);
  EXPECT_TRUE(near_rel(busy.tpot_s, estimate_inference(s).tpot_s, 1e-12));
}

TEST(StepTimeModel, MixedStepIsAdditive) {
  StepTimeModel m(llama7b_a100());
  const PrefillChunk chunk{256, 100};
  StepShape step;
  step.prefills = &chunk;
  step.num_prefills = 1;
  step.decode_sequences = 16;
  step.decode_context_tokens = 16 * 800.0;
  // dense(256 + 16 tokens) + head(17 sampled) + chunk attention + decode attention + overhead.
  const double expected = m.dense_time_s(272, true) + m.head_time_s(17) +
                          m.prefill_attention_s(chunk) + m.decode_attention_s(16, 800) + 300e-6;
  EXPECT_TRUE(near_rel(m.step_time_s(step), expected, 1e-12));
  // A chunk after 100 cached tokens attends to them: one attention kernel per layer (32 layers)
  // over 256 new tokens after 100 cached ones, its fixed cost paid once.
  const InferenceSpec spec = llama7b_a100();
  const OpCost layer =
      attention_prefill_op(spec.hardware, spec.kernel, 1, 256, AttentionDims::standard(32, 32, 128),
                           AttentionTypes{DType::fp16, 2, 2}, 100);
  EXPECT_TRUE(near_rel(m.prefill_attention_s(chunk), 32 * layer.time.value, 1e-12));
}

// ---- Hybrid models: a Mamba-2 state per running request ----

InferenceSpec nano_h200() {
  InferenceSpec s;
  s.model = io::resolve_model("nemotron-3-nano-30b-a3b", "model");
  s.hardware = io::resolve_hardware("h200-sxm", "hardware");
  s.kernel.use_calibration = false;
  return s;
}

TEST(HybridServing, StepsEqualEstimateInference) {
  // Nemotron 3 Nano (23 Mamba-2, 6 attention layers): the step API prices each kind's mixer as
  // estimate_inference does, the scan over a chunk's tokens and one state update per decoding
  // sequence, attention only in the 6 attention layers.
  InferenceSpec s = nano_h200();
  s.prompt_tokens = 500;
  s.output_tokens = 2;
  s.batch_size = 24;
  const InferenceResult r = estimate_inference(s);
  StepTimeModel m(s);
  StepShape decode;
  decode.decode_sequences = 24;
  decode.decode_context_tokens = 24 * 501.0;
  EXPECT_TRUE(near_rel(m.step_time_s(decode), r.tpot_s, 1e-9));
  // 8 prompts of 500 tokens: 4,000 tokens, one chunk.
  s.batch_size = 8;
  const InferenceResult p = estimate_inference(s);
  const PrefillChunk chunk{500, 0};
  const std::vector<PrefillChunk> chunks(8, chunk);
  StepShape prefill;
  prefill.prefills = chunks.data();
  prefill.num_prefills = 8;
  EXPECT_TRUE(near_rel(m.step_time_s(prefill), p.ttft_s, 1e-9));
  // The decode of 24 sequences costs the same after 100k tokens of context in the Mamba layers:
  // the step grows only by the 6 attention layers' longer KV reads.
  StepShape later = decode;
  later.decode_context_tokens = 24 * 100001.0;
  const double grown = m.step_time_s(later) - m.step_time_s(decode);
  EXPECT_TRUE(
      near_rel(grown, m.decode_attention_s(24, 100001) - m.decode_attention_s(24, 501), 1e-12));
  EXPECT_GT(grown, 0);
}

TEST(HybridServing, EachRunningRequestHoldsItsMambaStateInBlocks) {
  // Nano bf16 on one H200, 64 clients, 512 + 64 tokens. One request's Mamba state is 23 layers
  // · (64·64·128 · 4 B + 3 · 6,144 · 2 B) = 49,082,368 B; a KV block holds 16 tokens of the 6
  // attention layers' 6,144 B: 98,304 B, so the state takes ceil(499.3) = 500 blocks, and a
  // whole request 576 / 16 = 36 blocks of KV beside it: 536 blocks.
  json r{{"task", "serving"},
         {"mode", "simulate"},
         {"model", "nemotron-3-nano-30b-a3b"},
         {"hardware", "h200-sxm"},
         {"engine", {{"gpu_memory_utilization", 0.449}}},
         {"workload",
          {{"arrival", {{"kind", "concurrency"}, {"concurrency", 64}}},
           {"prompt_tokens", 512},
           {"output_tokens", 64},
           {"num_requests", 64}}}};
  const json out = io::run(r);
  EXPECT_TRUE(near_rel(out["kv_cache"]["state_MB_per_request"], 49.082368, 1e-6));
  // The pool holds kv_blocks = capacity / 16; at most floor(kv_blocks / 536) requests run at
  // once, where their KV alone (36 blocks each) would let all 64 in.
  const double blocks = out["kv_cache"]["capacity_tokens"].get<double>() / 16;
  ASSERT_GT(blocks, 20 * 536.0);
  ASSERT_LT(blocks, 64 * 536.0);
  double most = 0;
  for (const json& b : out["timeline"]["batch_size"]) most = std::max(most, b.get<double>());
  EXPECT_EQ(most, std::floor(blocks / 536));
  EXPECT_EQ(out["simulation"]["completed"], 64);
  // The analytic engine counts the state's blocks in every sequence's share of the pool.
  r["mode"] = "analytic";
  const json analytic = io::run(r);
  EXPECT_LE(analytic["batch"]["max_size_kv"].get<double>(), blocks * 16 / (500 * 16 + 512));
  EXPECT_GE(analytic["batch"]["max_size_kv"].get<double>(), blocks * 16 / (500 * 16 + 600) - 1);
  // What the state does not support is refused by name.
  r["features"] = {{"prefix_caching", {{"shared_prefix_tokens", 256}}}};
  EXPECT_EQ(error_of(r),
            "features.prefix_caching: prefix caching of a hybrid model (model.layer_pattern) is "
            "not modelled");
}

TEST(StepTimeModel, FewNewTokensAfterALongCacheCostOneKernelPerLayer) {
  // A prefix-cache hit of 592 of 594 prompt tokens leaves a 2-token chunk. Its attention is one
  // kernel per layer over the cache (priced as such: ~24 us per layer on an A100, see
  // Attention.PrefillAfterCachedTokens), not the 2-token causal kernel scaled by the pairs ratio
  // (1,187 / 3 = 396x, its 2 us fixed cost included: ~0.8 ms per layer).
  StepTimeModel m(llama7b_a100());
  const double t = m.prefill_attention_s({2, 592});
  EXPECT_GT(t, 32 * 20e-6);
  EXPECT_LT(t, 32 * 30e-6);
}

// ---- Simulator: hand-simulated cases with a constant step time ----

ServingSpec tiny_spec() {
  ServingSpec s;
  s.inference = llama7b_a100();
  s.arrival.kind = ArrivalKind::constant;
  s.prompt = {LengthKind::fixed, 100, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 3, 1, 1, 0, 0};
  return s;
}

const StepCostFn kTenMs = [](const StepShape&) { return 10e-3; };

TEST(ServingSimulation, LoneRequestTakesOneStepPerToken) {
  // One request: step 1 (prefill, 0-10 ms) emits token 1, steps 2 and 3 emit tokens 2 and 3.
  ServingSpec s = tiny_spec();
  s.arrival.rate_per_s = 1;
  s.num_requests = 1;
  const ServingResult r = simulate_serving(s, kTenMs);
  ASSERT_EQ(r.completed, 1);
  EXPECT_TRUE(near_rel(r.ttft_s->mean, 10e-3, 1e-12));
  EXPECT_TRUE(near_rel(r.tpot_s->mean, 10e-3, 1e-12));
  EXPECT_TRUE(near_rel(r.e2e_s->mean, 30e-3, 1e-12));
  EXPECT_EQ(r.steps, 3);
}

TEST(ServingSimulation, SecondRequestWaitsForTheRunningStep) {
  // r0 arrives at 0, r1 at 1 ms. Step A [0, 10]: prefill r0 (token 1). Step B [10, 20]: decode
  // r0 (token 2) + prefill r1 (its token 1 at 20: TTFT 19 ms). Step C [20, 30]: r0 token 3
  // (E2E 30), r1 token 2. Step D [30, 40]: r1 token 3 (E2E 39). Mean TTFT (10 + 19)/2 = 14.5 ms,
  // mean E2E (30 + 39)/2 = 34.5 ms, queueing (0 + 9)/2 = 4.5 ms.
  ServingSpec s = tiny_spec();
  s.arrival.rate_per_s = 1000;
  s.num_requests = 2;
  const ServingResult r = simulate_serving(s, kTenMs);
  ASSERT_EQ(r.completed, 2);
  EXPECT_TRUE(near_rel(r.ttft_s->mean, 14.5e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.e2e_s->mean, 34.5e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.queueing_s->mean, 4.5e-3, 1e-9));
  EXPECT_EQ(r.steps, 4);
}

TEST(ServingSimulation, AsyncSchedulingAdmitsOneStepLater) {
  // As SecondRequestWaitsForTheRunningStep, with async scheduling: step B [10, 20] was planned
  // at 0, before r1 arrived at 1 ms, so B decodes r0 alone; r1 is prefilled in step C [20, 30]
  // (TTFT 29 ms) with r0's last token, then steps D and E [30, 50] give r1 tokens 2 and 3 (E2E
  // 49). Mean TTFT (10 + 29)/2 = 19.5 ms, E2E (30 + 49)/2 = 39.5 ms, 5 steps. r0 arrived at an
  // idle engine: no lag.
  ServingSpec s = tiny_spec();
  s.inference.engine.async_scheduling = true;
  s.arrival.rate_per_s = 1000;
  s.num_requests = 2;
  const ServingResult r = simulate_serving(s, kTenMs);
  ASSERT_EQ(r.completed, 2);
  EXPECT_TRUE(near_rel(r.ttft_s->mean, 19.5e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.e2e_s->mean, 39.5e-3, 1e-9));
  EXPECT_EQ(r.steps, 5);
}

TEST(ServingSimulation, ConservesRequestsAndTokens) {
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::poisson;
  s.arrival.rate_per_s = 20;
  s.num_requests = 300;
  s.prompt = {LengthKind::uniform, 0, 50, 400, 0, 0};
  s.output = {LengthKind::lognormal, 0, 2, 300, 80, 0.8};
  s.per_request = true;
  const ServingResult r = simulate_serving(s);
  ASSERT_EQ(r.completed, 300);
  double in = 0, out = 0;
  for (const RequestRecord& q : r.requests) {
    EXPECT_GE(q.first_token_s, q.scheduled_s);
    EXPECT_GE(q.scheduled_s, q.arrival_s);
    EXPECT_GE(q.finish_s, q.first_token_s);
    in += q.prompt_tokens;
    out += q.output_tokens;
  }
  // Throughput is the tokens of all requests over the span from the first arrival to the last
  // finish, so tokens/s divided by requests/s is the mean length.
  EXPECT_TRUE(near_rel(r.output_tokens_per_s / r.requests_per_s, out / 300, 1e-9));
  EXPECT_TRUE(near_rel(r.input_tokens_per_s / r.requests_per_s, in / 300, 1e-9));
}

TEST(ServingSimulation, DeterministicBySeed) {
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::gamma;
  s.arrival.rate_per_s = 15;
  s.arrival.cv = 2;
  s.num_requests = 200;
  s.output = {LengthKind::lognormal, 0, 1, 500, 100, 1.0};
  const ServingResult a = simulate_serving(s), b = simulate_serving(s);
  EXPECT_EQ(a.ttft_s->p99, b.ttft_s->p99);
  EXPECT_EQ(a.e2e_s->mean, b.e2e_s->mean);
  EXPECT_EQ(a.steps, b.steps);
  s.seed = 2;
  const ServingResult c = simulate_serving(s);
  EXPECT_NE(a.e2e_s->mean, c.e2e_s->mean);
}

/// A small KV pool (gpu_memory_utilization 0.22 of 80 GB leaves ~2.5 GB after 13.5 GB of
/// weights, 1 GB reserve and activations: ~4,700 tokens) under 100 requests of 200 + 600 tokens.
ServingSpec small_pool_long_outputs() {
  ServingSpec s = tiny_spec();
  s.inference.engine.gpu_memory_utilization = 0.22;
  s.arrival.rate_per_s = 50;
  s.num_requests = 100;
  s.prompt = {LengthKind::fixed, 200, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 600, 1, 1, 0, 0};
  return s;
}

TEST(ServingSimulation, PreemptsWhenBlocksRunOutAndStillFinishes) {
  // Admitted with the blocks they need now, the long outputs outgrow the pool: recompute.
  const ServingResult r = simulate_serving(small_pool_long_outputs());
  EXPECT_EQ(r.completed, 100);
  ASSERT_TRUE(r.preemptions.has_value());
  EXPECT_GT(*r.preemptions, 0);
  EXPECT_LE(r.kv_peak_use, 1.0);
}

TEST(ServingSimulation, GuaranteedNoEvictReservesWholeSequencesAndNeverPreempts) {
  // The same small pool under TensorRT-LLM's GUARANTEED_NO_EVICT: a request is admitted only
  // where its 800 tokens (50 blocks of 16) are free, so at most floor(blocks / 50) run at once
  // and none is ever preempted; all 100 finish.
  ServingSpec s = small_pool_long_outputs();
  s.inference.engine.guaranteed_no_evict = true;
  const ServingResult r = simulate_serving(s);
  EXPECT_EQ(r.completed, 100);
  ASSERT_TRUE(r.preemptions.has_value());
  EXPECT_EQ(*r.preemptions, 0);
  const double blocks = r.kv_capacity_tokens / 16;
  ASSERT_GT(blocks, 2 * 50.0);
  double most = 0;
  for (const TimelinePoint& p : r.timeline) most = std::max(most, p.batch_size);
  EXPECT_LE(most, std::floor(blocks / 50));
  EXPECT_GE(most, 0.8 * std::floor(blocks / 50));
}

TEST(ServingSimulation, KvCacheFreeFractionIsOfWhatLoadingLeaves) {
  // TensorRT-LLM's kv_cache_free_gpu_mem_fraction 0.5: half of what the weights (13.5 GB),
  // reserve and activations leave of 80 GB, not 0.5 x 80 GB less them (~25 GB, against ~32 GB).
  ServingSpec s = tiny_spec();
  const double whole = simulate_serving(s).kv_capacity_tokens;
  s.inference.engine.gpu_memory_utilization = 0.5;
  const double of_device = simulate_serving(s).kv_capacity_tokens;
  s.inference.engine.kv_cache_free_fraction = 0.5;
  const double of_free = simulate_serving(s).kv_capacity_tokens;
  // With the default 0.9 of the device the pool is 0.9·80 − rest; of_free is half of 80 − rest.
  const double rest_GB = 0.9 * 80 - whole * 524288 / 1e9;  // Llama-2-7B: 512 KiB a token
  EXPECT_TRUE(near_rel(of_free * 524288 / 1e9, 0.5 * (80 - rest_GB), 0.01));
  EXPECT_GT(of_free, 1.2 * of_device);
}

TEST(ServingSimulation, TimelineIsBounded) {
  ServingSpec s = tiny_spec();
  s.arrival.rate_per_s = 5;
  s.num_requests = 2000;
  s.timeline_points = 64;
  const ServingResult r = simulate_serving(s, kTenMs);
  EXPECT_LE(r.timeline.size(), 64u);
  EXPECT_GE(r.timeline.size(), 16u);
}

TEST(ServingSimulation, AdvancesInSlices) {
  ServingSpec s = tiny_spec();
  s.arrival.rate_per_s = 10;
  s.num_requests = 50;
  ServingSimulation sim(s, kTenMs);
  int slices = 0;
  while (!sim.advance(20)) {
    ++slices;
    EXPECT_LE(sim.progress(), 1.0);
  }
  EXPECT_GT(slices, 3);
  EXPECT_EQ(sim.progress(), 1.0);
  EXPECT_EQ(sim.result().e2e_s->mean, simulate_serving(s, kTenMs).e2e_s->mean);
}

TEST(ServingSimulation, UnchunkedLongPromptRunsWithTheDecodes) {
  // No chunking, budget 100, prompts of 150, 3 output tokens, r0 at 0 and r1 at 1 ms, 10 ms
  // steps. A [0, 10]: r0's prompt alone (token 1). B [10, 20]: r0 decodes and r1's whole prompt
  // joins as the step's only prefill (r1 token 1 at 20: TTFT 19 ms). C [20, 30]: r0 token 3
  // (E2E 30), r1 token 2. D [30, 40]: r1 token 3 (E2E 39). Mean TTFT 14.5 ms, mean E2E 34.5 ms,
  // batch (1 + 2 + 2 + 1) / 4 = 1.5. Before, r1 waited for a step with nothing else in it: [30, 40]
  // prefill, TTFT 39 ms, E2E 59 ms, batch 1.
  ServingSpec s = tiny_spec();
  s.inference.engine.chunked_prefill = false;
  s.inference.engine.max_num_batched_tokens = 100;
  s.prompt = {LengthKind::fixed, 150, 1, 1, 0, 0};
  s.arrival.rate_per_s = 1000;
  s.num_requests = 2;
  const ServingResult r = simulate_serving(s, kTenMs);
  ASSERT_EQ(r.completed, 2);
  EXPECT_TRUE(near_rel(r.ttft_s->mean, 14.5e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.e2e_s->mean, 34.5e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.mean_batch_size, 1.5, 1e-9));
  EXPECT_EQ(r.steps, 4);
  // Two long prompts never share a step: both sent at t = 0 (concurrency 2), A still holds r0's
  // prompt alone and B r0's decode + r1's prompt: TTFT (10 + 20) / 2 = 15 ms, 4 steps.
  s.arrival.kind = ArrivalKind::concurrency;
  s.arrival.concurrency = 2;
  const ServingResult c = simulate_serving(s, kTenMs);
  EXPECT_TRUE(near_rel(c.ttft_s->mean, 15e-3, 1e-9));
  EXPECT_EQ(c.steps, 4);
}

TEST(ServingSimulation, ClosedLoopSendsTheNextRequestWhenOneEnds) {
  // concurrency 2, 4 requests, 10 ms steps, 100-token prompts, 3 output tokens. r0, r1 at t = 0:
  // step A [0, 10] prefills both (token 1), B and C decode (tokens 2, 3): both end at 30 ms and
  // their clients send r2, r3 at 30, which join the next step D [30, 40] and end at 60.
  // TTFT 10 ms and E2E 30 ms each; 4 requests / 60 ms = 66.667 requests/s; 6 steps.
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::concurrency;
  s.arrival.concurrency = 2;
  s.num_requests = 4;
  const ServingResult r = simulate_serving(s, kTenMs);
  ASSERT_EQ(r.completed, 4);
  EXPECT_TRUE(near_rel(r.ttft_s->mean, 10e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.e2e_s->p99, 30e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.requests_per_s, 4 / 60e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.mean_batch_size, 2, 1e-9));
  EXPECT_EQ(r.steps, 6);
  EXPECT_FALSE(r.saturated);
}

TEST(ServingSimulation, OfflineBatchIsConcurrencyEqualToNumRequests) {
  // All 4 requests at t = 0, max_num_seqs 2: r0, r1 run [0, 30]; r2, r3 wait for their slots,
  // are admitted at 30 and end at 60. TTFT 10, 10, 40, 40 (mean 25 ms); E2E 30, 30, 60, 60
  // (mean 45 ms); queueing 0, 0, 30, 30 (mean 15 ms).
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::concurrency;
  s.arrival.concurrency = 4;
  s.num_requests = 4;
  s.inference.engine.max_num_seqs = 2;
  const ServingResult r = simulate_serving(s, kTenMs);
  ASSERT_EQ(r.completed, 4);
  EXPECT_TRUE(near_rel(r.ttft_s->mean, 25e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.e2e_s->mean, 45e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.queueing_s->mean, 15e-3, 1e-9));
  EXPECT_TRUE(near_rel(r.requests_per_s, 4 / 60e-3, 1e-9));
}

// ---- Analytic model ----

/// Llama-2-7B on an A100 at 4 req/s (Poisson) of 512 → 128 tokens.
ServingSpec poisson_4_per_s() {
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::poisson;
  s.arrival.rate_per_s = 4;
  s.prompt = {LengthKind::fixed, 512, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 128, 1, 1, 0, 0};
  return s;
}

TEST(ServingAnalytic, LittlesLawHoldsAtTheFixedPoint) {
  // B = λ · D · τ with D = 1 + (n − 1) steps a request spends in the batch (n = 128).
  const ServingResult r = estimate_serving(poisson_4_per_s());
  ASSERT_FALSE(r.saturated);
  EXPECT_TRUE(near_rel(r.mean_batch_size, 4 * 128 * r.mean_step_time_s, 1e-6));
  EXPECT_GT(r.utilization, 0);
  EXPECT_LT(r.utilization, 1);
  // E2E mean = TTFT mean + (n − 1) · TPOT mean, the decode time being deterministic here.
  EXPECT_TRUE(near_rel(r.e2e_s->mean, r.ttft_s->mean + 127 * r.tpot_s->mean, 1e-6));
}

TEST(ServingAnalytic, AsyncSchedulingAddsOneStepToTheQueueing) {
  // At B = 4 · 128 · τ (about 3.6 sequences) the engine is always busy: a request that arrives
  // joins one step later than in a synchronous engine, so TTFT and E2E means grow by τ and TPOT
  // does not change.
  ServingSpec s = poisson_4_per_s();
  const ServingResult sync = estimate_serving(s);
  s.inference.engine.async_scheduling = true;
  const ServingResult async = estimate_serving(s);
  ASSERT_GT(sync.mean_batch_size, 1);
  const double tau = sync.mean_step_time_s;
  EXPECT_NEAR(async.ttft_s->mean - sync.ttft_s->mean, tau, 0.01 * tau);
  EXPECT_NEAR(async.e2e_s->mean - sync.e2e_s->mean, tau, 0.01 * tau);
  EXPECT_TRUE(near_rel(async.tpot_s->mean, sync.tpot_s->mean, 1e-9));
}

TEST(ServingAnalytic, OverloadIsStatedWithoutLatencies) {
  ServingSpec s = tiny_spec();
  s.prompt = {LengthKind::fixed, 512, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 128, 1, 1, 0, 0};
  s.arrival.rate_per_s = 1;
  const double saturation = estimate_serving(s).saturation_rate_per_s;
  s.arrival.rate_per_s = saturation * 1.01;
  const ServingResult r = estimate_serving(s);
  EXPECT_TRUE(r.saturated);
  EXPECT_FALSE(r.ttft_s.has_value());
  EXPECT_TRUE(near_rel(r.requests_per_s, saturation, 1e-9));
  s.arrival.rate_per_s = saturation * 0.99;
  EXPECT_FALSE(estimate_serving(s).saturated);
}

TEST(ServingAnalytic, AgreesWithTheSimulatorAtModerateLoad) {
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::poisson;
  s.arrival.rate_per_s = 5;
  s.num_requests = 2000;
  s.prompt = {LengthKind::fixed, 512, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 128, 1, 1, 0, 0};
  const ServingResult a = estimate_serving(s), d = simulate_serving(s);
  EXPECT_TRUE(near_rel(a.tpot_s->mean, d.tpot_s->mean, 0.10));
  EXPECT_TRUE(near_rel(a.e2e_s->mean, d.e2e_s->mean, 0.10));
  EXPECT_TRUE(near_rel(a.ttft_s->mean, d.ttft_s->mean, 0.30));
}

TEST(ServingAnalytic, TailPercentilesComeFromTheirOwnQuantiles) {
  // Constant arrivals, fixed lengths: no queueing wait (ca² = cs² = 0), so the queueing delay is
  // the phase of the running step at arrival, uniform on [0, τ]: mean 0.5τ, p50 0.5τ, p90 0.9τ,
  // p99 0.99τ. (With 32 equal quantile points the largest level was 0.984 and p90 = p99.)
  ServingSpec s = poisson_4_per_s();
  s.arrival.kind = ArrivalKind::constant;
  const ServingResult r = estimate_serving(s);
  const double tau = r.mean_step_time_s;
  EXPECT_TRUE(near_rel(r.queueing_s->mean, 0.5 * tau, 1e-6));
  EXPECT_TRUE(near_rel(r.queueing_s->p50, 0.5 * tau, 1e-6));
  EXPECT_TRUE(near_rel(r.queueing_s->p90, 0.9 * tau, 1e-6));
  EXPECT_TRUE(near_rel(r.queueing_s->p99, 0.99 * tau, 1e-6));
  // TTFT adds the constant prefill service: the same spreads.
  EXPECT_TRUE(near_rel(r.ttft_s->p99 - r.ttft_s->p50, 0.49 * tau, 1e-6));
  // Poisson: an exponential tail above the waiting probability, p99 well past p90.
  s.arrival.kind = ArrivalKind::poisson;
  const ServingResult p = estimate_serving(s);
  EXPECT_GT(p.ttft_s->p99 - p.ttft_s->p90, p.ttft_s->p90 - p.ttft_s->p50);
}

TEST(ServingAnalytic, BurstinessScalesTheQueueingWait) {
  // Fixed lengths: cs² = 0 for the prompt work and the slot holding time, so both waits are
  // ca²/2 times their M/M form: constant (ca² = 0) waits nothing, Poisson (1) waits W, gamma
  // cv 2 (ca² = 4) waits 4W. With the step phase and the service common to all three,
  // (TTFT_gamma − TTFT_const) / (TTFT_poisson − TTFT_const) = 4.
  ServingSpec s = tiny_spec();
  s.arrival.rate_per_s = 8;
  s.prompt = {LengthKind::fixed, 512, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 128, 1, 1, 0, 0};
  const double constant = estimate_serving(s).ttft_s->mean;
  s.arrival.kind = ArrivalKind::poisson;
  const double poisson = estimate_serving(s).ttft_s->mean;
  s.arrival.kind = ArrivalKind::gamma;
  s.arrival.cv = 2;
  const double gamma = estimate_serving(s).ttft_s->mean;
  EXPECT_GT(poisson, constant);
  EXPECT_TRUE(near_rel((gamma - constant) / (poisson - constant), 4.0, 0.02));
}

TEST(ServingAnalytic, LoraSlotWaitIsAFiniteSourceQueue) {
  // 2 adapters, 1 slot, λ = 4 req/s: each adapter is a source with rate la = 2/s holding the slot
  // for its M/G/∞ busy period b = (e^(la·h) − 1)/la, h = D·τ = 128·τ. With x = la·b the states
  // (0, 1, 2 adapters wanting the slot) weigh 1, 2x, 2x²: L = (2x + 4x²)/Z, Lq = 2x²/Z,
  // activations la(2 + 2x)/Z, so W_q = x² / (la (1 + x)); a request waits W_q if its adapter was
  // idle ((2 − L)/2 of the time) and W_q/2 if it was queued (Lq/2).
  ServingSpec s = poisson_4_per_s();
  s.lora.num_adapters = 2;
  s.lora.max_loras_per_batch = 1;
  const ServingResult r = estimate_serving(s);
  const double la = 2, h = 128 * r.mean_step_time_s;
  const double x = la * std::expm1(la * h) / la;
  const double z = 1 + 2 * x + 2 * x * x;
  const double l = (2 * x + 4 * x * x) / z, lq = 2 * x * x / z;
  const double wq = x * x / (la * (1 + x));
  const double expected = (2 - l) / 2 * wq + lq / 2 * wq / 2;
  double got = -1;
  for (const Assumption& a : r.assumptions) {
    if (a.name == "lora_slot_wait") got = a.value;
  }
  EXPECT_TRUE(near_rel(got, expected, 1e-9));
}

TEST(ServingAnalytic, LoraSlotWaitAgreesWithTheSimulator) {
  // Llama-2-7B / A100, 10 adapters, 4 per batch, 5 req/s: the wait for an adapter slot dominates
  // TTFT (analytic 64 ms without it against ~890 ms simulated).
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::poisson;
  s.arrival.rate_per_s = 5;
  s.num_requests = 1000;
  s.prompt = {LengthKind::fixed, 512, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 128, 1, 1, 0, 0};
  s.lora.num_adapters = 10;
  s.lora.max_loras_per_batch = 4;
  const ServingResult a = estimate_serving(s), d = simulate_serving(s);
  EXPECT_TRUE(near_rel(a.ttft_s->mean, d.ttft_s->mean, 0.30));
}

TEST(ServingAnalytic, NoWholeRequestInTheKvCacheDoesNotFit) {
  // CodeLlama-34B on one H100 at gpu_memory_utilization 0.857: 72.896 GB budget (0.857 · 85.06)
  // − 67.488 GB weights − 1.92 GB reserve − 1.351 GB activations leave 2.137 GB = 679 blocks of
  // 16 · 196,608 B = 10,864 tokens of KV (as `inference`'s max_context_tokens). A request of
  // 10,900 + 200 = 11,100 tokens needs 694 blocks: it never fits (inference: max batch 0), so
  // both modes say fits: false with the reason, serving nothing. 10,000 + 16 tokens (626 blocks)
  // fits one at a time (inference: max batch 1) and is served.
  json r{{"task", "serving"},
         {"model", "codellama-34b"},
         {"hardware", "h100-sxm"},
         {"engine", {{"gpu_memory_utilization", 0.857}}},
         {"workload",
          {{"arrival", {{"kind", "poisson"}, {"rate_per_s", 0.1}}},
           {"prompt_tokens", 10900},
           {"output_tokens", 200},
           {"num_requests", 20}}}};
  for (const char* mode : {"analytic", "simulate"}) {
    r["mode"] = mode;
    const json out = io::run(r);
    EXPECT_FALSE(out["fits"].get<bool>()) << mode;
    EXPECT_EQ(out["kv_cache"]["capacity_tokens"], 10864) << mode;
    EXPECT_EQ(out["throughput"]["output_tokens_per_s"], 0) << mode;
    EXPECT_NE(out["warnings"][0].get<std::string>().find("less than one whole request"),
              std::string::npos)
        << mode;
    // The reason on its own, as the warning gives it after "does not fit: ".
    EXPECT_EQ(out["unfit_reason"].get<std::string>(),
              "the KV cache holds 10864 tokens per replica, less than one whole request (11100 "
              "tokens of prompt + output); no request can be served")
        << mode;
    EXPECT_EQ("does not fit: " + out["unfit_reason"].get<std::string>(),
              out["warnings"][0].get<std::string>())
        << mode;
  }
  r["workload"]["prompt_tokens"] = 10000;
  r["workload"]["output_tokens"] = 16;
  for (const char* mode : {"analytic", "simulate"}) {
    r["mode"] = mode;
    const json out = io::run(r);
    EXPECT_TRUE(out["fits"].get<bool>()) << mode;
    EXPECT_GT(out["throughput"]["output_tokens_per_s"].get<double>(), 0) << mode;
    EXPECT_TRUE(out["unfit_reason"].is_null()) << mode;
  }
}

TEST(ServingAnalytic, ClosedLoopRunsItsClientsAsTheBatch) {
  // 8 clients below every cap: B = 8 sequences, D = 1 + 127 = 128 steps per request, so
  // throughput X = B / (D · τ(8)) and, by Little's law, E2E = N / X = D · τ (no wait).
  ServingSpec s = tiny_spec();
  s.arrival.kind = ArrivalKind::concurrency;
  s.arrival.concurrency = 8;
  s.prompt = {LengthKind::fixed, 512, 1, 1, 0, 0};
  s.output = {LengthKind::fixed, 128, 1, 1, 0, 0};
  const ServingResult r = estimate_serving(s);
  ASSERT_FALSE(r.saturated);
  EXPECT_TRUE(near_rel(r.mean_batch_size, 8, 1e-12));
  EXPECT_TRUE(near_rel(r.requests_per_s, 8 / (128 * r.mean_step_time_s), 1e-9));
  EXPECT_TRUE(near_rel(r.output_tokens_per_s, 128 * r.requests_per_s, 1e-9));
  EXPECT_EQ(r.queueing_s->p99, 0);
  // Beyond max_num_seqs the batch stays at the cap and the rest wait in the engine.
  s.inference.engine.max_num_seqs = 4;
  const ServingResult q = estimate_serving(s);
  EXPECT_TRUE(near_rel(q.mean_batch_size, 4, 1e-12));
  EXPECT_GT(q.queueing_s->p99, 0);
}

TEST(ServingAnalytic, ClosedLoopAgreesWithTheSimulator) {
  // Lengths vary so that the clients fall out of step (with fixed lengths the simulator's 16
  // clients stay in lockstep, one wave of 16 prefills at a time, as a real engine would).
  ServingSpec s = tiny_spec();
  s.num_requests = 1000;
  s.arrival.kind = ArrivalKind::concurrency;
  s.arrival.concurrency = 16;
  s.prompt = {LengthKind::uniform, 0, 256, 768, 0, 0};
  s.output = {LengthKind::uniform, 0, 64, 192, 0, 0};
  ServingResult a = estimate_serving(s), d = simulate_serving(s);
  EXPECT_TRUE(near_rel(a.output_tokens_per_s, d.output_tokens_per_s, 0.10));
  EXPECT_TRUE(near_rel(a.e2e_s->mean, d.e2e_s->mean, 0.10));
  EXPECT_TRUE(near_rel(a.ttft_s->mean, d.ttft_s->mean, 0.30));
  // Offline: every request submitted at t = 0 (concurrency = num_requests > max_num_seqs).
  s.arrival.concurrency = 1000;
  s.inference.engine.max_num_seqs = 64;
  a = estimate_serving(s);
  d = simulate_serving(s);
  EXPECT_TRUE(near_rel(a.output_tokens_per_s, d.output_tokens_per_s, 0.10));
  EXPECT_TRUE(near_rel(a.e2e_s->mean, d.e2e_s->mean, 0.15));
}

// ---- Analytic model: disaggregated prefill and decode pools ----

/// Llama-2-7B on two A100s, one prefill and one decode instance, Poisson arrivals of 512 → 128.
ServingSpec split_pools(double rate_per_s) {
  ServingSpec s = poisson_4_per_s();
  s.arrival.rate_per_s = rate_per_s;
  s.inference.num_gpus = 2;
  s.disaggregation.prefill_instances = 1;
  s.disaggregation.decode_instances = 1;
  return s;
}

double assumption(const ServingResult& r, const std::string& name) {
  for (const Assumption& a : r.assumptions) {
    if (a.name == name) return a.value;
  }
  ADD_FAILURE() << "no assumption " << name;
  return -1;
}

TEST(ServingAnalyticPools, AgreesWithTheSimulator) {
  // 8 req/s: the prefill instance busy ~35 % of the time, the decode batch ~13 sequences.
  // 20,000 requests reach the steady state (3,000 understate the queue near saturation).
  ServingSpec s = split_pools(8);
  s.num_requests = 20000;
  const ServingResult a = estimate_serving(s), d = simulate_serving(s);
  ASSERT_FALSE(a.saturated);
  EXPECT_TRUE(near_rel(a.ttft_s->mean, d.ttft_s->mean, 0.15));
  EXPECT_TRUE(near_rel(a.ttft_s->p90, d.ttft_s->p90, 0.20));
  EXPECT_TRUE(near_rel(a.tpot_s->mean, d.tpot_s->mean, 0.05));
  EXPECT_TRUE(near_rel(a.e2e_s->mean, d.e2e_s->mean, 0.05));
  EXPECT_TRUE(near_rel(a.e2e_s->p90, d.e2e_s->p90, 0.10));
}

TEST(ServingAnalyticPools, KvTransferCountsInTpotNotTtft) {
  // Llama-2-7B keeps 2 (K, V) x 32 layers x 32 heads x 128 x 2 bytes = 524,288 bytes a token:
  // a 512-token prompt is 268,435,456 bytes, 5.369 ms at 50 GB/s and 26.844 ms at 10 GB/s.
  // Only the handoff moves: E2E grows by the 21.475 ms difference, TPOT by it / 127, TTFT and
  // the decode batch not at all.
  ServingSpec s = split_pools(4);
  const ServingResult fast = estimate_serving(s);
  s.disaggregation.kv_link_bytes_per_s = 10e9;
  const ServingResult slow = estimate_serving(s);
  const double delta = 268435456.0 / 10e9 - 268435456.0 / 50e9;
  EXPECT_NEAR(slow.e2e_s->mean - fast.e2e_s->mean, delta, 1e-3 * delta);
  EXPECT_NEAR(slow.tpot_s->mean - fast.tpot_s->mean, delta / 127, 1e-3 * delta / 127);
  EXPECT_DOUBLE_EQ(slow.ttft_s->mean, fast.ttft_s->mean);
  EXPECT_DOUBLE_EQ(slow.mean_batch_size, fast.mean_batch_size);
  EXPECT_NEAR(assumption(slow, "kv_transfer_ms"), 10e-3 + 268435456.0 / 10e9 * 1e3, 1e-6);
}

TEST(ServingAnalyticPools, DecodeBatchFollowsLittlesLaw) {
  // The decode instance holds each request for n − 1 = 127 decode steps: B = λ · 127 · τ.
  const ServingResult r = estimate_serving(split_pools(4));
  ASSERT_FALSE(r.saturated);
  EXPECT_TRUE(near_rel(r.mean_batch_size, 4 * 127 * r.mean_step_time_s, 1e-6));
  EXPECT_TRUE(near_rel(assumption(r, "decode_pool_batch"), r.mean_batch_size, 1e-12));
}

TEST(ServingAnalyticPools, TheNarrowerPoolSetsTheSaturationRate) {
  // Capacity is the smaller pool's: a second decode instance doubles the decode pool's rate
  // and leaves the prefill pool's as it was.
  const ServingResult one = estimate_serving(split_pools(1));
  const double prefill = assumption(one, "prefill_pool_saturation_rate");
  const double decode = assumption(one, "decode_pool_saturation_rate");
  EXPECT_DOUBLE_EQ(one.saturation_rate_per_s, std::min(prefill, decode));
  ServingSpec s = split_pools(1);
  s.inference.num_gpus = 3;
  s.disaggregation.decode_instances = 2;
  const ServingResult two = estimate_serving(s);
  EXPECT_DOUBLE_EQ(assumption(two, "prefill_pool_saturation_rate"), prefill);
  EXPECT_TRUE(near_rel(assumption(two, "decode_pool_saturation_rate"), 2 * decode, 1e-12));
  EXPECT_DOUBLE_EQ(two.saturation_rate_per_s, std::min(prefill, 2 * decode));
  // Past it, saturated, without latencies.
  s.arrival.rate_per_s = 1.01 * two.saturation_rate_per_s;
  const ServingResult over = estimate_serving(s);
  EXPECT_TRUE(over.saturated);
  EXPECT_FALSE(over.ttft_s.has_value());
}

TEST(ServingAnalyticPools, WhatItDoesNotModelIsAnError) {
  ServingSpec s = split_pools(4);
  s.arrival.kind = ArrivalKind::concurrency;
  s.arrival.concurrency = 8;
  EXPECT_THROW(estimate_serving(s), NotModelledError);
  s = split_pools(4);
  s.lora.num_adapters = 4;
  EXPECT_THROW(estimate_serving(s), NotModelledError);
  s = split_pools(4);
  s.output = {LengthKind::fixed, 1, 1, 1, 0, 0};
  try {
    estimate_serving(s);
    ADD_FAILURE() << "one output token was accepted";
  } catch (const NotModelledError& e) {
    EXPECT_EQ(e.path(), "workload.output_tokens");
  }
}

// ---- JSON: bad input ----

json serving_request() {
  return json{{"task", "serving"},
              {"model", "llama-2-7b"},
              {"hardware", "a100-sxm-80g"},
              {"workload",
               {{"arrival", {{"kind", "poisson"}, {"rate_per_s", 2}}},
                {"prompt_tokens", 512},
                {"output_tokens", 128},
                {"num_requests", 200}}}};
}

TEST(ServingJson, RunsBothModesAndEchoesTheResolvedRequest) {
  json req = serving_request();
  const json a = io::run(req);
  EXPECT_EQ(a["mode"], "analytic");
  EXPECT_EQ(a["request"]["engine"]["name"], "vllm");
  EXPECT_TRUE(a["preemptions"].is_null());
  req["mode"] = "simulate";
  const json d = io::run(req);
  EXPECT_EQ(d["simulation"]["completed"], 200);
  for (const char* k : {"mean", "p50", "p90", "p99"}) EXPECT_TRUE(d["ttft_ms"][k].is_number());
  EXPECT_TRUE(d["throughput"]["output_tokens_per_s"].is_number());
  EXPECT_EQ(io::run(d["request"])["ttft_ms"], d["ttft_ms"]);  // the echo reruns identically
}

TEST(ServingJson, BadInputNamesTheField) {
  json r = serving_request();
  r["workload"]["arival"] = 1;
  EXPECT_EQ(test::failure_of(r).path, "workload.arival");
  r = serving_request();
  r["workload"]["arrival"]["rate_per_s"] = -1;
  EXPECT_EQ(test::failure_of(r).path, "workload.arrival.rate_per_s");
  r = serving_request();
  r["workload"]["num_requests"] = 300000;
  EXPECT_EQ(test::failure_of(r).path, "workload.num_requests");
  r = serving_request();
  r["workload"]["arrival"] = {{"kind", "trace"}, {"requests", {{0.0, 10, 5}, {0.5, 10}}}};
  r["workload"].erase("prompt_tokens");
  r["workload"].erase("output_tokens");
  r["workload"].erase("num_requests");
  EXPECT_EQ(test::failure_of(r).path, "workload.arrival.requests[1]");
  r = serving_request();
  r["workload"]["output_tokens"] = {{"kind", "lognormal"}, {"mean", 100}};
  EXPECT_EQ(test::failure_of(r).path, "workload.output_tokens.sigma");
  r = serving_request();
  r["output"] = {{"per_request", true}};
  EXPECT_EQ(test::failure_of(r).path, "output.per_request");
  r = serving_request();
  r["engine"] = {{"name", "vlm"}};
  EXPECT_EQ(test::failure_of(r).path, "engine.name");
  r = serving_request();
  r["features"] = {{"moe", {{"imbalance_factor", 1.2}}}};
  EXPECT_EQ(test::failure_of(r).code, "not_modelled");
  r = serving_request();
  r["mode"] = "simulate";
  r["workload"]["arrival"] = {{"kind", "trace"}, {"requests", {{1.0, 10, 5}, {0.5, 10, 5}}}};
  r["workload"].erase("prompt_tokens");
  r["workload"].erase("output_tokens");
  r["workload"].erase("num_requests");
  EXPECT_EQ(test::failure_of(r).path, "workload.arrival.requests[1].arrival_s");
  r = serving_request();
  r["workload"]["arrival"] = {{"kind", "concurrency"}, {"concurrency", 0}};
  EXPECT_EQ(test::failure_of(r).path, "workload.arrival.concurrency");
  r["workload"]["arrival"] = {{"kind", "concurrency"}, {"concurrency", 4}, {"rate_per_s", 2}};
  EXPECT_EQ(test::failure_of(r).path, "workload.arrival.rate_per_s");
  r["workload"]["arrival"] = {{"kind", "poisson"}, {"concurrency", 4}, {"rate_per_s", 2}};
  EXPECT_EQ(test::failure_of(r).path, "workload.arrival.concurrency");
}

TEST(ServingJson, ConcurrencyRunsBothModesAndEchoes) {
  json req = serving_request();
  req["workload"]["arrival"] = {{"kind", "concurrency"}, {"concurrency", 8}};
  const json a = io::run(req);
  EXPECT_EQ(a["request"]["workload"]["arrival"],
            json({{"kind", "concurrency"}, {"concurrency", 8}}));
  EXPECT_TRUE(a["ttft_ms"]["p99"].is_number());
  req["mode"] = "simulate";
  const json d = io::run(req);
  EXPECT_EQ(d["simulation"]["completed"], 200);
  EXPECT_EQ(io::run(d["request"])["e2e_ms"], d["e2e_ms"]);
}

}  // namespace
}  // namespace flopcast
