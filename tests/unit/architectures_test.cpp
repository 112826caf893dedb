// SPDX-License-Identifier: MIT
// The 2026 architecture mechanisms, each with its hand derivation: multi-head latent attention,
// shared experts and dense layers of MoE models, sliding-window and chunked attention with
// periodic global layers, FP4 weights, uneven pipeline stages.
#include <gtest/gtest.h>

#include <string>

#include "flopcast/collective.hpp"
#include "flopcast/error.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/serving.hpp"
#include "flopcast/training.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using test::near_rel;

HardwareSpec hw(const char* id) { return io::resolve_hardware(io::json(id), "hardware"); }

/// DeepSeek-V3 (config.json of deepseek-ai/DeepSeek-V3; MTP layer left out).
ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "DeepSeek-V3";
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.num_heads = 128;
  m.num_kv_heads = 128;
  m.head_dim = 192;
  m.intermediate_size = 2048;
  m.vocab_size = 129280;
  m.max_context_tokens = 163840;
  m.num_experts = 256;
  m.experts_per_token = 8;
  m.shared_experts = 1;
  m.dense_intermediate_size = 18432;
  m.first_dense_layers = 3;
  m.kv_lora_rank = 512;
  m.q_lora_rank = 1536;
  m.qk_rope_head_dim = 64;
  m.qk_nope_head_dim = 128;
  m.v_head_dim = 128;
  return m;
}

/// Mistral-7B-v0.1: a 4096-token sliding window on every layer.
ModelSpec mistral_v01() {
  ModelSpec m;
  m.name = "Mistral-7B-v0.1";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 14336;
  m.vocab_size = 32000;
  m.max_context_tokens = 32768;
  m.window_tokens = 4096;
  return m;
}

InferenceSpec inference(const ModelSpec& m, const char* gpu, int tp, int prompt, int output) {
  InferenceSpec s;
  s.model = m;
  s.hardware = hw(gpu);
  s.num_gpus = tp;
  s.tp = tp;
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  s.kernel.use_calibration = false;  // hand derivations are of Tier 0
  return s;
}

/// The estimate of `s` fails with exactly `message` (field, rule, value).
void expect_rejected(const InferenceSpec& s, const std::string& message) {
  try {
    (void)estimate_inference(s);
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

const BreakdownItem& item(const InferenceResult& r, const std::string& phase,
                          const std::string& op) {
  for (const auto& b : r.breakdown) {
    if (b.phase == phase && b.op == op) return b;
  }
  ADD_FAILURE() << "no breakdown item " << phase << "/" << op;
  static const BreakdownItem none;
  return none;
}

TEST(Architectures, AttendedPairs) {
  // Full causal, 4 queries from position 1: 1 + 2 + 3 + 4 = 10.
  EXPECT_DOUBLE_EQ(attended_pairs(0, 4, 0, LocalAttention::sliding), 10);
  // Sliding window 2: min(p, 2) for p = 1..4: 1 + 2 + 2 + 2 = 7.
  EXPECT_DOUBLE_EQ(attended_pairs(0, 4, 2, LocalAttention::sliding), 7);
  // Chunks of 2: positions 1..4 see 1, 2, 1, 2 keys = 6.
  EXPECT_DOUBLE_EQ(attended_pairs(0, 4, 2, LocalAttention::chunked), 6);
  // After 3 cached tokens, queries at 4 and 5: sliding 2 + 2 = 4; chunked (4 → 2, 5 → 1) = 3;
  // full 4 + 5 = 9 = n·c + n(n+1)/2 = 6 + 3.
  EXPECT_DOUBLE_EQ(attended_pairs(3, 2, 2, LocalAttention::sliding), 4);
  EXPECT_DOUBLE_EQ(attended_pairs(3, 2, 2, LocalAttention::chunked), 3);
  EXPECT_DOUBLE_EQ(attended_pairs(3, 2, 0, LocalAttention::sliding), 9);
  // Decode: a query after 10 cached tokens sees min(10, 4) = 4 (sliding); in chunks of 4 the
  // mean over a chunk, (4 + 1)/2 = 2.5.
  EXPECT_DOUBLE_EQ(attended_context(10, 4, LocalAttention::sliding), 4);
  EXPECT_DOUBLE_EQ(attended_context(10, 4, LocalAttention::chunked), 2.5);
  EXPECT_DOUBLE_EQ(attended_context(3, 4, LocalAttention::chunked), 3);
}

TEST(Architectures, LayerKindsFollowThePatterns) {
  ModelSpec m = deepseek_v3();
  // First 3 layers dense, 58 MoE; no window.
  std::vector<LayerKind> k = layer_kinds(m);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].count, 3);
  EXPECT_FALSE(k[0].moe);
  EXPECT_EQ(k[1].count, 58);
  EXPECT_TRUE(k[1].moe);
  // Gemma 3 style: 12 layers, window 1024, every 6th global: 10 local + 2 global.
  ModelSpec g = mistral_v01();
  g.num_layers = 12;
  g.window_tokens = 1024;
  g.global_attention_every = 6;
  k = layer_kinds(g);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].count, 10);
  EXPECT_TRUE(k[0].local);
  EXPECT_EQ(k[1].count, 2);
  EXPECT_FALSE(k[1].local);
  // Llama 4 Maverick style: MoE every 2nd layer of 48: 24 dense, 24 MoE.
  ModelSpec l = mistral_v01();
  l.num_layers = 48;
  l.window_tokens = 0;
  l.num_experts = 128;
  l.experts_per_token = 1;
  l.moe_layer_interval = 2;
  EXPECT_EQ(count_params(l).moe_layers, 24);
}

TEST(Architectures, DeepSeekV3ParameterCount) {
  // Per layer: q_a 7168·1536 + q_b 1536·128·192 + kv_a 7168·576 + kv_b 512·128·256 + o 128·128·
  // 7168 = 187,105,280; norms 2·7168 + 1536 + 512. MoE layer: 257 experts of 3·7168·2048 + router
  // 7168·256 (×58); dense layer 3·7168·18432 (×3); embeddings 2·129280·7168; final norm 7168.
  // Total 671.026e9 (published: 671B without the MTP module); active (8 routed + 1 shared)
  // 37.55e9 (published: 37B).
  const ParamCounts c = count_params(deepseek_v3());
  EXPECT_NEAR(c.total, 671.026404352e9, 1e3);
  EXPECT_NEAR(c.active, 37.552282624e9, 1e3);
  EXPECT_EQ(c.moe_layers, 58);
}

