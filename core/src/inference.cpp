// SPDX-License-Identifier: MIT
#include "flopcast/inference.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "flopcast/collective.hpp"
#include "flopcast/error.hpp"
#include "layer_ops.hpp"
#include "physical.hpp"

namespace flopcast {
namespace {

/// NVIDIA Turing and Ampere have no FP8 tensor cores but run fp8 checkpoints weight-only (W8A16):
/// vLLM's FP8 Marlin kernels dequantize the weights inside the 16-bit GEMM ("FP8 models will run
/// on compute capability >= 7.5 (Turing) as weight-only W8A16, utilizing FP8 Marlin", vLLM docs,
/// Quantization, FP8 W8A8).
bool fp8_weight_only(const HardwareSpec& hw) {
  return !hw.peak(DType::fp8) && hw.vendor == "nvidia" &&
         (hw.architecture == "turing" || hw.architecture == "ampere");
}

constexpr int kMaxDecodeBins = 64;  // decode steps are averaged over at most this many bins

/// The layout of the tp · pp GPUs of a replica: tp, DP attention and its groups.
void validate_layout(const InferenceSpec& s) {
  const ModelSpec& m = s.model;
  // Checks of tp come before num_gpus: a bad tp must be blamed on tp, not on a good num_gpus.
  check_int("parallelism.tp", s.tp, 1, 1024);
  layer_ops::check_tensor_parallel_nodes(
      s.tp, s.hardware.gpus_per_node, s.hardware.scaleout_nics_per_node, "hardware.gpus_per_node");
  if (s.dp_attention && s.tp < 2) {
    fail("parallelism.dp_attention",
         "needs parallelism.tp > 1, the GPUs attention is data-parallel over",
         "true, with tp " + std::to_string(s.tp));
  }
  check_int("parallelism.attention_tp", s.attention_tp, 1, 1024);
  if (s.attention_tp > 1) {
    if (!s.dp_attention) {
      fail("parallelism.attention_tp",
           "needs parallelism.dp_attention: it is the size of each data-parallel attention group",
           s.attention_tp);
    }
    if (s.tp % s.attention_tp != 0 || s.attention_tp == s.tp) {
      fail("parallelism.attention_tp",
           "must divide parallelism.tp (" + std::to_string(s.tp) +
               ") and be smaller: tp / attention_tp data-parallel attention groups",
           s.attention_tp);
    }
    // The group splits the heads as tensor parallelism does; nothing else.
    layer_ops::check_tensor_parallel(m, s.attention_tp, "parallelism.attention_tp",
                                     {true, false, 1});
  }
}

/// Expert parallelism, its redundant slots and how the tokens reach the experts.
void validate_experts(const InferenceSpec& s) {
  const ModelSpec& m = s.model;
  check_int("parallelism.ep", s.ep, 1, 1024);
  if (s.redundant_experts != 0) {
    if (!m.is_moe()) {
      fail("parallelism.redundant_experts", "needs a MoE model (model.num_experts > 1)",
           s.redundant_experts);
    }
    check_int("parallelism.redundant_experts", s.redundant_experts, 0, m.num_experts);
    if (s.ep < 2) {
      fail("parallelism.redundant_experts",
           "needs parallelism.ep > 1: the replicas of busy experts go to other GPUs of the "
           "expert-parallel group",
           s.redundant_experts);
    }
  }
  if (s.ep > 1) {
    if (!m.is_moe()) fail("parallelism.ep", "needs a MoE model (model.num_experts > 1)", s.ep);
    if (s.tp % s.ep != 0) {
      fail("parallelism.ep",
           "must divide parallelism.tp (" + std::to_string(s.tp) +
               "): the experts are sharded over the replica's tp GPUs",
           s.ep);
    }
    const int slots = m.num_experts + s.redundant_experts;
    if (slots % s.ep != 0) {
      fail("parallelism.ep",
           s.redundant_experts > 0
               ? "must divide model.num_experts + parallelism.redundant_experts (" +
                     std::to_string(slots) + ")"
               : "must divide model.num_experts (" + std::to_string(m.num_experts) +
                     "), or add parallelism.redundant_experts so that it divides the slots",
           s.ep);
    }
  }
  if (s.moe_dispatch == MoeDispatch::all_to_all && s.attention_tp > 1) {
    throw NotModelledError("parallelism.moe_dispatch",
                           "all_to_all with attention groups (parallelism.attention_tp " +
                               std::to_string(s.attention_tp) +
                               ") is not modelled: the group's o_proj partial sums would need "
                               "their own reduction before the dispatch; use all_reduce or "
                               "attention_tp 1");
  }
  if (s.moe_dispatch == MoeDispatch::all_to_all && !(s.dp_attention && s.ep == s.tp)) {
    fail("parallelism.moe_dispatch",
         "all_to_all needs parallelism.dp_attention and parallelism.ep = tp (each GPU's own "
         "tokens sent to the GPUs of their experts)",
         "all_to_all, with dp_attention " + std::string(s.dp_attention ? "true" : "false") +
             ", tp " + std::to_string(s.tp) + ", ep " + std::to_string(s.ep));
  }
}

/// The weights', KV cache's and activations' types against what the hardware runs.
void validate_precision(const InferenceSpec& s) {
  check_dtype("precision.weights", s.weights, kWeightTypes);
  check_dtype("precision.kv_cache", s.kv_cache, kKvCacheTypes);
  if (s.kv_cache == DType::fp4 && !s.hardware.peak(DType::fp4)) {
    fail("precision.kv_cache",
         "an fp4 (NVFP4) KV cache needs FP4 tensor cores (TensorRT-LLM on Blackwell); the "
         "hardware has no dense fp4 peak",
         "fp4");
  }
  check_dtype("precision.activations", s.activations, kActivationTypes);
  if (!s.hardware.peak(s.activations)) {
    fail("precision.activations",
         "the hardware has no dense " + std::string(to_string(s.activations)) +
             " peak (hardware.dense_peak_TFLOPS); choose a type it supports",
         std::string(to_string(s.activations)));
  }
  // fp8 linears, of the FFNs or of attention, run W8A8 on FP8 tensor cores, or weight-only
  // (W8A16, vLLM's FP8 Marlin) on NVIDIA Turing and Ampere; MXFP8 ones need tensor cores that
  // apply its block scales.
  auto check_fp8_peak = [&](const std::string& path, DType t) {
    if (t == DType::fp8 && !s.hardware.peak(DType::fp8) && !fp8_weight_only(s.hardware)) {
      fail(path,
           "fp8 needs FP8 tensor cores (W8A8) or an NVIDIA Turing or Ampere GPU (weight-only "
           "W8A16, vLLM's FP8 Marlin); the hardware has neither (no dense fp8 peak, "
           "hardware.architecture \"" +
               s.hardware.architecture + "\")",
           "fp8");
    }
    if (t == DType::mxfp8 && !s.hardware.peak(DType::fp8)) {
      fail(path, "mxfp8 (W8A8) needs FP8 tensor cores; the hardware has no dense fp8 peak",
           "mxfp8");
    }
    check_block_scaled(s.hardware, t, path);
  };
  check_fp8_peak("precision.weights", s.weights);
  if (s.attention_weights) {
    const DType t = *s.attention_weights;
    check_dtype("precision.attention_weights", t, kAttentionWeightTypes);
    if (is_gguf(s.weights)) {
      fail("precision.attention_weights",
           "a GGUF file's types are its own (precision.weights " +
               std::string(to_string(s.weights)) + "); leave this key out",
           std::string(to_string(t)));
    }
    check_fp8_peak("precision.attention_weights", t);
  }
}

void validate(const InferenceSpec& s) {
  validate(s.model, "model");
  if (s.model.is_hybrid() && s.dp_attention) {
    throw NotModelledError("parallelism.dp_attention",
                           "data-parallel attention in a hybrid model (model.layer_pattern) is not "
                           "modelled (got true)");
  }
  validate(s.hardware, "hardware");
  const ModelSpec& m = s.model;
  validate_layout(s);
  validate_experts(s);
  // What the tp GPUs split: not the heads under DP attention, not the dense FFNs and shared
  // experts where they run data-parallel, each expert's width over tp / ep.
  layer_ops::check_tensor_parallel(m, s.tp, "parallelism.tp",
                                   {!s.dp_attention, !dense_data_parallel(s), s.tp / s.ep});
  check_int("parallelism.pp", s.pp, 1, m.num_layers);
  check_int("num_gpus", s.num_gpus, 1, 1'000'000);
  if (s.num_gpus % (s.tp * s.pp) != 0) {
    fail("num_gpus",
         (s.pp == 1 ? "must be a multiple of parallelism.tp ("
                    : "must be a multiple of parallelism tp·pp (") +
             std::to_string(s.tp * s.pp) + ")",
         s.num_gpus);
  }
  validate_precision(s);
  check_int("workload.prompt_tokens", s.prompt_tokens, 1, 100'000'000);
  check_int("workload.output_tokens", s.output_tokens, 1, 100'000'000);
  check_int("workload.batch_size", s.batch_size, 1, 1'000'000);
  const long long context = static_cast<long long>(s.prompt_tokens) + s.output_tokens;
  if (context > m.max_context_tokens) {
    throw SpecError("workload.prompt_tokens",
                    "prompt_tokens + output_tokens must be <= model.max_context_tokens (" +
                        std::to_string(m.max_context_tokens) + ") (got " +
                        std::to_string(s.prompt_tokens) + " + " + std::to_string(s.output_tokens) +
                        " = " + std::to_string(context) + ")");
  }
  validate(s.engine, "engine");
}

/// One tensor-parallel shard, and the kernel model that prices its ops.
struct Shard {
  ModelSpec model;
  int tp = 1;
  double h, vocab;
  double a;       // activation bytes
  double w;       // linear-layer weight bytes per element, scales included
  double attn_w;  // the same for the attention projections
  double kv;      // KV-cache bytes per element
  GemmTypes linear;
  GemmTypes attn_linear;  // attention projections: `linear` unless the checkpoint keeps them apart
  GemmTypes experts;      // routed experts: `linear`, save the kernel family (make_shard)
  GemmTypes dense16;      // router (and LM head): 16-bit weights in every quantization scheme
  GemmTypes head;  // LM head (its weight bytes size the embedding too): dense16, but quantized
                   // like the linears in a GGUF file
  DType attn_math;
  KernelModel km;  // the spec's, with decode attention reading the engine's KV blocks
  std::vector<LayerKind> kinds;
  std::vector<layer_ops::LinearShape> attn_linears;       // per layer, every kind alike
  std::vector<layer_ops::LinearShape> recurrent_linears;  // per fixed-state layer
  double state_bytes = 0;  // one sequence's fixed state, all layers of the stage, per GPU
  double kv_elems;         // per token and layer on the GPU that holds the token's KV
  double kv_index_bytes;   // DSA's index key per token and layer, beside the KV (0 without)
  double stage_share = 1;  // layers of the largest pipeline stage / all layers
  /// Data-parallel attention groups: tp / attention_tp under parallelism.dp_attention (each
  /// group runs attention for its own sequences, heads split over its attention_tp GPUs), else
  /// 1 (attention heads split over tp).
  int dp = 1;
  /// Dense FFNs and shared experts data-parallel (dense_data_parallel): own tokens, whole weights.
  bool dense_dp = false;

