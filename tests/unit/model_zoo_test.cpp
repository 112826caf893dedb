// SPDX-License-Identifier: MIT
// The published config.json of current models (tests/fixtures/hf/, see SOURCES.md there)
// through the importer: the fields that define each architecture, and the parameter count
// against the published total (unit).
#include <gtest/gtest.h>

#include <string>

#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/model.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;

json imported(const std::string& id) {
  return io::model_from_hf_config(test::hf_fixture(id), "tests/fixtures/hf/" + id + ".json");
}

/// Each key of `expected` has that value in the model object `m`.
void expect_fields(const json& m, const json& expected) {
  for (const auto& [key, value] : expected.items()) {
    EXPECT_EQ(m.value(key, json()), value) << key;
  }
}

ParamCounts counts(const std::string& id) {
  return count_params(io::read_model(imported(id), "model"));
}

/// One model: the published total (and active count for MoE), in parameters, and the relative
/// tolerance each is compared with: 1 % unless the comment on the case says why not.
struct ZooCase {
  const char* id;
  double published_total;
  double published_active;  ///< 0: dense
  double total_tolerance = 0.01;
  double active_tolerance = 0.01;
  /// The publisher counts active parameters without the input embedding table (gpt-oss).
  bool active_without_embedding = false;
  /// … and without the output (LM head) table either (Z.ai's GLM-4.5).
  bool active_without_lm_head = false;
};