TEST(Architectures, MlaCachesOneLatentPerTokenReplicatedAcrossTp) {
  // bf16 KV, TP 8: each rank caches the whole latent, (512 + 64) · 2 B per layer and token:
  // 61 · 1152 = 70,272 B per token per GPU (standard MHA with 128 heads of 192/128 would cache
  // 61 · 128/8 · (192 + 128) · 2 = 624,640 B).
  InferenceSpec s = inference(deepseek_v3(), "h200-sxm", 8, 4095, 2);
  s.weights = DType::fp8;
  const InferenceResult r = estimate_inference(s);
  EXPECT_DOUBLE_EQ(r.memory.kv_cache_bytes_per_token, 70272);
}

TEST(Architectures, MlaDecodeIsAbsorbedMultiQueryAttention) {
  // One decode step at context 4096 (prompt 4095, output 2): per layer the absorbed kernel reads
  // 4096 latents of 576 · 2 B and writes Q and O of 16 heads (128/8) of (576 + 512) · 2 B:
  // 4,718,592 + 34,816 = 4,753,408 B; × 61 layers = 289,957,888 B. FLOPs: 2 · 4096 · 16 ·
  // (576 + 512) per layer = 142,606,336; × 61 = 8,698,986,496.
  InferenceSpec s = inference(deepseek_v3(), "h200-sxm", 8, 4095, 2);
  s.weights = DType::fp8;
  const InferenceResult r = estimate_inference(s);
  const BreakdownItem& a = item(r, "decode", "attention");
  EXPECT_NEAR(a.bytes, 289957888.0, 1);
  EXPECT_NEAR(a.flops, 8698986496.0, 1);
  // Prefill runs the expanded path: 16 heads of q·k 192 and v 128 over the causal triangle of
  // 4095 tokens, 2 · 16 · (192 + 128) · 4095 · 4096 / 2 per layer, × 61.
  const BreakdownItem& p = item(r, "prefill", "attention");
  EXPECT_NEAR(p.flops, 61.0 * 2 * 16 * 320 * 4095.0 * 4096 / 2, 1e3);
}

/// DeepSeek-V3.2: DeepSeek-V3 with DeepSeek sparse attention (index_n_heads 64, index_head_dim
/// 128, index_topk 2048).
ModelSpec deepseek_v32() {
  ModelSpec m = deepseek_v3();
  m.dsa_index_heads = 64;
  m.dsa_index_head_dim = 128;
  m.dsa_topk_tokens = 2048;
  return m;
}

TEST(Architectures, SparseAttentionIndexesEveryTokenAndAttendsToTheTopK) {
  // DeepSeek-V3.2 on 8 H200 (TP 8), prompt 4095, one decode step at context 4096.
  // Parameters: V3's 671,026,404,352 + the indexer, replicated per layer: wq_b 1536·64·128 +
  // wk and weights_proj 7168·(128 + 64) + its key's LayerNorm 2·128 = 13,959,424; × 61 =
  // 851,524,864.
  EXPECT_NEAR(count_params(deepseek_v32()).total, 671026404352.0 + 851524864.0, 1e3);
  // KV per token and GPU: V3's latent 61 · 1152 B + the fp8 index key and its fp32 scale 61 ·
  // (128 + 4) = 70,272 + 8,052 = 78,324 B.
  InferenceSpec s = inference(deepseek_v32(), "h200-sxm", 8, 4095, 2);
  s.weights = DType::fp8;
  const InferenceResult r = estimate_inference(s);
  EXPECT_DOUBLE_EQ(r.memory.kv_cache_bytes_per_token, 78324);
  // Decode, per layer: the top 2048 of the 4096 latents read (2048 · 576 · 2 B = 2,359,296) and
  // Q, O of 16 heads of (576 + 512) · 2 B (34,816); the indexer reads the 4096 index keys (4096 ·
  // 132 = 540,672) and its fp8 query (64 · 128 = 8,192) and writes and reads a 4-byte logit a
  // key (32,768): 2,975,744 B; × 61 = 181,520,384. FLOPs: 2 · 2048 · 16 · 1088 = 71,303,168 +
  // the indexer's 2 · 64 · 128 · 4096 = 67,108,864; × 61 = 8,443,133,952.
  const BreakdownItem& a = item(r, "decode", "attention");
  EXPECT_NEAR(a.bytes, 181520384.0, 1);
  EXPECT_NEAR(a.flops, 8443133952.0, 1);
  // Prefill runs the same MQA mode over each query's top-k: Σ min(p, 2048) for p ≤ 4095 =
  // 6,290,432 pairs · 2 · 16 · 1088 = 219,007,680,512; the indexer scores the whole causal
  // triangle, 4095 · 4096 / 2 = 8,386,560 pairs · 2 · 64 · 128 = 137,405,399,040; × 61 =
  // 21,741,197,852,672.
  EXPECT_NEAR(item(r, "prefill", "attention").flops, 21741197852672.0, 1e4);
  // Training with the indexer is refused by name.
  TrainingSpec t;
  t.model = deepseek_v32();
  try {
    (void)estimate_training(t);
    ADD_FAILURE() << "training a DSA model was accepted";
  } catch (const NotModelledError& e) {
    EXPECT_EQ(e.path(), "model.dsa_topk_tokens");
  }
}

TEST(Architectures, SparseAttentionNeedsLatentAttention) {
  InferenceSpec s = inference(deepseek_v32(), "h200-sxm", 8, 4095, 2);
  s.model.q_lora_rank = 0;
  expect_rejected(s,
                  "model.dsa_topk_tokens: DeepSeek sparse attention is modelled over multi-head "
                  "latent attention with a q latent (model.kv_lora_rank and q_lora_rank > 0) only "
                  "(got 2048)");
  s.model = deepseek_v32();
  s.model.dsa_index_heads = 0;
  expect_rejected(s, "model.dsa_index_heads: must be between 1 and 100000 (got 0)");
}

