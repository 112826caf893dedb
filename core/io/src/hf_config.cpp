// SPDX-License-Identifier: MIT
// Hugging Face config.json -> flopcast model object. HF configs carry many keys flopcast does not
// need, so unknown keys are ignored here (unlike flopcast's own documents); keys that change the
// architecture in ways flopcast does not model are rejected explicitly.
#include <string>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io {
namespace {

constexpr const char* kPath = "hf_config";

std::string at(const char* key) { return std::string(kPath) + "." + key; }

const json* first(const json& c, std::initializer_list<const char*> keys, const char** used) {
  for (const char* k : keys) {
    auto it = c.find(k);
    if (it != c.end() && !it->is_null()) {
      *used = k;
      return &*it;
    }
  }
  return nullptr;
}

int required_int(const json& c, std::initializer_list<const char*> keys) {
  const char* used = *keys.begin();
  const json* v = first(c, keys, &used);
  if (!v) throw SpecError(at(*keys.begin()), "required key is missing");
  return detail::as_int(*v, at(used));
}

int optional_int(const json& c, std::initializer_list<const char*> keys, int fallback) {
  const char* used = *keys.begin();
  const json* v = first(c, keys, &used);
  return v ? detail::as_int(*v, at(used)) : fallback;
}

bool optional_bool(const json& c, const char* key, bool fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) {
    throw SpecError(at(key), "must be true or false (got " + detail::describe_value(*it) + ")");
  }
  return it->get<bool>();
}

}  // namespace

json model_from_hf_config(const json& c) {
  if (!c.is_object()) {
    throw SpecError(kPath, "must be a JSON object (got " + detail::describe_value(c) + ")");
  }
  const std::string type = c.value("model_type", std::string());
  for (const char* mla : {"kv_lora_rank", "q_lora_rank"}) {
    if (c.contains(mla) && !c.at(mla).is_null()) {
      throw NotModelledError(at(mla), "multi-head latent attention (DeepSeek MLA) is not "
                                      "modelled yet");
    }
  }
  for (const char* shared : {"n_shared_experts", "shared_expert_intermediate_size"}) {
    if (c.contains(shared) && !c.at(shared).is_null() && c.at(shared) != 0) {
      throw NotModelledError(at(shared), "shared experts are not modelled yet");
    }
  }

  json m = json::object();
  m["name"] = c.value("_name_or_path", type.empty() ? std::string("custom model") : type);
  const int hidden = required_int(c, {"hidden_size", "n_embd", "d_model"});
  const int heads = required_int(c, {"num_attention_heads", "n_head", "n_heads"});
  m["num_layers"] = required_int(c, {"num_hidden_layers", "n_layer", "num_layers"});
  m["hidden_size"] = hidden;
  m["num_heads"] = heads;
  const bool falcon_new = optional_bool(c, "new_decoder_architecture", false);
  const bool falcon_mqa = type == "falcon" && !falcon_new && optional_bool(c, "multi_query", true);
  m["num_kv_heads"] =
      falcon_mqa ? 1 : optional_int(c, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, heads);
  if (const int hd = optional_int(c, {"head_dim"}, 0); hd > 0) m["head_dim"] = hd;

  const bool plain = type == "falcon" || type == "gpt2" || type == "gpt_neox" || type == "gptj" ||
                     type == "opt" || type == "bloom" || type == "gpt_bigcode";
  m["ffn"] = plain ? "plain" : "gated";
  m["intermediate_size"] =
      optional_int(c, {"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"},
                   plain ? 4 * hidden : 0);
  if (m["intermediate_size"] == 0) {
    throw SpecError(at("intermediate_size"), "required key is missing");
  }
  if (const int moe = optional_int(c, {"moe_intermediate_size"}, 0); moe > 0) {
    m["intermediate_size"] = moe;
  }
  m["vocab_size"] = required_int(c, {"vocab_size"});
  // transformers' PretrainedConfig ties embeddings by default; Llama-family configs override it.
  const bool tie_default = !(type == "llama" || type == "mistral" || type == "mixtral" ||
                             type == "qwen2" || type == "qwen2_moe");
  m["tie_embeddings"] = optional_bool(c, "tie_word_embeddings", tie_default);
  // Falcon's published configs carry no context length; the models were trained at 2048.
  const int context = optional_int(
      c, {"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"},
      type == "falcon" ? 2048 : 0);
  if (context <= 0) throw SpecError(at("max_position_embeddings"), "required key is missing");
  m["max_context_tokens"] = context;
  m["norm"] = (c.contains("layer_norm_epsilon") || c.contains("layer_norm_eps")) &&
                      !c.contains("rms_norm_eps")
                  ? "layernorm"
                  : "rmsnorm";
  m["qkv_bias"] = type == "qwen2" || type == "qwen2_moe" || optional_bool(c, "attention_bias", false) ||
                  optional_bool(c, "bias", false);
  m["linear_bias"] = optional_bool(c, "mlp_bias", false) || optional_bool(c, "bias", false);
  m["position_embedding"] = (type == "gpt2" || type == "opt" || type == "gpt_bigcode") ? "learned" : "rope";
  const int experts = optional_int(c, {"num_local_experts", "num_experts", "n_routed_experts"}, 0);
  if (experts > 0) {
    m["num_experts"] = experts;
    m["experts_per_token"] = required_int(c, {"num_experts_per_tok", "moe_top_k"});
  }
  const bool window_off = c.contains("use_sliding_window") && c.at("use_sliding_window") == false;
  if (!window_off) {
    const int window = optional_int(c, {"sliding_window"}, 0);
    if (window > 0 && window < context) {
      throw NotModelledError(at("sliding_window"),
                             "sliding-window attention is not modelled yet (got " +
                                 std::to_string(window) + ")");
    }
  }
  // The result must itself be a valid model object.
  (void)detail::read_model(m, "model");
  return m;
}

}  // namespace flopcast::io