// Derived totals (count_params) are in the trailing comments: embedding V·h (+ the LM head
// unless tied) + L · (attention + FFN or experts + 2 norms) + final norm.
const ZooCase kZoo[] = {
    // Llama 3.2 model card, "Params" column: 1.23B, 3.21B. Derived 1,235,814,400 (16 layers of
    // 60,821,504 + tied 128256·2048 embedding) and 3,212,749,824.
    {"llama-3.2-1b", 1.23e9, 0},
    {"llama-3.2-3b", 3.21e9, 0},
    // Llama 3.3 70B: the model page's 70.6B (safetensors). Derived 70,553,706,496.
    {"llama-3.3-70b", 70.6e9, 0},
    // Llama 4 model card: Scout 17B active / 109B total, Maverick 17B / 400B. The totals
    // include the vision encoder and projector, 0.872e9 counted from vision_config (34 layers
    // of 23,807,872 + patch and position embeddings 1.64e6 + pixel-shuffle MLP 39.8e6 +
    // projector 4096·5120); flopcast counts the language model: 109e9 − 0.872e9 = 108.13e9
    // (derived 107,769,861,120; with the vision tower it is 108,641,793,536, the checkpoint's
    // safetensors total), 400e9 − 0.872e9 = 399.13e9 (derived 400.71e9). Active: derived 17.17e9
    // and 17.18e9 (shared expert + 1 routed expert of 3·5120·8192 per MoE layer, Maverick's
    // dense layers of 3·5120·16384); "17B" has two significant digits, so the figure itself is
    // only known to ±0.5e9 (±2.9 %).
    {"llama-4-scout-17b-16e", 109e9 - 0.872e9, 17e9, 0.01, 0.03},
    {"llama-4-maverick-17b-128e", 400e9 - 0.872e9, 17e9, 0.01, 0.03},
    // Qwen3 model cards: 0.6B, 1.7B, 4.0B, 8.2B, 14.8B, 32.8B. Derived 0.596e9, 1.7206e9,
    // 4.0225e9, 8.1907e9, 14.768e9, 32.762e9. "1.7B" is 1.7206e9 rounded to two digits (1.2 %
    // off); its non-embedding figure, 1.4B, is matched to 0.7 % (1,409,400,832).
    {"qwen3-0.6b", 0.6e9, 0},
    {"qwen3-1.7b", 1.7e9, 0, 0.015},
    {"qwen3-4b", 4.0e9, 0},
    {"qwen3-8b", 8.2e9, 0},
    {"qwen3-14b", 14.8e9, 0},
    {"qwen3-32b", 32.8e9, 0},
    // Qwen3 MoE model cards: 30.5B total / 3.3B activated, 235B / 22B. Derived 30.532e9 /
    // 3.353e9 (48 layers of attention 18,874,368 + 8 experts of 3·2048·768 + router 2048·128,
    // with both 311e6 embedding tables): "3.3B" is 1.6 % below, the same order as its rounding
    // to two digits (±1.5 %); 235.09e9 / 22.19e9.
    {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.01, 0.02},
    {"qwen3-235b-a22b", 235e9, 22e9},
    // DeepSeek-V3 report (arXiv 2412.19437) and model card: 671B total, 37B activated; the HF
    // checkpoint's 685B adds the 14B multi-token-prediction module (num_nextn_predict_layers),
    // which flopcast does not count. Derived 671.026e9 (3 dense layers of 583,484,928, 58 MoE
    // layers of 11,507,287,552, 2·129280·7168 embeddings) and 37.55e9 active (1 shared + 8
    // routed experts of 3·7168·2048 per MoE layer): 1.5 % above "37B", within its rounding
    // (±1.4 %) plus the 0.93e9 input embedding, which DeepSeek may not count as activated.
    {"deepseek-v3", 671e9, 37e9, 0.01, 0.02},
    {"deepseek-r1", 671e9, 37e9, 0.01, 0.02},
    // gpt-oss model card (OpenAI, Aug 2025), Table 1: 20.91B total / 3.61B active, 116.83B /
    // 5.13B; active there excludes the embedding table (it includes the unembedding). Derived
    // 20.915e9 / 4.187e9 − 0.579e9 = 3.608e9 and 116.829e9 / 5.712e9 − 0.579e9 = 5.133e9, with
    // the q/k/v/o and expert biases; the attention sinks (64 per layer) and router biases (32 or
    // 128 per layer) are not counted (< 1e-6 of the total).
    {"gpt-oss-20b", 20.91e9, 3.61e9, 0.01, 0.01, true},
    {"gpt-oss-120b", 116.83e9, 5.13e9, 0.01, 0.01, true},
    // Gemma 3 technical report (arXiv 2503.19786), Table 1, language model = embedding +
    // non-embedding: 4B 675M + 3,209M, 12B 1,012M + 10,759M, 27B 1,416M + 25,600M (the 417M
    // SigLIP encoder is left out). Derived 3.880e9, 11.766e9, 27.009e9; the non-embedding part
    // matches to the million (27B: 62 layers of 412,887,552 = 25,599,028,224); the q/k norms and
    // the extra pre- and post-FFN norms Gemma has (2h + 2·head_dim per layer) are not counted
    // (0.7e6 for the 27B).
    {"gemma-3-4b", 0.675e9 + 3.209e9, 0},
    {"gemma-3-12b", 1.012e9 + 10.759e9, 0},
    {"gemma-3-27b", 1.416e9 + 25.600e9, 0},
    // Phi-4: the model page's 14.7B (the report says "14B"). Derived 14,659,507,200.
    {"phi-4", 14.7e9, 0},
    // Mistral Small 3: named 24B, the model page's 23.6B. Derived 23,572,403,200.
    {"mistral-small-24b-2501", 23.6e9, 0},
    // Mistral Large 2 model card: 123B. Derived 122,610,069,504.
    {"mistral-large-2407", 123e9, 0},
    // Kimi K2 model card: 1T total, 32B activated (one and two digits). Derived 1.0264e12 (60
    // MoE layers of 385 experts of 3·7168·2048 and a 384-way router, 1 dense layer of
    // 3·7168·18432, 61 layers of latent attention of 101,122,048 with 64 heads, two 163840·7168
    // tables): within the rounding of a one-digit "1T" (±5 %); active 32.86e9, 31.69e9 without
    // the input embedding (1 % below "32B").
    {"kimi-k2-instruct", 1.0e12, 32e9, 0.03, 0.015, true},
    // GLM-4.5 report (arXiv 2508.06471) and model cards: 355B total / 32B active, GLM-4.5-Air
    // 106B / 12B. Derived 352.80e9 (the multi-token-prediction layer, ~4e9, is not counted) and
    // 106.85e9; active without the embedding and output tables (151552·h each), as Z.ai counts
    // it: 32.08e9 and 12.18e9 ("12B" rounds 12.18 to two digits: 1.5 %).
    {"glm-4.5", 355e9, 32e9, 0.01, 0.01, true, true},
    {"glm-4.5-air", 106e9, 12e9, 0.01, 0.02, true, true},
    // Nemotron 3 Nano model card: 31.6B total, 3.6B active with the embeddings. Derived
    // 31,577,937,344 (23 Mamba-2 layers of 38,742,208, 23 MoE layers of 1,297,465,344, 6
    // attention layers of 23,396,352, 52 norms, two 131072·2688 tables) and 3.580e9 active (6
    // routed experts of 2·2688·1856, the shared one of 2·2688·3712 and the router per MoE layer).
    {"nemotron-3-nano-30b-a3b", 31.6e9, 3.6e9},
    // Qwen3-Next-80B-A3B model card: 80B total, 3B activated. Derived 79,674,286,848 (below);
    // the model page's 81.3B adds the MTP layer (1.65e9). Active without the embedding and LM
    // head (2·151936·2048 = 0.622e9), as Qwen counts it: 3.253e9 (10 routed experts and the
    // shared one of 3·2048·512 per layer, 48 layers) for a one-digit "3B".
    {"qwen3-next-80b-a3b", 80e9, 3e9, 0.01, 0.1, true, true},
    // Falcon-H1 family (arXiv 2507.22448): "0.5B", one significant digit (±0.05e9). Derived
    // 521,503,264 (below).
    {"falcon-h1-0.5b", 0.5e9, 0, 0.05},
    // AI21-Jamba-1.5-Mini model card: 52B total, 12B active. Derived 51,570,315,264 and
    // 12,110,303,232 (below).
    {"jamba-1.5-mini", 52e9, 12e9},
};

