// SPDX-License-Identifier: MIT
// Hugging Face config.json -> model object. The configs below are typed after the public
// config.json files of each model family (trimmed of keys flopcast ignores where noted).
#include <gtest/gtest.h>

#include <string>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::base_request;

constexpr const char* kLlama2_7b = R"({
  "_name_or_path": "meta-llama/Llama-2-7b-hf",
  "architectures": ["LlamaForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 11008,
  "max_position_embeddings": 4096,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 32,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "tie_word_embeddings": false,
  "torch_dtype": "float16",
  "transformers_version": "4.31.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

constexpr const char* kMixtral_8x7b = R"({
  "architectures": ["MixtralForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mixtral",
  "num_attention_heads": 32,
  "num_experts_per_tok": 2,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "num_local_experts": 8,
  "output_router_logits": false,
  "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.02,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.36.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

constexpr const char* kQwen2_7b = R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 18944,
  "max_position_embeddings": 131072,
  "max_window_layers": 28,
  "model_type": "qwen2",
  "num_attention_heads": 28,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 152064
})";

// Falcon-40B in the RefinedWeb-era key names, with the context length spelled out.
constexpr const char* kFalcon40b = R"({
  "alibi": false,
  "apply_residual_connection_post_layernorm": false,
  "architectures": ["FalconForCausalLM"],
  "attention_dropout": 0.0,
  "bias": false,
  "bos_token_id": 11,
  "eos_token_id": 11,
  "hidden_dropout": 0.0,
  "hidden_size": 8192,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "max_position_embeddings": 2048,
  "model_type": "falcon",
  "new_decoder_architecture": true,
  "n_head": 128,
  "n_head_kv": 8,
  "n_layer": 60,
  "parallel_attn": true,
  "torch_dtype": "bfloat16",
  "use_cache": true,
  "vocab_size": 65024
})";

// tiiuae/falcon-40b config.json as published: no max_position_embeddings (transformers'
// FalconConfig defaults it to 2048).
constexpr const char* kFalcon40bPublished = R"({
  "alibi": false,
  "apply_residual_connection_post_layernorm": false,
  "architectures": ["FalconForCausalLM"],
  "attention_dropout": 0.0,
  "bias": false,
  "bos_token_id": 11,
  "eos_token_id": 11,
  "hidden_dropout": 0.0,
  "hidden_size": 8192,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "falcon",
  "new_decoder_architecture": true,
  "num_attention_heads": 128,
  "num_hidden_layers": 60,
  "num_kv_heads": 8,
  "parallel_attn": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.27.4",
  "use_cache": true,
  "vocab_size": 65024
})";

constexpr const char* kDeepSeekV2Lite = R"({
  "architectures": ["DeepseekV2ForCausalLM"],
  "hidden_size": 2048,
  "intermediate_size": 10944,
  "kv_lora_rank": 512,
  "max_position_embeddings": 163840,
  "model_type": "deepseek_v2",
  "moe_intermediate_size": 1408,
  "n_routed_experts": 64,
  "n_shared_experts": 2,
  "num_attention_heads": 16,
  "num_experts_per_tok": 6,
  "first_k_dense_replace": 1,
  "num_hidden_layers": 27,
  "num_key_value_heads": 16,
  "q_lora_rank": null,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "rms_norm_eps": 1e-06,
  "tie_word_embeddings": false,
  "v_head_dim": 128,
  "vocab_size": 102400
})";