TEST(Architectures, DataParallelAttentionSplitsTheLatentCacheAndReplicatesAttention) {
  // DeepSeek-V3 fp8 on 8 H200, batch 8 at context 4096, attention data-parallel over the 8 GPUs
  // (SGLang --enable-dp-attention): each GPU caches only its own sequence's latent,
  // 70,272 / 8 = 8,784 B per token of the replica per GPU, where TP 8 replicates it.
  InferenceSpec tp = inference(deepseek_v3(), "h200-sxm", 8, 4095, 2);
  tp.weights = DType::fp8;
  tp.batch_size = 8;
  InferenceSpec dp = tp;
  dp.dp_attention = true;
  const InferenceResult rt = estimate_inference(tp);
  const InferenceResult rd = estimate_inference(dp);
  EXPECT_DOUBLE_EQ(rt.memory.kv_cache_bytes_per_token, 70272);
  EXPECT_DOUBLE_EQ(rd.memory.kv_cache_bytes_per_token, 8784);
  // Decode attention of the busiest GPU: one sequence of all 128 heads, 4096 · 1152 B of latent
  // plus Q and O of 128 · (576 + 512) · 2 B = 4,997,120 B per layer, × 61 = 304,824,320 B; under
  // TP each GPU reads all 8 sequences' latents for its 16 heads: 8 · 4,753,408 · 61.
  EXPECT_NEAR(item(rd, "decode", "attention").bytes, 304824320.0, 1);
  EXPECT_NEAR(item(rt, "decode", "attention").bytes, 8 * 4753408.0 * 61, 1);
  // Every GPU holds the whole attention weights: per layer q_a 1536·7168 and kv_a 576·7168 (kept
  // whole under TP too), q_b 128·192·1536, kv_b 128·256·512, o 7168·128·128 = 187,105,280
  // parameters, against 36,634,624 per TP-8 rank: 61 · 150,470,656 fp8 bytes more.
  EXPECT_NEAR(rd.memory.weights_bytes - rt.memory.weights_bytes, 61 * 150470656.0, 1e3);
  // The MoE FFN stays tensor-parallel over all 8 sequences' tokens: same bytes either way.
  EXPECT_DOUBLE_EQ(item(rd, "decode", "moe_experts").bytes,
                   item(rt, "decode", "moe_experts").bytes);

  // Attention in 4 groups of 2 GPUs (SGLang --tp 8 --dp-size 4 --enable-dp-attention:
  // attention_tp 8 / 4 = 2). A group caches its own 2 sequences' latents, each on both of its
  // GPUs: 70,272 / 4 = 17,568 B per token of the replica per GPU.
  InferenceSpec groups = dp;
  groups.attention_tp = 2;
  const InferenceResult rg = estimate_inference(groups);
  EXPECT_DOUBLE_EQ(rg.memory.kv_cache_bytes_per_token, 17568);
  // Prefill: 8 prompts of 4095 tokens run in ceil(8 · 4095 / 8192) = 4 chunks of 2 prompts'
  // tokens. Each GPU prefills its own prompt, a quarter of it a chunk: the busiest GPU attends
  // one prompt over all 128 heads, 2 · 128 · (192 + 128) · 4095 · 4096 / 2 · 61 =
  // 41,908,646,707,200 FLOPs, what a TP-8 GPU does for 8 prompts over 16 heads (not one whole
  // prompt a chunk: 4x that).
  EXPECT_NEAR(item(rd, "prefill", "attention").flops, 41908646707200.0, 1e4);
  EXPECT_NEAR(item(rt, "prefill", "attention").flops, 41908646707200.0, 1e4);
  // Decode attention of the busiest GPU: its group's 2 sequences over 64 of the 128 heads, per
  // sequence 4096 · 1152 B of latent plus Q and O of 64 · (576 + 512) · 2 B = 4,857,856 B per
  // layer, × 2 × 61 = 592,658,432 B.
  EXPECT_NEAR(item(rg, "decode", "attention").bytes, 592658432.0, 1);
  // Weights: q_a and kv_a whole on every GPU (15,138,816 parameters a layer), q_b, kv_b and o
  // (171,966,464) split 2 ways: 101,122,048 against TP 8's 36,634,624, 61 · 64,487,424 fp8
  // bytes more per GPU.
  EXPECT_NEAR(rg.memory.weights_bytes - rt.memory.weights_bytes, 61 * 64487424.0, 1e3);
  // The groups' o_proj partial sums ride the gathering all-reduce of one-GPU groups: the same
  // bytes; the MoE FFN is as before.
  EXPECT_DOUBLE_EQ(item(rg, "decode", "tp_comm").bytes, item(rd, "decode", "tp_comm").bytes);
  EXPECT_DOUBLE_EQ(item(rg, "decode", "moe_experts").bytes,
                   item(rt, "decode", "moe_experts").bytes);
}

TEST(Architectures, AttentionGroupsAreCheckedAgainstTheirLayout) {
  InferenceSpec s = inference(deepseek_v3(), "h200-sxm", 8, 1024, 2);
  s.weights = DType::fp8;
  s.attention_tp = 2;
  expect_rejected(s,
                  "parallelism.attention_tp: needs parallelism.dp_attention: it is the size of "
                  "each data-parallel attention group (got 2)");
  s.dp_attention = true;
  s.attention_tp = 3;
  expect_rejected(s,
                  "parallelism.attention_tp: must divide parallelism.tp (8) and be smaller: "
                  "tp / attention_tp data-parallel attention groups (got 3)");
  s.attention_tp = 8;  // one group of all 8 GPUs is tensor parallelism: dp_attention false
  expect_rejected(s,
                  "parallelism.attention_tp: must divide parallelism.tp (8) and be smaller: "
                  "tp / attention_tp data-parallel attention groups (got 8)");
  s.attention_tp = 2;
  s.ep = 8;
  s.moe_dispatch = MoeDispatch::all_to_all;
  try {
    (void)estimate_inference(s);
    ADD_FAILURE() << "all_to_all with attention groups was accepted";
  } catch (const NotModelledError& e) {
    EXPECT_EQ(e.path(), "parallelism.moe_dispatch");
  }
  // Unset, the dispatch of a group spanning nodes stays the all-reduce pair with attention
  // groups (the all-to-all default is for one-GPU groups).
  InferenceSpec wide = inference(deepseek_v3(), "h100-sxm", 16, 1024, 2);
  wide.weights = DType::fp8;
  wide.dp_attention = true;
  wide.ep = 16;
  EXPECT_EQ(moe_dispatch_of(wide), MoeDispatch::all_to_all);
  wide.attention_tp = 8;
  EXPECT_EQ(moe_dispatch_of(wide), MoeDispatch::all_reduce);
}

TEST(Architectures, DataParallelAttentionNeedsTensorParallelGpus) {
  InferenceSpec s = inference(deepseek_v3(), "h200-sxm", 1, 1024, 2);
  s.weights = DType::fp8;
  s.dp_attention = true;
  expect_rejected(s,
                  "parallelism.dp_attention: needs parallelism.tp > 1, the GPUs attention is "
                  "data-parallel over (got true, with tp 1)");
}