TEST(ModelZoo, ParameterCountsMatchPublished) {
  for (const ZooCase& z : kZoo) {
    SCOPED_TRACE(z.id);
    const ParamCounts c = counts(z.id);
    EXPECT_TRUE(test::near_rel(c.total, z.published_total, z.total_tolerance))
        << c.total << " vs published " << z.published_total;
    if (z.published_active > 0) {
      const double active = c.active - (z.active_without_embedding ? c.embedding : 0) -
                            (z.active_without_lm_head ? c.lm_head : 0);
      EXPECT_TRUE(test::near_rel(active, z.published_active, z.active_tolerance))
          << active << " vs published " << z.published_active;
    } else {
      EXPECT_EQ(c.active, c.total);
    }
  }
}

TEST(ModelZoo, ExactCountsByHand) {
  // Llama 3.2 1B: 128256·2048 (tied) + 16·(2048·2048·2 + 2·2048·512 + 3·2048·8192 + 2·2048)
  // + 2048 = 262,668,288 + 16·60,821,504 + 2048 = 1,235,814,400.
  EXPECT_EQ(counts("llama-3.2-1b").total, 1235814400.0);
  // DeepSeek-V3 MLA attention per layer: q 7168·1536 + 1536·128·192 (+1536 norm, counted with
  // the norms), kv 7168·576 + 512·128·256, o 128·128·7168 = 187,105,280.
  EXPECT_EQ(counts("deepseek-v3").attention_per_layer, 187105280.0);
  EXPECT_EQ(counts("deepseek-v3").moe_layers, 58);  // 61 − first_k_dense_replace 3
  // Llama 4 Maverick: MoE on every second layer (interleave_moe_layer_step 2).
  EXPECT_EQ(counts("llama-4-maverick-17b-128e").moe_layers, 24);
  // gpt-oss-20b expert: gate_up 2880·5760 + 5760, down 2880·2880 + 2880 = 24,891,840.
  EXPECT_EQ(counts("gpt-oss-20b").expert_per_layer, 24891840.0);
  // Nemotron 3 Nano's Mamba-2 mixer (d_in 64·64 = 4096, 8 groups of state 128): in_proj
  // 2688·(2·4096 + 2·1024 + 64) = 27,697,152, conv1d (4096 + 2048)·(4 + 1) = 30,720, A, D and
  // dt bias 3·64, gated norm 4096, out_proj 4096·2688 = 11,010,048: 38,742,208. Each layer is
  // one block with one RMSNorm; the pattern holds 23 'M', 23 'E', 6 '*' and no '-'.
  const ParamCounts nano = counts("nemotron-3-nano-30b-a3b");
  EXPECT_EQ(nano.recurrent_per_layer, 38742208.0);
  EXPECT_EQ(nano.norms_per_layer, 2688.0);
  EXPECT_EQ(nano.recurrent_layers, 23);
  EXPECT_EQ(nano.moe_layers, 23);
  EXPECT_EQ(nano.attention_layers, 6);
  EXPECT_EQ(nano.dense_layers, 0);
  EXPECT_EQ(nano.total, 31577937344.0);
  // Nemotron 3 Super, LatentMoE: a routed expert maps the 1024-wide latent, up and down
  // 2·1024·2688 = 5,505,024 (on the 4096-wide hidden state it would be 4× that); the router
  // 4096·512 = 2,097,152 and the two latent projections 2·4096·1024 = 8,388,608 together
  // 10,485,760; the shared expert 2·4096·5376 = 44,040,192. A MoE layer: 512 · 5,505,024 +
  // 10,485,760 + 44,040,192 = 2,873,098,240, 40 of them 114,923,929,600. Mamba-2 (d_in 128·64 =
  // 8192, 8 groups of 128): 4096·(2·8192 + 2·1024 + 128) + (8192 + 2048)·5 + 3·128 + 8192 +
  // 8192·4096 = 109,635,968, 40 of them 4,385,438,720; attention 4096·4096 + 2·4096·256 +
  // 4096·4096 = 35,651,584, 8 of them 285,212,672; norms 88·4096 + 4096; embedding and LM head
  // 2·131072·4096 = 1,073,741,824: 120,668,687,360 (published "120B").
  const ParamCounts super =
      count_params(io::resolve_model(json("nemotron-3-super-120b-a12b"), "model"));
  EXPECT_EQ(super.expert_per_layer, 5505024.0);
  EXPECT_EQ(super.router_per_layer, 10485760.0);
  EXPECT_EQ(super.recurrent_per_layer, 109635968.0);
  EXPECT_EQ(super.moe_layers, 40);
  EXPECT_EQ(super.attention_layers, 8);
  EXPECT_EQ(super.total, 120668687360.0);
}

