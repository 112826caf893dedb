// SPDX-License-Identifier: MIT
// Property test: seeded random requests of every task through the JSON entry point. Each one
// either succeeds with a result that satisfies its task's invariants (tests/common/
// invariants.hpp: finite, positive times, MFU and HFU <= 1, each point inside its band, null
// latencies only when saturated) or fails with an input error naming a field; never `internal`.
// The generator draws from the presets and ranges a user would (most requests are valid), with
// its own integer draws over std::mt19937_64 so that the native and WebAssembly runs of this
// suite see the same requests. FLOPCAST_PROPERTY_REQUESTS (default 10,000) valid requests per
// task.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "flopcast/io/api.hpp"
#include "invariants.hpp"

namespace flopcast {
namespace {

using io::json;

const std::vector<std::string> kModels{
    "llama-3.2-1b", "llama-3.1-8b",  "llama-3.1-70b",         "qwen3-0.6b",  "qwen3-8b",
    "qwen3-32b",    "qwen3-30b-a3b", "mixtral-8x7b",          "gpt-oss-20b", "gemma-3-4b",
    "mistral-7b",   "phi-4",         "llama-4-scout-17b-16e", "deepseek-v3", "llama-2-7b"};
const std::vector<std::string> kHardware{"h100-sxm", "h200-sxm", "b200",     "a100-sxm-80g",
                                         "l40s",     "mi300x",   "rtx-4090", "gb200",
                                         "a10",      "h20",      "m3-max"};

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  /// Uniform integer in [lo, hi] (modulo bias is irrelevant here; identical on every platform).
  long long between(long long lo, long long hi) {
    return lo + static_cast<long long>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  /// Log-uniform in [lo, hi].
  double log_between(double lo, double hi) {
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    return lo * std::pow(hi / lo, u);
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(between(0, static_cast<long long>(v.size()) - 1))];
  }
  bool chance(int percent) { return between(1, 100) <= percent; }