TEST(Architectures, ExpertParallelismRunsWholeExpertsOnAShareOfTheGpus) {
  // DeepSeek-V3 fp8 on 8 H200, batch 8 decoding (8 tokens a step), experts sharded ep 8 (32
  // whole experts a GPU) against tp 8 (every expert's 2048 columns split 8 ways). Per GPU the
  // FLOPs (1/8 of 2 · 8 tokens · 8 experts · 3 · 2048 · 7168 plus the router) and the expert
  // weights (256 · 3 · 2048 · 7168 / 8 B) are the same; what EP saves is activation traffic: a
  // GPU reads only the hidden states routed to its experts (1/8 of 8 · 8 · 7168 fp8 bytes into
  // gate/up) and writes only their outputs (1/8 of 8 · 8 · 7168 bf16 bytes out of down), where
  // under TP every GPU reads and writes all of them. 58 MoE layers · 7/8 · 64 · 7168 · (1 + 2) B
  // = 69,844,992 B less.
  InferenceSpec tp = inference(deepseek_v3(), "h200-sxm", 8, 4095, 2);
  tp.weights = DType::fp8;
  tp.batch_size = 8;
  InferenceSpec ep = tp;
  ep.ep = 8;
  const InferenceResult rt = estimate_inference(tp);
  const InferenceResult re = estimate_inference(ep);
  const BreakdownItem& mt = item(rt, "decode", "moe_experts");
  const BreakdownItem& me = item(re, "decode", "moe_experts");
  EXPECT_NEAR(me.flops, mt.flops, 1e-9 * mt.flops);
  EXPECT_NEAR(mt.bytes - me.bytes, 69844992.0, 1e-6 * mt.bytes);
  EXPECT_DOUBLE_EQ(re.memory.weights_bytes, rt.memory.weights_bytes);
  EXPECT_LT(me.time_s, mt.time_s);
}

TEST(Architectures, WideExpertParallelismDispatchesRoutedTokensAllToAll) {
  // DeepSeek-V3 fp8 on two nodes of 8 H100, attention data-parallel over all 16 GPUs and ep 16
  // (16 whole experts a GPU), batch 256 decoding: each GPU owns 16 sequences, one token each a
  // step. A rank holds none of a token's 8 distinct experts with probability
  // Π_{i<8} (240 − i)/(256 − i) = 0.592295, so a token goes to 16 · 0.407705 = 6.5233 ranks.
  // The dispatch sends it in the fp8 the expert GEMMs read (1 B an element), the combine returns
  // bf16 (2 B): each priced at the mean 1.5 B, 16 tokens · 6.5233 · 7168 · 1.5 B = 1,122,213 B,
  // × 2 × 58 MoE layers = 130,176,688 B a step.
  InferenceSpec s = inference(deepseek_v3(), "h100-sxm", 16, 4095, 2);
  s.weights = DType::fp8;
  s.batch_size = 256;
  s.dp_attention = true;
  s.ep = 16;
  EXPECT_EQ(moe_dispatch_of(s), MoeDispatch::all_to_all);  // the group spans two nodes
  const InferenceResult wide = estimate_inference(s);
  EXPECT_NEAR(item(wide, "decode", "ep_all_to_all").bytes, 130176688.0, 1);
  // Under the all-to-all no layer gathers the tokens: the dense FFNs and shared experts run
  // data-parallel, each GPU its own tokens through whole weights (TensorRT-LLM's attention DP
  // makes the MLPs DP; vLLM's DP+EP ranks have tp 1), and the dense layers exchange nothing.
  // tp_comm is the logits' all-gather alone, 256 · (129,280 / 16) · 16 · 2 B = 66,191,360.
  EXPECT_NEAR(item(wide, "decode", "tp_comm").bytes, 66191360.0, 1);
  // Each GPU holds the whole dense FFNs (3 layers · 3 · 7,168 · 18,432 = 1,189,085,184 fp8
  // weights) and shared experts (58 · 3 · 7,168 · 2,048 = 2,554,331,136) where the all-reduce
  // pair splits them over 16: 15/16 · 3,743,416,320 B = 3,509,452,800 B more per GPU.
  InferenceSpec ar = s;
  ar.moe_dispatch = MoeDispatch::all_reduce;
  const InferenceResult reduced = estimate_inference(ar);
  EXPECT_NEAR(wide.memory.weights_bytes - reduced.memory.weights_bytes, 3509452800.0, 1);
  // The all-reduce pair moves every one of the 256 tokens into every GPU: per MoE layer
  // 2 · 256 · 7,168 · 2 B = 7,340,032 B against the dispatch and combine's 2 · 1,122,213 B.
  EXPECT_NEAR(item(reduced, "decode", "tp_comm").bytes, 61 * 7340032.0 + 66191360.0, 1);
  // Inside one node the default stays the all-reduce pair (SGLang's DP attention gathers by
  // all-reduce); all_to_all is asked for explicitly there.
  InferenceSpec node = inference(deepseek_v3(), "h200-sxm", 8, 4095, 2);
  node.weights = DType::fp8;
  node.dp_attention = true;
  node.ep = 8;
  EXPECT_EQ(moe_dispatch_of(node), MoeDispatch::all_reduce);
  node.moe_dispatch = MoeDispatch::all_to_all;
  EXPECT_GT(item(estimate_inference(node), "decode", "ep_all_to_all").time_s, 0);
  node.ep = 4;
  expect_rejected(node,
                  "parallelism.moe_dispatch: all_to_all needs parallelism.dp_attention and "
                  "parallelism.ep = tp (each GPU's own tokens sent to the GPUs of their experts) "
                  "(got all_to_all, with dp_attention true, tp 8, ep 4)");
}