TEST(ModelZoo, Qwen3NextGatedDeltaNetAndGatedAttention) {
  // A gated DeltaNet mixer (q, k 16 heads of 128 = 2048 wide; v and the gate z 32 heads of 128 =
  // 4096): in_proj 2048·(2·2048 + 2·4096 + 2·32) = 25,296,896, conv1d (2·2048 + 4096)·4 =
  // 32,768 (no bias), A_log and dt_bias 2·32, the gated norm 128, out_proj 4096·2048 =
  // 8,388,608: 33,718,464. Gated attention: q_proj 2048·(16·256·2) = 16,777,216 (the output
  // gate doubles it), k and v 2·2048·512 = 2,097,152, o_proj 4096·2048 = 8,388,608: 27,262,976.
  // A MoE layer: 512 experts of 3·2048·512 = 1,610,612,736, the router 2048·512, the shared
  // expert 3,145,728: 1,614,807,040. Total: 36 · 33,718,464 + 12 · 27,262,976 + 48 ·
  // 1,614,807,040 + 96 norms · 2048 + final 2048 + 2 · 151936·2048 = 79,674,286,848. The
  // checkpoint's 79,674,391,296 (without MTP) adds the shared experts' sigmoid gates (48 · 2048)
  // and the q/k norms (12 · 2 · 256), 104,448 weights (1.3e-6) flopcast does not count.
  const ParamCounts next = counts("qwen3-next-80b-a3b");
  EXPECT_EQ(next.recurrent_per_layer, 33718464.0);
  EXPECT_EQ(next.attention_per_layer, 27262976.0);
  EXPECT_EQ(next.recurrent_layers, 36);
  EXPECT_EQ(next.attention_layers, 12);
  EXPECT_EQ(next.moe_layers, 48);
  EXPECT_EQ(next.dense_layers, 0);
  EXPECT_EQ(next.total, 79674286848.0);
  expect_fields(imported("qwen3-next-80b-a3b"), {{"num_layers", 96},
                                                 {"gdn_key_heads", 16},
                                                 {"gdn_value_heads", 32},
                                                 {"gdn_key_head_dim", 128},
                                                 {"gdn_value_head_dim", 128},
                                                 {"gdn_conv_kernel", 4},
                                                 {"attention_output_gate", true},
                                                 {"num_experts", 512},
                                                 {"experts_per_token", 10},
                                                 {"intermediate_size", 512},
                                                 {"shared_experts", 1},
                                                 {"tie_embeddings", false}});
  std::string pattern;
  for (int i = 0; i < 12; ++i) pattern += "GEGEGE*E";
  EXPECT_EQ(imported("qwen3-next-80b-a3b")["layer_pattern"], pattern);
}

