// SPDX-License-Identifier: MIT
// The request-field registry (flopcast/io/fields.hpp): each key of an inference and of a serving
// request, said once.
#include "flopcast/io/fields.hpp"

#include <algorithm>
#include <iterator>

namespace flopcast::io {

// The prose of a field (default, help, documentation) is for the CLI and the docs; the
// WebAssembly module leaves it out, as the page does not show it.
#ifdef FLOPCAST_FIELD_TEXT
#define TEXT(s) s
#else
#define TEXT(s) ""
#endif

namespace {

constexpr unsigned kBoth = kInferenceField | kServingField;
constexpr unsigned kInf = kInferenceField;
constexpr unsigned kServ = kServingField;
using T = FieldType;
using S = FlagStyle;

// Order: links list the inference fields in this order (old links decode in any order), the CLI
// its flags, docs their rows.
constexpr RequestField kFields[] = {
    {"schema_version", T::integer, kInf, "", "", "", S::value, TEXT("1"), TEXT(""),
     TEXT("must be 1 when given")},
    {"task", T::text, kInf, "", "", "", S::value, TEXT("`\"inference\"`"), TEXT(""),
     TEXT("`\"inference\"` (the others: `training`, `serving`, `collective`, `search`)")},
    {"model", T::spec, kBoth, "", "", "", S::value, TEXT("required"), TEXT(""),
     TEXT("a model preset id (`flopcast presets list`) or a model object (below); the CLI's "
          "`--model`, `--model-file`, `--hf-config`")},
    {"hardware", T::spec, kBoth, "", "", "", S::value, TEXT("required"), TEXT(""),
     TEXT("a hardware preset id, a what-if preset (`{\"preset\", \"scale\"}`) or a hardware "
          "object (below); the CLI's `--hardware`, `--hardware-file`, `--what-if`")},
    {"num_gpus", T::integer, kBoth, "GPUs", "", "--num-gpus", S::value, TEXT("`tp · pp`"),
     TEXT("GPUs in total, a multiple of --tp times --pp (default: their product): that many "
          "data-parallel replicas"),
     TEXT("GPUs in total; a multiple of tp·pp. `num_gpus / (tp · pp)` data-parallel replicas "
          "(in `serving`, each behind the `router`)")},
    {"max_tier", T::integer, kBoth, "", "", "--max-tier", S::value, TEXT("2"),
     TEXT("2: Tier-2 kernel fits where the GPU has them (default); 0: Tier-0 physics alone"),
     TEXT("2: Tier-2 fits where the GPU has them; 0: the Tier-0 physics alone")},
    {"cost_per_gpu_hour_usd", T::number, kInf, "USD per GPU-hour", "", "--cost-per-gpu-hour-usd",
     S::value, TEXT("the hardware's `on_demand_price`"),
     TEXT("$ per GPU-hour (default: the GPU's dated on-demand list price, where known): "
          "$ per million output tokens"),
     TEXT("the price of one GPU-hour (0–1,000,000; 0 or absent: the hardware's dated on-demand "
          "list price where it has one, else no cost): adds `usd_per_million_output_tokens` and "
          "`cost_basis`")},

    {"parallelism.tp", T::integer, kBoth, "GPUs", "", "--tp", S::value, TEXT("1"),
     TEXT("Tensor-parallel degree of a replica (default 1)"),
     TEXT("tensor-parallel degree: divides `num_heads` (not under `dp_attention`) and every FFN "
          "width it splits (`intermediate_size` over tp / ep for a MoE; "
          "`dense_intermediate_size` and shared experts unless they run data-parallel under the "
          "`all_to_all` dispatch), divides `num_kv_heads` or is a multiple of it (not under "
          "`dp_attention`). Beyond `gpus_per_node` it spans whole nodes (a multiple of "
          "`gpus_per_node`) and its all-reduces cross the scale-out network, which the hardware "
          "must have (`scaleout_nics_per_node` > 0, else `not_modelled`)")},
    {"parallelism.pp", T::integer, kBoth, "stages", "", "--pp", S::value, TEXT("1"),
     TEXT("Pipeline stages of a replica (default 1)"),
     TEXT("pipeline stages (1 … `num_layers`): the first `num_layers mod pp` stages take one "
          "layer more; a GPU of the largest stage holds its layers' weights and KV and one of "
          "embedding / LM head; the batch runs as min(batch, pp) micro-batches, each token "
          "crossing every stage plus an activation send at each of the pp − 1 boundaries "
          "(another node when a stage fills one). In `serving` a pipeline serves as pp engines "
          "(vLLM's virtual engines) sharing its KV cache")},
    {"parallelism.dp_attention", T::boolean, kBoth, "", "", "--dp-attention", S::toggle,
     TEXT("false"),
     TEXT("Attention data-parallel over the --tp GPUs, FFN/MoE tensor-parallel (SGLang "
          "--enable-dp-attention)"),
     TEXT("needs tp > 1. Attention data-parallel over the tp GPUs of a replica (SGLang "
          "`--enable-dp-attention`, TensorRT-LLM `enable_attention_dp`): each GPU holds the whole "
          "attention weights and the KV cache of its ceil(batch / tp) sequences (an MLA latent "
          "is no longer replicated on every rank, so the KV cache per GPU is 1/tp), the busiest "
          "GPU sets the attention time; FFN / MoE stay tensor-parallel over all tp GPUs, the "
          "tokens gathered and scattered around them as the two all-reduces per layer a TP "
          "layer has")},
    {"parallelism.attention_tp", T::integer, kBoth, "GPUs", "", "--attention-tp", S::value,
     TEXT("1"),
     TEXT("With --dp-attention: GPUs of each attention group, heads split among them, --tp / "
          "this many groups (SGLang --tp-size / --dp-size; default 1)"),
     TEXT("needs `dp_attention`; divides tp and is smaller than it. GPUs of one data-parallel "
          "attention group (SGLang `--tp-size / --dp-size` with `--enable-dp-attention`): "
          "attention runs in tp / attention_tp groups, each tensor-parallel over its "
          "attention_tp GPUs (heads split as `parallelism.tp` splits them: it must divide "
          "`num_heads`, and divide `num_kv_heads` or be a multiple of it) for its own sequences: "
          "a GPU holds 1/attention_tp of the sharded attention weights and the KV of its group's "
          "ceil(batch / (tp / attention_tp)) sequences for its heads (an MLA latent on every GPU "
          "of the group: DeepSeek-V3 at tp 8 in groups of 2, 17,568 B per token of the replica "
          "per GPU). `moe_dispatch: \"all_to_all\"` with it is `not_modelled`; the serving search "
          "does not take it")},
    {"parallelism.ep", T::integer, kBoth, "groups", "", "--ep", S::value, TEXT("1"),
     TEXT("Expert-parallel groups of a MoE within the --tp GPUs (divides --tp; default 1)"),
     TEXT("MoE models only; divides tp and `num_experts` (+ `redundant_experts`). The MoE layers "
          "run as ep groups of whole experts over the tp GPUs, each expert's width split tp / ep "
          "ways (TensorRT-LLM moe_ep × moe_tp; ep = tp is SGLang's / vLLM's expert parallelism): "
          "the same FLOPs, weights and token traffic per GPU as TP, but each GPU runs 1/ep of "
          "the touched experts' grouped-GEMM problems, ep times wider, and reads / writes only "
          "the hidden states routed to its experts. Tokens move as in TP (or see "
          "`moe_dispatch`); in `serving`, `features.moe.expert_parallel` adds the dispatch and "
          "combine all-to-alls")},
    {"parallelism.moe_dispatch", T::text, kBoth, "", "parallelism.moe_dispatch", "--moe-dispatch",
     S::value,
     TEXT("`all_to_all` where `dp_attention`, ep = tp and tp > `gpus_per_node` (the group spans "
          "nodes), else `all_reduce`"),
     TEXT("How MoE tokens reach their experts under --dp-attention with --ep = --tp: all_reduce "
          "gathers all tokens, all_to_all dispatches the routed copies (DeepEP; default where "
          "the group spans nodes)"),
     TEXT("MoE models with tp > 1 (echoed in the response). `all_reduce`: the MoE layers' tokens "
          "are gathered and scattered as the all-reduce pair of a TP layer (every token into "
          "every GPU). `all_to_all` (needs `dp_attention` and ep = tp): each GPU sends its own "
          "tokens to the GPUs holding their top-k experts, once per such GPU (a token reaches "
          "`tp·(1 − Π_{i<k}(E − E/tp − i)/(E − i))` GPUs on average, 6.52 of 16 for 256 experts "
          "and top-8; with group-limited routing, `model.expert_groups`, fewer: 5.34 of 16 for "
          "DeepSeek-V3), and the expert outputs come back the same way: two all-to-alls of that "
          "buffer per MoE layer, priced by the collective model (across nodes where tp spans "
          "them), as DeepEP and TensorRT-LLM's wide-EP all-to-all run; the dense FFN layers and "
          "shared experts then run data-parallel (each GPU its own tokens through whole weights, "
          "no exchange in dense layers: TensorRT-LLM's attention DP, vLLM's DP+EP, SGLang's "
          "`--moe-dense-tp-size 1`), so tp need not divide the heads or those widths. In "
          "`serving` it cannot be combined with `features.moe.expert_parallel` (which adds the "
          "all-to-alls on top); `task: \"search\"` chooses it per layout")},
    {"parallelism.redundant_experts", T::integer, kBoth, "experts", "", "--redundant-experts",
     S::value, TEXT("0"),
     TEXT("Extra expert slots for replicas of busy experts (EPLB; SGLang "
          "--ep-num-redundant-experts): --ep divides experts + slots"),
     TEXT("MoE with ep > 1; 0 … `num_experts`. Extra expert slots for replicas of busy experts "
          "(EPLB: SGLang `--ep-num-redundant-experts`, TensorRT-LLM's slots): ep must divide "
          "`num_experts` + this; each GPU holds that many whole experts over ep, and routing is "
          "priced over the slots (docs/model.md). Echoed when not 0")},

    {"precision.weights", T::text, kBoth, "", "precision.weights", "--weights", S::value,
     TEXT("the model's `checkpoint_weights`, else `bf16`"), TEXT("Weight precision"),
     TEXT("`fp8` is W8A8 on FP8 tensor cores (on NVIDIA Turing and Ampere weight-only W8A16, as "
          "vLLM's FP8 Marlin runs it, priced like `int8` weight-only and said in `warnings`; "
          "elsewhere an error); `mxfp8` is OCP MXFP8 (E4M3 + an E8M0 scale per 32, 1.03125 B; "
          "W8A8 on tensor cores that apply block scales, the GPUs with a `fp4` peak: Blackwell, "
          "CDNA4); `int8` and `int4` (group 128) are weight-only; `fp4` is NVFP4 (E2M1 + an FP8 "
          "scale per 16, 0.5625 B), `mxfp4` E2M1 + an E8M0 scale per 32 (0.53125 B): where the "
          "hardware has a `fp4` peak `fp4` multiplies on FP4 tensor cores (W4A4) and `mxfp4` "
          "against MXFP8 activations on FP8 ones (W4A8, TensorRT-LLM's gpt-oss MoE on "
          "Blackwell), else both are weight-only in 16 bits; llama.cpp's GGUF formats `q4_0` "
          "(4.5 bits per weight), `q4_k_m` (4.84), `q5_k_m` (5.68), `q6_k` (6.5625), `q8_0` "
          "(8.5) are weight-only, embedding and LM head quantized too, priced at Tier 0 (no "
          "measured llama.cpp kernel)")},
    {"precision.attention_weights", T::text, kBoth, "", "precision.attention_weights",
     "--attention-weights", S::value,
     TEXT("the model's `checkpoint_attention_weights` while `precision.weights` is left to the "
          "checkpoint, else `precision.weights`"),
     TEXT("Attention projections' precision where the checkpoint keeps them apart (Meta's Llama "
          "3.1 FP8, gpt-oss: bf16; default: --weights)"),
     TEXT("the attention projections' type where a checkpoint keeps them apart from the other "
          "linear layers: Meta's Llama 3.1 FP8 checkpoints (fbgemm row-wise FP8) quantize the "
          "FFNs only (\"we do not perform quantization in the self-attention layers\", Llama 3 "
          "paper §6.2) and gpt-oss ships MXFP4 experts beside bf16 attention, both `bf16`. Not "
          "with a GGUF `precision.weights`; `flopcast estimate --hf-config` reads it from "
          "`quantization_config.modules_to_not_convert` / `ignore`")},
    {"precision.kv_cache", T::text, kBoth, "", "precision.kv_cache", "--kv-cache", S::value,
     TEXT("the activation type"), TEXT("KV-cache precision"),
     TEXT("the KV cache's element type; `fp4` is NVFP4 and needs FP4 tensor cores")},
    {"precision.activations", T::text, kBoth, "", "precision.activations", "--activations",
     S::value, TEXT("`fp16` when weights are fp16 or the GPU has no bf16, else `bf16`"),
     TEXT("Activation precision"), TEXT("the activations' type")},

    {"workload.prompt_tokens", T::integer, kInf, "tokens", "", "--prompt-tokens", S::value,
     TEXT("required"), TEXT("Prompt length in tokens"),
     TEXT("prompt length; prompt + output ≤ `model.max_context_tokens`")},
    {"workload.output_tokens", T::integer, kInf, "tokens", "", "--output-tokens", S::value,
     TEXT("required"), TEXT("Generated tokens per request"),
     TEXT("generated tokens per sequence (≥ 1)")},
    {"workload.batch_size", T::integer, kInf, "sequences", "", "--batch-size", S::value, TEXT("1"),
     TEXT("Sequences per replica (default 1)"),
     TEXT("sequences per replica, run as one static batch")},

    {"engine.name", T::text, kBoth, "", "engine.name", "--engine", S::value,
     TEXT("`generic` (serving: `vllm`)"),
     TEXT("Engine profile: its scheduler defaults and kernel fits (default generic; serve: vllm)"),
     TEXT("engine profile (`presets/engines/`). It sets the defaults of the keys below, and "
          "kernels are priced with that framework's own Tier-2 fits where the GPU has them "
          "(`generic`: fits pooled over frameworks)")},
    {"engine.gpu_memory_utilization", T::number, kBoth, "fraction", "", "--gpu-memory-utilization",
     S::value, TEXT("profile (generic 0.9)"),
     TEXT("Fraction of device memory the engine may use (profile default)"),
     TEXT("fraction of device memory the engine may use")},
    {"engine.kv_block_tokens", T::integer, kBoth, "tokens", "", "--kv-block-tokens", S::value,
     TEXT("profile (generic 16)"), TEXT("Paged-KV block size (tokens)"),
     TEXT("paged-KV block size")},
    {"engine.max_num_batched_tokens", T::integer, kBoth, "tokens", "", "--max-num-batched-tokens",
     S::value, TEXT("profile (generic 8192)"),
     TEXT("Token budget per forward step (prefill runs in chunks of it)"),
     TEXT("tokens per forward pass; prefill runs in chunks of this size")},
    {"engine.chunked_prefill", T::boolean, kBoth, "", "", "--chunked-prefill", S::on_off,
     TEXT("profile (generic true)"), TEXT("on or off (profile default)"),
     TEXT("false: a prompt is never split; a step takes as many whole prompts as fit the budget "
          "(at least one)")},
    {"engine.cuda_graphs", T::boolean, kBoth, "", "", "--cuda-graphs", S::on_off, TEXT("true"),
     TEXT("on (default) or off: off launches every kernel from the CPU each step (vLLM "
          "--enforce-eager, SGLang --disable-cuda-graph)"),
     TEXT("false: the CPU launches every kernel (vLLM `--enforce-eager`, SGLang "
          "`--disable-cuda-graph`); a step takes at least its kernels × 10 µs (docs/model.md, "
          "\"Eager steps\")")},
    {"engine.kv_cache_free_gpu_mem_fraction", T::number, kBoth, "fraction", "",
     "--kv-cache-free-gpu-mem-fraction", S::value, TEXT("none"),
     TEXT("TensorRT-LLM's: the KV cache takes this fraction (0.01-1) of the memory weights, "
          "activations and reserve leave, in place of --gpu-memory-utilization"),
     TEXT("TensorRT-LLM's: the KV cache takes this fraction (0.01–1) of the memory weights, "
          "activations and reserve leave, in place of `gpu_memory_utilization`")},
    {"engine.step_overhead_us", T::number, kBoth, "µs", "", "--step-overhead-us", S::value,
     TEXT("profile (generic 300)"),
     TEXT("CPU time per forward step (scheduling, input preparation, sampling)"),
     TEXT("CPU time per forward step (scheduling, input preparation, sampling)")},
    {"engine.request_overhead_us", T::number, kBoth, "µs", "", "--request-overhead-us", S::value,
     TEXT("profile (generic and TensorRT-LLM 0; vLLM and SGLang 8421, their HTTP servers' "
          "latency, fitted)"),
     TEXT("CPU time once per request before its first token"),
     TEXT("CPU time once per request before its first token (receive, tokenize, admit); added "
          "to TTFT and E2E")},
    {"engine.kernel_fixed_us", T::number, kBoth, "µs", "", "--kernel-fixed-us", S::value,
     TEXT("profile (absent: each kernel's own fitted or Tier-0 cost)"),
     TEXT("Fixed cost per kernel inside the engine (0-1000)"),
     TEXT("fixed cost per kernel inside the engine, 0–1000 (CUDA-graph replay hides most of the "
          "launch cost an isolated benchmark measures); replaces the kernels' own")},
    {"engine.framework_reserve_GB", T::number, kBoth, "GB", "", "--framework-reserve-GB", S::value,
     TEXT("1.92 · (1 + log2 tp)"),
     TEXT("Memory outside weights, KV cache and activations (GB per GPU)"),
     TEXT("memory per GPU outside weights, KV and activations (CUDA context, cuBLAS workspaces, "
          "NCCL and all-reduce buffers); the default grows with the tensor-parallel group "
          "([model.md](model.md#memory-per-gpu-as-a-serving-engine-sees-it))")},
    {"engine.host_us_per_sequence", T::number, kBoth, "µs", "", "--host-us-per-sequence", S::value,
     TEXT("profile (`trtllm` 29.4, others 0)"),
     TEXT("Host time per running sequence per step, overlapped with the GPU: a floor on the "
          "step (TensorRT-LLM's PyTorch executor)"),
     TEXT("host time per running sequence and step, overlapped with the GPU (TensorRT-LLM's "
          "PyTorch executor): a step takes at least its sequences per attention rank × this; "
          "0–10,000")},
    {"engine.max_num_seqs", T::integer, kServ, "sequences", "", "--max-num-seqs", S::value,
     TEXT("the profile's"), TEXT("Sequences per step at most (profile default)"),
     TEXT("sequences a step holds at most (per attention rank under `dp_attention`)")},
    {"engine.async_scheduling", T::boolean, kServ, "", "", "--async-scheduling", S::on_off,
     TEXT("the profile's (`vllm`: true, false with `parallelism.pp` > 1; `sglang`: true; "
          "`trtllm`, `generic`: false)"),
     TEXT("on or off (the engine's default; vllm and sglang: on)"),
     TEXT("the next step is planned while the current one runs: a request arriving during a "
          "step joins the step after the next (vLLM >= 0.14's default, SGLang's overlap "
          "scheduler)")},
    {"engine.policy", T::text, kServ, "", "engine.policy", "--policy", S::value,
     TEXT("`decode_first`"), TEXT("What a step serves first"),
     TEXT("`decode_first` (vLLM V1: running decodes first, then prefill chunks) or "
          "`prefill_first` (vLLM V0 / SGLang: a step with prefill work holds no decodes)")},
    {"engine.batching", T::text, kServ, "", "engine.batching", "--batching", S::value,
     TEXT("`continuous`"), TEXT("Batching (static: with --simulate)"),
     TEXT("`static` runs with `mode: \"simulate\"` only: a batch runs until its longest member "
          "ends, finished members padded")},
    {"engine.static_batch_size", T::integer, kServ, "sequences", "", "--static-batch-size",
     S::value, TEXT("0 (= `max_num_seqs`)"),
     TEXT("Static batching: sequences per batch (default --max-num-seqs)"),
     TEXT("static batching's batch")},
    {"engine.num_scheduler_steps", T::integer, kServ, "steps", "", "--num-scheduler-steps",
     S::value, TEXT("1"), TEXT("vLLM multi-step scheduling: new requests join every k steps"),
     TEXT("vLLM multi-step: new requests join every k steps")},
    {"engine.capacity_policy", T::text, kServ, "", "engine.capacity_policy", "--capacity-policy",
     S::value, TEXT("the profile's (`trtllm`: `guaranteed_no_evict`; others `max_utilization`)"),
     TEXT("KV admission (TensorRT-LLM's capacity scheduler policy; profile default)"),
     TEXT("`guaranteed_no_evict`: a request is admitted only where its whole sequence's KV "
          "blocks are free, and nothing is preempted; `max_utilization`: admitted with the "
          "blocks it needs now, preempting (recompute) when the pool runs out (docs/model.md, "
          "\"KV admission\")")},

    // A serving request's own keys (the shared ones above).
    {"schema_version", T::integer, kServ, "", "", "", S::value, TEXT("1"), TEXT(""),
     TEXT("must be 1 when given")},
    {"task", T::text, kServ, "", "", "", S::value, TEXT("required"), TEXT(""),
     TEXT("`\"serving\"`")},
    {"mode", T::text, kServ, "", "serving.mode", "--simulate", S::custom, TEXT("`analytic`"),
     TEXT("Run the discrete-event simulator (mode simulate; default: the analytic model)"),
     TEXT("`analytic`: the queueing model; `simulate`: a seeded discrete-event simulation of a "
          "vLLM-like scheduler")},
    {"cost_per_gpu_hour_usd", T::number, kServ, "USD per GPU-hour", "", "--cost-per-gpu-hour-usd",
     S::value, TEXT("the hardware's `on_demand_price`"),
     TEXT("$ per GPU-hour (default: the GPU's dated on-demand list price, where known): $ per "
          "million output tokens at this load"),
     TEXT("the price of one GPU-hour: adds `usd_per_million_output_tokens` = price · num_gpus / "
          "3600 · 10^6 / `throughput.output_tokens_per_s`, at the offered load (saturated: at the "
          "saturation rate), and `cost_basis` (`usd_per_gpu_hour`, `basis`, "
          "`usd_per_million_output_tokens_at_saturation`: at the saturation rate, the cheapest "
          "this setup runs)")},
    {"workload.arrival.kind", T::text, kServ, "", "workload.arrival_kind", "--arrival", S::value,
     TEXT("`poisson` (`concurrency` with --concurrency, `trace` with --trace)"),
     TEXT("Arrival process"),
     TEXT("`gamma` takes `cv`, the coefficient of variation of the gaps; `concurrency` is a "
          "closed loop (`{\"kind\": \"concurrency\", \"concurrency\": N}`); `trace` replays "
          "`requests`")},
    {"workload.arrival.rate_per_s", T::number, kServ, "requests/s", "", "--rate", S::value,
     TEXT("required (not for trace or concurrency)"),
     TEXT("Request rate (requests/s, all replicas)"), TEXT("requests per second, all replicas")},
    {"workload.arrival.cv", T::number, kServ, "", "", "--cv", S::value,
     TEXT("gamma only, required"), TEXT("Gamma arrivals: coefficient of variation of the gaps"),
     TEXT("the coefficient of variation of the gaps between arrivals")},
    {"workload.arrival.concurrency", T::integer, kServ, "clients", "", "--concurrency", S::value,
     TEXT("concurrency only, required"),
     TEXT("Closed loop: clients each sending the next request when the previous ends "
          "(bench_serving --max-concurrency; = --num-requests for an offline batch)"),
     TEXT("N clients (1..200,000, all replicas), each sending its next request as soon as its "
          "previous one finishes, all first sent at t = 0 (vLLM/SGLang `bench_serving "
          "--max-concurrency N`); `concurrency` = `num_requests` is an offline batch "
          "(`benchmark_throughput`: every prompt submitted at t = 0)")},
    {"workload.arrival.requests", T::array, kServ, "", "", "--trace", S::custom,
     TEXT("trace only, required"),
     TEXT("Trace CSV: arrival_s,prompt_tokens,output_tokens per line (implies --simulate)"),
     TEXT("`[[arrival_s, prompt_tokens, output_tokens], ...]`, non-decreasing times, at most "
          "200,000")},
    {"workload.prompt_tokens", T::length, kServ, "tokens", "", "--prompt-tokens", S::value,
     TEXT("required (not for trace)"), TEXT("Prompt length (tokens)"),
     TEXT("a number, or `{\"kind\": \"fixed\", \"value\"}`, `{\"kind\": \"uniform\", \"min\", "
          "\"max\"}`, `{\"kind\": \"lognormal\", \"mean\", \"sigma\", \"min\" (1), \"max\" (model "
          "context)}` (`sigma` of ln X); the CLI takes a number")},
    {"workload.output_tokens", T::length, kServ, "tokens", "", "--output-tokens", S::value,
     TEXT("required (not for trace)"), TEXT("Output length (tokens)"), TEXT("as `prompt_tokens`")},
    {"workload.num_requests", T::integer, kServ, "requests", "", "--num-requests", S::value,
     TEXT("1000"), TEXT("Requests to simulate (default 1000)"),
     TEXT("simulated requests, 1..200,000; `num_requests / rate_per_s` at most one week; with "
          "`concurrency`, the requests the clients send in all; a simulation generates at most "
          "2·10^8 tokens in all (Σ output_tokens of the sampled requests, checked before any "
          "step: ~4 s natively, ~10 s in the page)")},
    {"workload.seed", T::integer, kServ, "", "", "--seed", S::value, TEXT("1"),
     TEXT("Random seed of the simulator (default 1)"),
     TEXT("seed of the simulator's std::mt19937_64 (own samplers: identical native and "
          "WebAssembly)")},
    {"features.prefix_caching.shared_prefix_tokens", T::integer, kServ, "tokens", "",
     "--shared-prefix-tokens", S::value, TEXT("off"),
     TEXT("Prefix caching: tokens of every prompt served from the cache"),
     TEXT("prefix caching: a hit skips the prefix's prefill and shares its KV blocks")},
    {"features.prefix_caching.hit_rate", T::number, kServ, "fraction", "", "--prefix-hit-rate",
     S::value, TEXT("1"),
     TEXT("Prefix caching: share of requests that find the prefix cached (default 1)"),
     TEXT("share of requests that find the prefix cached")},
    {"features.speculative.num_tokens", T::integer, kServ, "tokens", "", "--draft-tokens", S::value,
     TEXT("required with `speculative`"), TEXT("Draft tokens per verify step (k)"),
     TEXT("speculative decoding: draft tokens per verify step (k)")},
    {"features.speculative.acceptance_rate", T::number, kServ, "fraction", "", "--acceptance-rate",
     S::value, TEXT("required with `speculative`"),
     TEXT("Probability that each draft token is accepted (DeepSeek reports 0.85-0.9 for MTP)"),
     TEXT("α, the probability that each draft token is accepted; a source that states the mean "
          "accepted length L per verify step (TensorRT-LLM's \"acceptance rate\") gives α from "
          "(1 − α^(k+1)) / (1 − α) = L")},
    {"features.speculative.draft", T::text, kServ, "", "", "--draft", S::custom,
     TEXT("one of `draft`, `draft_model`, `draft_cost_fraction`"),
     TEXT("Speculative decoding draft: mtp (the model's own multi-token-prediction layer) or a "
          "model preset id"),
     TEXT("`\"mtp\"`: the model's own MTP layer, run k times a step (needs `model.mtp_layers` > "
          "0; its weights and its layer of KV cache come out of the KV pool)")},
    {"features.speculative.draft_model", T::spec, kServ, "", "", "--draft", S::custom,
     TEXT("one of `draft`, `draft_model`, `draft_cost_fraction`"), TEXT(""),
     TEXT("a draft model (preset id or object) run k times a step")},
    {"features.speculative.draft_cost_fraction", T::number, kServ, "fraction", "",
     "--draft-cost-fraction", S::value,
     TEXT("one of `draft`, `draft_model`, `draft_cost_fraction`"),
     TEXT("Speculative decoding: drafting one token costs this fraction (0-1) of a target "
          "decode step"),
     TEXT("the cost of drafting one token, as a fraction (0–1) of a target decode step (in "
          "place of a draft model)")},
    {"features.disaggregated.prefill_instances", T::integer, kServ, "instances", "",
     "--prefill-instances", S::value, TEXT("off"),
     TEXT("Disaggregated serving: prefill instances of --tp GPUs"),
     TEXT("disaggregated serving: prefill instances of tp GPUs; `num_gpus` = (prefill + decode) "
          "· tp; both engines (analytic: open-loop arrivals, no multi-LoRA, mean output ≥ 2 "
          "tokens; docs/model.md)")},
    {"features.disaggregated.decode_instances", T::integer, kServ, "instances", "",
     "--decode-instances", S::value, TEXT("off"),
     TEXT("Disaggregated serving: decode instances of --tp GPUs"),
     TEXT("decode instances of tp GPUs")},
    {"features.disaggregated.kv_link_GBps", T::number, kServ, "GB/s", "", "--kv-link-GBps",
     S::value, TEXT("50"),
     TEXT("Disaggregated serving: KV transfer bandwidth per instance (default 50)"),
     TEXT("KV transfer bandwidth per instance")},
    {"features.disaggregated.kv_link_latency_us", T::number, kServ, "µs", "",
     "--kv-link-latency-us", S::value, TEXT("10"),
     TEXT("Disaggregated serving: KV transfer latency (default 10)"),
     TEXT("KV transfer latency per request")},
    {"features.lora.num_adapters", T::integer, kServ, "adapters", "", "--lora-adapters", S::value,
     TEXT("off"), TEXT("Multi-LoRA: adapters the requests spread over"),
     TEXT("multi-LoRA: adapters the requests spread over (≥ 1)")},
    {"features.lora.rank", T::integer, kServ, "", "", "--lora-rank", S::value, TEXT("16"),
     TEXT("Multi-LoRA: adapter rank (default 16)"), TEXT("adapter rank")},
    {"features.lora.max_loras_per_batch", T::integer, kServ, "adapters", "",
     "--max-loras-per-batch", S::value, TEXT("4"),
     TEXT("Multi-LoRA: adapters one step may hold (default 4)"),
     TEXT("adapters one step may hold")},
    {"features.lora.load_ms", T::number, kServ, "ms", "", "--lora-load-ms", S::value, TEXT("5"),
     TEXT("Multi-LoRA: time to load an adapter that is not resident (default 5)"),
     TEXT("time to load an adapter that is not resident")},
    {"features.moe.expert_parallel", T::boolean, kServ, "", "", "--expert-parallel-all-to-all",
     S::toggle, TEXT("false"),
     TEXT("MoE: price the expert all-to-all dispatch (features.moe.expert_parallel)"),
     TEXT("MoE models: price the dispatch and combine all-to-alls of expert parallelism")},
    {"features.moe.imbalance_factor", T::number, kServ, "", "", "--moe-imbalance", S::value,
     TEXT("1"), TEXT("MoE: load on the busiest GPU's experts over the mean (default 1)"),
     TEXT("MoE models: the load on the busiest GPU's experts over the mean")},
    {"router", T::text, kServ, "", "serving.router", "--router", S::value, TEXT("`round_robin`"),
     TEXT("How requests reach the replicas"),
     TEXT("`least_loaded`: to the replica with the fewest outstanding requests")},
    {"slo.ttft_ms", T::number, kServ, "ms", "", "--ttft-slo-ms", S::value, TEXT("none"),
     TEXT("TTFT objective for goodput"), TEXT("TTFT objective for goodput (0 = no limit)")},
    {"slo.tpot_ms", T::number, kServ, "ms", "", "--tpot-slo-ms", S::value, TEXT("none"),
     TEXT("TPOT objective for goodput"), TEXT("TPOT objective for goodput (0 = no limit)")},
    {"slo.e2e_ms", T::number, kServ, "ms", "", "--e2e-slo-ms", S::value, TEXT("none"),
     TEXT("End-to-end latency objective for goodput"),
     TEXT("end-to-end latency objective for goodput (0 = no limit)")},
    {"output.per_request", T::boolean, kServ, "", "", "--per-request", S::custom, TEXT("false"),
     TEXT("Write every simulated request to this CSV (implies --simulate)"),
     TEXT("simulate only: every request in `requests`")},
    {"output.timeline_points", T::integer, kServ, "points", "", "--timeline-points", S::value,
     TEXT("256"), TEXT("At most this many timeline points (2-4096; default 256)"),
     TEXT("at most this many timeline points (2..4096)")},
};

}  // namespace

#undef TEXT

std::string_view to_string(FieldType t) noexcept {
  switch (t) {
    case FieldType::integer:
      return "integer";
    case FieldType::number:
      return "number";
    case FieldType::boolean:
      return "boolean";
    case FieldType::text:
      return "string";
    case FieldType::spec:
      return "preset id or object";
    case FieldType::length:
      return "integer or distribution";
    case FieldType::array:
      return "array";
  }
  return "";
}

RequestFields request_fields() noexcept { return {std::begin(kFields), std::end(kFields)}; }

std::vector<std::string> field_keys(std::string_view section, unsigned task) {
  std::vector<std::string> keys;
  for (const RequestField& f : kFields) {
    if ((f.tasks & task) == 0) continue;
    std::string_view rest = f.path;
    if (!section.empty()) {
      if (rest.size() <= section.size() || rest.compare(0, section.size(), section) != 0 ||
          rest[section.size()] != '.') {
        continue;
      }
      rest.remove_prefix(section.size() + 1);
    }
    std::string key(rest.substr(0, rest.find('.')));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace flopcast::io
