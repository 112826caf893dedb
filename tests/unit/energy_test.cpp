// SPDX-License-Identifier: MIT
// The power model (flopcast/energy.hpp, docs/model.md "Energy"): activity per bound, power per
// GPU, and the energy of inference, serving and training estimates, each by hand.
#include "flopcast/energy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::base_request;
using test::near_rel;

/// The activity weight of a breakdown row's `bound` string.
double weight(const json& row) {
  const std::string b = row.at("bound");
  if (b == "compute") return 1.0;
  if (b == "memory" || b == "communication") return PowerModel::memory_activity;
  return 0.0;
}

TEST(PowerModel, ActivityPerBoundAndPowerPerGpu) {
  // Compute-bound kernels run at the cap, bandwidth-bound ones and collectives at 0.7 of the
  // dynamic power, host overhead at none.
  EXPECT_EQ(activity_of(Bound::compute), 1.0);
  EXPECT_EQ(activity_of(Bound::memory), 0.7);
  EXPECT_EQ(activity_of(Bound::communication), 0.7);
  EXPECT_EQ(activity_of(Bound::overhead), 0.0);
  // H100 SXM, 700 W: idle 10 % = 70 W; fully busy 700 W; all memory-bound 70 + 630·0.7 = 511 W.
  HardwareSpec h100 = io::resolve_hardware("h100-sxm", "hardware");
  EXPECT_DOUBLE_EQ(gpu_power_W(h100, 0.0), 70.0);
  EXPECT_DOUBLE_EQ(gpu_power_W(h100, 1.0), 700.0);
  EXPECT_DOUBLE_EQ(gpu_power_W(h100, 0.7), 511.0);
  EXPECT_DOUBLE_EQ(gpu_power_W(h100, 2.0), 700.0);  // activity is clamped to [0, 1]
  // Capped at 500 W: idle stays 10 % of the TDP (70 W), busy is the cap: 70 + 430·0.5 = 285 W.
  h100.power_limit_W = 500;
  EXPECT_DOUBLE_EQ(gpu_power_W(h100, 0.5), 285.0);
  // No board power stated (Apple): no power, no energy.
  EXPECT_EQ(gpu_power_W(io::resolve_hardware("m3-max", "hardware"), 1.0), 0.0);
  EXPECT_FALSE(
      estimate_energy(io::resolve_hardware("m3-max", "hardware"), 1, 100, 1.0).has_value());
}

TEST(PowerModel, InferenceActivityWeighsDecodeStepsByTheirCount) {
  // Prefill: one compute-bound second. Decode step: 0.1 s memory-bound + 0.1 s host overhead,
  // 11 output tokens = 10 decode steps. Busy 1·1 + 10·(0.1·0.7 + 0.1·0) = 1.7 of 1 + 10·0.2 = 3 s.
  InferenceResult r;
  r.breakdown.push_back({"prefill", "mlp", 1.0, 1.0, Bound::compute, 0, 0});
  r.breakdown.push_back({"decode", "mlp", 0.1, 0.5, Bound::memory, 0, 0});
  r.breakdown.push_back({"decode", "engine_overhead", 0.1, 0.5, Bound::overhead, 0, 0});
  EXPECT_NEAR(inference_activity(r, 11), 1.7 / 3.0, 1e-12);
  EXPECT_EQ(inference_activity(InferenceResult{}, 11), 0.0);
}

TEST(PowerModel, InferenceEnergyFollowsItsBreakdown) {
  // Llama-2-7B, batch 1, one A100 SXM 80GB (400 W, idle 40 W): decode reads the weights every
  // step, so the activity is the memory-bound 0.7 less the host-overhead share, and the power is
  // 40 + 360·activity. Energy per output token = power / output tokens per second.
  const json r = io::run(base_request());
  double busy = 0, total = 0;
  for (const json& b : r.at("breakdown")) {
    const double n = b.at("phase") == "decode" ? 127 : 1;  // 128 output tokens: 127 steps
    busy += n * b.at("time_ms").get<double>() * weight(b);
    total += n * b.at("time_ms").get<double>();
  }
  const json& e = r.at("energy");
  EXPECT_TRUE(near_rel(e.at("activity"), busy / total, 1e-4));
  EXPECT_GT(busy / total, 0.6);
  EXPECT_LT(busy / total, 0.7);
  EXPECT_TRUE(near_rel(e.at("power_W"), 40 + 360 * busy / total, 1e-4));
  EXPECT_EQ(e.at("board_power_W"), 400);
  const double tps = r.at("output_tokens_per_s");
  EXPECT_TRUE(near_rel(e.at("joules_per_output_token"), e.at("power_W").get<double>() / tps, 1e-5));
  EXPECT_TRUE(
      near_rel(e.at("output_tokens_per_kWh"), 3.6e6 * tps / e.at("power_W").get<double>(), 1e-5));
  // A request's 128 output tokens.
  EXPECT_TRUE(near_rel(e.at("joules_per_request"),
                       128 * e.at("joules_per_output_token").get<double>(), 1e-5));
  // Two GPUs (TP 2): each draws its own power; the bound doubles.
  json req = base_request();
  req["num_gpus"] = 2;
  req["parallelism"]["tp"] = 2;
  const json tp2 = io::run(req).at("energy");
  EXPECT_EQ(tp2.at("board_power_W"), 800);
  EXPECT_GT(tp2.at("power_W").get<double>(), 2 * 40);
  EXPECT_LT(tp2.at("power_W").get<double>(), 800);
  // A batch of 256 makes the decode GEMMs compute-bound: more activity, more power.
  req = base_request();
  req["workload"]["batch_size"] = 256;
  EXPECT_GT(io::run(req).at("energy").at("activity").get<double>(), e.at("activity").get<double>());
}