TEST(ModelZoo, FalconH1ParallelMambaAndAttention) {
  // Every Falcon-H1 decoder layer runs a Mamba-2 mixer and attention side by side, then a gated
  // MLP: three pattern layers "M*-". Mamba-2 (d_in 24·64 = 1536, 1 group of state 128): in_proj
  // 1024·(2·1536 + 2·128 + 24) = 3,432,448, conv1d (1536 + 256)·(4 + 1) = 8,960, A, D and dt
  // bias 3·24, gated norm 1536, out_proj 1536·1024 = 1,572,864: 5,015,880. Attention
  // 1024·512 + 2·1024·128 + 512·1024 = 1,310,720; MLP 3·1024·2048 = 6,291,456; three norms of
  // 1024. A decoder layer: 12,621,128; 36 of them 454,360,608; untied 32784·1024 tables
  // 67,141,632 and the final norm: 521,503,264. The checkpoint has two norms a layer and no
  // gated norm (mamba_rms_norm false): 92,160 fewer (1.8e-4).
  const ParamCounts f = counts("falcon-h1-0.5b");
  EXPECT_EQ(f.recurrent_per_layer, 5015880.0);
  EXPECT_EQ(f.attention_per_layer, 1310720.0);
  EXPECT_EQ(f.recurrent_layers, 36);
  EXPECT_EQ(f.attention_layers, 36);
  EXPECT_EQ(f.dense_layers, 36);
  EXPECT_EQ(f.total, 521503264.0);
  std::string pattern;
  for (int i = 0; i < 36; ++i) pattern += "M*-";
  expect_fields(imported("falcon-h1-0.5b"), {{"num_layers", 108},
                                             {"layer_pattern", pattern},
                                             {"mamba_heads", 24},
                                             {"mamba_head_dim", 64},
                                             {"mamba_state_dim", 128},
                                             {"mamba_groups", 1},
                                             {"mamba_chunk_tokens", 128},
                                             {"tie_embeddings", false}});
}

TEST(ModelZoo, JambaMamba1AndAttentionEveryEighthLayer) {
  // Jamba 1.5 Mini: decoder layer i (from 0) attends where i % 8 == 4 (4 layers), else a Mamba-1
  // mixer (28); experts where i % 2 == 1 (16), else a dense FFN (16). Mamba-1 (8192 channels,
  // state 16, dt rank 256, conv 4): in_proj 4096·2·8192 = 67,108,864, conv1d 8192·(4 + 1) =
  // 40,960, x_proj 8192·(256 + 2·16) = 2,359,296, dt_proj (256 + 1)·8192 = 2,105,344, A 8192·16
  // = 131,072, D 8192, out_proj 8192·4096 = 33,554,432: 105,308,160 (Jamba's RMSNorms of dt, B
  // and C, 288 weights, are not counted). Attention 2·4096·4096 + 2·4096·1024 = 41,943,040; a
  // dense FFN 3·4096·14336 = 176,160,768; a MoE layer 16 of them + the router 4096·16 =
  // 2,818,637,824. Total: 28 · 105,308,160 + 4 · 41,943,040 + 16 · 176,160,768 + 16 ·
  // 2,818,637,824 + 65 norms of 4096 + 2 · 65536·4096 = 51,570,315,264; active (2 experts a
  // MoE layer: 352,387,072) 12,110,303,232.
  const ParamCounts j = counts("jamba-1.5-mini");
  EXPECT_EQ(j.recurrent_per_layer, 105308160.0);
  EXPECT_EQ(j.attention_per_layer, 41943040.0);
  EXPECT_EQ(j.recurrent_layers, 28);
  EXPECT_EQ(j.attention_layers, 4);
  EXPECT_EQ(j.moe_layers, 16);
  EXPECT_EQ(j.dense_layers, 16);
  EXPECT_EQ(j.total, 51570315264.0);
  EXPECT_EQ(j.active, 12110303232.0);
  expect_fields(imported("jamba-1.5-mini"), {{"num_layers", 64},
                                             {"mamba1_inner_size", 8192},
                                             {"mamba1_state_dim", 16},
                                             {"mamba1_dt_rank", 256},
                                             {"mamba1_conv_kernel", 4},
                                             {"num_experts", 16},
                                             {"experts_per_token", 2},
                                             {"tie_embeddings", false}});
  std::string pattern;
  for (int i = 0; i < 4; ++i) pattern += "S-SES-SE*-SES-SE";
  EXPECT_EQ(imported("jamba-1.5-mini")["layer_pattern"], pattern);
}

