// SPDX-License-Identifier: MIT
#pragma once

/// Internals shared by training.cpp (time) and training_memory.cpp (parameters and memory).

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

/// Memory of the worst pipeline stage for micro-batch `b` and `m` micro-batches per step.
TrainingMemory training_memory(const TrainingSpec& s, int b, int m);

}  // namespace flopcast::training_detail