  int attention_tp() const { return tp / dp; }
  AttentionTypes attention_types() const { return {attn_math, a, kv}; }
  AttentionDims attention(bool local, bool decode) const {
    return layer_ops::attention_dims(model, attention_tp(), local, decode);
  }
  /// Sequences (or tokens) of `n` in the replica that the busiest GPU's attention handles: all of
  /// them under TP; ceil(n / dp) under data-parallel attention (a fraction of one stays).
  double attention_share(double n) const { return dp > 1 && n > 1 ? std::ceil(n / dp) : n; }
};

Shard make_shard(const InferenceSpec& s) {
  const ModelSpec& m = s.model;
  Shard sh{};
  sh.model = s.model;
  sh.tp = s.tp;
  sh.h = m.hidden_size;
  sh.vocab = std::ceil(static_cast<double>(m.vocab_size) / s.tp);
  sh.a = bytes_per_element(s.activations);
  sh.w = stored_bytes_per_element(s.weights);
  sh.attn_w = stored_bytes_per_element(attention_weight_type(s));
  sh.kv = stored_bytes_per_element(s.kv_cache);
  // W8A8 fp8 and mxfp8 where the GPU has FP8 tensor cores, and W4A4 fp4 where it has FP4 ones
  // (activations quantized to the weights' format); every other scheme is weight-only: 16-bit
  // math on dequantized weights (fp8 on Turing and Ampere: vLLM's FP8 Marlin, W8A16).
  auto linear_types = [&](DType weights, double stored) {
    // MXFP4 (gpt-oss's experts) multiplies MXFP8 activations on Blackwell's tensor cores and
    // dequantized 16-bit ones elsewhere: TensorRT-LLM's gpt-oss guide (MoE backend TRTLLM, MXFP8
    // x MXFP4, on B200/GB200/B300/GB300; Triton, BF16 x MXFP4, on Hopper). No engine requantizes
    // its activations to MXFP4.
    if (weights == DType::mxfp4) {
      return s.hardware.peak(DType::fp4)
                 ? GemmTypes{DType::fp8, stored, stored_bytes_per_element(DType::mxfp8), sh.a,
                             KernelVariant::weight_mxfp4}
                 : GemmTypes{s.activations, stored, sh.a, sh.a, KernelVariant::weight_mxfp4};
    }
    const DType math = math_type(weights);
    const bool low_precision_math = (math == DType::fp8 && s.hardware.peak(DType::fp8)) ||
                                    (math == DType::fp4 && s.hardware.peak(DType::fp4));
    // A block-scaled FP8 checkpoint run as published takes the engines' block-scaled kernels
    // (DeepGEMM, CUTLASS/vLLM fp8 block): their own fits.
    const KernelVariant variant = math == DType::fp8 && weights == m.checkpoint_weights &&
                                          m.checkpoint_weight_scaling == WeightScaling::block
                                      ? KernelVariant::block_scaled
                                      : KernelVariant::plain;
    return low_precision_math ? GemmTypes{math, stored, stored, sh.a, variant}
                              : GemmTypes{s.activations, stored, sh.a, sh.a};
  };
  sh.linear = linear_types(s.weights, sh.w);
  sh.attn_linear = linear_types(attention_weight_type(s), sh.attn_w);
  sh.dense16 = GemmTypes{s.activations, sh.a, sh.a, sh.a};
  // llama.cpp quantizes the token embedding and output matrices too (Q4_K_M: q4_k and q6_k);
  // the GGUF bits per weight are the whole file's average.
  if (is_gguf(s.weights)) {
    sh.linear.variant = KernelVariant::weight_gguf;
    sh.attn_linear = sh.linear;
  }
  sh.head = is_gguf(s.weights) ? sh.linear : sh.dense16;
  // Block-scaled experts behind DeepEP's all-to-all run DeepGEMM's grouped GEMMs in SGLang and
  // vLLM, not the fused MoE kernels the tables measured with block scales (fused_moe_triton):
  // priced as the per-tensor kernels, the fastest measured FP8 MoE of the engine.
  sh.experts = sh.linear;
  if (sh.experts.variant == KernelVariant::block_scaled && m.is_moe() &&
      moe_dispatch_of(s) == MoeDispatch::all_to_all &&
      (s.kernel.framework == Framework::sglang || s.kernel.framework == Framework::vllm)) {
    sh.experts.variant = KernelVariant::plain;
  }
  sh.attn_math = s.activations;
  sh.km = s.kernel;
  sh.km.kv_page_tokens = s.engine.kv_block_tokens;
  sh.kinds = layer_kinds(m);
  sh.dp = s.dp_attention ? std::max(1, s.tp / std::max(1, s.attention_tp)) : 1;
  sh.dense_dp = dense_data_parallel(s);
  sh.attn_linears = layer_ops::attention_linears(m, sh.attention_tp());
  sh.kv_elems = layer_ops::kv_elements_per_token(m, sh.attention_tp());
  sh.kv_index_bytes = layer_ops::attention_dims(m, sh.attention_tp(), false, true).index_bytes;
  sh.stage_share = std::ceil(double(m.num_layers) / s.pp) / m.num_layers;
  if (m.has_recurrent()) {
    sh.recurrent_linears = layer_ops::recurrent_linears(m, s.tp);
    sh.state_bytes = sh.stage_share * count_params(m).recurrent_layers *
                     layer_ops::recurrent_state_bytes(m, s.tp, sh.a);
  }
  return sh;
}

/// Work of one forward step.
struct Step {
  double tokens = 0;       // T: new tokens in the step
  double sequences = 0;    // b
  double new_per_seq = 0;  // prefill: prompt length; decode: 1
  double context = 0;      // decode: tokens attended per sequence
  bool prefill = false;
  /// Sequences the busiest GPU attends for (under DP attention); < 0: its share of `sequences`.
  double attention_sequences = -1;
};

/// The FFN of one kind of layer for `t` tokens: its GEMMs (a dense FFN; or the routed experts
/// then the shared experts) and its elementwise ops.
struct FfnOps {
  std::vector<OpCost> gemms;
};

/// The ops whose work follows the step's new tokens `t`: all but attention and the LM head's
/// GEMM. One place for step_ops and StepTimeModel (dense_ops_s), which sum them differently.
struct TokenOps {
  OpCost embedding;                       ///< once per step
  std::vector<OpCost> attn_linears;       ///< per layer: q/k/v projections, o_proj
  std::vector<OpCost> recurrent_linears;  ///< per fixed-state layer: in_proj, …, out_proj
  std::optional<OpCost> recurrent_scan;   ///< per recurrent layer, prefill: conv1d, scan, norm
  FfnOps dense, moe;                      ///< per dense / MoE layer (those the model has)
  /// Per layer kind (in the order of Shard::kinds): its fused add+norm (two in a transformer
  /// layer, one in a hybrid model's), rotary where it attends, the activation function where it
  /// has an FFN.
  std::vector<OpCost> elementwise;
  std::optional<OpCost> tp_all_reduce;   ///< tp > 1: one of the two per layer
  std::optional<OpCost> moe_all_to_all;  ///< MoeDispatch::all_to_all: dispatch (= combine)
  OpCost final_norm;                     ///< once per step, over every token
  bool dense_data_parallel = false;      ///< dense layers exchange nothing (Shard::dense_dp)
  const FfnOps& ffn(const LayerKind& k) const { return k.moe ? moe : dense; }
  /// The tokens' exchange of a layer of kind `k`, one of the two per layer (none at tp 1, nor in
  /// a data-parallel dense layer).
  const std::optional<OpCost>& exchange(const LayerKind& k) const {
    static const std::optional<OpCost> none;
    if (k.moe) return moe_all_to_all ? moe_all_to_all : tp_all_reduce;
    return dense_data_parallel ? none : tp_all_reduce;
  }
  /// Exchanges of a layer of kind `k`: two (after attention and after the FFN, or the MoE
  /// dispatch and combine), one for a hybrid model's single-block layer unless it dispatches.
  double exchanges(const LayerKind& k, bool hybrid) const {
    return !hybrid || (k.moe && moe_all_to_all) ? 2 : 1;
  }
};

/// `prefill`: the step holds prompt tokens (DeepEP's normal kernels dispatch it; decode-only
/// steps run its low-latency ones, which send each token straight to each GPU).
TokenOps token_ops(const InferenceSpec& s, const Shard& sh, double t, bool prefill) {
  const HardwareSpec& hw = s.hardware;
  const KernelModel& km = sh.km;
  const ModelSpec& m = s.model;
  TokenOps ops;
  ops.embedding = memory_op("embedding", hw, km, Flops(0), Bytes(2 * t * sh.h * sh.a), 1);
  const double t_attn = sh.attention_share(t);  // the busiest GPU's tokens under DP attention
  for (const auto& l : sh.attn_linears) {
    ops.attn_linears.push_back(gemm_op(l.name, hw, km, t_attn, l.n, l.k, sh.attn_linear));
  }
  // Two fused add+norm (read x and residual, write both) and rotary, on the tokens attention
  // handles (under DP attention a GPU's own: the engines gather after the second norm); then per
  // FFN kind the activation function.
  const double rope = t_attn * layer_ops::rope_elements_per_token(m, sh.attention_tp());
  const double blocks = m.blocks_per_layer();
  for (const LayerKind& k : sh.kinds) {
    const double act_fn_elems = k.ffn ? t * layer_ops::activation_fn_elements(m, k.moe, s.tp) : 0;
    const double rotary = k.mixer == Mixer::attention ? 2 * rope : 0;
    ops.elementwise.push_back(
        memory_op("norm_elementwise", hw, km, Flops(blocks * 8 * t_attn * sh.h + act_fn_elems),
                  Bytes(sh.a * (blocks * 4 * t_attn * sh.h + rotary + act_fn_elems)),
                  2 * static_cast<int>(blocks)));
  }
  for (const auto& l : sh.recurrent_linears) {
    ops.recurrent_linears.push_back(gemm_op(l.name, hw, km, t, l.n, l.k, sh.linear));
  }
  if (m.has_recurrent()) {
    ops.recurrent_scan =
        layer_ops::recurrent_op(hw, km, m, s.tp, sh.a, t, layer_ops::RecurrentPass::forward);
  }
  const bool has_dense = std::any_of(sh.kinds.begin(), sh.kinds.end(),
                                     [](const LayerKind& k) { return k.ffn && !k.moe; });
  // Dense FFNs and shared experts: split over tp for all the step's tokens, or data-parallel,
  // the busiest GPU's own tokens through whole weights.
  const int dense_tp = sh.dense_dp ? 1 : s.tp;
  const double t_dense = sh.dense_dp ? t_attn : t;
  ops.dense_data_parallel = sh.dense_dp;
  if (has_dense) {
    for (const auto& l : layer_ops::ffn_linears(m, m.dense_ffn_width(), dense_tp, "mlp")) {
      ops.dense.gemms.push_back(gemm_op(l.name, hw, km, t_dense, l.n, l.k, sh.linear));
    }
  }
  if (m.is_moe()) {
    // ep groups of whole experts, each expert's width split over the tp / ep GPUs of a group.
    ops.moe.gemms.push_back(moe_experts_op(hw, km, t, m.expert_hidden(),
                                           double(m.intermediate_size) * s.ep / s.tp, m.num_experts,
                                           m.experts_per_token, m.ffn == FfnKind::gated, sh.experts,
                                           sh.dense16, s.ep, s.redundant_experts));
    if (m.shared_experts > 0) {
      for (const auto& l : layer_ops::ffn_linears(
               m, double(m.shared_experts) * m.shared_expert_width(), dense_tp, "shared_experts")) {
        ops.moe.gemms.push_back(gemm_op(l.name, hw, km, t_dense, l.n, l.k, sh.linear));
      }
    }
    // LatentMoE: every GPU projects all the step's tokens into the latent and back (duplicated).
    for (const auto& l : layer_ops::latent_linears(m)) {
      ops.moe.gemms.push_back(gemm_op(l.name, hw, km, t, l.n, l.k, sh.linear));
    }
  }
  if (s.tp > 1) ops.tp_all_reduce = all_reduce_op("tp_comm", hw, km, Bytes(t * sh.h * sh.a), s.tp);
  if (m.is_moe() && moe_dispatch_of(s) == MoeDispatch::all_to_all) {
    // The busiest GPU's own tokens (data-parallel attention) go out to their experts' GPUs and
    // their expert outputs come back the same way: two all-to-alls per MoE layer. The tokens
    // travel in the format the expert GEMMs read (quantized before the dispatch: DeepEP's FP8
    // dispatch with its per-128 scales, TensorRT-LLM's NVFP4 one) and return in the
    // activations' type (BF16 combine): both priced at their mean element size.
    const double own = sh.attention_share(t);
    const double bytes = 0.5 * (sh.linear.input_bytes + sh.a);
    const double spread = moe_dispatch_bytes(m, s.tp, own, bytes, s.redundant_experts);
    const int per_node = hw.gpus_per_node;
    if (prefill && prefill_dispatch_forwarded(s)) {
      // Across nodes a prefill step crosses the network once per remote node and is forwarded
      // over NVLink inside it (moe_forwarded_bytes); NVLink delivers the copies to other GPUs.
      ops.moe_all_to_all = forwarded_all_to_all_op(
          "ep_all_to_all", hw, km, Bytes(spread * (per_node - 1) / per_node),
          Bytes(moe_forwarded_bytes(m, s.tp, per_node, own, bytes, s.redundant_experts)), s.tp);
    } else {
      ops.moe_all_to_all = all_to_all_op("ep_all_to_all", hw, km, Bytes(spread), s.tp);
    }
  }
  ops.final_norm = memory_op("lm_head", hw, km, Flops(0), Bytes(2 * t * sh.h * sh.a), 1);
  return ops;
}

/// One stage boundary of a pipeline: the step's `t` new tokens' hidden states sent to the next
/// stage, tp GPUs apart (another node when a stage fills one).
OpCost pipeline_send_op(const InferenceSpec& s, double t) {
  ClusterSpec c = cluster_of(s.hardware);
  c.gpus_per_node = std::max(1, s.hardware.gpus_per_node / s.tp);
  const double bytes = t * s.model.hidden_size * bytes_per_element(s.activations);
  OpCost op;
  op.name = "pp_send_recv";
  op.bytes = Bytes(bytes);
  op.bound = Bound::communication;
  op.time = estimate_collective(CollectiveKind::send_recv, Bytes(bytes), 2, c, s.kernel).time;
  op.kernels = 1;
  return op;
}

/// Without CUDA graphs (engine.cuda_graphs false) the CPU launches a step's kernels one by one;
/// where launching them takes longer than running them, the GPU waits the difference.
OpCost eager_launch_op(const EngineProfile& e, double kernels, double gpu_s) {
  OpCost op;
  op.name = "eager_launch";
  op.bound = Bound::overhead;
  op.time = Seconds(std::max(0.0, kernels * e.eager_launch_s - gpu_s));
  return op;
}

/// The kernels of `ops` and their time.
std::pair<double, double> kernels_and_time(const std::vector<OpCost>& ops) {
  double kernels = 0, time = 0;
  for (const OpCost& op : ops) {
    kernels += op.kernels;
    time += op.time.value;
  }
  return {kernels, time};
}

/// `op` run `layers` times.
OpCost times_layers(OpCost op, double layers) {
  op.flops = op.flops * layers;
  op.bytes = op.bytes * layers;
  op.time = op.time * layers;
  op.kernels *= static_cast<int>(layers);
  return op;
}

/// The attention of every layer of kind `kind` in step `st`: the one op of a step whose cost
/// follows the context.
OpCost attention_op(const InferenceSpec& s, const Shard& sh, const LayerKind& kind,
                    const Step& st) {
  const AttentionDims dims = sh.attention(kind.local, !st.prefill);
  const double sequences =
      st.attention_sequences >= 0 ? st.attention_sequences : sh.attention_share(st.sequences);
  return times_layers(st.prefill ? attention_prefill_op(s.hardware, sh.km, sequences,
                                                        st.new_per_seq, dims, sh.attention_types())
                                 : attention_decode_op(s.hardware, sh.km, sequences, st.context,
                                                       dims, sh.attention_types()),
                      kind.count);
}

/// One Mamba-2 / gated DeltaNet layer's conv1d, scan and gated norm in step `st`: prefill scans the
/// new tokens in chunks; decode updates each sequence's fixed state (no growth with the context).
OpCost recurrent_op(const InferenceSpec& s, const Shard& sh, const TokenOps& tok, const Step& st) {
  if (st.prefill) return *tok.recurrent_scan;
  return layer_ops::recurrent_op(s.hardware, sh.km, s.model, s.tp, sh.a, st.sequences,
                                 layer_ops::RecurrentPass::decode);
}

/// Ops of one step, each already multiplied by its count per step (e.g. × layers).
/// `attention_at`, when given, receives the index in the result of each layer kind's attention
/// op (in the order of sh.kinds), so that a step at another context can swap in just those.
std::vector<OpCost> step_ops(const InferenceSpec& s, const Shard& sh, const Step& st,
                             std::vector<std::size_t>* attention_at = nullptr) {
  const HardwareSpec& hw = s.hardware;
  const KernelModel& km = sh.km;
  const TokenOps tok = token_ops(s, sh, st.tokens, st.prefill);
  std::vector<OpCost> ops;
  ops.reserve(10 * sh.kinds.size() + 4);
  auto per_layer = [&](const OpCost& op, double layers) {
    ops.push_back(times_layers(op, layers));
  };

  ops.push_back(tok.embedding);
  for (std::size_t k = 0; k < sh.kinds.size(); ++k) {
    const LayerKind& kind = sh.kinds[k];
    const double layers = kind.count;
    // Breakdown order: q/k/v projections, attention, o_proj (or the fixed-state mixer), FFN,
    // elementwise, TP (the accumulator sums ops of one name).
    if (kind.mixer == Mixer::attention) {
      for (const OpCost& op : tok.attn_linears) {
        if (op.name != "o_proj") per_layer(op, layers);
      }
      if (attention_at) attention_at->push_back(ops.size());
      ops.push_back(attention_op(s, sh, kind, st));
      for (const OpCost& op : tok.attn_linears) {
        if (op.name == "o_proj") per_layer(op, layers);
      }
    } else if (is_recurrent(kind.mixer)) {
      // in_proj (and Mamba-1's x_proj, dt_proj), the scan or state update, out_proj.
      const auto& linears = tok.recurrent_linears;
      for (std::size_t i = 0; i + 1 < linears.size(); ++i) per_layer(linears[i], layers);
      per_layer(recurrent_op(s, sh, tok, st), layers);
      per_layer(linears.back(), layers);
    }
    if (kind.ffn) {
      for (const OpCost& op : tok.ffn(kind).gemms) per_layer(op, layers);
    }
    per_layer(tok.elementwise[k], layers);
    if (const auto& exchange = tok.exchange(kind)) {
      const double n = tok.exchanges(kind, s.model.is_hybrid());
      OpCost ar = *exchange;
      ar.time = ar.time * n;
      ar.bytes = ar.bytes * n;
      ar.kernels *= static_cast<int>(n);
      per_layer(ar, layers);
    }
  }

  // Final norm over every token; logits only for the last token of each sequence.
  const OpCost& final_norm = tok.final_norm;
  OpCost lm_head = gemm_op("lm_head", hw, km, st.sequences, sh.vocab, sh.h, sh.head);
  lm_head.time += final_norm.time;
  lm_head.bytes += final_norm.bytes;
  lm_head.kernels += final_norm.kernels;
  ops.push_back(lm_head);
  if (s.tp > 1) {
    ops.push_back(
        all_gather_op("tp_comm", hw, km, Bytes(st.sequences * sh.vocab * s.tp * sh.a), s.tp));
  }

  if (s.pp > 1) {
    OpCost send = pipeline_send_op(s, st.tokens);
    send.time = send.time * (s.pp - 1.0);
    send.bytes = send.bytes * (s.pp - 1.0);
    send.kernels *= s.pp - 1;
    ops.push_back(send);
  }

  if (!s.engine.cuda_graphs) {
    const auto [kernels, gpu_s] = kernels_and_time(ops);
    ops.push_back(eager_launch_op(s.engine, kernels, gpu_s));
  }

  OpCost overhead;
  overhead.name = "engine_overhead";
  overhead.time = Seconds(s.engine.step_overhead_s);
  overhead.bound = Bound::overhead;
  ops.push_back(overhead);
  return ops;
}

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

/// Accumulates ops by name, in first-seen order, with a weight (steps represented).
struct Accumulator {
  std::vector<BreakdownItem> items;
  double low_s = 0;   // Σ weight · time · e^p10: the 80% band, errors taken as fully correlated
  double high_s = 0;  // Σ weight · time · e^p90
  double tier2_s = 0, tier0_s = 0;  // time of compute/memory-bound ops by tier
  bool outside_range = false;
  std::vector<std::string> uncalibrated;  // op names priced at Tier 0

