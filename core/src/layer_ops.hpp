// SPDX-License-Identifier: MIT
#pragma once

/// The shapes of one transformer layer on one tensor-parallel rank, shared by inference (and the
/// serving step model) and training: which linear layers a token passes through, the attention's
/// dimensions and what the KV cache holds. Each architectural mechanism (multi-head latent
/// attention, shared experts, dense layers of an MoE model, local attention) is written here once.

#include <string>
#include <vector>

#include "flopcast/kernel.hpp"
#include "flopcast/model.hpp"

namespace flopcast::layer_ops {

/// One linear layer on this rank: a token's [1 × k] activation times a [k × n] weight.
struct LinearShape {
  std::string name;  ///< breakdown group: qkv_proj, o_proj, mlp, shared_experts
  double n = 0, k = 0;
};

/// Weights of linear layers: Σ n·k.
double linear_params(const std::vector<LinearShape>& linears);

/// Checks that tensor parallelism `tp` splits every sharded dimension of the model (heads, KV
/// heads, FFN widths), blaming `path`.
/// What of a layer a tensor-parallel group splits: the attention heads (not under data-parallel
/// attention), the dense FFNs and shared experts (not where they run data-parallel), and each
/// routed expert's width over `expert_ways` GPUs (tp / ep; 0: tp).
struct TensorSplit {
  bool attention = true;
  bool dense = true;
  int expert_ways = 0;
};

void check_tensor_parallel(const ModelSpec& m, int tp, const std::string& path,
                           TensorSplit split = {});
/// A TP group larger than a node (`gpus_per_node`, named `node_key` in messages) spans whole
/// nodes over the scale-out network: tp a multiple of it, and the hardware has NICs
/// (NotModelledError otherwise). Shared by inference, serving and training.
void check_tensor_parallel_nodes(int tp, int gpus_per_node, int scaleout_nics_per_node,
                                 const std::string& node_key);

/// Attention projections in the order they run. Standard: fused q, k, v (Hq/tp + 2·Hkv/tp heads
/// of d) and o_proj. MLA: q_a (h → r_q, replicated) and q_b (r_q → Hq/tp·d), or q (h → Hq/tp·d)
/// without a q latent; kv_a (h → r_kv + d_rope, replicated); kv_b (r_kv → Hq/tp·(d_nope + d_v));
/// o_proj (Hq/tp·d_v → h). The names group them as qkv_proj and o_proj.
std::vector<LinearShape> attention_linears(const ModelSpec& m, int tp);

/// An FFN of `width` (before TP) on this rank: gate+up fused (2·width/tp, gated) or up, then down.
std::vector<LinearShape> ffn_linears(const ModelSpec& m, double width, int tp, std::string name);
/// One routed expert's up (gate + up when gated) and down projections on this rank: its width
/// split over `tp`, reading and writing m.expert_hidden() (the hidden state, or LatentMoE's
/// latent).
std::vector<LinearShape> expert_linears(const ModelSpec& m, int tp, std::string name);
/// LatentMoE's [h -> latent] and [latent -> h] projections around the routed experts (Megatron-Core
/// MoELayer fc1_latent_proj / fc2_latent_proj, parallel_mode "duplicated": whole on every TP
/// rank); none without a latent.
std::vector<LinearShape> latent_linears(const ModelSpec& m);

/// Attention of one layer on this rank. Prefill and training (and standard decode): Hq/tp query
/// heads over Hkv/tp KV heads of d. MLA prefill: Hq/tp heads of d_qk = d_nope + d_rope and d_v,
/// caching one latent of r_kv + d_rope per token (replicated across TP ranks); MLA decode runs
/// absorbed (`decode`): q is multiplied into the latent space, so attention is multi-query over
/// the latent with d_qk = r_kv + d_rope and d_v = r_kv. `local`: the model's window applies.
AttentionDims attention_dims(const ModelSpec& m, int tp, bool local, bool decode);

/// KV-cache elements one token adds to one layer on this rank (both K and V; MLA: the latent).
double kv_elements_per_token(const ModelSpec& m, int tp);

/// Elements per token that rotary embedding rotates on this rank (q and k heads, or MLA's rope
/// parts); 0 without rotary embedding.
double rope_elements_per_token(const ModelSpec& m, int tp);

/// Mamba-2 mixer linears on this rank (Megatron-Core's MambaMixer splits heads and groups over
/// TP): in_proj h → (2·d_in + 2·G·N + H)/tp (z, x, B, C and dt of its heads), out_proj
/// d_in/tp → h.
std::vector<LinearShape> mamba_linears(const ModelSpec& m, int tp);

/// The Mamba-2 mixer's work between its projections, per token on this rank, forward: the causal
/// conv1d over x, B, C, the chunked SSD scan (mamba_ssm's five kernels: chunk cumsum, chunk
/// state, state passing, C·Bᵀ per chunk, chunk scan; chunk states in fp32) and the gated RMSNorm.
struct ScanWork {
  double flops = 0;  ///< H·(4·N·P + 2·Q·P) + 2·G·Q·N (states in and out, C·Bᵀ, the masked Q×Q scan)
  double bytes = 0;  ///< what the seven kernels read and write, activations of `act_bytes`
  int kernels = 7;
};
ScanWork mamba_scan(const ModelSpec& m, int tp, double act_bytes);

/// One decode step of the Mamba-2 mixer for one sequence on this rank (mamba_ssm's
/// selective_state_update and causal_conv1d_update, then the gated norm): the SSM state read and
/// written (fp32), the conv state read and written, the token's x, B, C, z and dt read and y
/// written, the norm's three passes; FLOPs 5·H·P·N (decay, input and output of the state).
ScanWork mamba_decode(const ModelSpec& m, int tp, double act_bytes);

/// The training backward of the same mixer, per token on this rank, as mamba_ssm runs it
/// (ops/triton/ssd_combined.py, _mamba_chunk_scan_combined_bwd; causal_conv1d's and the gated
/// norm's backward): it recomputes four of the forward's kernels (chunk cumsum, C·Bᵀ, chunk
/// state, state passing) and runs eleven of its own (dz, dstates, state passing, dx, dB, dC,
/// d(C·Bᵀ), two C·Bᵀ backward matmuls, d(dt·A) and the cumsum's), then conv1d's and the norm's.
/// It moves about 25·d_in + 21·G·N activations per token against the forward's 9·d_in + 8·G·N.
ScanWork mamba_scan_backward(const ModelSpec& m, int tp, double act_bytes);

/// Gated DeltaNet mixer linears on this rank (Megatron-Core's GatedDeltaNet splits heads over
/// TP): in_proj h → (2·k + 2·v + 2·Hv)/tp (q, k, v, the output gate z, β and α of its heads),
/// out_proj v/tp → h, with k = Hk·dk and v = Hv·dv.
std::vector<LinearShape> gdn_linears(const ModelSpec& m, int tp);

/// The gated DeltaNet's work between its projections, per token on this rank, forward, as
/// Megatron-Core runs it over flash-linear-attention's chunk_gated_delta_rule (chunks of C = 64):
/// causal conv1d over q, k, v; L2 norm of q and k; q and k repeated to the value heads; the gates
/// (g = −exp(A)·softplus(α + dt_bias) in fp32, β = σ(b)); the kernel's chunk cumsum of g, its
/// fused intra-chunk step (K·Kᵀ, the triangular solve, w and u; A kept in bf16), the state pass
/// (chunk states h in bf16, v_new) and the output; then the gated RMSNorm.
ScanWork gdn_scan(const ModelSpec& m, int tp, double act_bytes);

/// One decode step of the gated DeltaNet for one sequence on this rank
/// (fused_recurrent_gated_delta_rule after causal_conv1d_update, then the gated norm): the
/// Hv·dk·dv state read and written in fp32, the conv state read and written, the token's
/// projections read and its output written, the norm's three passes; FLOPs 7·Hv·dk·dv (decay,
/// kᵀ·S, the rank-1 update, q·S).
ScanWork gdn_decode(const ModelSpec& m, int tp, double act_bytes);

/// The training backward of the same mixer, per token on this rank, as
/// chunk_gated_delta_rule_bwd runs it: w, u and the chunk states recomputed; chunk_bwd_dv_local,
/// chunk_gated_delta_rule_bwd_dhu, chunk_bwd_dqkwg, prepare_wy_repr_bwd, the gradient sums and
/// the reverse cumsum; then the input steps' backward (gates, repeat, L2 norm), conv1d's and the
/// norm's.
ScanWork gdn_scan_backward(const ModelSpec& m, int tp, double act_bytes);

/// Bytes one sequence's gated DeltaNet state takes in one layer on this rank: Hv·dk·dv in fp32
/// (Qwen3.5's mamba_ssm_dtype "float32"; Megatron-Core's final state) and the conv state of
/// (K − 1)·(2·k + v) activations.
double gdn_state_bytes(const ModelSpec& m, int tp, double act_bytes);

/// Mamba-1 mixer linears on this rank (vLLM's MambaMixer: the d_in channels split over TP):
/// in_proj h → 2·d_in/tp (x and the gate z), x_proj d_in/tp → R + 2·N (dt, B, C; row-parallel),
/// dt_proj R → d_in/tp, out_proj d_in/tp → h.
std::vector<LinearShape> mamba1_linears(const ModelSpec& m, int tp);

/// The Mamba-1 mixer's work between its projections, per token on this rank, forward, as
/// mamba_ssm's selective_scan_fn runs it after causal_conv1d_fn (Jamba's RMSNorms of dt, B and C
/// between x_proj and the scan): the conv1d reads and writes x; the scan reads x, Δ, z, B, C and
/// writes y, its state held on chip; FLOPs 9·d_in·N + 2·K·d_in.
ScanWork mamba1_scan(const ModelSpec& m, int tp, double act_bytes);

/// One decode step of the Mamba-1 mixer for one sequence on this rank (causal_conv1d_update and
/// selective_state_update): the d_in·N state read and written in the activations' type (mamba_ssm's
/// allocate_inference_cache, vLLM's default mamba_ssm_cache_dtype "auto"), the conv state read and
/// written, the token's inputs read and its output written.
ScanWork mamba1_decode(const ModelSpec& m, int tp, double act_bytes);

/// The training backward of the same mixer (selective_scan_bwd: the forward recomputed within
/// each chunk, then dx, dΔ, dz, dB, dC), conv1d's and the norms' backward.
ScanWork mamba1_scan_backward(const ModelSpec& m, int tp, double act_bytes);

/// Bytes one sequence's Mamba-1 state takes in one layer on this rank: (d_in·N + (K − 1)·d_in)
/// activations.
double mamba1_state_bytes(const ModelSpec& m, int tp, double act_bytes);

/// Which pass of a fixed-state mixer an op prices.
enum class RecurrentPass { forward, decode, backward };

/// The model's fixed-state mixer (m.recurrent_mixer(): Mamba-2, Mamba-1 or gated DeltaNet),
/// whichever it is: its linears (none without one), its work per token or sequence, one layer's
/// conv1d, scan and gated norm as one memory-bound op (`mamba_scan` or `gdn_scan`) for `n` tokens
/// (prefill, training forward or backward) or `n` sequences' decode steps, the bytes of one
/// sequence's state in one layer (Mamba-2: the SSM state H·P·N in fp32, mamba_ssm's inference cache
/// and the Nemotron-H configs' mamba_ssm_cache_dtype "float32", and the conv state of (K − 1)·(d_in
/// + 2·G·N) activations), and the elements per token it keeps for its backward (the in_proj,
/// conv1d, scan and gated-norm outputs).
std::vector<LinearShape> recurrent_linears(const ModelSpec& m, int tp);
ScanWork recurrent_work(const ModelSpec& m, int tp, double act_bytes, RecurrentPass pass);
OpCost recurrent_op(const HardwareSpec& hw, const KernelModel& km, const ModelSpec& m, int tp,
                    double act_bytes, double n, RecurrentPass pass);
double recurrent_state_bytes(const ModelSpec& m, int tp, double act_bytes);
double recurrent_saved_elements(const ModelSpec& m, int tp);

/// FFN elements per token on this rank that the activation function reads or writes (gate, up
/// and output: 3·width gated, 2·width plain) for a dense layer or an MoE layer (top-k experts and
/// the shared experts); `rows_per_token` scales the routed part (capacity factor in training).
double activation_fn_elements(const ModelSpec& m, bool moe, int tp, double rows_per_token = 1);

}  // namespace flopcast::layer_ops
