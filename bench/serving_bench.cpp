// SPDX-License-Identifier: MIT
// Speed of the serving simulator: 10,000 Poisson requests of 512 input / 128 output tokens near
// saturation (90% of the analytic saturation rate), Llama-3-8B on one H100, through the JSON
// entry point as the CLI and the page call it; one analytic estimate; a serving setup search.
// Run: build/native-release/bench/flopcast_bench --benchmark_filter=Serving
#include <benchmark/benchmark.h>

#include "flopcast/io/api.hpp"

namespace {

using flopcast::io::json;

json serving_request(const char* mode, double rate, int requests) {
  return json{{"task", "serving"},
              {"mode", mode},
              {"model", "llama-3-8b"},
              {"hardware", "h100-sxm"},
              {"workload",
               {{"arrival", {{"kind", "poisson"}, {"rate_per_s", rate}}},
                {"prompt_tokens", 512},
                {"output_tokens", 128},
                {"num_requests", requests}}}};
}

double near_saturation_rate() {
  const json r = flopcast::io::run(serving_request("analytic", 1, 1000));
  return 0.9 * r.at("saturation_rate_per_s").get<double>();
}

void BM_ServingSimulate10k(benchmark::State& state) {
  const std::string text = serving_request("simulate", near_saturation_rate(), 10000).dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_ServingSimulate10k)->Unit(benchmark::kMillisecond);

void BM_ServingAnalytic(benchmark::State& state) {
  const std::string text = serving_request("analytic", near_saturation_rate(), 1000).dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_ServingAnalytic)->Unit(benchmark::kMicrosecond);

/// The same load on two H100s split into one prefill and one decode instance (each pool an
/// engine of its own, the KV cache over the link).
void BM_ServingAnalyticDisaggregated(benchmark::State& state) {
  json r = serving_request("analytic", near_saturation_rate(), 1000);
  r["num_gpus"] = 2;
  r["features"] = {{"disaggregated", {{"prefill_instances", 1}, {"decode_instances", 1}}}};
  const std::string text = r.dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_ServingAnalyticDisaggregated)->Unit(benchmark::kMicrosecond);

/// A serving setup search (task "search") over `search`'s space: Llama-3.1-70B on 8 H100 at 10
/// requests/s of 1,024 / 256 tokens under TTFT ≤ 500 ms and TPOT ≤ 50 ms.
std::string search_70b(json search) {
  search["target"] = "serving";
  return json{{"task", "search"},
              {"search", search},
              {"model", "llama-3.1-70b"},
              {"hardware", "h100-sxm"},
              {"num_gpus", 8},
              {"workload",
               {{"arrival", {{"kind", "poisson"}, {"rate_per_s", 10}}},
                {"prompt_tokens", 1024},
                {"output_tokens", 256}}},
              {"slo", {{"ttft_ms", 500}, {"tpot_ms", 50}}}}
      .dump();
}

/// The default space: tp 1-8 × 6 max_num_seqs × 4 token budgets = 96 setups, each an analytic
/// estimate.
void BM_ServingSearch70b(benchmark::State& state) {
  const std::string text = search_70b(json::object());
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_ServingSearch70b)->Unit(benchmark::kMillisecond);

/// 10,240 setups: tp 1, 2, 4, 8 × pp 1, 2 × max_num_seqs 8, 16, … 512 (64) × token budgets
/// 1024 … 16384 (5) × weights bf16, fp8 × KV cache bf16, fp8 (tp·pp = 16 does not divide 8 GPUs:
/// those 1,280 are rejected unpriced).
void BM_ServingSearch70b10k(benchmark::State& state) {
  json seqs = json::array();
  for (int i = 1; i <= 64; ++i) seqs.push_back(8 * i);
  const std::string text = search_70b({{"tp", {1, 2, 4, 8}},
                                       {"pp", {1, 2}},
                                       {"max_num_seqs", seqs},
                                       {"max_num_batched_tokens", {1024, 2048, 4096, 8192, 16384}},
                                       {"weights", {"bf16", "fp8"}},
                                       {"kv_cache", {"bf16", "fp8"}}});
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_ServingSearch70b10k)->Unit(benchmark::kMillisecond)->Iterations(2);

/// Aggregated or disaggregated: the default space with every prefill/decode split of the 8 GPUs
/// (tp 1: 7 splits, tp 2: 3, tp 4: 1) added, 384 setups.
void BM_ServingSearch70bDisaggregated(benchmark::State& state) {
  const std::string text = search_70b({{"disaggregated", {false, true}}});
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_ServingSearch70bDisaggregated)->Unit(benchmark::kMillisecond);

}  // namespace