TEST(PowerModel, ServingAnalyticAndSimulatorAgree) {
  // Llama-3.1-8B on one H100, 512-token prompts, 256 out. At 0.1 req/s a request holds the
  // batch ~1.7 s, so the engine steps ~1 − e^−0.17 ≈ 16 % of the time: power near idle. At
  // 20 req/s it always steps at a batch of ~50. The analytic engine (M/G/∞ busy share) and the
  // simulator (its steps' own count) agree within 3 %.
  const auto power = [](double rate, bool simulate) {
    json r{{"task", "serving"},
           {"model", "llama-3.1-8b"},
           {"hardware", "h100-sxm"},
           {"workload",
            {{"arrival", {{"kind", "poisson"}, {"rate_per_s", rate}}},
             {"prompt_tokens", {{"kind", "fixed"}, {"value", 512}}},
             {"output_tokens", {{"kind", "fixed"}, {"value", 256}}},
             {"num_requests", 400}}}};
    if (simulate) r["mode"] = "simulate";
    return io::run(r).at("energy").at("power_W").get<double>();
  };
  const double low = power(0.1, false), high = power(20, false);
  EXPECT_GT(low, 70);
  EXPECT_LT(low, 70 + 630 * 0.7 * 0.25);
  EXPECT_GT(high, 70 + 630 * 0.7);  // busy all the time, partly compute-bound
  EXPECT_LT(high, 700);
  EXPECT_TRUE(near_rel(power(0.1, true), low, 0.03));
  // A request costs the power over the request rate: at 0.1 req/s, 10 s of the GPU's power.
  json r{{"task", "serving"},
         {"model", "llama-3.1-8b"},
         {"hardware", "h100-sxm"},
         {"workload",
          {{"arrival", {{"kind", "poisson"}, {"rate_per_s", 0.1}}},
           {"prompt_tokens", {{"kind", "fixed"}, {"value", 512}}},
           {"output_tokens", {{"kind", "fixed"}, {"value", 256}}},
           {"num_requests", 400}}}};
  EXPECT_TRUE(near_rel(io::run(r).at("energy").at("joules_per_request"), 10 * low, 1e-5));
  EXPECT_TRUE(near_rel(power(20, true), high, 0.03));
}

TEST(PowerModel, TrainingStepAndRun) {
  // 8 H100 SXM (700 W, idle 70 W): each draws 70 + 630·activity, the activity its step's
  // breakdown weighs (compute 1, memory and exposed communication 0.7, bubbles and framework
  // overhead 0). A step costs that power × step time, 1e9 tokens that power × total time.
  json req{{"task", "training"},
           {"model", "llama-2-7b"},
           {"hardware", "h100-sxm"},
           {"num_gpus", 8},
           {"max_tier", 0},
           {"parallelism", {{"zero", 0}}},
           {"workload",
            {{"seq_len", 4096},
             {"global_batch_size", 64},
             {"micro_batch_size", 1},
             {"total_tokens", 1e9}}}};
  const json r = io::run(req);
  double busy = 0, total = 0;
  for (const json& b : r.at("breakdown")) {
    busy += b.at("time_ms").get<double>() * weight(b);
    total += b.at("time_ms").get<double>();
  }
  const double watts = 8 * (70 + 630 * busy / total);
  const json& e = r.at("energy");
  EXPECT_TRUE(near_rel(e.at("power_W"), watts, 1e-4));
  EXPECT_GT(busy / total, 0.9);  // a dense 7B step is GEMMs, mostly
  EXPECT_EQ(e.at("board_power_W"), 5600);
  EXPECT_TRUE(near_rel(e.at("joules_per_step"), watts * r.at("step_time_s").get<double>(), 1e-4));
  EXPECT_TRUE(near_rel(e.at("joules_per_token"), watts / r.at("tokens_per_s").get<double>(), 1e-4));
  EXPECT_TRUE(
      near_rel(e.at("total_MWh"), watts * r.at("total_time_s").get<double>() / 3.6e9, 1e-4));
  req["workload"].erase("total_tokens");
  EXPECT_TRUE(io::run(req).at("energy").at("total_MWh").is_null());
}

}  // namespace
}  // namespace flopcast
