// SPDX-License-Identifier: MIT
// Speed of the serving simulator: 10,000 Poisson requests of 512 input / 128 output tokens near
// saturation (90% of the analytic saturation rate), Llama-3-8B on one H100, through the JSON
// entry point as the CLI and the page call it; and one analytic estimate.
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

}  // namespace
