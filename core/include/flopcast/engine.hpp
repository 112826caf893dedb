// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>

namespace flopcast {

/// What a serving engine adds to the kernels: CPU time per forward step and per request, and its
/// scheduler defaults. Tier 0 ships engineering defaults; a Tier-1 profile has its overheads
/// fitted on the train split of end-to-end measurements of that engine (presets/engines/).
struct EngineProfile {
  std::string id = "generic";  ///< "generic", "vllm", "sglang", "trtllm"
  /// CPU time of one forward step outside the kernels: scheduling, input preparation, sampling.
  double step_overhead_s = 300e-6;
  /// Once per request, on its way to the first token: tokenization, admission, first detokenize.
  double request_overhead_s = 0;
  /// Fixed cost per kernel inside this engine (CUDA-graph replay hides most of the launch cost an
  /// isolated benchmark measures); none: the kernels' own measured cost.
  std::optional<double> kernel_fixed_s;
  /// Scheduler defaults (vLLM V1 on a >= 70 GiB GPU unless the profile says otherwise).
  int max_num_seqs = 256;
  int max_num_batched_tokens = 8192;
  bool chunked_prefill = true;
  double gpu_memory_utilization = 0.9;
  /// TensorRT-LLM's kv_cache_free_gpu_mem_fraction: where > 0, the KV cache takes this fraction of
  /// the memory the weights, activations and reserve leave (what the engine finds free after
  /// loading and profiling), in place of gpu_memory_utilization x device memory less the rest.
  double kv_cache_free_fraction = 0;
  int kv_block_tokens = 16;
  /// Async scheduling (vLLM >= 0.14 by default; SGLang's overlap scheduler): the next step is
  /// planned while the current one runs, so a request that arrives during a step joins the step
  /// after the next one, one step later than in a synchronous engine.
  bool async_scheduling = false;
  /// KV admission. false (MAX_UTILIZATION; vLLM, SGLang): a request is admitted with the blocks
  /// its tokens so far need, and running requests that outgrow the pool preempt others. true
  /// (TensorRT-LLM's default GUARANTEED_NO_EVICT): admitted only where the blocks of its whole
  /// sequence (prompt + output) are free, reserved up front; nothing is ever preempted.
  bool guaranteed_no_evict = false;
  /// Device memory the engine holds per GPU outside weights, activations and the KV pool (CUDA
  /// context, cuBLAS workspaces, NCCL communicators, custom all-reduce buffers):
  /// reserve_bytes + reserve_per_tp_doubling_bytes · log2(tp) (framework_reserve_bytes).
  /// vLLM's start-up profile: 1.79 GiB at TP 1 and 3.58 GiB at TP 2 on H100
  /// (vllm-project/vllm#10511, Llama-3-8B), 7.16 GiB at TP 8 on H200 (DeepSeek-R1); these three
  /// lie on 1.79 GiB · (1 + log2 tp). The other engines hold the same libraries' buffers. A
  /// request's engine.framework_reserve_GB replaces both with a flat reserve.
  double reserve_bytes = 1.92e9;
  double reserve_per_tp_doubling_bytes = 1.92e9;
  /// Host (CPU) time per running sequence per step, spent by the engine's executor thread while
  /// the GPU runs the previous step (overlap scheduler): a floor on the step time, per attention
  /// data-parallel rank (each has its own executor). 0: none modelled.
  double host_per_sequence_s = 0;
  /// Largest tensor-parallel all-reduce (bytes per rank) the engine runs with its own custom
  /// all-reduce kernel instead of NCCL; 0: always NCCL (KernelModel::custom_all_reduce_max_bytes).
  double custom_all_reduce_max_bytes = 0;
  /// Steps replayed from captured CUDA graphs (every engine's default for decode). Without them
  /// (vLLM's --enforce-eager, SGLang's --disable-cuda-graph) the CPU launches each kernel through
  /// PyTorch: a step takes at least its kernels × eager_launch_s, however short the kernels.
  bool cuda_graphs = true;
  /// CPU time to launch one kernel in eager PyTorch (Python module call, dispatcher,
  /// cudaLaunchKernel): 5–20 us (docs/model.md, "Eager steps"); Tier 0, not fitted.
  double eager_launch_s = 10e-6;
  /// 1 when the overheads were fitted on end-to-end rows (Tier 1), 0 for engineering defaults.
  int tier = 0;
};

/// The kernel model as this engine runs it: its framework's Tier-2 fits and its per-kernel cost.
struct KernelModel;
void apply_engine(const EngineProfile& e, KernelModel& km);

/// The engine's reserve per GPU at tensor-parallel size `tp` (EngineProfile::reserve_bytes).
double framework_reserve_bytes(const EngineProfile& e, int tp);

/// The host time of one step over `sequences` running sequences spread over `dp` attention ranks,
/// each with its own executor (EngineProfile::host_per_sequence_s).
double host_step_s(const EngineProfile& e, double sequences, int dp);

/// Range checks; SpecError with keys under `path` (e.g. "engine").
void validate(const EngineProfile& e, const std::string& path);

}  // namespace flopcast