  void add(const std::string& phase, const std::vector<OpCost>& ops, double weight) {
    // The decode bins pass the same op list again and again: the item of op k is where it was
    // last time, and its band factors are those of last time while its residuals are.
    slot_.resize(std::max(slot_.size(), ops.size()), 0);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const OpCost& op = ops[k];
      std::size_t& at = slot_[k];
      if (at >= items.size() || items[at].op != op.name) {
        at = static_cast<std::size_t>(
            std::find_if(items.begin(), items.end(),
                         [&](const BreakdownItem& i) { return i.op == op.name; }) -
            items.begin());
        if (at == items.size()) {
          items.push_back(BreakdownItem{phase, op.name, 0, 0, op.bound, 0, 0});
          factors_.push_back({});
        }
      }
      BreakdownItem& item = items[at];
      item.time_s += weight * op.time.value;
      item.flops += weight * op.flops.value;
      item.bytes += weight * op.bytes.value;
      if (op.bound == Bound::compute) item.bound = Bound::compute;
      // Where an op's measured errors lie: where they all lean one way (Tier 0 faster than every
      // measurement) its band lies on that side of the estimate.
      BandFactors& f = factors_[at];
      if (!f.valid || f.log_p10 != op.log_residual_p10 || f.log_p90 != op.log_residual_p90) {
        f = {true, op.log_residual_p10, op.log_residual_p90, std::exp(op.log_residual_p10),
             std::exp(op.log_residual_p90)};
      }
      low_s += weight * op.time.value * f.low;
      high_s += weight * op.time.value * f.high;
      outside_range = outside_range || op.outside_calibrated_range;
      const bool priced = op.bound == Bound::compute || op.bound == Bound::memory;
      if (!priced) continue;
      (op.tier == 2 ? tier2_s : tier0_s) += weight * op.time.value;
      if (op.tier == 0 && !f.uncalibrated) {
        f.uncalibrated = true;
        add_unique(uncalibrated, op.name);
      }
    }
  }