TEST(ModelZoo, NemotronHPatternAndMamba) {
  expect_fields(imported("nemotron-3-nano-30b-a3b"),
                {{"layer_pattern", "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"},
                 {"mamba_heads", 64},
                 {"mamba_head_dim", 64},
                 {"mamba_state_dim", 128},  // ssm_state_size
                 {"mamba_groups", 8},       // n_groups (n_group is the routing's)
                 {"mamba_conv_kernel", 4},
                 {"mamba_chunk_tokens", 128},
                 {"ffn", "plain"},     // relu2: up, down
                 {"norm", "rmsnorm"},  // norm_eps, though layer_norm_epsilon is set too
                 {"intermediate_size", 1856},
                 {"shared_experts", 1},
                 {"shared_expert_intermediate_size", 3712},
                 {"dense_intermediate_size", nullptr},  // no '-' layer
                 {"expert_groups", nullptr}});
}

TEST(ModelZoo, NameIsTheFileNameWithoutNameOrPath) {
  for (const ZooCase& z : kZoo) {
    EXPECT_EQ(imported(z.id).at("name"), z.id);  // none of these configs has _name_or_path
  }
  json c = test::hf_fixture("qwen3-8b");
  c["_name_or_path"] = "Qwen/Qwen3-8B";
  EXPECT_EQ(io::model_from_hf_config(c, "config.json").at("name"), "Qwen/Qwen3-8B");
  EXPECT_EQ(io::model_from_hf_config(test::hf_fixture("qwen3-8b")).at("name"), "custom model");
  EXPECT_EQ(io::model_from_hf_config(test::hf_fixture("qwen3-8b"), "C:\\models\\q.json").at("name"),
            "q");
}

// expect_fields: null stands for a key the importer leaves out (the model reader's default).
TEST(ModelZoo, Llama4ChunkedAttentionAndSharedExpert) {
  expect_fields(imported("llama-4-scout-17b-16e"),
                {{"num_experts", 16},
                 {"experts_per_token", 1},
                 {"shared_experts", 1},
                 {"intermediate_size", 8192},         // one expert
                 {"dense_intermediate_size", 16384},  // intermediate_size_mlp
                 {"moe_layer_interval", nullptr},     // every layer has experts
                 {"sliding_window_tokens", 8192},     // attention_chunk_size
                 {"local_attention", "chunked"},
                 {"global_attention_every", 4},  // no_rope_layers: every 4th layer is NoPE
                 {"tie_embeddings", false},
                 {"vocab_size", 202048}});
  expect_fields(imported("llama-4-maverick-17b-128e"),
                {{"num_experts", 128}, {"moe_layer_interval", 2}});  // interleave_moe_layer_step
}

TEST(ModelZoo, Qwen3MoeExpertWidths) {
  expect_fields(imported("qwen3-30b-a3b"),
                {{"intermediate_size", 768},
                 {"dense_intermediate_size", 6144},
                 {"num_experts", 128},
                 {"experts_per_token", 8},
                 {"num_kv_heads", 4},
                 {"head_dim", 128},  // 32 heads of 128 on a 2048 residual
                 {"shared_experts", nullptr},
                 {"sliding_window_tokens", nullptr}});  // use_sliding_window false
  EXPECT_EQ(imported("qwen3-0.6b").at("tie_embeddings"), true);
  EXPECT_EQ(imported("qwen3-8b").at("tie_embeddings"), false);
}

TEST(ModelZoo, KimiK2AndGlm45) {
  // Kimi K2: DeepSeek-V3's latent attention with half the heads, 384 experts, one dense layer,
  // FP8 blocks like DeepSeek's.
  expect_fields(imported("kimi-k2-instruct"), {{"num_heads", 64},
                                               {"num_kv_heads", 64},
                                               {"kv_lora_rank", 512},
                                               {"head_dim", 192},
                                               {"num_experts", 384},
                                               {"shared_experts", 1},
                                               {"first_dense_layers", 1},
                                               {"intermediate_size", 2048},
                                               {"dense_intermediate_size", 18432},
                                               {"mtp_layers", nullptr},
                                               {"checkpoint_weights", "fp8"}});
  // GLM-4.5: grouped-query attention with q/k/v biases (attention_bias), 3 dense layers, one
  // MTP layer, bf16.
  expect_fields(imported("glm-4.5"), {{"num_heads", 96},
                                      {"num_kv_heads", 8},
                                      {"head_dim", 128},
                                      {"qkv_bias", true},
                                      {"num_experts", 160},
                                      {"first_dense_layers", 3},
                                      {"mtp_layers", 1},
                                      {"checkpoint_weights", nullptr}});
}