constexpr const char* kMistral7bV01 = R"({
  "architectures": ["MistralForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

/// Fills a model object's optional keys with the defaults of the model reader so that two
/// objects can be compared shape by shape; drops the display name.
json normalised(json m) {
  m.erase("name");
  if (!m.contains("num_kv_heads")) m["num_kv_heads"] = m.at("num_heads");
  if (!m.contains("head_dim"))
    m["head_dim"] = m.at("hidden_size").get<int>() / m.at("num_heads").get<int>();
  const json defaults = {{"ffn", "gated"},       {"tie_embeddings", false},
                         {"norm", "rmsnorm"},    {"qkv_bias", false},
                         {"linear_bias", false}, {"position_embedding", "rope"},
                         {"num_experts", 0},     {"experts_per_token", 0}};
  for (const auto& d : defaults.items()) {
    if (!m.contains(d.key())) m[d.key()] = d.value();
  }
  if (m.contains("sliding_window_tokens") && m["sliding_window_tokens"].is_null()) {
    m.erase("sliding_window_tokens");
  }
  return m;
}

json preset_model(const char* id) {
  return normalised(io::preset("models", id, "model").at("model"));
}

struct HfFailure {
  std::string code, path, message;
};

/// The error `f` raises, as the module would report it.
template <typename F>
HfFailure failure_of(F&& f) {
  try {
    f();
  } catch (...) {
    const io::ErrorInfo e = io::describe_current_exception();
    return {e.code, e.path, e.message};
  }
  return {"", "", "(no error)"};
}

HfFailure hf_failure(const json& config) {
  return failure_of([&] { (void)io::model_from_hf_config(config); });
}

TEST(HfConfig, Llama2MatchesThePreset) {
  const json m = io::model_from_hf_config(json::parse(kLlama2_7b));
  EXPECT_EQ(normalised(m), preset_model("llama-2-7b"));
  EXPECT_TRUE(m.at("name").is_string());
}

TEST(HfConfig, Llama2EstimatesLikeThePreset) {
  json by_id = base_request();
  json by_config = base_request();
  by_config["model"] = io::model_from_hf_config(json::parse(kLlama2_7b));
  const json a = io::run(by_id);
  const json b = io::run(by_config);
  EXPECT_EQ(a.at("ttft_ms"), b.at("ttft_ms"));
  EXPECT_EQ(a.at("tpot_ms"), b.at("tpot_ms"));
  EXPECT_EQ(a.at("memory"), b.at("memory"));
  EXPECT_EQ(a.at("model").at("params_B"), b.at("model").at("params_B"));
  EXPECT_TRUE(b.at("model").at("id").is_null());
}

TEST(HfConfig, MixtralIsAMixtureOfExperts) {
  const json m = io::model_from_hf_config(json::parse(kMixtral_8x7b));
  EXPECT_EQ(m.at("num_experts"), 8);
  EXPECT_EQ(m.at("experts_per_token"), 2);
  EXPECT_EQ(m.at("num_kv_heads"), 8);
  json preset = preset_model("mixtral-8x7b");
  EXPECT_EQ(normalised(m), preset);
  json r = base_request();
  r["model"] = m;
  r["hardware"] = "h100-sxm";
  r["parallelism"]["tp"] = 2;
  r["num_gpus"] = 2;
  EXPECT_NO_THROW((void)io::run(r));
}

TEST(HfConfig, Qwen2HasQkvBiasAndNoWindowWhenDisabled) {
  const json m = io::model_from_hf_config(json::parse(kQwen2_7b));
  EXPECT_EQ(m.at("qkv_bias"), true);
  EXPECT_EQ(m.at("linear_bias"), false);
  EXPECT_EQ(m.at("num_heads"), 28);
  EXPECT_EQ(m.at("num_kv_heads"), 4);
  EXPECT_EQ(m.at("intermediate_size"), 18944);
  EXPECT_EQ(m.at("vocab_size"), 152064);
  EXPECT_EQ(m.at("max_context_tokens"), 131072);
  EXPECT_EQ(m.at("tie_embeddings"), false);
  // Same shapes as the Qwen2.5-7B preset except the context length.
  json a = normalised(m);
  json b = preset_model("qwen2.5-7b");
  a.erase("max_context_tokens");
  b.erase("max_context_tokens");
  EXPECT_EQ(a, b);
}

TEST(HfConfig, Qwen2WindowFollowsMaxWindowLayers) {
  // Qwen2 applies the window to layers with index >= max_window_layers (HF Qwen2 layer_types).
  json c = json::parse(kQwen2_7b);
  c["use_sliding_window"] = true;
  c["sliding_window"] = 4096;
  c["max_window_layers"] = 28;  // = num_hidden_layers: no layer is windowed
  EXPECT_FALSE(io::model_from_hf_config(c).contains("sliding_window_tokens"));
  c["max_window_layers"] = 0;  // every layer windowed
  const json m = io::model_from_hf_config(c);
  EXPECT_EQ(m.at("sliding_window_tokens"), 4096);
  EXPECT_EQ(m.at("local_attention"), "sliding");
  EXPECT_FALSE(m.contains("global_attention_every"));
  c["max_window_layers"] = 14;  // 14 full layers, then 14 windowed: not periodic
  const HfFailure f = hf_failure(c);
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.max_window_layers");
}

TEST(HfConfig, Falcon40bNewDecoderArchitecture) {
  const json m = io::model_from_hf_config(json::parse(kFalcon40b));
  EXPECT_EQ(m.at("ffn"), "plain");
  EXPECT_EQ(m.at("intermediate_size"), 4 * 8192);
  EXPECT_EQ(m.at("norm"), "layernorm");
  EXPECT_EQ(m.at("num_heads"), 128);
  EXPECT_EQ(m.at("num_kv_heads"), 8);
  EXPECT_EQ(m.at("num_layers"), 60);
  EXPECT_EQ(m.at("vocab_size"), 65024);
  EXPECT_EQ(m.at("tie_embeddings"), true);
  EXPECT_EQ(normalised(m), preset_model("falcon-40b"));
}

TEST(HfConfig, Falcon40bNumKvHeadsSpelling) {
  json c = json::parse(kFalcon40b);
  c.erase("n_head_kv");
  c["num_kv_heads"] = 8;
  EXPECT_EQ(io::model_from_hf_config(c).at("num_kv_heads"), 8);
}

TEST(HfConfig, Falcon7bMultiQuery) {
  json c = json::parse(kFalcon40b);
  c.erase("new_decoder_architecture");
  c.erase("n_head_kv");
  c["hidden_size"] = 4544;
  c["n_head"] = 71;
  c["n_layer"] = 32;
  c["multi_query"] = true;
  const json m = io::model_from_hf_config(c);
  EXPECT_EQ(m.at("num_kv_heads"), 1);
  EXPECT_EQ(m.at("intermediate_size"), 4 * 4544);
}

TEST(HfConfig, PublishedFalcon40bConfigDefaultsContextTo2048) {
  // The published tiiuae/falcon-40b config.json has no max_position_embeddings; transformers
  // uses FalconConfig's default of 2048, and so should the converter.
  json m;
  ASSERT_NO_THROW(m = io::model_from_hf_config(json::parse(kFalcon40bPublished)));
  EXPECT_EQ(m.at("max_context_tokens"), 2048);
  EXPECT_EQ(normalised(m), preset_model("falcon-40b"));
}

TEST(HfConfig, Gpt2StyleKeys) {
  const json c = json::parse(R"({"model_type":"gpt2","n_embd":768,"n_head":12,"n_layer":12,
    "n_positions":1024,"vocab_size":50257,"layer_norm_epsilon":1e-05,"n_inner":null})");
  const json m = io::model_from_hf_config(c);
  EXPECT_EQ(m.at("hidden_size"), 768);
  EXPECT_EQ(m.at("intermediate_size"), 3072);
  EXPECT_EQ(m.at("ffn"), "plain");
  EXPECT_EQ(m.at("position_embedding"), "learned");
  EXPECT_EQ(m.at("tie_embeddings"), true);
  EXPECT_EQ(m.at("max_context_tokens"), 1024);
}

