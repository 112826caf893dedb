// SPDX-License-Identifier: MIT
// Speed of one estimate: the core alone, and the full JSON round trip the CLI and the page make.
// Run: build/native-release/bench/flopcast_bench
#include <benchmark/benchmark.h>

#include "flopcast/inference.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"

namespace {

using flopcast::io::json;

json request(const char* model, int tp, int prompt, int output, int batch) {
  return json{
      {"task", "inference"},
      {"model", model},
      {"hardware", "h100-sxm"},
      {"num_gpus", tp},
      {"parallelism", {{"tp", tp}}},
      {"workload", {{"prompt_tokens", prompt}, {"output_tokens", output}, {"batch_size", batch}}}};
}

void BM_CoreEstimate(benchmark::State& state) {
  flopcast::InferenceSpec spec;
  spec.model = flopcast::io::resolve_model(json("llama-3-70b"), "model");
  spec.hardware = flopcast::io::resolve_hardware(json("h100-sxm"), "hardware");
  spec.num_gpus = spec.tp = 4;
  spec.prompt_tokens = 2048;
  spec.output_tokens = 512;
  spec.batch_size = 16;
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::estimate_inference(spec));
}
BENCHMARK(BM_CoreEstimate)->Unit(benchmark::kMicrosecond);

void BM_JsonEstimate(benchmark::State& state) {
  const std::string text = request("llama-3-70b", 4, 2048, 512, 16).dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_JsonEstimate)->Unit(benchmark::kMicrosecond);

void BM_JsonEstimateMoe(benchmark::State& state) {
  const std::string text = request("mixtral-8x7b", 2, 512, 128, 1).dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::handle(text));
}
BENCHMARK(BM_JsonEstimateMoe)->Unit(benchmark::kMicrosecond);

// The JSON round trip in its three parts: parse the request text, run it (read the request,
// estimate, build the response document), write the response text.
void BM_JsonParse(benchmark::State& state) {
  const std::string text = request("llama-3-70b", 4, 2048, 512, 16).dump();
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::parse_json(text));
}
BENCHMARK(BM_JsonParse)->Unit(benchmark::kMicrosecond);

void BM_JsonRun(benchmark::State& state) {
  const json parsed = request("llama-3-70b", 4, 2048, 512, 16);
  for (auto _ : state) benchmark::DoNotOptimize(flopcast::io::run(parsed));
}
BENCHMARK(BM_JsonRun)->Unit(benchmark::kMicrosecond);

void BM_JsonDump(benchmark::State& state) {
  const json response =
      flopcast::io::ok_envelope(flopcast::io::run(request("llama-3-70b", 4, 2048, 512, 16)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(response.dump(-1, ' ', false, json::error_handler_t::replace));
  }
}
BENCHMARK(BM_JsonDump)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
