// SPDX-License-Identifier: MIT
// Speed of one training estimate including the micro-batch search (every divisor of the
// per-rank batch that fits is priced), in the core and through the JSON round trip, and of a
// whole layout search.
// Run: build/native-release/bench/flopcast_bench --benchmark_filter=Training
#include <benchmark/benchmark.h>

#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/training.hpp"

namespace {

using flopcast::io::json;

/// Llama-3-70B on 64 H100: TP 8 + SP, PP 2, DP 4, ZeRO-1, 512 sequences of 8192 per step,
/// micro-batch searched over {1, 2, 4, ..., 128}.
json request() {
  return json{{"task", "training"},
              {"model", "llama-3-70b"},
              {"hardware", "h100-sxm"},
              {"num_gpus", 64},
              {"parallelism", {{"tp", 8}, {"pp", 2}, {"dp", 4}, {"sp", true}, {"zero", 1}}},
              {"workload", {{"seq_len", 8192}, {"global_batch_size", 512}, {"recompute", "full"}}},
              {"framework", {{"profile", "megatron"}}}};
}

void BM_TrainingCoreEstimateWithSearch(benchmark::State& state) {
  flopcast::TrainingSpec spec;
  spec.model = flopcast::io::resolve_model(json("llama-3-70b"), "model");
  spec.hardware = flopcast::io::resolve_hardware(json("h100-sxm"), "hardware");
  spec.cluster = flopcast::cluster_of(spec.hardware);
  spec.num_gpus = 64;
  spec.tp = 8;
  spec.pp = 2;
  spec.dp = 4;
  spec.sp = true;
  spec.sharding = flopcast::Sharding::zero1;
  spec.seq_len = 8192;
  spec.global_batch_size = 512;
  spec.recompute = flopcast::Recompute::full;
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::estimate_training(spec));
}
BENCHMARK(BM_TrainingCoreEstimateWithSearch)->Unit(benchmark::kMicrosecond);

void BM_TrainingJsonEstimateWithSearch(benchmark::State& state) {
  const std::string text = request().dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_TrainingJsonEstimateWithSearch)->Unit(benchmark::kMicrosecond);

/// Layout search (task "search"): Llama-3.1-405B on 1,024 H100, 2,048 sequences of 8,192 per
/// step; every tp ≤ 16 (two nodes), pp ≤ 64 with its virtual stages, cp ≤ 8, ZeRO stage and
/// recomputation (2,880 layouts, each with its micro-batch search: 4,875 step estimates).
void BM_TrainingLayoutSearch405b(benchmark::State& state) {
  const std::string text = json{{"task", "search"},
                                {"search", {{"target", "training"}}},
                                {"model", "llama-3.1-405b"},
                                {"hardware", "h100-sxm"},
                                {"num_gpus", 1024},
                                {"workload", {{"seq_len", 8192}, {"global_batch_size", 2048}}}}
                               .dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_TrainingLayoutSearch405b)->Unit(benchmark::kMillisecond);

/// A search near the work budget: Llama-3.1-70B on 1,024 B200, 2,048 × 8,192 tokens, with bf16,
/// fp8 and mxfp8 tried (16,320 layouts, 69,711 step estimates).
void BM_TrainingLayoutSearch70bThreeTypes(benchmark::State& state) {
  const std::string text =
      json{{"task", "search"},
           {"search", {{"target", "training"}, {"compute", {"bf16", "fp8", "mxfp8"}}}},
           {"model", "llama-3.1-70b"},
           {"hardware", "b200"},
           {"num_gpus", 1024},
           {"workload", {{"seq_len", 8192}, {"global_batch_size", 2048}}}}
          .dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_TrainingLayoutSearch70bThreeTypes)->Unit(benchmark::kMillisecond);

}  // namespace