TEST(HfConfig, DeepSeekV2LiteMultiHeadLatentAttention) {
  const json m = io::model_from_hf_config(json::parse(kDeepSeekV2Lite));
  EXPECT_EQ(m.at("kv_lora_rank"), 512);
  EXPECT_EQ(m.at("q_lora_rank"), 0);  // null: q projected directly
  EXPECT_EQ(m.at("head_dim"), 192);   // qk_nope 128 + qk_rope 64
  EXPECT_EQ(m.at("v_head_dim"), 128);
  EXPECT_EQ(m.at("intermediate_size"), 1408);  // one routed expert
  EXPECT_EQ(m.at("dense_intermediate_size"), 10944);
  EXPECT_EQ(m.at("shared_experts"), 2);
  EXPECT_EQ(m.at("first_dense_layers"), 1);
  // Parameters (h 2048, 16 heads, 27 layers, 102400 vocab, untied):
  //   attention q 2048·16·192 + kv_a 2048·576 + kv_b 512·16·256 + o 16·128·2048 = 13,762,560
  //   MoE layer 64·3·2048·1408 + shared 2·3·2048·1408 + router 2048·64 = 571,342,848 (×26)
  //   dense layer 3·2048·10944 = 67,239,936; embeddings 2·102400·2048 = 419,430,400
  //   norms 2·2048 + 512 per layer, + 2048: total ≈ 15.706e9 (published: 15.7B)
  const ModelSpec spec = io::read_model(m, "model");
  EXPECT_NEAR(count_params(spec).total / 1e9, 15.706, 0.002);
  EXPECT_NEAR(count_params(spec).total / 1e9, 15.7, 15.7 * 0.01);
}

TEST(HfConfig, Qwen2MoeSharedExpert) {
  json c = json::parse(kMixtral_8x7b);
  c["shared_expert_intermediate_size"] = 5632;
  const json m = io::model_from_hf_config(c);
  EXPECT_EQ(m.at("shared_experts"), 1);
  EXPECT_EQ(m.at("shared_expert_intermediate_size"), 5632);
}

TEST(HfConfig, MistralSlidingWindowOnEveryLayer) {
  const json m = io::model_from_hf_config(json::parse(kMistral7bV01));
  EXPECT_EQ(m.at("sliding_window_tokens"), 4096);
  EXPECT_EQ(m.at("local_attention"), "sliding");
  EXPECT_FALSE(m.contains("global_attention_every"));  // every layer local
  // Mistral v0.2+ dropped the window: full attention.
  json c = json::parse(kMistral7bV01);
  c["sliding_window"] = nullptr;
  EXPECT_FALSE(io::model_from_hf_config(c).contains("sliding_window_tokens"));
}

TEST(HfConfig, MissingHiddenSize) {
  json c = json::parse(kLlama2_7b);
  c.erase("hidden_size");
  const HfFailure f = hf_failure(c);
  EXPECT_EQ(f.code, "invalid_request");
  EXPECT_EQ(f.path, "hf_config.hidden_size");
  EXPECT_EQ(f.message, "hf_config.hidden_size: required key is missing");
}

TEST(HfConfig, MissingIntermediateSizeForGatedModel) {
  json c = json::parse(kLlama2_7b);
  c.erase("intermediate_size");
  const HfFailure f = hf_failure(c);
  EXPECT_EQ(f.code, "invalid_request");
  EXPECT_EQ(f.path, "hf_config.intermediate_size");
}

TEST(HfConfig, WrongTypeNamesTheKey) {
  json c = json::parse(kLlama2_7b);
  c["num_hidden_layers"] = "32";
  HfFailure f = hf_failure(c);
  EXPECT_EQ(f.path, "hf_config.num_hidden_layers");
  EXPECT_NE(f.message.find("must be an integer (got \"32\")"), std::string::npos) << f.message;
  c = json::parse(kLlama2_7b);
  c["tie_word_embeddings"] = "no";
  f = hf_failure(c);
  EXPECT_EQ(f.path, "hf_config.tie_word_embeddings");
}

TEST(HfConfig, InconsistentShapesAreRejected) {
  json c = json::parse(kLlama2_7b);
  c["num_key_value_heads"] = 5;
  const HfFailure f = hf_failure(c);
  EXPECT_EQ(f.code, "invalid_request");
  EXPECT_NE(f.path, "");
}

TEST(HfConfig, UnknownOrUnmodelledFamiliesAreRefusedByName) {
  // A family the importer does not read is refused, never read as a Llama-style transformer
  // (a Jamba config read that way came out as a 91.8B transformer; the model has ~52B, and reads
  // as Jamba now: model_zoo_test.cpp).
  json c = json::parse(kLlama2_7b);
  c["model_type"] = "totally_unknown";
  HfFailure f = hf_failure(c);
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.model_type");
  EXPECT_NE(f.message.find("\"totally_unknown\" is not a family flopcast reads"), std::string::npos)
      << f.message;
  const std::pair<const char*, const char*> refused[] = {
      {"mamba", "Mamba-1 layers"},
      {"minimax", "lightning linear-attention"},
      {"minimax_m1", "lightning linear-attention"},
      {"bamba", "Mamba-2 layers"},
      {"glm_moe_dsa", "indexers shared across layers"},
  };
  for (const auto& [type, lacks] : refused) {
    c["model_type"] = type;
    f = hf_failure(c);
    EXPECT_EQ(f.code, "not_modelled") << type;
    EXPECT_EQ(f.path, "hf_config.model_type") << type;
    EXPECT_NE(f.message.find(lacks), std::string::npos) << f.message;
  }
  c.erase("model_type");
  f = hf_failure(c);
  EXPECT_EQ(f.path, "hf_config.model_type");
  EXPECT_NE(f.message.find("required key is missing"), std::string::npos) << f.message;
}