TEST(ModelZoo, DeepSeekV3LatentAttentionAndFp8) {
  const json m = imported("deepseek-v3");
  expect_fields(m, {{"kv_lora_rank", 512},
                    {"q_lora_rank", 1536},
                    {"head_dim", 192},  // qk_nope 128 + qk_rope 64
                    {"v_head_dim", 128},
                    {"num_kv_heads", 128},
                    {"first_dense_layers", 3},
                    {"shared_experts", 1},
                    {"intermediate_size", 2048},
                    {"dense_intermediate_size", 18432}});
  // quantization_config: fp8 with weight_block_size [128, 128].
  EXPECT_EQ(io::precision_from_hf_config(test::hf_fixture("deepseek-v3")),
            json({{"weights", "fp8"}, {"weight_scaling", "block"}}));
  json v3 = m, r1 = imported("deepseek-r1");  // R1 is V3's architecture
  v3.erase("name");
  r1.erase("name");
  EXPECT_EQ(v3, r1);
}

TEST(ModelZoo, GptOssAlternatingWindowBiasesAndMxfp4) {
  expect_fields(imported("gpt-oss-120b"),
                {{"sliding_window_tokens", 128},
                 {"local_attention", "sliding"},
                 {"global_attention_every", 2},  // layer_types: sliding, full, sliding, ...
                 {"qkv_bias", true},
                 {"linear_bias", true},
                 {"num_experts", 128},
                 {"experts_per_token", 4},
                 {"intermediate_size", 2880}});
  // MXFP4 experts; modules_to_not_convert keeps "model.layers.*.self_attn" in the config's bf16.
  EXPECT_EQ(io::precision_from_hf_config(test::hf_fixture("gpt-oss-20b")),
            json({{"weights", "mxfp4"}, {"attention_weights", "bf16"}}));
}

TEST(ModelZoo, Gemma3TakesTheConfigClassDefaults) {
  // gemma-3-4b-it's text_config names only hidden, intermediate and layer sizes; the rest is
  // Gemma3TextConfig's: 8 heads, 4 KV heads of 256, vocabulary 262208, pattern of 6, tied.
  expect_fields(imported("gemma-3-4b"), {{"num_heads", 8},
                                         {"num_kv_heads", 4},
                                         {"head_dim", 256},
                                         {"vocab_size", 262208},
                                         {"max_context_tokens", 131072},
                                         {"tie_embeddings", true},
                                         {"sliding_window_tokens", 1024},
                                         {"global_attention_every", 6}});
  expect_fields(imported("gemma-3-27b"), {{"head_dim", 128}, {"num_kv_heads", 16}});
}

TEST(ModelZoo, DenseModelsKeyFields) {
  expect_fields(imported("phi-4"),
                {{"num_kv_heads", 10}, {"vocab_size", 100352}, {"tie_embeddings", false}});
  expect_fields(imported("mistral-small-24b-2501"), {{"head_dim", 128},  // not 5120 / 32 = 160
                                                     {"sliding_window_tokens", nullptr}});
  expect_fields(imported("mistral-large-2407"), {{"num_layers", 88}, {"num_kv_heads", 8}});
  expect_fields(imported("llama-3.2-1b"), {{"head_dim", 64}, {"tie_embeddings", true}});
}

TEST(ModelZoo, EveryPresetIsItsImportedFixture) {
  // presets/models/<id>.json were generated from these fixtures: the same model object.
  for (const ZooCase& z : kZoo) {
    SCOPED_TRACE(z.id);
    json preset = io::preset("models", z.id, "model").at("model");
    json m = imported(z.id);
    preset.erase("name");
    m.erase("name");
    EXPECT_EQ(preset, m);
  }
}

}  // namespace
}  // namespace flopcast