 private:
  std::mt19937_64 rng_;
};

json length(Draw& d, int hi) {
  switch (d.between(0, 2)) {
    case 0:
      return d.between(1, hi);
    case 1: {
      const long long a = d.between(1, hi);
      return json{{"kind", "uniform"}, {"min", a}, {"max", d.between(a, hi)}};
    }
    default:
      return json{{"kind", "lognormal"},
                  {"mean", std::log(d.log_between(1, hi))},
                  {"sigma", d.log_between(0.05, 1.5)},
                  {"max", hi}};
  }
}

json inference(Draw& d) {
  const int tp = 1 << d.between(0, 3);
  json r{{"task", "inference"},
         {"model", d.pick(kModels)},
         {"hardware", d.pick(kHardware)},
         {"num_gpus", tp * d.between(1, 2)},
         {"parallelism", {{"tp", tp}}},
         {"precision",
          {{"weights", d.pick(std::vector<std::string>{"bf16", "fp8", "int8", "int4", "q4_k_m"})},
           {"kv_cache", d.pick(std::vector<std::string>{"bf16", "fp8"})}}},
         {"workload",
          {{"prompt_tokens", d.between(1, 32768)},
           {"output_tokens", d.between(1, 4096)},
           {"batch_size", d.between(1, 256)}}}};
  if (d.chance(20)) r["max_tier"] = 0;
  return r;
}

json training(Draw& d) {
  const int tp = 1 << d.between(0, 3), pp = 1 << d.between(0, 2), dp = 1 << d.between(0, 6);
  json r{{"task", "training"},
         {"model", d.pick(kModels)},
         {"hardware", d.pick(kHardware)},
         {"num_gpus", tp * pp * dp},
         {"parallelism", {{"tp", tp}, {"pp", pp}}},
         {"precision", {{"compute", d.pick(std::vector<std::string>{"bf16", "fp8", "fp4"})}}},
         {"workload",
          {{"seq_len", 1 << d.between(9, 15)},
           {"global_batch_size", dp * pp * d.between(1, 16)},
           {"recompute", d.pick(std::vector<std::string>{"none", "selective", "op", "full"})}}}};
  if (d.chance(50) && pp == 1) r["parallelism"]["fsdp"] = "full_shard";
  if (d.chance(30)) r["parallelism"]["sp"] = tp > 1;
  if (d.chance(20)) r["precision"]["bf16_last_layers"] = d.between(0, 8);
  if (d.chance(20)) r["max_tier"] = 0;
  return r;
}

json serving(Draw& d) {
  const int tp = 1 << d.between(0, 3);
  const bool simulate = d.chance(5);
  json arrival;
  switch (d.between(0, 3)) {
    case 0:
      arrival = {{"kind", "poisson"}, {"rate_per_s", d.log_between(0.01, 200)}};
      break;
    case 1:
      arrival = {{"kind", "gamma"},
                 {"rate_per_s", d.log_between(0.01, 200)},
                 {"cv", d.log_between(0.2, 5)}};
      break;
    case 2:
      arrival = {{"kind", "constant"}, {"rate_per_s", d.log_between(0.01, 200)}};
      break;
    default:
      arrival = {{"kind", "concurrency"}, {"concurrency", d.between(1, 256)}};
  }
  json r{{"task", "serving"},
         {"mode", simulate ? "simulate" : "analytic"},
         {"model", d.pick(kModels)},
         {"hardware", d.pick(kHardware)},
         {"num_gpus", tp * d.between(1, 2)},
         {"parallelism", {{"tp", tp}}},
         {"workload",
          {{"arrival", arrival},
           {"prompt_tokens", length(d, 8192)},
           {"output_tokens", length(d, 2048)},
           {"num_requests", simulate ? d.between(1, 60) : 1000}}}};
  if (d.chance(30))
    r["engine"] = {{"name", d.pick(std::vector<std::string>{"vllm", "sglang", "trtllm"})}};
  if (d.chance(20))
    r["features"] = {{"prefix_caching", {{"shared_prefix_tokens", d.between(1, 2000)}}}};
  if (d.chance(20)) r["precision"] = {{"weights", "fp8"}};
  return r;
}

/// A serving request split into prefill and decode pools (an open loop: the analytic engine
/// refuses a closed one with disaggregation, by name).
json serving_pools(Draw& d) {
  json r = serving(d);
  if (r["workload"]["arrival"]["kind"] == "concurrency") {
    r["workload"]["arrival"] = {{"kind", "poisson"}, {"rate_per_s", d.log_between(0.01, 200)}};
  }
  const int tp = r["parallelism"]["tp"].get<int>(), prefill = d.between(1, 3),
            decode = d.between(1, 3);
  r["num_gpus"] = tp * (prefill + decode);
  r["features"]["disaggregated"] = {{"prefill_instances", prefill},
                                    {"decode_instances", decode},
                                    {"kv_link_GBps", d.log_between(1, 1000)}};
  return r;
}

json collective(Draw& d) {
  return json{{"task", "collective"},
              {"hardware", d.pick(kHardware)},
              {"collective",
               {{"op", d.pick(std::vector<std::string>{"all_reduce", "all_gather", "reduce_scatter",
                                                       "all_to_all", "send_recv"})},
                {"bytes", d.log_between(1, 1e10)},
                {"ranks", d.between(1, 4096)}}}};
}

/// A search of its whole space prices tens to hundreds of setups; 49 in 50 drawn searches pin
/// every dimension to one drawn value, so that a search costs about one estimate and the task
/// gets as many random requests as the others (the full-space ones as many as before).
bool pinned(Draw& d) { return !d.chance(2); }

/// One drawn power of two up to `gpus`.
json one_tp(Draw& d, int gpus) {
  return json::array({1 << d.between(0, static_cast<long long>(std::log2(gpus)))});
}

json search(Draw& d) {
  const int gpus = 1 << d.between(0, 4);
  json s{{"target", "training"}, {"top", d.between(1, 10)}};
  if (pinned(d)) {
    s["tp"] = one_tp(d, gpus);
    s["pp"] = json::array({1});
    s["cp"] = json::array({1});
    s["zero"] = json::array({d.between(0, 3)});
    s["recompute"] = json::array({d.pick(std::vector<std::string>{"none", "op", "full"})});
  }
  if (d.chance(30)) s["zero"] = d.chance(50) ? json::array({3}) : json::array({0, 1});
  if (d.chance(30))
    s["recompute"] = json::array({d.pick(std::vector<std::string>{"none", "op", "full"})});
  json r{{"task", "search"},
         {"search", s},
         {"model", d.pick(kModels)},
         {"hardware", d.pick(kHardware)},
         {"num_gpus", gpus},
         {"precision", {{"compute", d.pick(std::vector<std::string>{"bf16", "fp8"})}}},
         {"workload",
          {{"seq_len", 1 << d.between(9, 13)}, {"global_batch_size", gpus * d.between(1, 8)}}}};
  if (d.chance(20)) r["max_tier"] = 0;
  return r;
}

json serving_search(Draw& d) {
  json s{{"target", "serving"}, {"top", d.between(1, 10)}};
  const int gpus = 1 << d.between(0, 4);
  if (pinned(d)) {
    s["tp"] = one_tp(d, gpus);
    s["pp"] = json::array({1});
    s["expert_parallel"] = json::array({d.chance(50)});
    s["dp_attention"] = json::array({d.chance(50)});
    s["max_num_seqs"] = json::array({d.between(1, 1024)});
    s["max_num_batched_tokens"] = json::array({d.between(256, 16384)});
  }
  if (d.chance(30)) s["max_num_seqs"] = json::array({d.between(1, 512), d.between(1, 512)});
  if (d.chance(30)) s["slo_percentile"] = d.pick(std::vector<std::string>{"p50", "p90", "p99"});
  json r{{"task", "search"},
         {"search", s},
         {"model", d.pick(kModels)},
         {"hardware", d.pick(kHardware)},
         {"num_gpus", gpus},
         {"workload",
          {{"arrival", {{"kind", "poisson"}, {"rate_per_s", d.log_between(0.1, 100)}}},
           {"prompt_tokens", d.between(1, 4096)},
           {"output_tokens", d.between(1, 1024)}}}};
  if (d.chance(50))
    r["slo"] = {{"ttft_ms", d.log_between(10, 5000)}, {"tpot_ms", d.log_between(5, 200)}};
  if (d.chance(20)) r["max_tier"] = 0;
  return r;
}

int requests_per_task() {
  const char* env = std::getenv("FLOPCAST_PROPERTY_REQUESTS");
  return env ? std::max(1, std::atoi(env)) : 10000;
}

void check_task(const char* task, json (*make)(Draw&), std::uint64_t seed) {
  Draw d(seed);
  // Requests are drawn until n of them are valid, at most 3n draws: the invariants hold on n
  // results of every task, and at least a third of the draws must be valid, as before.
  const int n = requests_per_task();
  int ok = 0, i = 0;
  for (; ok < n && i < 3 * n; ++i) {
    const json request = make(d);
    const json env = json::parse(io::handle(request.dump()));
    if (env.at("ok").get<bool>()) {
      ++ok;
      const std::string v = test::violation(env.at("result"));
      ASSERT_EQ(v, "") << task << " #" << i << ": " << request.dump();
    } else {
      const json& e = env.at("error");
      ASSERT_NE(e.at("code"), "internal") << task << " #" << i << ": " << e.dump() << "\n"
                                          << request.dump();
      ASSERT_NE(e.at("code"), "invalid_json") << request.dump();
      ASSERT_FALSE(e.at("message").get<std::string>().empty());
    }
  }
  // The invalid draws (tp not dividing the heads, fp8 on a GPU without it, a model too large to
  // fit a training step's weights...) are input errors by name.
  EXPECT_EQ(ok, n) << task << ": " << ok << " of " << i << " requests succeeded";
  ::testing::Test::RecordProperty("succeeded", ok);
  std::printf("%s: %d of %d random requests valid, every result within its invariants\n", task, ok,
              i);
}

TEST(Property, InferenceRequests) { check_task("inference", inference, 1); }
TEST(Property, TrainingRequests) { check_task("training", training, 2); }
TEST(Property, ServingRequests) { check_task("serving", serving, 3); }
TEST(Property, DisaggregatedServingRequests) { check_task("serving", serving_pools, 7); }
TEST(Property, CollectiveRequests) { check_task("collective", collective, 4); }
TEST(Property, SearchRequests) { check_task("search", search, 5); }
TEST(Property, ServingSearchRequests) { check_task("search", serving_search, 6); }

}  // namespace
}  // namespace flopcast
