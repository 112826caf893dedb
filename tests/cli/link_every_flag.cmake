# SPDX-License-Identifier: MIT
# `flopcast link` takes every flag `flopcast estimate` takes, and each lands in the link: the flags
# are read from `estimate --help`, so a new flag without a sample below fails this test, and a
# flag whose value the link drops (the link's field table drifting from the request reader, as
# `--engine vllm` once did) fails it too.
#   cmake -DCMD=<flopcast> -DFIXTURES=<tests/cli/fixtures> -P link_every_flag.cmake
cmake_minimum_required(VERSION 3.24)

set(base --model llama-3.1-8b --hardware h100-sxm --prompt-tokens 100 --output-tokens 10)
# flag | the arguments of one `link` run (| between them) | a regex its link must contain.
# `-` as the arguments: an output option, not part of the request.
set(samples
  "--request|--request|${FIXTURES}/tp2_request.json|parallelism.tp=2"
  "--scenario|--scenario|i1.1|model=llama-2-7b&hardware=a100-sxm-80g"
  "--setup|--setup|llama-3.1-70b-fp8-8xh100|model=llama-3.1-70b&hardware=h100-sxm&num_gpus=8"
  "--model|BASE|model=llama-3.1-8b"
  "--model-file|--model-file|${FIXTURES}/custom_model.json|--hardware|h100-sxm|--prompt-tokens|100|--output-tokens|10|model=%7B"
  "--hf-config|--hf-config|${FIXTURES}/llama2_7b_config.json|--hardware|h100-sxm|--prompt-tokens|100|--output-tokens|10|model=%7B%22ffn%22"
  "--hardware|BASE|hardware=h100-sxm"
  "--hardware-file|--model|llama-3.1-8b|--hardware-file|${FIXTURES}/custom_hardware.json|--prompt-tokens|100|--output-tokens|10|hardware=%7B"
  "--what-if|BASE|--what-if|hbm_bandwidth=1.5|hardware=%7B"
  "--num-gpus|BASE|--num-gpus|2|num_gpus=2"
  "--tp|BASE|--num-gpus|2|--tp|2|parallelism.tp=2"
  "--pp|BASE|--num-gpus|2|--pp|2|parallelism.pp=2"
  "--ep|--model|qwen3-30b-a3b|--hardware|h100-sxm|--prompt-tokens|100|--output-tokens|10|--num-gpus|2|--tp|2|--ep|2|parallelism.ep=2"
  "--dp-attention|--model|qwen3-30b-a3b|--hardware|h100-sxm|--prompt-tokens|100|--output-tokens|10|--num-gpus|2|--tp|2|--dp-attention|parallelism.dp_attention=true"
  "--attention-tp|--model|qwen3-30b-a3b|--hardware|h100-sxm|--prompt-tokens|100|--output-tokens|10|--num-gpus|4|--tp|4|--dp-attention|--attention-tp|2|parallelism.attention_tp=2"
  "--moe-dispatch|--model|qwen3-30b-a3b|--hardware|h100-sxm|--prompt-tokens|100|--output-tokens|10|--num-gpus|2|--tp|2|--ep|2|--dp-attention|--moe-dispatch|all_to_all|parallelism.moe_dispatch=all_to_all"
  "--redundant-experts|--model|qwen3-30b-a3b|--hardware|h100-sxm|--prompt-tokens|100|--output-tokens|10|--num-gpus|2|--tp|2|--ep|2|--redundant-experts|2|parallelism.redundant_experts=2"
  "--weights|BASE|--weights|fp8|precision.weights=fp8"
  "--attention-weights|BASE|--weights|fp8|--attention-weights|bf16|precision.attention_weights=bf16"
  "--kv-cache|BASE|--kv-cache|fp8|precision.kv_cache=fp8"
  "--activations|BASE|--activations|fp16|precision.activations=fp16"
  "--prompt-tokens|BASE|workload.prompt_tokens=100"
  "--output-tokens|BASE|workload.output_tokens=10"
  "--batch-size|BASE|--batch-size|4|workload.batch_size=4"
  "--cost-per-gpu-hour-usd|BASE|--cost-per-gpu-hour-usd|2.5|cost_per_gpu_hour_usd=2.5"
  "--engine|BASE|--engine|vllm|engine.name=vllm"
  "--gpu-memory-utilization|BASE|--gpu-memory-utilization|0.8|engine.gpu_memory_utilization=0.8"
  "--kv-block-tokens|BASE|--kv-block-tokens|32|engine.kv_block_tokens=32"
  "--max-num-batched-tokens|BASE|--max-num-batched-tokens|512|engine.max_num_batched_tokens=512"
  "--chunked-prefill|BASE|--chunked-prefill|off|engine.chunked_prefill=false"
  "--cuda-graphs|BASE|--cuda-graphs|off|engine.cuda_graphs=false"
  "--kv-cache-free-gpu-mem-fraction|BASE|--kv-cache-free-gpu-mem-fraction|0.8|engine.kv_cache_free_gpu_mem_fraction=0.8"
  "--step-overhead-us|BASE|--step-overhead-us|7|engine.step_overhead_us=7"
  "--request-overhead-us|BASE|--request-overhead-us|900|engine.request_overhead_us=900"
  "--kernel-fixed-us|BASE|--kernel-fixed-us|3|engine.kernel_fixed_us=3"
  "--host-us-per-sequence|BASE|--host-us-per-sequence|5|engine.host_us_per_sequence=5"
  "--framework-reserve-GB|BASE|--framework-reserve-GB|3|engine.framework_reserve_GB=3"
  "--max-tier|BASE|--max-tier|0|max_tier=0"
  "--format|-"
  "--compare-gpus|-")

execute_process(COMMAND "${CMD}" estimate --help RESULT_VARIABLE rc OUTPUT_VARIABLE help)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flopcast estimate --help exited ${rc}")
endif()
string(REGEX MATCHALL "\n  --[A-Za-z0-9-]+" found "${help}")
list(LENGTH found n)
if(n LESS 30)
  message(FATAL_ERROR "read ${n} flags from `estimate --help`; its format changed?")
endif()

set(problems "")
foreach(raw IN LISTS found)
  string(STRIP "${raw}" flag)
  if(flag STREQUAL "--help")
    continue()
  endif()
  set(sample "")
  foreach(s IN LISTS samples)
    string(FIND "${s}" "${flag}|" at)
    if(at EQUAL 0)
      set(sample "${s}")
    endif()
  endforeach()
  if(sample STREQUAL "")
    string(APPEND problems "  ${flag}: no sample in tests/cli/link_every_flag.cmake (add one)\n")
    continue()
  endif()
  string(REPLACE "|" ";" parts "${sample}")
  list(POP_FRONT parts)
  list(POP_BACK parts expect)
  if(expect STREQUAL "-")
    continue()
  endif()
  list(GET parts 0 first)
  if(first STREQUAL "BASE")
    list(POP_FRONT parts)
    set(parts ${base} ${parts})
  endif()
  execute_process(COMMAND "${CMD}" link ${parts} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND problems "  ${flag}: link exited ${rc}: ${err}")
  elseif(NOT out MATCHES "[#&]${expect}")
    string(APPEND problems "  ${flag}: the link lacks /${expect}/: ${out}")
  endif()
endforeach()
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "flopcast link and estimate's flags:\n${problems}")
endif()
message(STATUS "link took each of ${n} estimate flags")