TEST(Architectures, GroupLimitedRoutingReachesFewerGpus) {
  // DeepSeek-V3 routes a token's 8 experts within its top 4 of 8 groups of 32 consecutive
  // experts (n_group 8, topk_group 4). Over 16 GPUs a group spans 2 of them, so only the 8 GPUs
  // of the token's groups can be reached, each holding 16 of those groups' 128 experts: none
  // with probability Π_{i<8} (112 − i)/(128 − i) = 0.332580, 8 · 0.667420 = 5.339357 GPUs
  // (uniform over 256 experts: 6.523280).
  ModelSpec m = deepseek_v3();
  m.expert_groups = 8;
  m.expert_groups_per_token = 4;
  EXPECT_NEAR(moe_dispatch_bytes(m, 16, 1, 1, 0), 5.339357 * 7168, 1e-5 * 7168);
  EXPECT_NEAR(moe_dispatch_bytes(deepseek_v3(), 16, 1, 1, 0), 6.523280 * 7168, 1e-5 * 7168);
  // Over 4 GPUs each holds 2 whole groups, j of them the token's with hypergeometric odds
  // P(1) = 2·C(6,3)/C(8,4) = 40/70, P(2) = C(6,2)/C(8,4) = 15/70; none of its 32 or 64 experts
  // with Π (96 − i)/(128 − i) = 0.092747 or Π (64 − i)/(128 − i) = 0.003096:
  // 4 · (40/70 · 0.907253 + 15/70 · 0.996904) = 2.928210 GPUs.
  EXPECT_NEAR(moe_dispatch_bytes(m, 4, 1, 1, 0), 2.928210 * 7168, 1e-5 * 7168);
  // Replicas of busy experts break the groups' placement: the draw over the slots is uniform.
  ModelSpec slots = deepseek_v3();
  slots.num_experts = 288;
  EXPECT_DOUBLE_EQ(moe_dispatch_bytes(m, 16, 1, 1, 32), moe_dispatch_bytes(slots, 16, 1, 1, 0));
  // The wide-EP step of WideExpertParallelismDispatchesRoutedTokensAllToAll with the groups:
  // 16 tokens · 5.339357 · 7168 · 1.5 B = 918,540 B each way, × 2 × 58 = 106,550,668 B.
  InferenceSpec s = inference(m, "h100-sxm", 16, 4095, 2);
  s.weights = DType::fp8;
  s.batch_size = 256;
  s.dp_attention = true;
  s.ep = 16;
  EXPECT_NEAR(item(estimate_inference(s), "decode", "ep_all_to_all").bytes, 106550668.5, 1);
}

TEST(Architectures, PrefillDispatchCrossesTheNetworkOncePerNode) {
  // DeepSeek-V3 (8 groups, top 4) over 4 nodes of 8 H100: a token's experts sit on 2.928210 of
  // the 4 nodes (GroupLimitedRoutingReachesFewerGpus's 4-GPU figure, a node standing for a GPU),
  // its own node one of them with probability 1/4: 0.75 · 2.928210 = 2.196157 remote nodes, where
  // the even spread sends 24/32 of its 32 · 4/8 · (1 − Π_{i<8} (120 − i)/(128 − i)) = 6.596513
  // GPUs' copies, 4.947385, off the node.
  ModelSpec m = deepseek_v3();
  m.expert_groups = 8;
  m.expert_groups_per_token = 4;
  EXPECT_NEAR(moe_forwarded_bytes(m, 32, 8, 1, 1), 2.196157 * 7168, 1e-5 * 7168);
  EXPECT_NEAR(moe_dispatch_bytes(m, 32, 1, 1) * 24 / 32, 4.947385 * 7168, 1e-5 * 7168);
  EXPECT_DOUBLE_EQ(moe_forwarded_bytes(m, 8, 8, 1, 1), 0);  // one node holds every expert
  // A prefill step of 128 prompts of 4,096 tokens, DP attention and ep 32: each GPU dispatches
  // its 16,384 tokens at 1.5 B an element (fp8 out, bf16 back): over NVLink 7/8 of the spread,
  // 16,384 · 6.596513 · 7,168 · 1.5 · 7/8 = 1,016,790,918 B, through its NIC 16,384 · 2.196157 ·
  // 7,168 · 1.5 = 386,876,764 B; two per MoE layer, × 2 × 58.
  InferenceSpec s = inference(m, "h100-sxm", 32, 4096, 2);
  s.weights = DType::fp8;
  s.batch_size = 128;
  s.dp_attention = true;
  s.ep = 32;
  const InferenceResult r = estimate_inference(s);
  const BreakdownItem& pre = item(r, "prefill", "ep_all_to_all");
  EXPECT_NEAR(pre.bytes, 116 * (1016790918.0 + 386876764.0), 1e-6 * pre.bytes);
  // The network stage sets the time: at the NIC's 50 GB/s it is 2.6x faster than the spread's.
  const double spread =
      all_to_all_op("a2a", s.hardware, s.kernel, Bytes(16384 * 6.596513 * 7168 * 1.5), 32)
          .time.value;
  EXPECT_LT(pre.time_s, 116 * spread / 2);
  // Decode steps run DeepEP's low-latency kernels, straight to each GPU: the even spread of each
  // GPU's 128 / 32 = 4 tokens, 4 · 6.596513 · 7,168 · 1.5 B, × 116.
  EXPECT_NEAR(item(r, "decode", "ep_all_to_all").bytes, 116 * 4 * 6.596513 * 7168 * 1.5, 1e3);
  // The serving simulator's steps alike: one holding prompt tokens is forwarded between nodes,
  // inside one node (ep 8 on 8 GPUs) both kinds of step cost the same.
  StepTimeModel steps(s);
  EXPECT_LT(steps.dense_time_s(8192, true), steps.dense_time_s(8192, false));
  s.num_gpus = s.tp = s.ep = 8;
  s.moe_dispatch = MoeDispatch::all_to_all;
  StepTimeModel node(s);
  EXPECT_DOUBLE_EQ(node.dense_time_s(8192, true), node.dense_time_s(8192, false));
}

TEST(Architectures, GroupLimitedRoutingIsChecked) {
  ModelSpec m = deepseek_v3();
  m.expert_groups = 6;  // 256 experts do not split into 6 groups
  m.expert_groups_per_token = 4;
  expect_rejected(inference(m, "h200-sxm", 8, 1024, 2),
                  "model.expert_groups: must divide model.num_experts (256) (got 6)");
  m.expert_groups = 128;  // 3 groups of 2 experts cannot hold 8
  m.expert_groups_per_token = 3;
  expect_rejected(inference(m, "h200-sxm", 8, 1024, 2),
                  "model.expert_groups_per_token: must leave model.experts_per_token (8) experts "
                  "in the chosen groups (2 a group) (got 3)");
  m.expert_groups = 0;
  expect_rejected(inference(m, "h200-sxm", 8, 1024, 2),
                  "model.expert_groups_per_token: needs model.expert_groups (got 3)");
}