TEST(HfConfig, Qwen3NextReadsItsLayerTypesAndRefusesOthers) {
  // A tiny Qwen3-Next: layer_types names each mixer; every layer's FFN is a MoE layer
  // (decoder_sparse_step 1); each decoder layer becomes two pattern layers.
  json c = {
      {"model_type", "qwen3_next"},
      {"hidden_size", 256},
      {"num_attention_heads", 4},
      {"num_key_value_heads", 2},
      {"head_dim", 64},
      {"num_hidden_layers", 4},
      {"intermediate_size", 512},
      {"vocab_size", 1000},
      {"max_position_embeddings", 4096},
      {"rms_norm_eps", 1e-6},
      {"layer_types", {"linear_attention", "full_attention", "linear_attention", "full_attention"}},
      {"linear_num_key_heads", 2},
      {"linear_num_value_heads", 4},
      {"linear_key_head_dim", 32},
      {"linear_value_head_dim", 32},
      {"num_experts", 8},
      {"num_experts_per_tok", 2},
      {"moe_intermediate_size", 64},
      {"shared_expert_intermediate_size", 64}};
  const json m = io::model_from_hf_config(c, "tiny.json");
  EXPECT_EQ(m["layer_pattern"], "GE*EGE*E");
  EXPECT_EQ(m["num_layers"], 8);
  EXPECT_EQ(m["gdn_value_heads"], 4);
  EXPECT_EQ(m["attention_output_gate"], true);
  EXPECT_FALSE(m.contains("dense_intermediate_size"));  // no dense layer
  // decoder_sparse_step 2: the odd layers keep a dense MLP of intermediate_size.
  c["decoder_sparse_step"] = 2;
  const json sparse = io::model_from_hf_config(c, "tiny.json");
  EXPECT_EQ(sparse["layer_pattern"], "G-*EG-*E");
  EXPECT_EQ(sparse["dense_intermediate_size"], 512);
  // Without layer_types, full_attention_interval (default 4) places the attention layers.
  c.erase("layer_types");
  c["full_attention_interval"] = 2;
  c["decoder_sparse_step"] = 1;
  EXPECT_EQ(io::model_from_hf_config(c, "tiny.json")["layer_pattern"], "GE*EGE*E");
  // A layer type flopcast does not price is refused with its index.
  c["layer_types"] = {"linear_attention", "sliding_attention", "linear_attention",
                      "full_attention"};
  HfFailure f = hf_failure(c);
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.layer_types[1]");
  EXPECT_NE(f.message.find("\"sliding_attention\" layers are not modelled"), std::string::npos)
      << f.message;
  c["layer_types"] = {"linear_attention", "full_attention"};
  f = hf_failure(c);
  EXPECT_EQ(f.path, "hf_config.layer_types");
  EXPECT_NE(f.message.find("one type per layer (4"), std::string::npos) << f.message;
}

TEST(HfConfig, Qwen35IsQwen3NextsLayersInATextConfig) {
  // Qwen3.5-9B's text_config (model_type qwen3_5_text inside a qwen3_5 checkpoint): 32 decoder
  // layers, every 4th full attention, a dense gated FFN of 12288 in each. Hand count: gated
  // DeltaNet 4096·(2·2048 + 2·4096 + 2·32) + 8192·4 + 64 + 128 + 4096·4096 = 67,403,968 (24 of
  // them); gated attention 4096·8192 + 2·4096·1024 + 4096·4096 = 58,720,256 (8); FFN
  // 3·4096·12288 = 150,994,944 (32); 64 norms and the final one of 4096; untied 248320·4096
  // tables twice: 8,953,799,168 (the vision tower is not counted).
  json text = {{"model_type", "qwen3_5_text"},
               {"hidden_size", 4096},
               {"num_hidden_layers", 32},
               {"intermediate_size", 12288},
               {"num_attention_heads", 16},
               {"num_key_value_heads", 4},
               {"head_dim", 256},
               {"vocab_size", 248320},
               {"max_position_embeddings", 262144},
               {"rms_norm_eps", 1e-6},
               {"attn_output_gate", true},
               {"full_attention_interval", 4},
               {"linear_num_key_heads", 16},
               {"linear_num_value_heads", 32},
               {"linear_key_head_dim", 128},
               {"linear_value_head_dim", 128},
               {"linear_conv_kernel_dim", 4},
               {"tie_word_embeddings", false}};
  const json c = {{"model_type", "qwen3_5"}, {"text_config", text}};
  const json m = io::model_from_hf_config(c, "qwen3.5-9b.json");
  std::string pattern;
  for (int i = 0; i < 8; ++i) pattern += "G-G-G-*-";
  EXPECT_EQ(m["layer_pattern"], pattern);
  EXPECT_EQ(count_params(io::read_model(m, "model")).total, 8953799168.0);
  // Qwen3.5 states its linear-attention shapes; one missing is named, not defaulted.
  json missing = c;
  missing["text_config"].erase("linear_num_value_heads");
  const HfFailure f = hf_failure(missing);
  EXPECT_EQ(f.path, "hf_config.linear_num_value_heads");
  EXPECT_NE(f.message.find("required key is missing"), std::string::npos) << f.message;
}