  double total() const {
    double t = 0;
    for (const auto& i : items) t += i.time_s;
    return t;
  }

  std::vector<BreakdownItem> finish(double scale) {
    const double sum = total();
    for (auto& i : items) {
      i.time_s *= scale;
      i.flops *= scale;
      i.bytes *= scale;
      i.share = sum > 0 ? i.time_s / (sum * scale) : 0;
    }
    return items;
  }

 private:
  struct BandFactors {  // e^min(p10, 0) and e^max(p90, 0) of an item's last residuals
    bool valid = false;
    double log_p10 = 0, log_p90 = 0, low = 1, high = 1;
    bool uncalibrated = false;  // its name is in `uncalibrated`
  };
  std::vector<BandFactors> factors_;  // per item
  std::vector<std::size_t> slot_;     // per op index of the last list: its item
};

/// The executor's host work of a step (`host_s`, host_step_s) overlaps the GPU; where it outlasts
/// the step's `step_s`, the GPU waits the difference, `weight` steps of it
/// (StepTimeModel::step_time_s takes the same maximum).
void add_host_wait(Accumulator& acc, double host_s, double step_s, double weight) {
  const double wait_s = host_s - step_s;
  if (wait_s <= 0) return;
  OpCost op;
  op.name = "host_per_sequence";
  op.bound = Bound::overhead;
  op.time = Seconds(wait_s);
  acc.add("decode", {op}, weight);
}

/// Layers that keep the whole context in the KV cache, and those that keep only their window.
std::pair<double, double> global_and_local_layers(const Shard& sh) {
  double global = 0, local = 0;
  for (const LayerKind& k : sh.kinds) {
    if (k.mixer == Mixer::attention) (k.local ? local : global) += k.count;
  }
  return {global, local};
}

/// KV bytes of one of the replica's tokens in every layer, per GPU (local layers count while
/// the context is within their window); under DP attention a GPU holds 1/dp of the tokens.
double kv_bytes_per_token(const Shard& sh) {
  const auto [global, local] = global_and_local_layers(sh);
  return sh.stage_share * (global + local) * (sh.kv_elems * sh.kv + sh.kv_index_bytes) / sh.dp;
}

/// KV cache of `batch` sequences of `context` tokens, in whole blocks; local layers hold at most
/// their window.
double kv_cache_bytes(const InferenceSpec& s, const Shard& sh, double batch, double context) {
  const auto [global, local] = global_and_local_layers(sh);
  const double per_layer_token = sh.kv_elems * sh.kv + sh.kv_index_bytes;
  auto blocks = [&](double tokens) { return std::ceil(tokens / s.engine.kv_block_tokens); };
  const double local_tokens = local_kv_tokens(context, s.model.window_tokens);
  return sh.stage_share * sh.attention_share(batch) * s.engine.kv_block_tokens * per_layer_token *
         (global * blocks(context) + local * blocks(local_tokens));
}

/// Peak live activations of one prefill chunk of `batch` prompts of `prompt` tokens: the chunk
/// holds min(batch · prompt, max_num_batched_tokens) tokens.
double activation_bytes(const InferenceSpec& s, const Shard& sh, double batch, double prompt) {
  const ModelSpec& m = s.model;
  const double t = std::min(batch * prompt, static_cast<double>(s.engine.max_num_batched_tokens));
  batch = std::min(batch, t);
  const AttentionDims at = sh.attention(false, false);
  const double attn_phase = sh.attention_share(t) * (2 * sh.h + at.heads * (at.qk_dim + at.v_dim) +
                                                     at.kv_heads * at.kv_elems);
  double ffn_phase = 0;  // the FFN's widest kind: [up, gate] then its output
  for (const LayerKind& k : sh.kinds) {
    ffn_phase = std::max(ffn_phase, t * layer_ops::activation_fn_elements(m, k.moe, s.tp));
  }
  const double mlp_phase = 2 * t * sh.h + ffn_phase;
  // A Mamba-2 / GDN layer: its input and the in_proj output (Mamba-2 z, x, B, C, dt), then the
  // scan's output.
  const double recurrent_phase =
      sh.recurrent_linears.empty() ? 0 : t * (2 * sh.h + sh.recurrent_linears.front().n);
  const double logits = batch * m.vocab_size * 4.0 * 2;  // fp32 logits + probabilities
  return sh.a * std::max({attn_phase, mlp_phase, recurrent_phase}) + logits;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

double usd_per_million_tokens(double usd_per_gpu_hour, int gpus, double tokens_per_s) {
  if (!(usd_per_gpu_hour > 0) || !(tokens_per_s > 0) || gpus < 1) return 0;
  return usd_per_gpu_hour * gpus / 3600.0 * 1e6 / tokens_per_s;
}

double weight_bytes_per_gpu(const InferenceSpec& s) {
  const ModelSpec& m = s.model;
  const Shard sh = make_shard(s);
  const ParamCounts pc = count_params(m);
  // Linear layers in the weight type, per GPU (what the kernels read) and in the whole model.
  const auto sum = layer_ops::linear_params;
  // Per GPU the shard's attention split (whole under data-parallel attention).
  auto attention = [&](int tp) {
    return pc.attention_layers *
           sum(layer_ops::attention_linears(m, tp == 1 ? 1 : sh.attention_tp()));
  };
  auto recurrent = [&](int tp) {
    return pc.recurrent_layers > 0 ? pc.recurrent_layers * sum(layer_ops::recurrent_linears(m, tp))
                                   : 0.0;
  };
  // The whole model's FFNs (tp 1), or one GPU's: every expert slot's width over tp (E/ep slots
  // each split over tp/ep GPUs), dense FFNs and shared experts over `dense_tp`.
  auto ffn = [&](int tp, int dense_tp, double experts) {
    const double dense = sum(layer_ops::ffn_linears(m, m.dense_ffn_width(), dense_tp, ""));
    const double expert = sum(layer_ops::expert_linears(m, tp, ""));
    const double shared = sum(layer_ops::ffn_linears(
        m, double(m.shared_experts) * m.shared_expert_width(), dense_tp, ""));
    return pc.dense_layers * dense + pc.moe_layers * (experts * expert + shared);
  };
  // Everything else stays in 16 bits: vocab-parallel embedding and LM head (in a GGUF file
  // quantized too), and replicated learned positions, norms, routers and biases (tiny). Under
  // pipeline parallelism a GPU of the largest stage holds that stage's layers and at most one of
  // embedding and LM head.
  const double vocab_matrix = double(m.vocab_size) * m.hidden_size;
  const double vocab_rows = sh.vocab * sh.h * (m.tie_embeddings || s.pp > 1 ? 1 : 2);
  // LatentMoE's projections: whole on every GPU, in the weights' type.
  const double latent = pc.moe_layers * sum(layer_ops::latent_linears(m));
  const double rest = pc.total - vocab_matrix * (m.tie_embeddings ? 1 : 2) - attention(1) -
                      recurrent(1) - ffn(1, 1, m.num_experts) - latent;
  const double ffn_per_gpu =
      ffn(s.tp, sh.dense_dp ? 1 : s.tp, double(m.num_experts) + s.redundant_experts) + latent;
  return sh.stage_share * (ffn_per_gpu * sh.w + attention(s.tp) * sh.attn_w +
                           recurrent(s.tp) * sh.w + rest * sh.a) +
         vocab_rows * sh.head.weight_bytes;
}

double kv_cache_bytes_per_token(const InferenceSpec& s, double context_tokens) {
  const double tokens = std::max(1.0, context_tokens);
  const Shard sh = make_shard(s);
  return kv_cache_bytes(s, sh, 1, tokens) / tokens / sh.dp;
}

namespace {

/// Prefill: the batch's b·s tokens in equal chunks of at most max_num_batched_tokens. A chunk
/// holds b/chunks sequences (a fraction when one prompt spans several chunks); summed over the
/// chunks, FLOPs and bytes are those of the whole batch. Without chunked prefill a chunk holds
/// whole prompts only, and one prompt longer than the budget runs alone. Pipelined, the chunks
/// flow through pp stages of 1/pp of the step each: the last leaves after (chunks + pp − 1)
/// stage times.
struct PrefillPass {
  Accumulator acc;
  double chunks = 1;
};

PrefillPass price_prefill(const InferenceSpec& spec, const Shard& sh) {
  const double b = spec.batch_size;
  const double s = spec.prompt_tokens;
  const double budget = spec.engine.max_num_batched_tokens;
  PrefillPass out;
  out.chunks = spec.engine.chunked_prefill ? std::ceil(b * s / budget)
                                           : std::ceil(b / std::max(1.0, std::floor(budget / s)));
  const double pp = spec.pp;
  Step prefill{b * s / out.chunks, b / out.chunks, s, s, true};
  // Under DP attention each GPU prefills its own prompts: the busiest one's ceil(b / dp) spread
  // over the chunks (a chunk's share of a sequence is not rounded up to a whole one).
  prefill.attention_sequences = sh.attention_share(b) / out.chunks;
  out.acc.add("prefill", step_ops(spec, sh, prefill), (out.chunks + pp - 1) / pp);
  return out;
}

/// Decode steps j = 1..n−1 attend to s + j tokens; averaged over at most kMaxDecodeBins bins,
/// each evaluated at its mean context and weighted by its step count. Only attention follows
/// the context: the other ops are priced once, for the first bin, and added once with the
/// steps of every bin.
struct DecodePass {
  Accumulator acc;
  long long steps = 0;            // n − 1
  long long evaluated_steps = 1;  // at least one: TPOT is defined at n = 1 too
  long long bins = 1;
};

DecodePass price_decode(const InferenceSpec& spec, const Shard& sh) {
  const double b = spec.batch_size;
  const double s = spec.prompt_tokens;
  const double pp = spec.pp;
  DecodePass out;
  out.steps = spec.output_tokens - 1;
  out.evaluated_steps = std::max<long long>(out.steps, 1);
  out.bins = std::min<long long>(out.evaluated_steps, kMaxDecodeBins);
  std::vector<OpCost> decode_ops;
  std::vector<std::size_t> attention_at;
  std::vector<OpCost> attention_ops;  // a later bin's: one per layer kind
  double later_steps = 0;             // steps of the bins after the first
  double fixed_s = 0;                 // the first bin's step less its attention and launch wait
  // Eager steps: a step's kernels, and the GPU time of those that do not follow the context.
  struct {
    double kernels = 0, rest_s = 0;
  } launch;
  for (long long i = 0; i < out.bins; ++i) {
    const long long first = 1 + i * out.evaluated_steps / out.bins;
    const long long last = (i + 1) * out.evaluated_steps / out.bins;  // inclusive
    const double count = static_cast<double>(last - first + 1);
    const double mean_context = s + 0.5 * static_cast<double>(first + last);
    // Pipelined, the batch runs as min(b, pp) micro-batches; each token crosses every stage.
    const double micro = b / std::min(b, pp);
    Step st{micro, micro, 1, mean_context, false};
    const double host_s = host_step_s(spec.engine, micro, sh.dp);
    if (i == 0) {
      decode_ops = step_ops(spec, sh, st, &attention_at);
      out.acc.add("decode", decode_ops, count);  // the first bin sets the breakdown's order
      const double step_s = kernels_and_time(decode_ops).second;
      fixed_s = step_s;  // less attention and the launch wait, re-priced in every later bin
      for (std::size_t k = 0; k < decode_ops.size(); ++k) {
        const bool attention =
            std::find(attention_at.begin(), attention_at.end(), k) != attention_at.end();
        if (attention || decode_ops[k].name == "eager_launch") fixed_s -= decode_ops[k].time.value;
        if (spec.engine.cuda_graphs) continue;
        launch.kernels += decode_ops[k].kernels;
        if (!attention && decode_ops[k].bound != Bound::overhead) {
          launch.rest_s += decode_ops[k].time.value;
        }
      }
      add_host_wait(out.acc, host_s, step_s, count);
      continue;
    }
    attention_ops.clear();
    for (const LayerKind& kind : sh.kinds) {
      if (kind.mixer == Mixer::attention) attention_ops.push_back(attention_op(spec, sh, kind, st));
    }
    if (!spec.engine.cuda_graphs) {
      // The launch wait follows the bin's attention: the other kernels are the first bin's.
      attention_ops.push_back(eager_launch_op(
          spec.engine, launch.kernels, launch.rest_s + kernels_and_time(attention_ops).second));
    }
    out.acc.add("decode", attention_ops, count);
    add_host_wait(out.acc, host_s, fixed_s + kernels_and_time(attention_ops).second, count);
    later_steps += count;
  }
  if (later_steps > 0) {
    for (auto k = attention_at.rbegin(); k != attention_at.rend(); ++k) {
      decode_ops.erase(decode_ops.begin() + static_cast<std::ptrdiff_t>(*k));
    }
    decode_ops.erase(std::remove_if(decode_ops.begin(), decode_ops.end(),
                                    [](const OpCost& op) { return op.name == "eager_launch"; }),
                     decode_ops.end());
    out.acc.add("decode", decode_ops, later_steps);
  }
  return out;
}

/// Times, rates, bands, tier and breakdown of the priced passes.
void fill_times(InferenceResult& r, const InferenceSpec& spec, PrefillPass& pre, DecodePass& dec) {
  const double b = spec.batch_size;
  const double steps = static_cast<double>(dec.steps);
  const double evaluated = static_cast<double>(dec.evaluated_steps);
  const double request_s = spec.engine.request_overhead_s;
  r.ttft_s = pre.acc.total() + request_s;
  r.tpot_s = dec.acc.total() / evaluated;
  r.e2e_s = r.ttft_s + steps * r.tpot_s;
  r.output_tokens_per_s = r.replicas * b * spec.output_tokens / r.e2e_s;
  r.prefill_tokens_per_s = r.replicas * b * spec.prompt_tokens / r.ttft_s;
  r.ttft_band = {pre.acc.low_s + request_s, pre.acc.high_s + request_s};
  r.tpot_band = {dec.acc.low_s / evaluated, dec.acc.high_s / evaluated};
  r.e2e_band = {r.ttft_band.low_s + steps * r.tpot_band.low_s,
                r.ttft_band.high_s + steps * r.tpot_band.high_s};
  const double tier0_s = pre.acc.tier0_s + dec.acc.tier0_s;
  const double priced_s = pre.acc.tier2_s + dec.acc.tier2_s + tier0_s;
  r.tier = tier0_s > 0 ? 0 : 2;  // the lowest tier of any priced op
  r.tier2_time_share = priced_s > 0 ? (pre.acc.tier2_s + dec.acc.tier2_s) / priced_s : 0;
  r.outside_calibrated_range = pre.acc.outside_range || dec.acc.outside_range;
  for (const Accumulator* acc : {&pre.acc, &dec.acc}) {
    for (const auto& name : acc->uncalibrated) add_unique(r.uncalibrated_ops, name);
  }
  r.breakdown = pre.acc.finish(1.0);
  for (auto& item : dec.acc.finish(1.0 / evaluated)) r.breakdown.push_back(item);
}

/// What the estimate cannot vouch for: Tier 0, shapes outside the fits, fp8 without fp8 tensor
/// cores, no decode step.
void add_pricing_warnings(InferenceResult& r, const InferenceSpec& spec) {
  if (r.tier == 0) {
    r.warnings.push_back(
        spec.hardware.calibration
            ? "Tier 0 for " + join(r.uncalibrated_ops) +
                  ": no Tier-2 fit of this GPU for these op classes and data types"
            : std::string("Tier 0: no Tier-2 calibration for this hardware; the band is the "
                          "Tier-0 validation error"));
  }
  if (r.outside_calibrated_range) {
    r.warnings.push_back(
        "some op shapes lie far outside the measured range of the Tier-2 fit; the band may be "
        "too narrow");
  }
  if ((spec.weights == DType::fp8 || attention_weight_type(spec) == DType::fp8) &&
      fp8_weight_only(spec.hardware)) {
    r.warnings.push_back(
        "fp8 weights run weight-only (W8A16, vLLM's FP8 Marlin): " + spec.hardware.name +
        " has no FP8 tensor cores, so the GEMMs multiply in 16 bits");
  }
  if (spec.output_tokens == 1) {
    r.warnings.push_back(
        "output_tokens is 1: there is no decode step; tpot_ms is the time of the step that would "
        "generate token 2");
  }
}

/// Memory per GPU, the largest batch at this context and the longest context at this batch
/// (both monotone searches).
void fill_memory(InferenceResult& r, const InferenceSpec& spec, const Shard& sh) {
  const double b = spec.batch_size;
  const double s = spec.prompt_tokens;
  const double n = spec.output_tokens;
  MemoryResult& mem = r.memory;
  mem.capacity_bytes = spec.hardware.hbm_capacity.value;
  mem.budget_bytes = mem.capacity_bytes * spec.engine.gpu_memory_utilization;
  mem.weights_bytes = weight_bytes_per_gpu(spec);
  mem.reserve_bytes = framework_reserve_bytes(spec.engine, spec.tp);
  mem.kv_cache_bytes_per_token = kv_bytes_per_token(sh);
  const double context = s + n;
  mem.kv_cache_bytes = kv_cache_bytes(spec, sh, b, context);
  mem.activations_bytes = activation_bytes(spec, sh, b, s);
  if (spec.engine.kv_cache_free_fraction > 0) {
    // TensorRT-LLM: the KV cache takes its fraction of what loading and profiling left free.
    const double others = mem.weights_bytes + mem.reserve_bytes + mem.activations_bytes;
    mem.budget_bytes =
        others + spec.engine.kv_cache_free_fraction * std::max(0.0, mem.capacity_bytes - others);
  }
  mem.state_bytes_per_sequence = sh.state_bytes;
  mem.state_bytes = b * sh.state_bytes;
  auto need = [&](double batch, double prompt, double ctx) {
    return mem.weights_bytes + mem.reserve_bytes + kv_cache_bytes(spec, sh, batch, ctx) +
           batch * sh.state_bytes + activation_bytes(spec, sh, batch, prompt);
  };
  const double used = need(b, s, context);
  mem.fits = used <= mem.budget_bytes;
  mem.free_bytes = std::max(0.0, mem.budget_bytes - used);
  long long lo = 0, hi = 1'000'000;
  while (lo < hi) {
    const long long mid = (lo + hi + 1) / 2;
    if (need(static_cast<double>(mid), s, context) <= mem.budget_bytes)
      lo = mid;
    else
      hi = mid - 1;
  }
  mem.max_batch_size = static_cast<int>(lo);
  lo = 0;
  hi = spec.model.max_context_tokens;
  while (lo < hi) {
    const long long mid = (lo + hi + 1) / 2;
    const double prompt = std::max(1.0, static_cast<double>(mid) - n);
    if (need(b, prompt, static_cast<double>(mid)) <= mem.budget_bytes)
      lo = mid;
    else
      hi = mid - 1;
  }
  mem.max_context_tokens = static_cast<int>(lo);
  if (!mem.fits) {
    r.warnings.push_back("does not fit: needs " + format_number(std::round(used / 1e7) / 100) +
                         " GB per GPU of a " +
                         format_number(std::round(mem.budget_bytes / 1e7) / 100) +
                         " GB budget (gpu_memory_utilization x device memory)");
  }
}

/// The Tier-0 constants and engine settings an estimate rests on, with their sources.
std::vector<Assumption> assumptions_of(const InferenceSpec& spec, double chunks, double bins) {
  const KernelModel& km = spec.kernel;
  std::vector<Assumption> out{
      {"hbm_bandwidth_efficiency", km.hbm_efficiency, "fraction of datasheet",
       "achievable DRAM bandwidth of streaming kernels, 85-92% on A100/H100 (bandwidthTest, "
       "STREAM-like copies)"},
      {"gemm_efficiency", km.gemm_efficiency, "fraction of dense peak",
       "large aligned cuBLAS/CUTLASS GEMMs sustain ~75-90% of dense peak on A100/H100"},
      {"attention_efficiency", km.attention_efficiency, "fraction of dense peak",
       "FlashAttention-2 forward: 50-73% of peak on A100 (Dao, 2023)"},
      {"kernel_overhead", km.kernel_overhead_s / kMicro, "us per kernel",
       "launch gap under CUDA graphs plus ramp-up and tail"},
      {"link_efficiency", km.link_efficiency, "fraction of per-direction link bandwidth",
       "nccl-tests all-reduce bus bandwidth ~360-380 of 450 GB/s on H100 NVLink4"},
      {"gemm_tile", static_cast<double>(km.max_tile_m),
       "rows x " + std::to_string(km.tile_n) + " columns",
       "output tile for wave and tile quantization; m rounds up to a power of two from " +
           std::to_string(km.min_tile_m) + ", past the tile to " + std::to_string(km.row_step) +
           " rows"},
      {"engine_step_overhead", spec.engine.step_overhead_s / kMicro, "us per forward step",
       "CPU time to schedule, prepare inputs and sample (engineering estimate for vLLM-class "
       "engines with CUDA graphs; Tier 1 fits it per engine)"},
      {"framework_reserve", framework_reserve_bytes(spec.engine, spec.tp) / kGB, "GB per GPU",
       "CUDA context, cuBLAS workspaces, NCCL and all-reduce buffers outside the KV pool (the "
       "engine's, by tensor-parallel size)"},
      {"gpu_memory_utilization", spec.engine.gpu_memory_utilization, "fraction of device memory",
       "vLLM default 0.9"},
      {"kv_block", static_cast<double>(spec.engine.kv_block_tokens), "tokens per block",
       "vLLM paged-KV default 16"},
      {"max_num_batched_tokens", static_cast<double>(spec.engine.max_num_batched_tokens),
       "tokens per forward pass",
       "prefill chunk size: vLLM V1 default for `vllm serve` on GPUs with >= 70 GiB"},
      {"prefill_chunks", chunks, "forward passes", "prefill of the batch: ceil(b*s / chunk size)"},
      {"moe_routing", 1.0, "uniform",
       "each token picks experts_per_token experts uniformly; distinct experts touched by T "
       "tokens = E(1-(1-k/E)^T)"},
      {"decode_average_bins", static_cast<double>(bins), "bins",
       "TPOT averages the decode steps over the growing context in at most 64 equal bins"},
  };
  if (!spec.engine.cuda_graphs) {
    out.push_back({"eager_launch", spec.engine.eager_launch_s / kMicro, "us per kernel",
                   "CPU time of one PyTorch kernel launch without CUDA graphs (5-20 us): a step "
                   "takes at least its kernels x this"});
  }
  if (spec.engine.host_per_sequence_s > 0) {
    out.push_back({"host_per_sequence", spec.engine.host_per_sequence_s / kMicro,
                   "us per running sequence per step",
                   "the executor's host work (scheduling, sampling, bookkeeping) overlapping the "
                   "GPU: a step takes at least its sequences per attention rank x this "
                   "(TensorRT-LLM PyTorch executor, NVIDIA/TensorRT-LLM#10273)"});
  }
  return out;
}

}  // namespace

InferenceResult estimate_inference(const InferenceSpec& spec) {
  validate(spec);
  const Shard sh = make_shard(spec);
  InferenceResult r;
  r.replicas = spec.num_gpus / (spec.tp * spec.pp);
  r.params = count_params(spec.model);
  PrefillPass pre = price_prefill(spec, sh);
  DecodePass dec = price_decode(spec, sh);
  fill_times(r, spec, pre, dec);
  physical::check_token_rate("prefill_tokens_per_s", r.prefill_tokens_per_s, spec.model,
                             spec.hardware, spec.num_gpus);
  if (spec.output_tokens > 1 && r.tpot_s > 0) {
    // Tokens per second while decoding (output_tokens_per_s also counts the prefill's time).
    physical::check_token_rate("output_tokens_per_s", r.replicas * spec.batch_size / r.tpot_s,
                               spec.model, spec.hardware, spec.num_gpus);
  }
  add_pricing_warnings(r, spec);
  fill_memory(r, spec, sh);
  if (std::string caveat = vendor_caveat(spec.hardware); !caveat.empty()) {
    r.warnings.push_back(std::move(caveat));
  }
  r.assumptions = assumptions_of(spec, pre.chunks, static_cast<double>(dec.bins));
  return r;
}

namespace {

/// The memory of `spec` where it is a valid setup; nullopt where validation refuses it.
std::optional<MemoryResult> memory_if_valid(const InferenceSpec& spec) {
  try {
    validate(spec);
  } catch (const Error&) {
    return std::nullopt;
  }
  InferenceResult r;
  fill_memory(r, spec, make_shard(spec));
  return r.memory;
}

}  // namespace

std::vector<FitOption> fit_options(const InferenceSpec& spec) {
  std::vector<FitOption> options;
  const std::optional<MemoryResult> own = memory_if_valid(spec);
  if (!own || own->fits) return options;
  const auto consider = [&](const InferenceSpec& c) {
    const std::optional<MemoryResult> m = memory_if_valid(c);
    if (!m || !m->fits) return false;
    options.push_back({c.tp, c.num_gpus, c.weights, c.kv_cache, m->max_batch_size});
    return true;
  };
  const auto with_tp = [&](InferenceSpec c, int tp) {
    c.tp = tp;
    c.num_gpus = spec.num_gpus / spec.tp * tp;
    return c;
  };
  const auto with_types = [](InferenceSpec c, DType weights) {
    c.weights = weights;
    c.attention_weights.reset();
    c.kv_cache = DType::fp8;
    return c;
  };
  const auto narrower = [&](DType weights) {
    return weights != spec.weights || spec.kv_cache != DType::fp8;
  };
  for (int tp = 2 * spec.tp; tp <= spec.hardware.gpus_per_node; tp *= 2) {
    if (consider(with_tp(spec, tp))) break;
  }
  for (const DType weights : {DType::fp8, DType::int4}) {
    if (narrower(weights) && consider(with_types(spec, weights))) break;
  }
  if (!options.empty()) return options;
  // Neither alone: both, the smallest tensor parallelism first.
  for (int tp = 2 * spec.tp; tp <= spec.hardware.gpus_per_node; tp *= 2) {
    for (const DType weights : {DType::fp8, DType::int4}) {
      if (narrower(weights) && consider(with_types(with_tp(spec, tp), weights))) return options;
    }
  }
  return options;
}

// ---- Per-step cost API for serving simulators ----

struct StepTimeModel::Impl {
  InferenceSpec spec;
  Shard sh{};
  double moe_factor = 1.0;
  std::vector<double> dense_memo;    // by token count; < 0: not computed yet
  std::vector<double> prefill_memo;  // the same for steps holding prompt tokens, where priced apart
  std::vector<double> head_memo;     // by sequence count
  /// A step holding prompt tokens dispatches its MoE tokens otherwise (forwarded between nodes).
  bool prefill_apart = false;
  int tier = 0;
  double kernels_per_step = 0;  ///< launched by the CPU one by one without CUDA graphs
};

namespace {

constexpr int kMaxMemoTokens = 65536;
constexpr int kMaxMemoSequences = 4096;

double op_time_s(const OpCost& op) { return op.time.value; }

/// The token-proportional ops of step_ops (token_ops) for `t` new tokens, summed; `tier`: 2 when
/// every GEMM of them is calibrated.
double dense_ops_s(const InferenceSpec& s, const Shard& sh, double t, double moe_factor, int* tier,
                   bool prefill) {
  const TokenOps tok = token_ops(s, sh, t, prefill);
  bool tier2 = true;
  auto priced = [&](const OpCost& op) {
    tier2 = tier2 && op.tier == 2;
    return op_time_s(op);
  };
  double total = op_time_s(tok.embedding) + op_time_s(tok.final_norm);
  for (std::size_t k = 0; k < sh.kinds.size(); ++k) {
    const LayerKind& kind = sh.kinds[k];
    double per_layer = 0;
    // The mixer's projections; its token mixing (attention, the Mamba-2 or GDN scan or state
    // update) follows the context or the sequences and is priced apart.
    if (kind.mixer == Mixer::attention) {
      for (const OpCost& op : tok.attn_linears) per_layer += priced(op);
    } else if (is_recurrent(kind.mixer)) {
      for (const OpCost& op : tok.recurrent_linears) per_layer += priced(op);
    }
    const FfnOps& ffn = tok.ffn(kind);
    for (std::size_t i = 0; i < ffn.gemms.size(); ++i) {
      // The routed experts of the busiest GPU run moe_factor longer.
      per_layer += (kind.moe && i == 0 ? moe_factor : 1.0) * priced(ffn.gemms[i]);
    }
    per_layer += op_time_s(tok.elementwise[k]);
    if (const auto& exchange = tok.exchange(kind)) {
      per_layer += tok.exchanges(kind, s.model.is_hybrid()) * op_time_s(*exchange);
    }
    total += per_layer * kind.count;
  }
  if (s.pp > 1) total += (s.pp - 1) * op_time_s(pipeline_send_op(s, t));
  if (tier) *tier = tier2 ? 2 : 0;
  return total;
}

/// Attention of every layer for `chunks` prefill chunks, each priced as the mean chunk of
/// `mean_new` tokens and scaled per layer kind by the attended pairs of the real chunks over
/// those of the mean one (exact for equal, uncached chunks).
double prefill_attention_layers_s(const InferenceSpec& s, const Shard& sh,
                                  const PrefillChunk* chunks, int count, double mean_new) {
  double t = 0;
  for (const LayerKind& kind : sh.kinds) {
    if (is_recurrent(kind.mixer)) {
      // The Mamba-2 / GDN layers scan every chunk's new tokens (one varlen kernel chain per layer).
      double tokens = 0;
      for (int i = 0; i < count; ++i) tokens += std::max(0, chunks[i].new_tokens);
      t += kind.count * layer_ops::recurrent_op(s.hardware, sh.km, s.model, s.tp, sh.a, tokens,
                                                layer_ops::RecurrentPass::forward)
                            .time.value;
    }
    if (kind.mixer != Mixer::attention) continue;
    const AttentionDims dims = sh.attention(kind.local, false);
    double pairs = 0;
    for (int i = 0; i < count; ++i) {
      if (chunks[i].new_tokens <= 0) continue;
      pairs += attended_pairs(chunks[i].cached_tokens, chunks[i].new_tokens, dims.window_tokens,
                              dims.local);
    }
    int n = 0;
    for (int i = 0; i < count; ++i) n += chunks[i].new_tokens > 0 ? 1 : 0;
    // Under DP attention the chunks spread over the dp GPUs: the busiest runs ceil(n / dp).
    const double busiest = sh.attention_share(n);
    // n chunks of the mean new length after the mean cached context that gives the chunks' pairs
    // (exact for full attention, where pairs = new·cached + new(new+1)/2); the remaining ratio
    // (windows, uneven chunks) scales the op. One kernel per layer: its fixed cost is not scaled.
    const double causal = attended_pairs(0, mean_new, dims.window_tokens, dims.local);
    const double mean_cached = std::max(0.0, (pairs / n - causal) / mean_new);
    const OpCost op = attention_prefill_op(s.hardware, sh.km, busiest, mean_new, dims,
                                           sh.attention_types(), mean_cached);
    const double mean_pairs =
        n * attended_pairs(mean_cached, mean_new, dims.window_tokens, dims.local);
    t += kind.count * op.time.value * pairs / mean_pairs;
  }
  return t;
}

double head_ops_s(const InferenceSpec& s, const Shard& sh, double b) {
  double t = op_time_s(gemm_op("lm_head", s.hardware, sh.km, b, sh.vocab, sh.h, sh.head));
  if (s.tp > 1) {
    t += op_time_s(
        all_gather_op("tp_comm", s.hardware, sh.km, Bytes(b * sh.vocab * s.tp * sh.a), s.tp));
  }
  return t;
}

}  // namespace

StepTimeModel::StepTimeModel(const InferenceSpec& spec, double moe_expert_time_factor)
    : impl_(std::make_unique<Impl>()) {
  InferenceSpec checked = spec;
  // The workload fields are not used here; give them values that pass validation.
  checked.prompt_tokens = 1;
  checked.output_tokens = 1;
  checked.batch_size = 1;
  validate(checked);
  if (!std::isfinite(moe_expert_time_factor) || moe_expert_time_factor < 1 ||
      moe_expert_time_factor > 100) {
    fail("features.moe.imbalance_factor", "must be between 1 and 100", moe_expert_time_factor);
  }
  impl_->spec = checked;
  impl_->sh = make_shard(checked);
  impl_->moe_factor = moe_expert_time_factor;
  int dense_tier = 0;
  (void)dense_ops_s(checked, impl_->sh, 256, moe_expert_time_factor, &dense_tier, false);
  impl_->prefill_apart = prefill_dispatch_forwarded(checked);
  const Shard& sh = impl_->sh;
  const OpCost pre = attention_prefill_op(checked.hardware, sh.km, 1, 256,
                                          sh.attention(false, false), sh.attention_types());
  const OpCost dec = attention_decode_op(checked.hardware, sh.km, 16, 512,
                                         sh.attention(false, true), sh.attention_types());
  impl_->tier = dense_tier == 2 && pre.tier == 2 && dec.tier == 2 ? 2 : 0;
  if (!checked.engine.cuda_graphs) {
    // The kernels of a step do not depend on its batch: those of one decode token.
    InferenceSpec graphs = checked;
    graphs.engine.cuda_graphs = true;
    impl_->kernels_per_step =
        kernels_and_time(step_ops(graphs, sh, Step{1, 1, 1, 512, false})).first;
  }
}

StepTimeModel::StepTimeModel(const StepTimeModel& other)
    : impl_(std::make_unique<Impl>(*other.impl_)) {}

StepTimeModel& StepTimeModel::operator=(const StepTimeModel& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}

StepTimeModel::~StepTimeModel() = default;

double StepTimeModel::dense_time_s(int tokens, bool prefill) {
  if (tokens <= 0) return 0;
  Impl& m = *impl_;
  prefill = prefill && m.prefill_apart;  // else both kinds of step cost the same
  if (tokens > kMaxMemoTokens) {
    return dense_ops_s(m.spec, m.sh, tokens, m.moe_factor, nullptr, prefill);
  }
  std::vector<double>& memo = prefill ? m.prefill_memo : m.dense_memo;
  if (memo.size() <= static_cast<std::size_t>(tokens)) {
    memo.resize(static_cast<std::size_t>(tokens) + 1, -1.0);
  }
  double& slot = memo[static_cast<std::size_t>(tokens)];
  if (slot < 0) slot = dense_ops_s(m.spec, m.sh, tokens, m.moe_factor, nullptr, prefill);
  return slot;
}

double StepTimeModel::head_time_s(int sequences) {
  if (sequences <= 0) return 0;
  Impl& m = *impl_;
  if (sequences > kMaxMemoSequences) return head_ops_s(m.spec, m.sh, sequences);
  if (m.head_memo.size() <= static_cast<std::size_t>(sequences)) {
    m.head_memo.resize(static_cast<std::size_t>(sequences) + 1, -1.0);
  }
  double& slot = m.head_memo[static_cast<std::size_t>(sequences)];
  if (slot < 0) slot = head_ops_s(m.spec, m.sh, sequences);
  return slot;
}

double StepTimeModel::prefill_attention_s(const PrefillChunk& c) const {
  if (c.new_tokens <= 0) return 0;
  const Impl& m = *impl_;
  return prefill_attention_layers_s(m.spec, m.sh, &c, 1, c.new_tokens);
}

double StepTimeModel::decode_attention_s(int sequences, double mean_context_tokens) const {
  if (sequences <= 0) return 0;
  const Impl& m = *impl_;
  double t = 0;
  for (const LayerKind& kind : m.sh.kinds) {
    if (is_recurrent(kind.mixer)) {
      // Each sequence's fixed Mamba-2 / GDN state is updated, whatever its context.
      t += kind.count * layer_ops::recurrent_op(m.spec.hardware, m.sh.km, m.spec.model, m.spec.tp,
                                                m.sh.a, sequences, layer_ops::RecurrentPass::decode)
                            .time.value;
    }
    if (kind.mixer != Mixer::attention) continue;
    const OpCost op = attention_decode_op(m.spec.hardware, m.sh.km, m.sh.attention_share(sequences),
                                          std::max(1.0, mean_context_tokens),
                                          m.sh.attention(kind.local, true), m.sh.attention_types());
    t += kind.count * op.time.value;
  }
  return t;
}

double StepTimeModel::step_overhead_s() const { return impl_->spec.engine.step_overhead_s; }

int StepTimeModel::tier() const { return impl_->tier; }

const InferenceSpec& StepTimeModel::spec() const { return impl_->spec; }

double StepTimeModel::step_time_s(const StepShape& step) {
  long long tokens = static_cast<long long>(step.decode_sequences) * step.tokens_per_decode;
  double attention = 0;
  int sampled = step.decode_sequences;
  // Prefill chunks run as one varlen attention kernel: priced as n chunks of the mean length,
  // scaled by the attended pairs (prefill_attention_layers_s).
  double chunk_tokens = 0;
  int chunks = 0;
  for (int i = 0; i < step.num_prefills; ++i) {
    const PrefillChunk& c = step.prefills[i];
    if (c.new_tokens <= 0) continue;
    tokens += c.new_tokens;
    chunk_tokens += c.new_tokens;
    ++chunks;
    ++sampled;  // a chunk samples a token too (discarded unless it ends the prompt)
  }
  if (chunks > 0) {
    const Impl& m = *impl_;
    attention += prefill_attention_layers_s(m.spec, m.sh, step.prefills, step.num_prefills,
                                            chunk_tokens / chunks);
  }
  if (step.decode_sequences > 0) {
    attention += decode_attention_s(step.decode_sequences,
                                    step.decode_context_tokens / step.decode_sequences);
  }
  if (tokens == 0) return 0;
  const int t = static_cast<int>(std::min<long long>(tokens, 1'000'000'000));
  const double gpu_s = dense_time_s(t, chunks > 0) + head_time_s(sampled) + attention;
  const EngineProfile& e = impl_->spec.engine;
  const double launch_s = e.cuda_graphs ? 0 : impl_->kernels_per_step * e.eager_launch_s;
  const double host_s = host_step_s(e, sampled, impl_->sh.dp);
  return std::max(std::max(gpu_s, launch_s) + e.step_overhead_s, host_s);
}

namespace {

/// C(n, r) as a double (n ≤ a model's expert groups).
double choose(int n, int r) {
  if (r < 0 || r > n) return 0;
  double c = 1;
  for (int i = 1; i <= r; ++i) c = c * (n - r + i) / i;
  return c;
}

/// Expected number of the `ranks` GPUs that hold at least one of a token's experts
/// (moe_dispatch_bytes).
double ranks_reached(const ModelSpec& m, int ranks, int redundant_experts) {
  // Probability that none of the k distinct experts, drawn from `pool`, is one of `held` of them.
  auto none = [k = m.experts_per_token](double pool, double held) {
    double p = 1;
    for (int i = 0; i < k; ++i) p *= std::max(0.0, (pool - held - i) / (pool - i));
    return p;
  };
  const int groups = m.expert_groups, chosen = m.expert_groups_per_token;
  if (redundant_experts == 0 && groups > 1 && chosen < groups) {
    const double per_group = double(m.num_experts) / groups, pool = chosen * per_group;
    if (ranks % groups == 0) {  // a group spans ranks / groups GPUs
      return double(ranks) * chosen / groups * (1 - none(pool, double(m.num_experts) / ranks));
    }
    if (groups % ranks == 0) {  // a GPU holds groups / ranks whole groups, j of them chosen
      const int held = groups / ranks;
      double reached = 0;
      for (int j = 1; j <= std::min(held, chosen); ++j) {
        const double odds =
            choose(held, j) * choose(groups - held, chosen - j) / choose(groups, chosen);
        reached += odds * (1 - none(pool, j * per_group));
      }
      return ranks * reached;
    }
  }
  const double e = double(m.num_experts) + redundant_experts;
  return ranks * (1 - none(e, e / ranks));
}

}  // namespace

double moe_dispatch_bytes(const ModelSpec& m, int ranks, double tokens, double bytes_per_element,
                          int redundant_experts) {
  return tokens * ranks_reached(m, ranks, redundant_experts) * m.expert_hidden() *
         bytes_per_element;
}

double moe_forwarded_bytes(const ModelSpec& m, int ranks, int gpus_per_node, double tokens,
                           double bytes_per_element, int redundant_experts) {
  const int nodes = std::max(1, ranks / std::max(1, gpus_per_node));
  const double remote = ranks_reached(m, nodes, redundant_experts) * (nodes - 1) / nodes;
  return tokens * remote * m.expert_hidden() * bytes_per_element;
}

}  // namespace flopcast