TEST(Architectures, RedundantExpertSlotsLetExpertParallelismDivideThem) {
  // DeepSeek-V3 fp8 over 72 H100 (9 nodes), DP attention, ep 72: 256 experts do not split over
  // 72 GPUs, so engines add replicas of busy experts (SGLang --ep-num-redundant-experts 32:
  // 288 slots, 4 a GPU).
  InferenceSpec s = inference(deepseek_v3(), "h100-sxm", 72, 2000, 100);
  s.weights = DType::fp8;
  s.batch_size = 72 * 32;
  s.dp_attention = true;
  s.ep = 72;
  expect_rejected(s,
                  "parallelism.ep: must divide model.num_experts (256), or add "
                  "parallelism.redundant_experts so that it divides the slots (got 72)");
  s.redundant_experts = 32;
  const InferenceResult r = estimate_inference(s);
  EXPECT_GT(r.tpot_s, 0);
  // tp 72 splits neither the 128 heads (attention is data-parallel) nor the dense FFNs and
  // shared experts (data-parallel under the all-to-all dispatch), nor an expert (ep = tp).
  EXPECT_EQ(moe_dispatch_of(s), MoeDispatch::all_to_all);

  // Slots hold whole experts: at ep 16 each GPU holds 288 / 16 = 18 experts where 256 / 16 gave
  // 16, two more in each of 58 MoE layers: 2 · 58 · 3 · 7,168 · 2,048 B = 5,108,662,272 B.
  InferenceSpec ep16 = inference(deepseek_v3(), "h100-sxm", 16, 4095, 2);
  ep16.weights = DType::fp8;
  ep16.batch_size = 256;
  ep16.dp_attention = true;
  ep16.ep = 16;
  const InferenceResult plain = estimate_inference(ep16);
  ep16.redundant_experts = 32;
  const InferenceResult spread = estimate_inference(ep16);
  EXPECT_NEAR(spread.memory.weights_bytes - plain.memory.weights_bytes, 5108662272.0, 1);
  // A token's 8 experts are found among 288 slots, 18 a rank: a rank holds none of them with
  // probability Π_{i<8} (270 − i)/(288 − i) = 0.592794, so a token goes to 16 · 0.407206 =
  // 6.51530 ranks (6.52328 without the replicas): 16 tokens · 6.51530 · 7,168 · 1.5 B (fp8 out,
  // bf16 back) = 1,120,839 B per dispatch, × 2 × 58 MoE layers = 130,017,368 B a step.
  EXPECT_NEAR(item(spread, "decode", "ep_all_to_all").bytes, 130017368.5, 2);

  // Replicas need experts to replicate and other GPUs to put them on.
  ep16.redundant_experts = 257;
  expect_rejected(ep16, "parallelism.redundant_experts: must be between 0 and 256 (got 257)");
  ep16.redundant_experts = 8;
  ep16.ep = 1;
  ep16.dp_attention = false;
  expect_rejected(ep16,
                  "parallelism.redundant_experts: needs parallelism.ep > 1: the replicas of busy "
                  "experts go to other GPUs of the expert-parallel group (got 8)");
  InferenceSpec dense = inference(mistral_v01(), "h100-sxm", 2, 1024, 2);
  dense.redundant_experts = 2;
  expect_rejected(dense,
                  "parallelism.redundant_experts: needs a MoE model (model.num_experts > 1) "
                  "(got 2)");
}

TEST(Architectures, ExpertParallelismNeedsAMoeAndDividesTheTensorParallelGpus) {
  InferenceSpec s = inference(deepseek_v3(), "h200-sxm", 8, 1024, 2);
  s.weights = DType::fp8;
  s.ep = 3;
  expect_rejected(
      s,
      "parallelism.ep: must divide parallelism.tp (8): the experts are sharded over the "
      "replica's tp GPUs (got 3)");
  InferenceSpec dense = inference(mistral_v01(), "h100-sxm", 2, 1024, 2);
  dense.ep = 2;
  expect_rejected(dense, "parallelism.ep: needs a MoE model (model.num_experts > 1) (got 2)");
}

TEST(Architectures, TensorParallelismAcrossNodesRunsItsAllReducesOverTheNetwork) {
  // Llama-3.1-405B BF16 on H100 nodes of 8 GPUs, batch 16: TP 16 spans two nodes. Each GPU holds
  // half of TP 8's weights (the embedding and LM head are vocab-parallel too) except two kinds
  // that do not shrink: its KV head (8 KV heads over 16 GPUs: each is held twice), K and V of
  // 128 x 16,384 at 2 B, 8,388,608 B per layer where half would be 4,194,304; and the norms,
  // whole on every GPU (2 x 16,384 x 2 B per layer and the final 32,768 B: 8,290,304 B, of which
  // TP 8's half counts 4,145,152). So TP 16 holds TP 8's / 2 + 126 x 4,194,304 + 4,145,152 =
  // + 532,627,456 B. Each of the 2 x 126 all-reduces of a decode step (16 tokens x 16,384 x 2 B =
  // 524,288 B) crosses InfiniBand, which costs more than inside a node's NVLink.
  const ModelSpec llama = io::resolve_model(io::json("llama-3.1-405b"), "model");
  InferenceSpec s8 = inference(llama, "h100-sxm", 8, 2000, 2);
  s8.batch_size = 16;
  InferenceSpec s16 = s8;
  s16.tp = s16.num_gpus = 16;
  const InferenceResult r8 = estimate_inference(s8);
  const InferenceResult r16 = estimate_inference(s16);
  EXPECT_NEAR(r16.memory.weights_bytes - r8.memory.weights_bytes / 2, 532627456.0, 1.0);
  EXPECT_GT(item(r16, "decode", "tp_comm").time_s, item(r8, "decode", "tp_comm").time_s);
  // Without a scale-out network there is nothing to span nodes with; a group of partial nodes is
  // refused (GPT-3's 96 heads divide by 12, which is not a multiple of 8).
  InferenceSpec pcie = s16;
  pcie.hardware = hw("l40s");
  expect_rejected(pcie,
                  "parallelism.tp: tensor parallelism across nodes needs a scale-out network; "
                  "hardware.scaleout_nics_per_node is 0, so tp must be <= hardware.gpus_per_node "
                  "(8) (got 16)");
  InferenceSpec gpt3 =
      inference(io::resolve_model(io::json("gpt-3-175b"), "model"), "h100-sxm", 12, 1000, 2);
  expect_rejected(gpt3,
                  "parallelism.tp: must be a multiple of hardware.gpus_per_node (8) when it spans "
                  "nodes (got 12)");
}