TEST(HfConfig, Granite4HybridIsMambaAndAttentionEachWithExperts) {
  // transformers' documentation example of a GraniteMoeHybrid config: 8 decoder layers (6 Mamba-2,
  // 2 attention), each followed by 8 experts (top 2) beside a shared MLP; NoPE attention. Hand
  // count: Mamba-2 (d_in 8·128 = 1024, 1 group of 128): in_proj 512·(2·1024 + 2·128 + 8) +
  // conv1d (1024 + 256)·5 + 3·8 + norm 1024 + out_proj 1024·512 = 1,715,480 (6 of them);
  // attention 4·512·512 = 1,048,576 (2); an FFN layer 8 · 3·512·1024 + router 512·8 + shared
  // 3·512·512 = 13,373,440 (8); 16 norms and the final one of 512; the tied 49152·512 table:
  // 144,552,080.
  const json c = json::parse(R"({
    "architectures": ["GraniteMoeHybridForCausalLM"], "attention_bias": false,
    "hidden_size": 512, "intermediate_size": 1024,
    "layer_types": ["mamba", "mamba", "mamba", "attention", "mamba", "mamba", "mamba", "attention"],
    "mamba_chunk_size": 256, "mamba_conv_bias": true, "mamba_d_conv": 4, "mamba_d_head": 128,
    "mamba_d_state": 128, "mamba_expand": 2, "mamba_n_groups": 1, "mamba_n_heads": 8,
    "mamba_proj_bias": false, "max_position_embeddings": 4096, "model_type": "granitemoehybrid",
    "num_attention_heads": 8, "num_experts_per_tok": 2, "num_hidden_layers": 8,
    "num_key_value_heads": 8, "num_local_experts": 8, "position_embedding_type": "nope",
    "rms_norm_eps": 1e-05, "shared_intermediate_size": 512, "tie_word_embeddings": true,
    "vocab_size": 49152})");
  const json m = io::model_from_hf_config(c, "granite.json");
  EXPECT_EQ(m["layer_pattern"], "MEMEME*EMEMEME*E");
  EXPECT_EQ(m["position_embedding"], "none");
  EXPECT_EQ(m["shared_expert_intermediate_size"], 512);
  EXPECT_EQ(count_params(io::read_model(m, "model")).total, 144552080.0);
  // Without experts the shared MLP is each layer's dense FFN; mamba_d_head "auto" is
  // mamba_expand · hidden / heads.
  json dense = c;
  dense["num_local_experts"] = 0;
  dense["mamba_d_head"] = "auto";
  const json d = io::model_from_hf_config(dense, "granite.json");
  EXPECT_EQ(d["layer_pattern"], "M-M-M-*-M-M-M-*-");
  EXPECT_EQ(d["intermediate_size"], 512);
  EXPECT_EQ(d["mamba_head_dim"], 128);
  dense["mamba_expand"] = 1000000000;  // bounded before it multiplies the hidden size
  EXPECT_EQ(hf_failure(dense).path, "hf_config.mamba_expand");
  json biased = c;
  biased["mamba_proj_bias"] = true;
  const HfFailure f = hf_failure(biased);
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.mamba_proj_bias");
}

TEST(HfConfig, FalconH1RefusesWhatItDoesNotModel) {
  // Falcon-H1-0.5B's published config (tests/fixtures/hf/falcon-h1-0.5b.json, its parameter count
  // in model_zoo_test.cpp); each change below is a Falcon-H1 flopcast does not price.
  const json c = test::hf_fixture("falcon-h1-0.5b");
  EXPECT_EQ(io::model_from_hf_config(c, "falcon.json")["num_layers"], 108);
  const auto refused = [&](const char* key, const json& value) {
    json changed = c;
    changed[key] = value;
    const HfFailure f = hf_failure(changed);
    EXPECT_EQ(f.code, "not_modelled") << key;
    EXPECT_EQ(f.path, std::string("hf_config.") + key);
    return f.message;
  };
  EXPECT_NE(refused("attn_layer_indices", json::array({0, 2})).find("attention in some layers"),
            std::string::npos);
  refused("mamba_use_mlp", false);
  refused("mamba_proj_bias", true);
  refused("projectors_bias", true);
  // d_ssm 2048 is not 24 heads · 64 = 1536.
  EXPECT_NE(refused("mamba_d_ssm", 2048).find("(1536)"), std::string::npos);
  json chunkless = c;
  chunkless.erase("mamba_chunk_size");  // stated, never guessed
  EXPECT_EQ(hf_failure(chunkless).path, "hf_config.mamba_chunk_size");
}

TEST(HfConfig, DeepSeekV32ReadsItsSparseAttention) {
  // DeepSeek-V3.2's config.json is DeepSeek-V3's with model_type deepseek_v32 and its indexer
  // (index_n_heads 64, index_head_dim 128, index_topk 2048).
  json c = test::hf_fixture("deepseek-v3");
  c["model_type"] = "deepseek_v32";
  c["architectures"] = {"DeepseekV32ForCausalLM"};
  c["index_n_heads"] = 64;
  c["index_head_dim"] = 128;
  c["index_topk"] = 2048;
  const json m = io::model_from_hf_config(c, "deepseek-v3.2.json");
  EXPECT_EQ(m["dsa_index_heads"], 64);
  EXPECT_EQ(m["dsa_index_head_dim"], 128);
  EXPECT_EQ(m["dsa_topk_tokens"], 2048);
  EXPECT_EQ(m["kv_lora_rank"], 512);
  // The preset is this import (its name and the published FP8 types aside).
  json preset = io::preset("models", "deepseek-v3.2", "model").at("model");
  json imported = m;
  for (json* j : {&preset, &imported}) j->erase("name");
  EXPECT_EQ(preset, imported);
  c.erase("index_topk");  // stated, never guessed
  EXPECT_EQ(hf_failure(c).path, "hf_config.index_topk");
}

