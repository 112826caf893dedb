// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flopcast/dtype.hpp"
#include "flopcast/engine.hpp"
#include "flopcast/hardware.hpp"
#include "flopcast/kernel.hpp"
#include "flopcast/model.hpp"
#include "flopcast/names.hpp"

namespace flopcast {

/// One inference request: a batch of identical requests run together (static batch) on
/// `num_gpus / (tp · pp)` replicas of `pp` pipeline stages of `tp` tensor-parallel GPUs each.
///
/// Pipeline parallelism splits the layers into pp stages (the first num_layers mod pp take one
/// more) and keeps pp micro-batches of the batch in flight, as vLLM's and TensorRT-LLM's
/// pipelines do: a token still passes through every layer, plus a send of its activations at
/// each of the pp − 1 stage boundaries, but each stage works on another micro-batch meanwhile.
///
/// Data-parallel attention (`dp_attention`, SGLang `--enable-dp-attention`, TensorRT-LLM
/// `enable_attention_dp`) runs attention data-parallel over the tp GPUs of a replica: each holds
/// the whole attention weights and the KV cache of its own 1/tp of the sequences (an MLA latent
/// is no longer replicated on every rank), while the FFN / MoE stays tensor-parallel over all of
/// them. The tokens are gathered before the FFN and scattered after it, priced as the two
/// all-reduces of the whole step's tokens a TP layer has (SGLang gathers by all-reduce).
/// With `attention_tp` > 1 (SGLang's --dp-size below --tp-size: tp_size / dp_size) attention
/// runs in tp / attention_tp groups of attention_tp GPUs, each group data-parallel over the
/// others and tensor-parallel inside: a GPU holds 1/attention_tp of the attention weights and,
/// for its group's sequences, the KV of its heads (an MLA latent on each GPU of the group). The
/// o_proj partial sums of a group are summed by the same gathering all-reduce over the tp GPUs
/// (each rank adds its partial sums at its group's token positions), so nothing is added.
///
/// Expert parallelism (`ep`, dividing tp) shards a MoE layer over the tp GPUs as ep groups of
/// whole experts, each expert's width split tp / ep ways (TensorRT-LLM's moe_ep_size ×
/// moe_tp_size; ep = tp is SGLang's and vLLM's expert parallelism). The FLOPs, bytes and weights
/// per GPU are those of plain TP; what changes is the grouped GEMMs: a GPU runs 1/ep of the
/// touched experts, each ep times wider. The tokens travel as in TP (the all-reduce pair of a
/// layer, which moves the bytes of an all-gather before and a reduce-scatter after the experts);
/// With data-parallel attention and ep = tp, `moe_dispatch` picks how the tokens reach the
/// experts: the all-reduce pair above (`all_reduce`), or an all-to-all dispatch of each token to
/// the GPUs holding its top-k experts and an all-to-all combine back (`all_to_all`: DeepEP,
/// TensorRT-LLM's wide-EP all-to-all), which moves only the routed copies. Unset, it is
/// all_to_all where the group spans nodes and all_reduce inside one (moe_dispatch_of).
enum class MoeDispatch { all_reduce, all_to_all };
inline constexpr std::array<Named<MoeDispatch>, 2> kMoeDispatchNames{
    {{"all_reduce", MoeDispatch::all_reduce}, {"all_to_all", MoeDispatch::all_to_all}}};
constexpr std::string_view to_string(MoeDispatch d) noexcept {
  return name_in(kMoeDispatchNames, d);
}

/// The types each precision key of an inference or serving request takes, in the order the page
/// lists them (validate and io::schema read these).
inline constexpr std::array<DType, 13> kWeightTypes{
    DType::bf16,  DType::fp16, DType::fp8,    DType::mxfp8,  DType::int8, DType::int4, DType::fp4,
    DType::mxfp4, DType::q4_0, DType::q4_k_m, DType::q5_k_m, DType::q6_k, DType::q8_0};
inline constexpr std::array<DType, 8> kAttentionWeightTypes{DType::bf16,  DType::fp16, DType::fp8,
                                                            DType::mxfp8, DType::int8, DType::int4,
                                                            DType::fp4,   DType::mxfp4};
inline constexpr std::array<DType, 5> kKvCacheTypes{DType::bf16, DType::fp16, DType::fp8,
                                                    DType::int8, DType::fp4};
inline constexpr std::array<DType, 2> kActivationTypes{DType::bf16, DType::fp16};

struct InferenceSpec {
  ModelSpec model;
  HardwareSpec hardware;
  int num_gpus = 1;
  int tp = 1;
  int pp = 1;                 ///< pipeline stages
  bool dp_attention = false;  ///< attention data-parallel over the tp GPUs (above)
  int attention_tp = 1;       ///< under dp_attention, GPUs of one attention group (above)
  int ep = 1;                 ///< expert-parallel groups of the MoE within the tp GPUs (above)
  std::optional<MoeDispatch> moe_dispatch;  ///< unset: moe_dispatch_of's default (above)
  /// Extra expert slots for replicas of the busiest experts (EPLB: SGLang's
  /// --ep-num-redundant-experts, TensorRT-LLM's num_slots − num_experts): ep divides
  /// num_experts + redundant_experts, each GPU holds that many over ep, and routing spreads the
  /// tokens over the slots.
  int redundant_experts = 0;
  DType weights = DType::bf16;  ///< bf16, fp16, fp8 (W8A8), int8 / int4 (weight-only)
  /// The attention projections' type where a checkpoint keeps them apart from the other linear
  /// layers (Meta's Llama 3.1 FP8 and gpt-oss's MXFP4 leave attention in bf16); unset: `weights`.
  std::optional<DType> attention_weights;
  DType kv_cache = DType::bf16;     ///< bf16, fp16, fp8, int8
  DType activations = DType::bf16;  ///< bf16 or fp16: the type of activations and 16-bit math
  int prompt_tokens = 0;
  int output_tokens = 0;
  int batch_size = 1;  ///< sequences per replica
  /// The engine: its overheads and scheduler settings (memory utilization, KV block size, token
  /// budget, chunked prefill; the generic profile's defaults). Inference uses those; serving all.
  EngineProfile engine;
  KernelModel kernel;
};

/// One line of "where the time goes".
struct BreakdownItem {
  std::string phase;  ///< "prefill" or "decode" (one average decode step)
  std::string op;
  double time_s = 0;
  double share = 0;  ///< fraction of its phase
  Bound bound = Bound::memory;
  double flops = 0;
  double bytes = 0;
};

struct Assumption {
  std::string name;
  double value = 0;
  std::string unit;
  std::string source;
};

/// Per-GPU memory as a serving engine sees it. All figures in bytes.
struct MemoryResult {
  double capacity_bytes = 0;  ///< device memory
  double budget_bytes = 0;    ///< capacity · gpu_memory_utilization
  double weights_bytes = 0;
  double kv_cache_bytes = 0;  ///< the batch at its full context, in whole blocks
  /// Fixed per-sequence state of a hybrid model's Mamba-2 layers (SSM state in fp32, conv
  /// state), the batch's; it does not grow with the context.
  double state_bytes = 0;
  double state_bytes_per_sequence = 0;
  double activations_bytes = 0;  ///< peak live activations of one prefill chunk
  double reserve_bytes = 0;
  double free_bytes = 0;  ///< budget − everything above, ≥ 0
  bool fits = false;
  int max_batch_size = 0;               ///< largest batch at this context (0: not even one)
  int max_context_tokens = 0;           ///< longest prompt+output at this batch (0: none)
  double kv_cache_bytes_per_token = 0;  ///< per sequence, all layers, this GPU
};

/// An 80% band around a time, from the validation residuals of the ops' models.
struct Band {
  double low_s = 0;
  double high_s = 0;
};

struct InferenceResult {
  int tier = 0;                 ///< 2 when every compute/memory-bound op used a Tier-2 fit, else 0
  double tier2_time_share = 0;  ///< share of compute/memory-bound time priced by Tier-2 fits
  bool outside_calibrated_range = false;
  std::vector<std::string> uncalibrated_ops;
  Band ttft_band, tpot_band, e2e_band;
  double ttft_s = 0;
  double tpot_s = 0;
  double e2e_s = 0;
  double output_tokens_per_s = 0;
  double prefill_tokens_per_s = 0;
  int replicas = 1;
  ParamCounts params;
  MemoryResult memory;
  std::vector<BreakdownItem> breakdown;
  std::vector<Assumption> assumptions;
  std::vector<std::string> warnings;
};

/// Validates the spec (SpecError with the request's JSON paths) and estimates latency, throughput
/// and memory. Prefill of the batch runs in equal chunks of at most max_num_batched_tokens tokens,
/// each a forward step with its overhead; TTFT is when the last sequence gets its first token.
/// TPOT is the mean of the output_tokens − 1 decode steps as the context grows from prompt + 1 to
/// prompt + output − 1. "Does not fit" is a result (memory.fits), not an error.
InferenceResult estimate_inference(const InferenceSpec& spec);

/// A change that makes a setup fit that does not: its new layout and types, and the largest batch
/// it then holds at the request's context.
struct FitOption {
  int tp = 1;
  int num_gpus = 1;
  DType weights = DType::bf16;
  DType kv_cache = DType::bf16;
  int max_batch_size = 0;
};

/// What would make a setup that does not fit hold its batch, each change alone: the smallest
/// tensor parallelism within one node (GPUs added, replicas and stages kept), and fp8 weights
/// with an fp8 KV cache at the request's tp, else int4 weights with it; where neither alone does,
/// the smallest tensor parallelism with the narrower types. Changes the model or the hardware
/// cannot take (heads that tp does not divide, a type the GPU lacks) and those that still do not
/// fit are left out; empty when the setup fits. Memory only: nothing is priced.
std::vector<FitOption> fit_options(const InferenceSpec& spec);

/// The type of the attention projections: `attention_weights` where set, else `weights`.
inline DType attention_weight_type(const InferenceSpec& spec) {
  return spec.attention_weights.value_or(spec.weights);
}

/// How the MoE layers' tokens reach the experts: `moe_dispatch` where set; else all_to_all for
/// data-parallel attention with ep = tp over more than one node (where engines use DeepEP or a
/// wide-EP all-to-all), all_reduce otherwise.
inline MoeDispatch moe_dispatch_of(const InferenceSpec& spec) {
  if (spec.moe_dispatch) return *spec.moe_dispatch;
  const bool wide = spec.dp_attention && spec.attention_tp == 1 && spec.ep == spec.tp &&
                    spec.model.is_moe() && spec.tp > spec.hardware.gpus_per_node;
  return wide ? MoeDispatch::all_to_all : MoeDispatch::all_reduce;
}

/// Dense FFN layers and shared experts run data-parallel (each GPU its own tokens through whole
/// weights, no exchange) under the all_to_all dispatch: its MoE layers never gather the tokens,
/// and engines that run it do the same for the dense layers (TensorRT-LLM: attention DP makes
/// the MLPs DP too; vLLM's DP+EP ranks have tp 1; SGLang's --moe-dense-tp-size 1).
inline bool dense_data_parallel(const InferenceSpec& spec) {
  return spec.model.is_moe() && moe_dispatch_of(spec) == MoeDispatch::all_to_all;
}

/// A step holding prompt tokens sends its MoE tokens across the network once per remote node and
/// forwards them over NVLink inside it (DeepEP's normal kernels, moe_forwarded_bytes): the
/// all_to_all dispatch of a group that spans nodes. Decode-only steps send each token straight to
/// each GPU (its low-latency kernels) whatever the layout.
inline bool prefill_dispatch_forwarded(const InferenceSpec& spec) {
  return spec.model.is_moe() && moe_dispatch_of(spec) == MoeDispatch::all_to_all &&
         spec.tp > spec.hardware.gpus_per_node;
}

/// The fewest replicas of busy experts (parallelism.redundant_experts, EPLB) that let `groups`
/// expert-parallel groups hold `experts` routed experts in equal slots: 32 for 256 over 72.
inline int fewest_redundant_experts(int experts, int groups) {
  return groups > 0 ? (groups - experts % groups) % groups : 0;
}

/// Buffer one GPU sends in an all-to-all dispatch of its `tokens` to the GPUs that hold their
/// experts, each token sent once to each of the `ranks` GPUs that holds at least one of its k
/// experts (DeepEP and TensorRT-LLM deduplicate per rank). A rank holds E/ranks of the E experts;
/// the k are distinct, so it holds none of them with probability Π_{i<k} (E − E/ranks − i)/(E − i),
/// and a token goes to ranks·(1 − that) GPUs on average: 5.29 of 8 for E 256, k 8 at 8 ranks,
/// 7.27 of 32 at 32. The collective model sends (ranks − 1)/ranks of it off the GPU.
/// Group-limited routing (model.expert_groups G, expert_groups_per_token M) draws the k among the
/// E·M/G experts of the token's M groups: where G divides ranks only the ranks·M/G GPUs of those
/// groups can be reached (DeepSeek-V3, G 8, M 4: 3.63 of 8, 5.34 of 16, 6.59 of 32); where ranks
/// divides G a GPU holds G/ranks whole groups, j of them the token's with hypergeometric odds.
/// Otherwise, and with `redundant_experts` (the E + r slots stand in for the experts: a replica
/// is one more place a token's expert can be; the load balancer picks one), the draw is uniform.
double moe_dispatch_bytes(const ModelSpec& m, int ranks, double tokens, double bytes_per_element,
                          int redundant_experts = 0);

/// Bytes the scale-out network carries per GPU when `tokens` of one GPU are dispatched over
/// `ranks` GPUs on nodes of `gpus_per_node` (ranks a multiple of it) once per remote node that
/// holds one of their experts, then forwarded over NVLink inside it (DeepEP's normal kernels; the
/// DeepSeek-V3 report, section 3.2.2: "once it arrives at the target node, we ... forward it via
/// NVLink to specific GPUs"): tokens · remote nodes reached · hidden · bytes per element. The
/// nodes reached are moe_dispatch_bytes's ranks reached with the nodes as the ranks, and a token
/// is at home on 1 / nodes of them: DeepSeek-V3 over 4 nodes of 8, 2.93 nodes reached, 2.20
/// remote (where a per-GPU spread sends 24/32 of 6.60 GPUs' copies, 4.95, off the node).
double moe_forwarded_bytes(const ModelSpec& m, int ranks, int gpus_per_node, double tokens,
                           double bytes_per_element, int redundant_experts = 0);

/// Per-GPU weight bytes under tensor parallelism (linear layers in the weight type, embeddings,
/// LM head, norms and router in the activation type; int4 carries one fp16 scale per 128 weights).
double weight_bytes_per_gpu(const InferenceSpec& spec);

/// Dollars per million tokens of `gpus` GPUs rented at `usd_per_gpu_hour` that together produce
/// `tokens_per_s`: usd_per_gpu_hour · gpus / 3600 s · 10^6 / tokens_per_s. 0 without a price or
/// tokens (nothing to divide).
double usd_per_million_tokens(double usd_per_gpu_hour, int gpus, double tokens_per_s);

/// KV-cache bytes per token on one GPU, averaged over a sequence of `context_tokens` (whole
/// blocks): every layer's for full attention; a local layer holds at most its window, so for
/// models with local layers the figure falls as the context grows.
double kv_cache_bytes_per_token(const InferenceSpec& spec, double context_tokens);

/// One prefill chunk of a serving step: `new_tokens` prompt tokens computed now, after
/// `cached_tokens` of the same sequence already in the KV cache (earlier chunks, a cached prefix).
struct PrefillChunk {
  int new_tokens = 0;
  int cached_tokens = 0;
};

/// The work of one forward step of a continuous-batching engine on one replica.
struct StepShape {
  const PrefillChunk* prefills = nullptr;  ///< num_prefills chunks
  int num_prefills = 0;
  int decode_sequences = 0;          ///< sequences generating in this step
  double decode_context_tokens = 0;  ///< their cached tokens, summed
  int tokens_per_decode = 1;         ///< 1; k + 1 for a speculative verify step
};

/// Time of one mixed forward step, for serving simulators: the per-step cost API of the same
/// kernel model as estimate_inference (Tier-2 fits included). Mixed steps are additive:
///
///   t = dense(T) + head(b) + Σ_chunks prefill_attention + decode_attention(b_d, mean context)
///       + step_overhead,
///
/// where T is every new token of the step (prefill chunks + decode tokens), b the sequences that
/// sample a token, dense(T) the token-proportional ops (embedding, QKV, O, MLP or MoE experts,
/// norms and elementwise, TP all-reduces, final norm) and head(b) the LM head with its TP gather.
/// A pure decode step of b sequences at context c gives exactly estimate_inference's decode step;
/// a prefill chunk of q tokens after c cached ones attends to c + its own causal triangle: the
/// step's chunks are priced as one varlen attention kernel of n chunks of the mean length, scaled
/// by the FLOP ratio Σ q(q + 1 + 2c) / (n · q̄(q̄ + 1)).
/// dense(T) is memoized per token count, so a simulator pays for each distinct T once; the model
/// is therefore not thread-safe (copy it per thread: copies share nothing mutable).
class StepTimeModel {
 public:
  /// Validates the spec as estimate_inference does (its workload fields are not used).
  /// `moe_expert_time_factor` scales the MoE expert op (load imbalance: the busiest GPU).
  explicit StepTimeModel(const InferenceSpec& spec, double moe_expert_time_factor = 1.0);
  StepTimeModel(const StepTimeModel& other);
  StepTimeModel& operator=(const StepTimeModel& other);
  ~StepTimeModel();

  [[nodiscard]] double step_time_s(const StepShape& step);
  /// Token-proportional ops of a step of `tokens` new tokens (memoized up to 65,536 tokens);
  /// `prefill`: the step holds prompt tokens (their MoE dispatch differs across nodes).
  [[nodiscard]] double dense_time_s(int tokens, bool prefill);
  /// LM head (and its TP all-gather) for `sequences` sampled sequences.
  [[nodiscard]] double head_time_s(int sequences);
  [[nodiscard]] double prefill_attention_s(const PrefillChunk& chunk) const;
  [[nodiscard]] double decode_attention_s(int sequences, double mean_context_tokens) const;
  [[nodiscard]] double step_overhead_s() const;
  /// 2 when every compute/memory-bound op of a reference step used a Tier-2 fit, else 0.
  [[nodiscard]] int tier() const;
  [[nodiscard]] const InferenceSpec& spec() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flopcast