TEST(Architectures, SlidingWindowBoundsDecodeReadsAndKvMemory) {
  // Mistral-7B-v0.1 at context 8192 (prompt 8191, output 2): each of 32 layers reads only the
  // window, 4096 tokens · 8 KV heads · 256 (K and V) · 2 B = 16,777,216 B, plus Q and O of 32 heads
  // · 256 · 2 B = 16,384 B: 32 · 16,793,600 = 537,395,200 B.
  const InferenceSpec s = inference(mistral_v01(), "h100-sxm", 1, 8191, 2);
  const InferenceResult r = estimate_inference(s);
  EXPECT_NEAR(item(r, "decode", "attention").bytes, 537395200.0, 1);
  // KV cache of the sequence (8193 tokens): every layer keeps its window of 4096 tokens (whole
  // 16-token blocks), 32 · 4096 · 4096 B = 536,870,912 B (without the window: 8208 tokens,
  // 1,075,838,976 B).
  EXPECT_NEAR(r.memory.kv_cache_bytes, 536870912.0, 1);
  // Prefill of 8191 tokens attends to Σ min(p, 4096) = 4096·4097/2 + 4095·4096 = 25,163,776
  // pairs per head: FLOPs 2 · 32 · 256 · pairs per layer, × 32.
  EXPECT_NEAR(item(r, "prefill", "attention").flops, 32.0 * 2 * 32 * 256 * 25163776.0, 1e3);
}

TEST(Architectures, GlobalLayersKeepTheWholeContext) {
  // 12 layers, window 1024, every 6th global (Gemma 3's 5:1), context 4096 + 1: 10 local layers
  // keep 1024 tokens, 2 global layers 4112 (4097 in 16-token blocks). Per layer and token
  // 2 · 8 · 128 · 2 = 4096 B: 4096 · (10 · 1024 + 2 · 4112) = 75,628,544 B.
  ModelSpec m = mistral_v01();
  m.num_layers = 12;
  m.window_tokens = 1024;
  m.global_attention_every = 6;
  const InferenceResult r = estimate_inference(inference(m, "h100-sxm", 1, 4096, 1));
  EXPECT_NEAR(r.memory.kv_cache_bytes, 75628544.0, 1);
  // Serving counts the KV pool at the typical request: per token it is the sequence's bytes
  // over its length, here 75,628,544 / 4097 (blocks rounded) — below the 12 · 4096 B of full
  // attention.
  EXPECT_NEAR(kv_cache_bytes_per_token(inference(m, "h100-sxm", 1, 4096, 1), 4097),
              75628544.0 / 4097, 1e-6);
}

TEST(Architectures, ChunkedAttentionDecodeReadsHalfAChunkOnAverage) {
  // Llama 4 style chunks of 8192: past the first chunk a decode query attends to (8192 + 1)/2
  // keys on average, read in whole 16-token pages: 4112 tokens · 8 · 256 · 2 B + 32 · 256 · 2 B
  // = 16,859,136 B per layer.
  ModelSpec m = mistral_v01();
  m.num_layers = 1;
  m.window_tokens = 8192;
  m.local_attention = LocalAttention::chunked;
  const InferenceResult r = estimate_inference(inference(m, "h100-sxm", 1, 20000, 2));
  EXPECT_NEAR(item(r, "decode", "attention").bytes, 16859136.0, 1);
}

TEST(Architectures, SharedExpertsRunOnEveryToken) {
  // A 2-layer MoE (h 1024, 8 experts of 512, top 2) with 2 shared experts of 256 and a dense
  // first layer of 4096. Parameters: attention 4·1024² = 4,194,304 per layer; dense FFN
  // 3·1024·4096 = 12,582,912; MoE layer 8·3·1024·512 + 2·3·1024·256 + 1024·8 = 14,163,968;
  // norms 2·1024 per layer + 1024; embeddings 2·32000·1024.
  ModelSpec m = mistral_v01();
  m.num_layers = 2;
  m.hidden_size = 1024;
  m.num_heads = 8;
  m.num_kv_heads = 8;
  m.intermediate_size = 512;
  m.window_tokens = 0;
  m.num_experts = 8;
  m.experts_per_token = 2;
  m.shared_experts = 2;
  m.shared_expert_intermediate_size = 256;
  m.dense_intermediate_size = 4096;
  m.first_dense_layers = 1;
  const ParamCounts c = count_params(m);
  EXPECT_DOUBLE_EQ(c.total,
                   2 * 4194304.0 + 12582912 + 14163968 + 2 * 2048 + 1024 + 2 * 32000.0 * 1024);
  // Prefill of 1000 tokens: the shared experts of the one MoE layer are a dense FFN of width
  // 2 · 256 over every token: 2 · 1000 · 3 · 1024 · 512 = 3,145,728,000 FLOPs.
  const InferenceResult r = estimate_inference(inference(m, "h100-sxm", 1, 1000, 1));
  EXPECT_NEAR(item(r, "prefill", "shared_experts").flops, 3145728000.0, 1);
  // The dense layer's FFN: 2 · 1000 · 3 · 1024 · 4096 = 25,165,824,000 FLOPs.
  EXPECT_NEAR(item(r, "prefill", "mlp").flops, 25165824000.0, 1);
}

TEST(Architectures, Fp4WeightsCarryTheirScales) {
  // Llama-2-7B's linear weights (32 · (4·4096² + 3·4096·11008) = 6,476,005,376) in NVFP4 take
  // 0.5 + 1/16 B each, MXFP4 0.5 + 1/32 B; the 16-bit rest (2·32000·4096 embeddings, norms
  // 65·4096) is unchanged: the difference is the linear weights' 1/32 B.
  InferenceSpec s =
      inference(io::resolve_model(io::json("llama-2-7b"), "model"), "b200", 1, 4000, 2);
  s.batch_size = 4;
  s.weights = DType::fp4;
  const double nv = weight_bytes_per_gpu(s);
  s.weights = DType::mxfp4;
  const double mx = weight_bytes_per_gpu(s);
  EXPECT_NEAR(nv - mx, 6476005376.0 / 32, 1);
  EXPECT_NEAR(mx, 6476005376.0 * 0.53125 + (2 * 32000.0 * 4096 + 65 * 4096) * 2, 1);
  // On B200 a long prefill (4 × 4000 tokens) is compute-bound: NVFP4 multiplies at the FP4 peak
  // (9 PFLOPS dense), MXFP4 against MXFP8 activations at the FP8 peak (4.5; TensorRT-LLM's
  // gpt-oss MoE on Blackwell), int4 weight-only in bf16 (2.25): the linears' 2 · 6.476e9 · 16000
  // = 2.072e14 FLOPs take 28.8, 57.6 and 115.1 ms at Tier 0's 80 %; attention and the rest are
  // the same in all three.
  const double mx_ttft = estimate_inference(s).ttft_s;
  s.weights = DType::fp4;
  const double nv_ttft = estimate_inference(s).ttft_s;
  s.weights = DType::int4;
  const double int4_ttft = estimate_inference(s).ttft_s;
  EXPECT_NEAR(mx_ttft - nv_ttft, 0.0288, 0.003);
  EXPECT_NEAR(int4_ttft - mx_ttft, 0.0576, 0.006);
}