TEST(HfConfig, KimiLinearIsKimiDeltaAttentionAndLatentAttention) {
  // Kimi-Linear-48B-A3B's config keys as third-party copies of the released file give them (a
  // loader test's "released 48B config" and a conversion test's layer lists);
  // max_position_embeddings, which neither copy holds, is the test's. 27 decoder layers: Kimi
  // Delta Attention in 20, MLA without RoPE in layers 4, 8, …, 24, 27 (1-based); MoE from layer 2.
  const json c = json::parse(R"({
    "model_type": "kimi_linear", "architectures": ["KimiLinearForCausalLM"],
    "hidden_size": 2304, "num_hidden_layers": 27, "vocab_size": 163840, "tie_word_embeddings": false,
    "num_attention_heads": 32, "num_key_value_heads": 32, "q_lora_rank": null,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "mla_use_nope": true, "num_experts": 256, "num_experts_per_token": 8, "num_shared_experts": 1,
    "moe_intermediate_size": 1024, "first_k_dense_replace": 1, "moe_layer_freq": 1,
    "num_expert_group": 1, "topk_group": 1, "intermediate_size": 9216, "rms_norm_eps": 1e-5,
    "moe_router_activation_func": "sigmoid", "max_position_embeddings": 1048576,
    "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
      "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
      "head_dim": 128, "num_heads": 32, "short_conv_kernel_size": 4}})");
  const json m = io::model_from_hf_config(c, "kimi-linear.json");
  std::string pattern = "G-GEGE*E";
  for (int i = 0; i < 5; ++i) pattern += "GEGEGE*E";
  pattern += "GEGE*E";
  EXPECT_EQ(m["layer_pattern"], pattern);
  EXPECT_EQ(m["gdn_channel_gate"], true);
  EXPECT_EQ(m["position_embedding"], "none");
  EXPECT_EQ(m["experts_per_token"], 8);
  EXPECT_EQ(m["shared_experts"], 1);
  // Kimi Delta Attention (q, k, v of 32 heads of 128 = 4096 wide): in_proj 2304·(2·4096 + 4096 +
  // 32 + 2·128) = 28,975,104, the gates' up-projections 128·(4096 + 4096) = 1,048,576, conv1d
  // 12,288·4 = 49,152, A_log 32, dt_bias 4096, norm 128, o_proj 4096·2304 = 9,437,184:
  // 39,514,272. MLA (no q latent): q 2304·32·192 = 14,155,776, kv_a 2304·576 = 1,327,104, kv_b
  // 512·32·256 = 4,194,304, o 32·128·2304 = 9,437,184: 29,114,368. A MoE layer: 256 + 1 experts
  // of 3·2304·1024 and the router 2304·256 = 1,819,607,040 (26); the dense layer 3·2304·9216 =
  // 63,700,992; 54 norms of 2304 + 512 and the final one; two 163840·2304 tables: 20 ·
  // 39,514,272 + 7 · 29,114,368 + 26 · 1,819,607,040 + 63,700,992 + 154,368 + 754,974,720 =
  // 49,122,699,136 (published "48B": 48.37e9 without the embedding and LM head).
  const ParamCounts p = count_params(io::read_model(m, "model"));
  EXPECT_EQ(p.recurrent_per_layer, 39514272.0);
  EXPECT_EQ(p.attention_per_layer, 29114368.0);
  EXPECT_EQ(p.recurrent_layers, 20);
  EXPECT_EQ(p.attention_layers, 7);
  EXPECT_EQ(p.total, 49122699136.0);
  // What later Kimi configs add is refused by name.
  for (const char* key : {"mla_use_output_gate", "attn_res_block_size"}) {
    json later = c;
    later[key] = key == std::string("mla_use_output_gate") ? json(true) : json(12);
    EXPECT_EQ(hf_failure(later).path, std::string("hf_config.") + key);
    EXPECT_EQ(hf_failure(later).code, "not_modelled");
  }
  json full_rank = c;
  full_rank["linear_attn_config"]["use_full_rank_gate"] = true;
  EXPECT_EQ(hf_failure(full_rank).path, "hf_config.linear_attn_config.use_full_rank_gate");
  json twice = c;
  twice["linear_attn_config"]["full_attn_layers"].push_back(1);  // layer 1 is a KDA layer too
  EXPECT_EQ(hf_failure(twice).path, "hf_config.linear_attn_config.full_attn_layers");
  json no_step = c;
  no_step["moe_layer_freq"] = 0;  // a named error, not a division by zero (found by the fuzzer)
  EXPECT_EQ(hf_failure(no_step).path, "hf_config.moe_layer_freq");
  json gap = c;
  gap["linear_attn_config"]["kda_layers"].erase(0);
  EXPECT_NE(hf_failure(gap).message.find("layer 1 is in neither"), std::string::npos);
}

TEST(HfConfig, NemotronHRefusesWhatItDoesNotModel) {
  // A tiny Nemotron-H: Mamba, attention, dense FFN and MoE layers; then LatentMoE and MTP.
  json c = {{"model_type", "nemotron_h"},
            {"hidden_size", 256},
            {"num_attention_heads", 4},
            {"num_key_value_heads", 2},
            {"head_dim", 64},
            {"num_hidden_layers", 4},
            {"hybrid_override_pattern", "M*-E"},
            {"mamba_num_heads", 8},
            {"mamba_head_dim", 64},
            {"ssm_state_size", 16},
            {"n_groups", 2},
            {"intermediate_size", 1024},
            {"moe_intermediate_size", 128},
            {"n_routed_experts", 8},
            {"num_experts_per_tok", 2},
            {"vocab_size", 1000},
            {"max_position_embeddings", 4096}};
  const json m = io::model_from_hf_config(c);
  EXPECT_EQ(m.at("layer_pattern"), "M*-E");
  EXPECT_EQ(m.at("dense_intermediate_size"), 1024);  // the '-' layer's width
  EXPECT_EQ(m.at("intermediate_size"), 128);         // one routed expert
  // LatentMoE is read; an MTP module is read when it is an attention and an FFN block of the
  // model's kind ("*E" here, Nemotron 3 Super's), refused otherwise.
  json latent = c;
  latent["moe_latent_size"] = 64;
  EXPECT_EQ(io::model_from_hf_config(latent).at("moe_latent_size"), 64);
  json mtp = c;
  mtp["num_nextn_predict_layers"] = 1;
  HfFailure f = hf_failure(mtp);
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.mtp_hybrid_override_pattern");
  mtp["mtp_hybrid_override_pattern"] = "*E";
  EXPECT_EQ(io::model_from_hf_config(mtp).at("mtp_layers"), 1);
  mtp["mtp_hybrid_override_pattern"] = "M*E";
  EXPECT_EQ(hf_failure(mtp).code, "not_modelled");
  json short_pattern = c;
  short_pattern["hybrid_override_pattern"] = "M*E";
  f = hf_failure(short_pattern);
  EXPECT_EQ(f.code, "invalid_request");
  EXPECT_EQ(f.path, "model.layer_pattern");
  EXPECT_NE(f.message.find("one character per layer (model.num_layers 4; got 3)"),
            std::string::npos)
      << f.message;
}

