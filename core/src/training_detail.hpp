// SPDX-License-Identifier: MIT
#pragma once

/// Internals shared by training.cpp (time), training_memory.cpp (parameters and memory) and
/// training_search.cpp (its work budget).

#include <map>
#include <string>
#include <vector>

#include "flopcast/training.hpp"

namespace flopcast::training_detail {

/// Bytes of one element of the 16-bit activations of the run (fp8 keeps activations in 16 bits
/// between GEMMs).
inline double activation_element_bytes(const TrainingSpec&) { return 2.0; }

/// Transformer layers of the first stage, of the largest middle stage (0 when pp <= 2) and of
/// the last stage (pp == 1: the one stage is first and last).
struct StageLayers {
  int first = 0, middle = 0, last = 0;
};
StageLayers stage_layers(const TrainingSpec& s);

/// Attention FLOPs per token, forward and backward: 12·L·Hq·d·s over the full square (the
/// convention of PaLM and Megatron), local layers by their share of attended pairs.
double attention_flops_per_token(const ModelSpec& m, int seq);

/// The divisors of n ≥ 1, ascending: the micro-batch sizes a per-rank batch of n sequences allows.
std::vector<int> divisors(int n);

/// Ranks that reduce gradients together: data and context ranks share the weights.
inline int grad_ranks(const TrainingSpec& s) { return s.dp * s.cp; }

/// The data-parallel ranks of one FSDP hybrid shard group: those of one node.
int hybrid_group(const TrainingSpec& s);

/// How many ranks the weights, gradients and optimizer states are each divided over.
struct ShardDivisors {
  double weights = 1, gradients = 1, optimizer = 1;
};
ShardDivisors shard_divisors(const TrainingSpec& s);

/// Parameters one GPU holds for one layer (TP- and EP-sharded), and the trainable ones.
struct LayerParams {
  double total = 0;      ///< all weights of the layer on this GPU
  double linear = 0;     ///< of which in linear layers (quantized by QLoRA)
  double trainable = 0;  ///< full: = total; LoRA: the adapters
};
LayerParams layer_params(const TrainingSpec& s);

/// Parameters of one MTP module on one GPU (all trainable): a layer like the model's last (MoE in
/// an MoE model), its [2h -> h] projection and three norms; embedding and LM head are shared.
double mtp_module_params(const TrainingSpec& s);

/// Trainable parameters of the whole model (all GPUs, no sharding).
double trainable_params(const TrainingSpec& s);

/// PyTorch op-level selective activation checkpointing of one layer (torchtitan's `op` policy,
/// torchtitan/distributed/activation_checkpoint.py, 2024-25): the outputs of the 1st, 3rd, 5th …
/// `aten.mm` of the layer are saved, counted in the order the layer runs them (q, k, v, o, then
/// the router, gate, up, down; MLA: q_a, q_b, kv_a, kv_b, o), with the attention kernel's; the
/// even-numbered matmuls, the grouped expert GEMMs (not `aten.mm`) and every elementwise op are
/// recomputed in the backward.
struct OpSacLayer {
  /// Share of each breakdown group's forward GEMM FLOPs recomputed: qkv_proj, o_proj,
  /// moe_router, and <ffn>.up / <ffn>.down for mlp, moe_experts and shared_experts.
  std::map<std::string, double> recomputed_share;
  double saved_elements = 0;     ///< matmul outputs saved per token on this rank (16-bit)
  double recomputed_params = 0;  ///< weights of the recomputed matmuls a token passes through
};
OpSacLayer op_sac_layer(const ModelSpec& m, bool moe, int tp);

/// The group key op_sac_layer uses for a linear of the layer: its name, and for FFN groups
/// `.up` for the first (gate+up or up) and `.down` for the second.
std::string op_sac_key(const std::string& name, bool first_of_group);

/// Whether `precision.compute` runs the linears in a low-precision recipe (fp8, mxfp8, NVFP4) with
/// casts of their inputs and a cached cast of their weights, attention and the LM head in 16 bits.
inline bool low_precision_recipe(DType compute) {
  return compute == DType::fp8 || compute == DType::mxfp8 || compute == DType::fp4;
}

/// Memory of the worst pipeline stage for micro-batch `b` and `m` micro-batches per step.
TrainingMemory training_memory(const TrainingSpec& s, int b, int m);

}  // namespace flopcast::training_detail