TEST(Architectures, UnevenPipelineStages) {
  // Llama-3.1-405B's 126 layers on 16 stages: 126 = 16·7 + 14, so stages 0-13 take 8 and the
  // last two 7. With first = last = 7, the other 14 stages take 112/14 = 8 each.
  io::json r = {
      {"task", "training"},
      {"model", "llama-3.1-405b"},
      {"hardware", "h100-sxm"},
      {"num_gpus", 1024},
      {"parallelism", {{"tp", 8}, {"pp", 16}, {"sp", true}, {"zero", 1}}},
      {"workload", {{"seq_len", 8192}, {"global_batch_size", 2048}, {"recompute", "full"}}}};
  auto stage_layers = [&](const io::json& req) {
    const io::json out = io::json::parse(io::handle(req.dump()));
    EXPECT_TRUE(out.at("ok").get<bool>()) << out.dump();
    for (const auto& a : out.at("result").at("assumptions")) {
      if (a.at("name") == "pipeline_stage_layers") return a.at("source").get<std::string>();
    }
    return std::string("(none)");
  };
  EXPECT_NE(stage_layers(r).find("first 8, middle up to 8, last 7"), std::string::npos);
  r["parallelism"]["first_stage_layers"] = 7;
  r["parallelism"]["last_stage_layers"] = 7;
  EXPECT_NE(stage_layers(r).find("first 7, middle up to 8, last 7"), std::string::npos);
  r["parallelism"]["last_stage_layers"] = 6;  // 113 left over 14 stages: not even
  EXPECT_EQ(test::failure_of(r).path, "parallelism.first_stage_layers");
}

TEST(Architectures, UnevenPipelineStagesInterleaved) {
  // Megatron-Core's layout of Llama-3.1-405B at PP 8 x VP 8 (embedding and loss counted as one
  // pipeline layer each): (126 + 2) / 64 = 2 layers a chunk, so the first and last stages hold
  // 8·2 − 1 = 15 layers and the six others 96 / 6 = 16 each, 2 in each of their 8 chunks. The
  // slowest stage is a middle one (16 layers), and the bubble is (p − 1) / v = 7/8 of its
  // micro-batch.
  io::json r = {
      {"task", "training"},
      {"model", "llama-3.1-405b"},
      {"hardware", "gb200"},
      {"num_gpus", 256},
      {"parallelism",
       {{"tp", 4},
        {"pp", 8},
        {"vpp", 8},
        {"sp", true},
        {"zero", 1},
        {"first_stage_layers", 15},
        {"last_stage_layers", 15}}},
      {"workload", {{"seq_len", 8192}, {"global_batch_size", 64}, {"micro_batch_size", 1}}}};
  const io::json out = io::json::parse(io::handle(r.dump()));
  ASSERT_TRUE(out.at("ok").get<bool>()) << out.dump();
  std::string split;
  for (const auto& a : out.at("result").at("assumptions")) {
    if (a.at("name") == "pipeline_stage_layers") split = a.at("source").get<std::string>();
  }
  EXPECT_NE(split.find("first 15, middle up to 16, last 15"), std::string::npos) << split;
  // 126 − 15 − 14 = 97 layers do not split into 6 stages of 8 chunks: refused, naming the chunks.
  r["parallelism"]["last_stage_layers"] = 14;
  const auto failure = test::failure_of(r);
  EXPECT_EQ(failure.path, "parallelism.first_stage_layers");
  EXPECT_NE(failure.message.find("their 8 chunks each"), std::string::npos) << failure.message;
}

TEST(Architectures, InferencePipelineAcrossTwoNodes) {
  // Llama-3.1-405B in BF16 on 2 nodes of 8 H100 (PP 2 × TP 8): each GPU holds 63 of the 126
  // layers and one of embedding / LM head (both 128256·16384/8 rows), exactly half of what one
  // TP-8 node would hold (810 GB in all): ~50.7 GB, so it fits where TP 8 alone (101.5 GB) does
  // not.
  const ModelSpec m = io::resolve_model(io::json("llama-3.1-405b"), "model");
  InferenceSpec s = inference(m, "h100-sxm", 8, 1024, 256);
  s.batch_size = 16;
  const InferenceResult one = estimate_inference(s);
  s.pp = 2;
  s.num_gpus = 16;
  const InferenceResult two = estimate_inference(s);
  EXPECT_NEAR(two.memory.weights_bytes, one.memory.weights_bytes / 2, 1);
  EXPECT_FALSE(one.memory.fits);
  EXPECT_TRUE(two.memory.fits);
  EXPECT_EQ(two.replicas, 1);
  // KV per token per GPU: 63 layers · 2 · 8/8 heads · 128 · 2 B = 32,256 B (half of TP 8's).
  EXPECT_DOUBLE_EQ(two.memory.kv_cache_bytes_per_token, 32256);
  // A decode step runs the batch as 2 micro-batches of 8; each crosses the one stage boundary:
  // 8 tokens · 16384 · 2 B = 262,144 B from one node to the other.
  EXPECT_NEAR(item(two, "decode", "pp_send_recv").bytes, 262144.0, 1e-6);
}

TEST(Architectures, ModelFlopsCountLocalLayersByTheirPairs) {
  // Mistral-7B-v0.1 at s = 8192 with a 4096 window: attention FLOPs per token 12·L·Hq·d·s scaled
  // by the window's share of pairs, (4096·4097/2 + 4096·4096) / (8192·8193/2) = 25,167,872 /
  // 33,558,528; matmul weights 32·(2·4096·4096 + 2·4096·1024 + 3·4096·14336) + 32000·4096.
  const ModelSpec m = mistral_v01();
  const double n_matmul =
      32 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336) + 32000.0 * 4096;
  const double attention = 12.0 * 32 * 32 * 128 * 8192 * (25167872.0 / 33558528.0);
  EXPECT_TRUE(near_rel(model_flops_per_token(m, 8192), 6 * n_matmul + attention, 1e-12));
}

}  // namespace
}  // namespace flopcast