TEST(HfConfig, NotAnObject) {
  for (const json& bad : {json::array({1, 2}), json("config"), json(nullptr), json(3)}) {
    const HfFailure f = hf_failure(bad);
    EXPECT_EQ(f.code, "invalid_request") << bad.dump();
    EXPECT_EQ(f.path, "hf_config") << bad.dump();
    EXPECT_NE(f.message.find("must be a JSON object"), std::string::npos) << f.message;
  }
}

json quantized(const json& quantization_config) {
  json c = json::parse(kLlama2_7b);
  c["quantization_config"] = quantization_config;
  return c;
}

HfFailure precision_failure(const json& config) {
  return failure_of([&] { (void)io::precision_from_hf_config(config); });
}

TEST(HfConfig, PrecisionFromQuantizationConfig) {
  const auto weights = [](const json& q) { return io::precision_from_hf_config(quantized(q)); };
  EXPECT_EQ(io::precision_from_hf_config(json::parse(kLlama2_7b)), json::object());
  EXPECT_EQ(io::precision_from_hf_config(quantized(nullptr)), json::object());
  // AutoAWQ (Qwen3-8B-AWQ) and AutoGPTQ as their configs spell them.
  EXPECT_EQ(weights({{"quant_method", "awq"},
                     {"bits", 4},
                     {"group_size", 128},
                     {"version", "gemm"},
                     {"zero_point", true}}),
            json({{"weights", "int4"}}));
  EXPECT_EQ(weights({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}}),
            json({{"weights", "int4"}}));
  EXPECT_EQ(weights({{"quant_method", "gptq"}, {"bits", 8}}), json({{"weights", "int8"}}));
  // DeepSeek-V3's block FP8, Llama 4 Maverick FP8's fbgemm, gpt-oss's MXFP4 experts.
  EXPECT_EQ(weights({{"quant_method", "fp8"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 128}}}),
            json({{"weights", "fp8"}, {"weight_scaling", "block"}}));
  EXPECT_EQ(weights({{"quant_method", "fbgemm_fp8"}}), json({{"weights", "fp8"}}));
  EXPECT_EQ(weights({{"quant_method", "mxfp4"}}), json({{"weights", "mxfp4"}}));
  // compressed-tensors (llm-compressor): W4A16, FP8 dynamic, NVFP4.
  const auto ct = [&](const json& w) {
    return weights({{"quant_method", "compressed-tensors"},
                    {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", w}}}}}});
  };
  EXPECT_EQ(ct({{"num_bits", 4}, {"type", "int"}, {"group_size", 128}, {"strategy", "group"}}),
            json({{"weights", "int4"}}));
  EXPECT_EQ(
      ct({{"num_bits", 8}, {"type", "float"}, {"group_size", nullptr}, {"strategy", "channel"}}),
      json({{"weights", "fp8"}}));
  EXPECT_EQ(ct({{"num_bits", 4}, {"type", "float"}, {"group_size", 16}}),
            json({{"weights", "fp4"}}));  // NVFP4
  // llm-compressor's FP8_BLOCK scheme (RedHat's block-quantized checkpoints).
  EXPECT_EQ(ct({{"num_bits", 8},
                {"type", "float"},
                {"strategy", "block"},
                {"block_structure", {128, 128}}}),
            json({{"weights", "fp8"}, {"weight_scaling", "block"}}));
  // The quantization of a multimodal checkpoint may sit beside text_config.
  json nested = {{"text_config", json::parse(kLlama2_7b)},
                 {"quantization_config", {{"quant_method", "fp8"}}}};
  EXPECT_EQ(io::precision_from_hf_config(nested), json({{"weights", "fp8"}}));
}

TEST(HfConfig, AttentionLeftUnquantized) {
  // Meta's Llama 3.1 FP8 lists every self_attn projection layer by layer (Llama-2-7B here: 32
  // layers, torch_dtype float16); half of the layers or more count as all, a few do not (they are
  // priced quantized).
  const auto listed = [](int layers) {
    json names = json::array();
    for (int i = 0; i < layers; ++i) {
      for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
        names.push_back("model.layers." + std::to_string(i) + ".self_attn." + p);
      }
    }
    names.push_back("lm_head");
    return io::precision_from_hf_config(quantized({{"quant_method", "fbgemm_fp8"},
                                                   {"activation_scale_ub", 1200.0},
                                                   {"modules_to_not_convert", names}}));
  };
  EXPECT_EQ(listed(32), json({{"weights", "fp8"}, {"attention_weights", "fp16"}}));
  EXPECT_EQ(listed(16), json({{"weights", "fp8"}, {"attention_weights", "fp16"}}));
  EXPECT_EQ(listed(2), json({{"weights", "fp8"}}));
  // A pattern (gpt-oss) or compressed-tensors' `ignore` regex; a bf16 checkpoint keeps bf16.
  json q = {{"quant_method", "mxfp4"}, {"modules_to_not_convert", {"model.layers.*.self_attn"}}};
  EXPECT_EQ(io::precision_from_hf_config(quantized(q)),
            json({{"weights", "mxfp4"}, {"attention_weights", "fp16"}}));
  json bf16 = quantized(q);
  bf16["torch_dtype"] = "bfloat16";
  EXPECT_EQ(io::precision_from_hf_config(bf16),
            json({{"weights", "mxfp4"}, {"attention_weights", "bf16"}}));
  json ct = {{"quant_method", "compressed-tensors"},
             {"ignore", {"lm_head", "re:.*self_attn.*"}},
             {"config_groups", {{"group_0", {{"weights", {{"num_bits", 8}, {"type", "float"}}}}}}}};
  EXPECT_EQ(io::precision_from_hf_config(quantized(ct)),
            json({{"weights", "fp8"}, {"attention_weights", "fp16"}}));
}

TEST(HfConfig, PrecisionErrorsNameTheKey) {
  HfFailure f =
      precision_failure(quantized({{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}}));
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.quantization_config.quant_method");
  EXPECT_NE(f.message.find("\"bitsandbytes\" is not modelled"), std::string::npos) << f.message;
  f = precision_failure(quantized({{"bits", 4}}));
  EXPECT_EQ(f.code, "invalid_request");
  EXPECT_EQ(f.path, "hf_config.quantization_config.quant_method");
  f = precision_failure(quantized({{"quant_method", "gptq"}, {"bits", 3}}));
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.quantization_config.bits");
  f = precision_failure(
      quantized({{"quant_method", "compressed-tensors"},
                 {"config_groups",
                  {{"a", {{"weights", {{"num_bits", 4}, {"type", "int"}}}}},
                   {"b", {{"weights", {{"num_bits", 8}, {"type", "float"}}}}}}}}));
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.quantization_config.config_groups");
  f = precision_failure(
      quantized({{"quant_method", "compressed-tensors"},
                 {"config_groups", {{"g", {{"weights", {{"num_bits", 2}, {"type", "int"}}}}}}}}));
  EXPECT_EQ(f.code, "not_modelled");
  EXPECT_EQ(f.path, "hf_config.quantization_config.config_groups.g.weights");
}

TEST(HfConfig, QuantizedConfigEstimatesWithItsPrecision) {
  // An AWQ Llama-2-7B: int4 weights are 0.5 B per parameter against bf16's 2 B, so the weights
  // take at most 6.74e9·0.5 / (6.74e9·2) = 1/4 of the memory, plus whatever stays in 16 bits
  // (the 2·32000·4096 = 0.26e9 embedding parameters at most: (3.24 + 0.52) / 13.48 = 0.28).
  const json c = quantized({{"quant_method", "awq"}, {"bits", 4}});
  json r = base_request();
  r["model"] = io::model_from_hf_config(c);
  r["precision"]["weights"] = io::precision_from_hf_config(c).at("weights");
  const json int4 = io::run(r);
  const json bf16 = io::run(base_request());
  EXPECT_EQ(int4.at("request").at("precision").at("weights"), "int4");
  EXPECT_LT(int4.at("memory").at("weights_GB").get<double>(),
            0.3 * bf16.at("memory").at("weights_GB").get<double>());
}

TEST(HfConfig, ResultIsAValidModelObjectAndStable) {
  for (const char* text : {kLlama2_7b, kMixtral_8x7b, kQwen2_7b, kFalcon40b}) {
    const json m = io::model_from_hf_config(json::parse(text));
    json r = base_request();
    r["model"] = m;
    r["workload"] = {{"prompt_tokens", 64}, {"output_tokens", 16}};
    const std::string out = io::handle(r.dump());
    EXPECT_NE(out.find("\"ok\":true"), std::string::npos) << out;
    EXPECT_EQ(io::model_from_hf_config(json::parse(text)), m);
  }
}

// Issue 46: 53 of 1,500 fuzzed configs ended in a raw json exception (exit 1), e.g. a model_type
// that is a number. Every key of every config above, top level and inside text_config, set to
// each value of the wrong type or out of range: the importer, and the model reader on what it
// imports, either succeed or raise a SpecError that names a field; nothing else escapes.
TEST(HfConfig, EveryKeyOfTheWrongTypeIsANamedError) {
  const json hostile =
      json::array({5, -1, 0, 0.5, 1e300, 2147483647, "x", "", true, nullptr, json::array(),
                   json::array({1, 2}), json::object(), json{{"quant_method", 5}}});
  int tried = 0, imported = 0;
  const auto check = [&](const json& config, const std::string& what) {
    ++tried;
    try {
      const json model = io::model_from_hf_config(config);
      (void)io::precision_from_hf_config(config);
      // What imports is a model the request reader takes or names what is wrong with it.
      (void)io::resolve_model(model, "model");
      ++imported;
    } catch (const SpecError& e) {
      EXPECT_NE(std::string(e.what()).find(':'), std::string::npos) << what << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << " escaped as " << e.what();
    }
  };
  for (const char* text :
       {kLlama2_7b, kMixtral_8x7b, kQwen2_7b, kFalcon40b, kDeepSeekV2Lite, kMistral7bV01}) {
    const json config = json::parse(text);
    for (const auto& [key, unused] : config.items()) {
      for (const json& v : hostile) {
        json broken = config;
        broken[key] = v;
        check(broken, key + " = " + v.dump());
        // The same key in a multimodal checkpoint's text_config.
        json nested{{"model_type", "llava"}, {"text_config", config}};
        nested["text_config"][key] = v;
        check(nested, "text_config." + key + " = " + v.dump());
      }
    }
  }
  EXPECT_GT(tried, 1000);
  EXPECT_GT(imported, 0);  // the values that are of the right type still import
}

}  // namespace
}  // namespace flopcast
