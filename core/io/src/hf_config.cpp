// SPDX-License-Identifier: MIT
// Hugging Face config.json -> flopcast model object. HF configs carry many keys flopcast does not
// need, so unknown keys are ignored here (unlike flopcast's own documents); keys that change the
// architecture in ways flopcast does not model are rejected explicitly.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/model.hpp"
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

/// A text key of the config at `path`, `fallback` when absent or null; another type is an error.
std::string optional_string(const json& c, const char* key, const std::string& path,
                            std::string fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  if (!it->is_string()) {
    throw SpecError(path, "must be a string (got " + detail::describe_value(*it) + ")");
  }
  return it->get<std::string>();
}

bool optional_bool(const json& c, const char* key, bool fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) {
    throw SpecError(at(key), "must be true or false (got " + detail::describe_value(*it) + ")");
  }
  return it->get<bool>();
}

/// Period N of a layer pattern in which layer i (1-based) is full attention iff i % N == 0
/// (0: no full-attention layer); -1 when the pattern has no such period.
int global_period(const std::vector<bool>& full) {
  const int n = static_cast<int>(full.size());
  int first = 0;
  for (int i = 1; i <= n && first == 0; ++i) first = full[i - 1] ? i : 0;
  if (first == 0) return 0;
  for (int i = 1; i <= n; ++i) {
    if (full[i - 1] != (i % first == 0)) return -1;
  }
  return first;
}

/// Local attention: window, kind and the period of the global layers, from `layer_types`
/// (Gemma 3, gpt-oss, Qwen3), `sliding_window_pattern` (Gemma 3), Gemma 2's alternation,
/// Llama 4's `attention_chunk_size` with `no_rope_layers`, or a window on every layer (Mistral).
void read_local_attention(const json& c, const std::string& type, int layers, int context,
                          json& m) {
  const bool window_off = c.contains("use_sliding_window") && c.at("use_sliding_window") == false;
  const int chunk = optional_int(c, {"attention_chunk_size"}, 0);
  const int window = window_off ? 0 : optional_int(c, {"sliding_window"}, 0);
  const int w = chunk > 0 ? chunk : window;
  if (w <= 0 || w >= context) return;
  std::vector<bool> full(static_cast<std::size_t>(layers), false);
  const char* pattern_key = nullptr;
  if (auto it = c.find("layer_types"); it != c.end() && it->is_array()) {
    pattern_key = "layer_types";
    if (static_cast<int>(it->size()) != layers) {
      throw SpecError(at("layer_types"), "must list num_hidden_layers (" + std::to_string(layers) +
                                             ") entries (got " + std::to_string(it->size()) + ")");
    }
    for (int i = 0; i < layers; ++i) full[i] = it->at(i) == "full_attention";
  } else if (auto nr = c.find("no_rope_layers"); chunk > 0 && nr != c.end() && nr->is_array()) {
    pattern_key = "no_rope_layers";  // Llama 4: 0 marks a NoPE layer, which attends globally
    for (int i = 0; i < layers && i < static_cast<int>(nr->size()); ++i) full[i] = nr->at(i) == 0;
  } else if (const int p = optional_int(c, {"sliding_window_pattern"}, 0); p > 0) {
    pattern_key = "sliding_window_pattern";
    for (int i = 1; i <= layers; ++i) full[i - 1] = i % p == 0;
  } else if (type == "gemma2") {
    for (int i = 1; i <= layers; ++i) full[i - 1] = i % 2 == 0;
  } else if (const int below = optional_int(c, {"max_window_layers"}, 0); below > 0) {
    pattern_key = "max_window_layers";  // Qwen2: layers from this index on use the window
    if (below >= layers) return;
    for (int i = 1; i <= below; ++i) full[i - 1] = true;
  }
  const int period = global_period(full);
  if (period < 0) {
    throw NotModelledError(at(pattern_key ? pattern_key : "sliding_window"),
                           "a pattern of local and global layers that is not periodic (every "
                           "N-th layer global) is not modelled");
  }
  m["sliding_window_tokens"] = w;
  m["local_attention"] = to_string(chunk > 0 ? LocalAttention::chunked : LocalAttention::sliding);
  if (period > 0) m["global_attention_every"] = period;
}

void require_object(const json& config) {
  if (!config.is_object()) {
    throw SpecError(kPath, "must be a JSON object (got " + detail::describe_value(config) + ")");
  }
}

/// The language model's keys: multimodal checkpoints (Llama 4, Gemma 3) nest it in text_config.
const json& language_config(const json& config) {
  auto it = config.find("text_config");
  return it != config.end() && it->is_object() ? *it : config;
}

/// Keys a published config leaves to its transformers config class: Gemma 3's multimodal
/// checkpoints (4B, 12B, 27B) spell out only what differs from Gemma3TextConfig's defaults
/// (transformers 4.50), vocabulary and heads included; Qwen3NextConfig's defaults are the
/// Qwen3-Next-80B-A3B shapes.
json with_class_defaults(const json& c, const std::string& type) {
  json m;
  if (type == "gemma3_text" || type == "gemma3") {
    m = {{"vocab_size", 262208},      {"hidden_size", 2304},
         {"intermediate_size", 9216}, {"num_hidden_layers", 26},
         {"num_attention_heads", 8},  {"num_key_value_heads", 4},
         {"head_dim", 256},           {"max_position_embeddings", 131072},
         {"sliding_window", 4096},    {"sliding_window_pattern", 6},
         {"rms_norm_eps", 1e-6}};
  } else if (type == "qwen3_next") {
    // transformers' Qwen3NextConfig.
    m = {{"vocab_size", 151936},
         {"hidden_size", 2048},
         {"intermediate_size", 5632},
         {"num_hidden_layers", 48},
         {"num_attention_heads", 16},
         {"num_key_value_heads", 2},
         {"head_dim", 256},
         {"max_position_embeddings", 32768},
         {"rms_norm_eps", 1e-6},
         {"num_experts", 512},
         {"num_experts_per_tok", 10},
         {"moe_intermediate_size", 512},
         {"shared_expert_intermediate_size", 512},
         {"linear_num_key_heads", 16},
         {"linear_num_value_heads", 32},
         {"linear_key_head_dim", 128},
         {"linear_value_head_dim", 128},
         {"linear_conv_kernel_dim", 4}};
  } else {
    return c;
  }
  for (const auto& [key, value] : c.items()) {
    if (!value.is_null()) m[key] = value;
  }
  return m;
}

/// A display name from a file name: its last path component without ".json".
std::string name_from_file(std::string_view file_name) {
  const auto slash = file_name.find_last_of("/\\");
  if (slash != std::string_view::npos) file_name.remove_prefix(slash + 1);
  constexpr std::string_view kExt = ".json";
  if (file_name.size() > kExt.size() && file_name.substr(file_name.size() - kExt.size()) == kExt) {
    file_name.remove_suffix(kExt.size());
  }
  return std::string(file_name);
}

}  // namespace

namespace {

/// Multi-head latent attention (DeepSeek-V2/V3/R1, Kimi K2): the latent ranks and head
/// dimensions; every query head has its own K and V.
void read_latent_attention(const json& c, int heads, json& m) {
  if (const int rkv = optional_int(c, {"kv_lora_rank"}, 0); rkv > 0) {
    m["kv_lora_rank"] = rkv;
    m["q_lora_rank"] = optional_int(c, {"q_lora_rank"}, 0);
    const int rope = required_int(c, {"qk_rope_head_dim"});
    const int nope = required_int(c, {"qk_nope_head_dim"});
    m["qk_rope_head_dim"] = rope;
    m["qk_nope_head_dim"] = nope;
    m["v_head_dim"] = required_int(c, {"v_head_dim"});
    m["head_dim"] = 1LL * rope + nope;  // the model reader bounds it
    m["num_kv_heads"] = heads;
  }
}

/// DeepSeek-V3's group-limited routing: top topk_group of n_group expert groups (Kimi K2,
/// GLM-4.5 and Nemotron 3 keep one group: no limit).
void read_expert_groups(const json& c, json& m) {
  const int groups = optional_int(c, {"n_group", "num_expert_group"}, 1);
  const int chosen = optional_int(c, {"topk_group"}, 1);
  if (groups > 1 && chosen < groups) {
    m["expert_groups"] = groups;
    m["expert_groups_per_token"] = chosen;
  }
}

/// A mixture of experts' keys: routed and shared experts, their widths, dense layers, routing
/// groups, multi-token-prediction layers and the MoE layers' interval.
void read_experts(const json& c, const std::string& type, int dense_width, json& m) {
  const int experts = optional_int(c, {"num_local_experts", "num_experts", "n_routed_experts"}, 0);
  if (experts == 0) return;
  m["num_experts"] = experts;
  m["experts_per_token"] = required_int(
      c, {"num_experts_per_tok", "moe_top_k", "experts_per_token", "num_experts_per_token"});
  // One routed expert's width; dense layers (first_k_dense_replace, Llama 4's interleave)
  // keep the dense width.
  const int expert_width = optional_int(c, {"moe_intermediate_size"}, 0);
  const bool llama4 = type == "llama4_text" || type == "llama4";
  if (expert_width > 0) {
    m["intermediate_size"] = expert_width;
    m["dense_intermediate_size"] = dense_width;
  } else if (llama4) {
    m["intermediate_size"] = optional_int(c, {"intermediate_size"}, dense_width);
    m["dense_intermediate_size"] = dense_width;
  }
  const int shared = optional_int(c, {"n_shared_experts", "num_shared_experts"}, 0);
  const int shared_width = optional_int(c, {"shared_expert_intermediate_size"}, 0);
  if (shared > 0) {
    m["shared_experts"] = shared;
  } else if (shared_width > 0) {
    m["shared_experts"] = 1;  // Qwen2-MoE: one shared expert of this width
    m["shared_expert_intermediate_size"] = shared_width;
  } else if (llama4) {
    m["shared_experts"] = 1;  // Llama 4: one shared expert of the routed experts' width
  }
  if (const int k = optional_int(c, {"first_k_dense_replace"}, 0); k > 0) {
    m["first_dense_layers"] = k;
  }
  read_expert_groups(c, m);
  if (const int k = optional_int(c, {"num_nextn_predict_layers"}, 0); k > 0) {
    m["mtp_layers"] = k;
  }
  if (const int step = optional_int(
          c, {"interleave_moe_layer_step", "decoder_sparse_step", "moe_layer_freq"}, 1);
      step != 1) {
    m["moe_layer_interval"] = step;
  }
}

}  // namespace

/// Model types whose configs this importer reads as a transformer (every layer attention + FFN)
/// or, for nemotron_h, qwen3_next, qwen3_5, granitemoehybrid, falcon_h1 and jamba, as a hybrid of
/// Mamba-2, Mamba-1 or gated DeltaNet, attention and FFN layers. A family outside this list may
/// have layers the importer would not see; it is refused by name rather than read as a Llama.
constexpr std::string_view kReadTypes[] = {"llama",
                                           "mistral",
                                           "mixtral",
                                           "qwen2",
                                           "qwen2_moe",
                                           "qwen3",
                                           "qwen3_moe",
                                           "deepseek_v2",
                                           "deepseek_v3",
                                           "deepseek_v32",
                                           "kimi_k2",
                                           "llama4",
                                           "llama4_text",
                                           "gpt_oss",
                                           "phi3",
                                           "gemma",
                                           "gemma2",
                                           "gemma3",
                                           "gemma3_text",
                                           "falcon",
                                           "gpt2",
                                           "gpt_neox",
                                           "gptj",
                                           "opt",
                                           "bloom",
                                           "gpt_bigcode",
                                           "glm4_moe",
                                           "mistral3",
                                           "nemotron_h",
                                           "qwen3_next",
                                           "qwen3_5",
                                           "qwen3_5_text",
                                           "qwen3_5_moe",
                                           "qwen3_5_moe_text",
                                           "granitemoehybrid",
                                           "falcon_h1",
                                           "jamba",
                                           "kimi_linear"};

/// Families of gated DeltaNet + gated attention layers: Qwen3-Next and Qwen3.5 (its text model
/// is Qwen3-Next's layers; the multimodal checkpoints nest it in text_config).
bool gated_deltanet_family(const std::string& type) {
  return type == "qwen3_next" || type == "qwen3_5" || type == "qwen3_5_text" ||
         type == "qwen3_5_moe" || type == "qwen3_5_moe_text";
}

/// Families with layers flopcast does not model, each with what it lacks.
struct Unmodelled {
  std::string_view type, layers;
};
constexpr Unmodelled kUnmodelledTypes[] = {
    {"mamba", "Mamba-1 layers"},
    {"mamba2", "an all-Mamba-2 stack without attention layers"},
    {"bamba", "Mamba-2 layers in attn_layer_indices"},
    {"minimax", "lightning linear-attention layers"},
    {"minimax_m1", "lightning linear-attention layers"},
    {"glm_moe_dsa", "GLM-5's sparse-attention indexers shared across layers (indexer_types)"},
    {"rwkv", "RWKV recurrent layers"},
    {"recurrent_gemma", "RG-LRU recurrent layers"},
};

void check_model_type(const std::string& type) {
  for (const Unmodelled& u : kUnmodelledTypes) {
    if (type == u.type) {
      throw NotModelledError(at("model_type"),
                             "\"" + type + "\": " + std::string(u.layers) + " are not modelled");
    }
  }
  if (std::find(std::begin(kReadTypes), std::end(kReadTypes), type) != std::end(kReadTypes)) return;
  std::string known;
  for (std::string_view t : kReadTypes) known += (known.empty() ? "" : ", ") + std::string(t);
  throw NotModelledError(at("model_type"),
                         type.empty() ? "required key is missing: the model family decides which "
                                        "layers a config describes (read: " +
                                            known + ")"
                                      : "\"" + type +
                                            "\" is not a family flopcast reads; its layers may "
                                            "differ from a transformer's (read: " +
                                            known + ")");
}

/// Nemotron-H / Nemotron 3 (model_type nemotron_h): hybrid_override_pattern names each layer,
/// 'M' Mamba-2, '*' attention, '-' dense FFN (intermediate_size), 'E' mixture of experts;
/// the FFNs are squared-ReLU (up, down).
void read_nemotron_h(const json& c, json& m) {
  auto it = c.find("hybrid_override_pattern");
  if (it == c.end() || !it->is_string()) {
    throw SpecError(at("hybrid_override_pattern"), "required key is missing");
  }
  const std::string pattern = it->get<std::string>();
  m["layer_pattern"] = pattern;
  m["ffn"] = to_string(FfnKind::plain);
  m["norm"] = to_string(NormKind::rmsnorm);  // norm_eps: RMSNorm (layer_norm_epsilon names it too)
  if (pattern.find('M') != std::string::npos) {
    m["mamba_heads"] = required_int(c, {"mamba_num_heads"});
    m["mamba_head_dim"] = required_int(c, {"mamba_head_dim"});
    m["mamba_state_dim"] = required_int(c, {"ssm_state_size"});
    m["mamba_groups"] = required_int(c, {"n_groups"});
    m["mamba_conv_kernel"] = optional_int(c, {"conv_kernel"}, 4);
    m["mamba_chunk_tokens"] = optional_int(c, {"chunk_size"}, 128);
  }
  if (const int mtp = optional_int(c, {"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 0);
      mtp > 0) {
    // An MTP module of an attention block and one FFN block of the model's kind is what
    // flopcast prices (Nemotron 3 Super: "*E"); any other module pattern is refused.
    const std::string want = pattern.find('E') != std::string::npos ? "*E" : "*-";
    const auto p = c.find("mtp_hybrid_override_pattern");
    const std::string got = p != c.end() && p->is_string() ? p->get<std::string>() : "";
    if (got != want) {
      throw NotModelledError(at("mtp_hybrid_override_pattern"),
                             "a hybrid model's multi-token-prediction module is modelled as \"" +
                                 want + "\" (an attention and an FFN block) only (got \"" + got +
                                 "\")");
    }
    m["mtp_layers"] = mtp;
  }
  if (pattern.find('E') == std::string::npos) return;
  if (const int latent = optional_int(c, {"moe_latent_size"}, 0); latent > 0) {
    m["moe_latent_size"] = latent;  // LatentMoE: the routed experts work on this latent
  }
  m["num_experts"] = required_int(c, {"n_routed_experts"});
  m["experts_per_token"] = required_int(c, {"num_experts_per_tok"});
  m["intermediate_size"] = required_int(c, {"moe_intermediate_size"});
  if (pattern.find('-') != std::string::npos) {
    m["dense_intermediate_size"] = required_int(c, {"intermediate_size"});
  }
  if (const int shared = optional_int(c, {"n_shared_experts"}, 0); shared > 0) {
    m["shared_experts"] = shared;
    m["shared_expert_intermediate_size"] =
        required_int(c, {"moe_shared_expert_intermediate_size"}) / shared;
  }
  read_expert_groups(c, m);
}

/// The mixer of each of `layers` decoder layers from a config's `layer_types` list, one pattern
/// character each: `kinds` maps every type flopcast prices to its character; another type is
/// refused by its index, naming those in `priced`.
std::string mixers_from_layer_types(const json& c, int layers,
                                    std::initializer_list<std::pair<std::string_view, char>> kinds,
                                    const std::string& priced) {
  const auto it = c.find("layer_types");
  if (it == c.end() || !it->is_array() || static_cast<int>(it->size()) != layers) {
    throw SpecError(at("layer_types"), "must list one type per layer (" + std::to_string(layers) +
                                           ", num_hidden_layers)");
  }
  std::string mixers;
  for (int i = 0; i < layers; ++i) {
    const json& t = (*it)[static_cast<std::size_t>(i)];
    const std::string name = t.is_string() ? t.get<std::string>() : detail::describe_value(t);
    const auto kind =
        std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == name; });
    if (kind == kinds.end()) {
      throw NotModelledError(at("layer_types") + "[" + std::to_string(i) + "]",
                             "\"" + name + "\" layers are not modelled (" + priced + ")");
    }
    mixers += kind->second;
  }
  return mixers;
}

/// Decoder layers of a mixer and an FFN written as pairs of pattern layers: mixers[i], then 'E'
/// where moe(i), else '-'. The pattern places the experts: no interval or dense prefix beside it.
template <typename Moe>
void write_decoder_pattern(json& m, const std::string& mixers, Moe moe) {
  std::string pattern;
  for (std::size_t i = 0; i < mixers.size(); ++i) {
    pattern += mixers[i];
    pattern += moe(static_cast<int>(i)) ? 'E' : '-';
  }
  m["num_layers"] = 2 * static_cast<int>(mixers.size());
  m["layer_pattern"] = pattern;
  m.erase("moe_layer_interval");
  m.erase("first_dense_layers");
}

/// Qwen3-Next (model_type qwen3_next, transformers' Qwen3NextConfig) and Qwen3.5 (qwen3_5_text,
/// qwen3_5_moe_text; the same layers, every key stated): each decoder layer is a
/// mixer, gated DeltaNet ("linear_attention") or gated attention ("full_attention", q_proj
/// doubled by its output gate), then an FFN: experts where (i + 1) % decoder_sparse_step == 0,
/// else a dense MLP of intermediate_size. `layer_types` names the mixers, or, absent,
/// full_attention_interval (every 4th layer full attention, the class's default). flopcast writes
/// each decoder layer as two pattern layers: "GE" / "*E" (or "G-" / "*-").
void read_qwen3_next(const json& c, int layers, json& m) {
  std::string mixers;
  if (const auto it = c.find("layer_types"); it != c.end() && !it->is_null()) {
    mixers =
        mixers_from_layer_types(c, layers, {{"linear_attention", 'G'}, {"full_attention", '*'}},
                                "linear_attention: gated DeltaNet, full_attention");
  } else {
    const int interval = optional_int(c, {"full_attention_interval"}, 4);
    check_int(at("full_attention_interval"), interval, 1, layers);
    for (int i = 0; i < layers; ++i) mixers += (i + 1) % interval == 0 ? '*' : 'G';
  }
  const bool experts = optional_int(c, {"num_experts"}, 0) > 0;
  const int step = optional_int(c, {"decoder_sparse_step"}, 1);
  check_int(at("decoder_sparse_step"), step, 1, layers);
  write_decoder_pattern(m, mixers, [&](int i) { return experts && (i + 1) % step == 0; });
  if (mixers.find('G') != std::string::npos) {
    m["gdn_key_heads"] = required_int(c, {"linear_num_key_heads"});
    m["gdn_value_heads"] = required_int(c, {"linear_num_value_heads"});
    m["gdn_key_head_dim"] = required_int(c, {"linear_key_head_dim"});
    m["gdn_value_head_dim"] = required_int(c, {"linear_value_head_dim"});
    m["gdn_conv_kernel"] = required_int(c, {"linear_conv_kernel_dim"});
  }
  // Qwen3NextAttention's q_proj always carries the gate; Qwen3.5's configs name it.
  m["attention_output_gate"] = optional_bool(c, "attn_output_gate", true);
  // A dense MLP somewhere: no experts, or the first layer off the sparse step.
  if (experts && step == 1) m.erase("dense_intermediate_size");
  if (const int mtp = optional_int(c, {"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 0);
      mtp > 0) {
    m["mtp_layers"] = mtp;  // a full-attention layer and the model's FFN, as Nemotron 3's "*E"
  }
}

/// A Mamba-2 mixer's state, groups, conv taps and scan chunk as the `mamba_*` configs (Granite
/// 4.0-H, Falcon-H1) state them, every one required.
void read_mamba2_state(const json& c, json& m) {
  m["mamba_state_dim"] = required_int(c, {"mamba_d_state"});
  m["mamba_groups"] = required_int(c, {"mamba_n_groups"});
  m["mamba_conv_kernel"] = required_int(c, {"mamba_d_conv"});
  m["mamba_chunk_tokens"] = required_int(c, {"mamba_chunk_size"});
}

/// IBM Granite 4.0 hybrid (model_type granitemoehybrid, transformers' GraniteMoeHybridConfig):
/// each decoder layer is a mixer, Mamba-2 ("mamba") or attention ("attention") as `layer_types`
/// lists them, then an FFN: num_local_experts routed experts of intermediate_size beside a
/// shared gated MLP of shared_intermediate_size, or that shared MLP alone without experts.
/// flopcast writes each decoder layer as two pattern layers ("ME" / "*E", "M-" / "*-"). Every
/// Mamba shape must be stated; biased Mamba projections are refused.
void read_granite_hybrid(const json& c, int layers, json& m) {
  const std::string mixers =
      mixers_from_layer_types(c, layers, {{"mamba", 'M'}, {"attention", '*'}}, "mamba, attention");
  const bool experts = optional_int(c, {"num_local_experts"}, 0) > 0;
  write_decoder_pattern(m, mixers, [&](int) { return experts; });
  m.erase("dense_intermediate_size");
  const int shared = required_int(c, {"shared_intermediate_size"});
  if (experts) {
    m["num_experts"] = required_int(c, {"num_local_experts"});
    m["experts_per_token"] = required_int(c, {"num_experts_per_tok"});
    m["intermediate_size"] = required_int(c, {"intermediate_size"});
    m["shared_experts"] = 1;
    m["shared_expert_intermediate_size"] = shared;
  } else {
    m["intermediate_size"] = shared;  // the shared MLP is the dense FFN
  }
  if (optional_bool(c, "mamba_proj_bias", false)) {
    throw NotModelledError(at("mamba_proj_bias"), "biased Mamba projections are not modelled");
  }
  if (mixers.find('M') != std::string::npos) {
    const int heads = required_int(c, {"mamba_n_heads"});
    m["mamba_heads"] = heads;
    // GraniteMoeHybridConfig's mamba_d_head "auto": mamba_expand · hidden / heads (hidden is
    // bounded already; the expansion before it multiplies).
    const auto d = c.find("mamba_d_head");
    if (d != c.end() && d->is_number()) {
      m["mamba_head_dim"] = detail::as_int(*d, at("mamba_d_head"));
    } else {
      const int expand = required_int(c, {"mamba_expand"});
      check_int(at("mamba_expand"), expand, 1, 64);
      m["mamba_head_dim"] = expand * required_int(c, {"hidden_size"}) / std::max(1, heads);
    }
    read_mamba2_state(c, m);
  }
  if (optional_string(c, "position_embedding_type", at("position_embedding_type"), "rope") ==
      "nope") {
    m["position_embedding"] = "none";
  }
}

/// Falcon-H1 (model_type falcon_h1, transformers' FalconH1Config): every decoder layer runs a
/// Mamba-2 mixer and attention side by side on one normed input, adds both, then a gated MLP.
/// Run one after the other they cost what flopcast prices for three pattern layers, "M*-" (the
/// kernels are the same; flopcast's extra norm is h elements a token). Every Mamba shape must be
/// stated; mamba_d_ssm, when given, must be the heads' width; what the family can switch off or
/// bias (attn_layer_indices, mamba_use_mlp false, biased projections) is refused by name.
void read_falcon_h1(const json& c, int layers, json& m) {
  if (const auto it = c.find("attn_layer_indices"); it != c.end() && !it->is_null()) {
    throw NotModelledError(at("attn_layer_indices"),
                           "a Falcon-H1 with attention in some layers only is not modelled "
                           "(null: attention in every layer)");
  }
  if (!optional_bool(c, "mamba_use_mlp", true)) {
    throw NotModelledError(at("mamba_use_mlp"),
                           "a Falcon-H1 layer without its MLP is not modelled");
  }
  for (const char* key : {"mamba_proj_bias", "projectors_bias", "attention_bias", "mlp_bias"}) {
    if (optional_bool(c, key, false)) {
      throw NotModelledError(at(key), "biased Falcon-H1 projections are not modelled");
    }
  }
  std::string pattern;
  for (int i = 0; i < layers; ++i) pattern += "M*-";
  m["num_layers"] = 3 * layers;
  m["layer_pattern"] = pattern;
  const int heads = required_int(c, {"mamba_n_heads"});
  const int head_dim = required_int(c, {"mamba_d_head"});
  check_int(at("mamba_n_heads"), heads, 1, kMaxHeads);
  check_int(at("mamba_d_head"), head_dim, 1, kMaxHiddenSize);
  if (const int d_ssm = optional_int(c, {"mamba_d_ssm"}, 0);
      d_ssm != 0 && std::int64_t{d_ssm} != std::int64_t{heads} * head_dim) {
    throw NotModelledError(at("mamba_d_ssm"),
                           "must be mamba_n_heads · mamba_d_head (" +
                               std::to_string(std::int64_t{heads} * head_dim) +
                               "): a Mamba-2 width other than its heads' is not modelled (got " +
                               std::to_string(d_ssm) + ")");
  }
  m["mamba_heads"] = heads;
  m["mamba_head_dim"] = head_dim;
  read_mamba2_state(c, m);
}

/// Jamba (model_type jamba, AI21's Jamba 1.5 and 1.7; transformers' JambaConfig): decoder layer i
/// (from 0) is attention where i % attn_layer_period == attn_layer_offset, else a Mamba-1 mixer
/// of mamba_expand · hidden channels; its FFN is num_experts routed experts (top
/// num_experts_per_tok) where i % expert_layer_period == expert_layer_offset, else a dense MLP of
/// the same width. flopcast writes each decoder layer as two pattern layers ("SE", "S-", "*E",
/// "*-"). Every period and Mamba shape must be stated (mamba_dt_rank "auto" is ⌈hidden / 16⌉, the
/// class's rule); a sliding window or biased Mamba projections are refused by name.
void read_jamba(const json& c, int layers, json& m) {
  // Layer i is attention / has experts where i % period == offset.
  const auto offset_in = [&](const char* every, const char* offset) {
    const int p = required_int(c, {every});
    check_int(at(every), p, 1, layers);
    const int o = required_int(c, {offset});
    check_int(at(offset), o, 0, p - 1);
    return std::pair{p, o};
  };
  const std::pair<int, int> attn = offset_in("attn_layer_period", "attn_layer_offset");
  const std::pair<int, int> moe = offset_in("expert_layer_period", "expert_layer_offset");
  if (const auto w = c.find("sliding_window"); w != c.end() && !w->is_null()) {
    throw NotModelledError(at("sliding_window"),
                           "local attention in a hybrid model is not modelled (null: full)");
  }
  if (optional_bool(c, "mamba_proj_bias", false)) {
    throw NotModelledError(at("mamba_proj_bias"), "biased Mamba projections are not modelled");
  }
  std::string mixers;
  for (int i = 0; i < layers; ++i) mixers += i % attn.first == attn.second ? '*' : 'S';
  const int experts = required_int(c, {"num_experts"});
  check_int(at("num_experts"), experts, 1, 100'000);
  write_decoder_pattern(m, mixers,
                        [&](int i) { return experts > 1 && i % moe.first == moe.second; });
  if (experts > 1) {
    m["num_experts"] = experts;
    m["experts_per_token"] = required_int(c, {"num_experts_per_tok"});
  }
  const int hidden = required_int(c, {"hidden_size"});
  const int expand = required_int(c, {"mamba_expand"});
  check_int(at("mamba_expand"), expand, 1, 64);
  m["mamba1_inner_size"] = expand * hidden;  // hidden is bounded already
  m["mamba1_state_dim"] = required_int(c, {"mamba_d_state"});
  const auto r = c.find("mamba_dt_rank");
  m["mamba1_dt_rank"] = r != c.end() && r->is_string() && r->get<std::string>() == "auto"
                            ? (hidden + 15) / 16
                            : required_int(c, {"mamba_dt_rank"});
  m["mamba1_conv_kernel"] = required_int(c, {"mamba_d_conv"});
}

/// Kimi Linear (model_type kimi_linear, Moonshot's Kimi-Linear-48B-A3B): decoder layers listed
/// in linear_attn_config (1-based): kda_layers run Kimi Delta Attention (num_heads heads of
/// head_dim for q, k and v, a short conv of short_conv_kernel_size, the decay gate per key
/// channel), full_attn_layers multi-head latent attention without RoPE (mla_use_nope); each then
/// a MoE of the DeepSeek kind (read_experts) or, before first_k_dense_replace, a dense MLP.
/// flopcast writes each decoder layer as two pattern layers ("GE", "*E", "G-", "*-"). What later
/// Kimi configs add beside these (an output gate on MLA, a full-rank decay gate, attention
/// residuals, experts on a latent) is refused by name.
void read_kimi_linear(const json& c, int layers, json& m) {
  const auto cfg = c.find("linear_attn_config");
  if (cfg == c.end() || !cfg->is_object()) {
    throw SpecError(at("linear_attn_config"), "required key is missing");
  }
  const json& l = *cfg;
  const auto refuse_if = [&](const json& j, const char* key, const std::string& where,
                             const char* what) {
    const auto it = j.find(key);
    if (it != j.end() && !it->is_null() && *it != false) {
      throw NotModelledError(
          where, std::string(what) + " is not modelled (got " + detail::describe_value(*it) + ")");
    }
  };
  refuse_if(c, "mla_use_output_gate", at("mla_use_output_gate"), "a gated MLA output");
  refuse_if(c, "attn_res_block_size", at("attn_res_block_size"), "block attention residuals");
  refuse_if(c, "routed_expert_hidden_size", at("routed_expert_hidden_size"),
            "routed experts on a latent");
  refuse_if(l, "use_full_rank_gate", at("linear_attn_config.use_full_rank_gate"),
            "a full-rank decay gate");
  if (!optional_bool(c, "mla_use_nope", false)) {
    throw NotModelledError(at("mla_use_nope"),
                           "Kimi Linear's MLA layers are modelled without RoPE only (true)");
  }
  // Each layer in exactly one of the two lists.
  std::string mixers(static_cast<std::size_t>(layers), '?');
  for (const auto& [key, kind] :
       {std::pair{"kda_layers", 'G'}, std::pair{"full_attn_layers", '*'}}) {
    const auto list = l.find(key);
    const std::string path = at("linear_attn_config.") + key;
    if (list == l.end() || !list->is_array()) throw SpecError(path, "required key is missing");
    for (const json& v : *list) {
      const int i = detail::as_int(v, path);
      check_int(path, i, 1, layers);
      if (mixers[static_cast<std::size_t>(i - 1)] != '?') {
        fail(path, "must name each layer once, in one of kda_layers and full_attn_layers", i);
      }
      mixers[static_cast<std::size_t>(i - 1)] = kind;
    }
  }
  if (const auto gap = mixers.find('?'); gap != std::string::npos) {
    throw SpecError(
        at("linear_attn_config.kda_layers"),
        "layer " + std::to_string(gap + 1) + " is in neither kda_layers nor full_attn_layers");
  }
  const bool experts = m.contains("num_experts");
  const int dense = m.value("first_dense_layers", 0), every = m.value("moe_layer_interval", 1);
  // Bounded before they place the experts (a moe_layer_freq of 0 divided by zero).
  check_int(at("first_k_dense_replace"), dense, 0, layers);
  check_int(at("moe_layer_freq"), every, 1, layers);
  write_decoder_pattern(m, mixers,
                        [&](int i) { return experts && i >= dense && (i - dense) % every == 0; });
  // linear_attn_config's shapes, each stated.
  const auto head = [&](const char* key) {
    const std::string path = at("linear_attn_config.") + key;
    const auto it = l.find(key);
    if (it == l.end() || it->is_null()) throw SpecError(path, "required key is missing");
    return detail::as_int(*it, path);
  };
  m["gdn_key_heads"] = head("num_heads");
  m["gdn_value_heads"] = m["gdn_key_heads"];
  m["gdn_key_head_dim"] = head("head_dim");
  m["gdn_value_head_dim"] = m["gdn_key_head_dim"];
  m["gdn_conv_kernel"] = head("short_conv_kernel_size");
  m["gdn_channel_gate"] = true;
  m["position_embedding"] = "none";
}

json model_from_hf_config(const json& config, std::string_view file_name) {
  require_object(config);
  const json& given = language_config(config);
  // The language model's type (text_config's in a multimodal checkpoint), else the top level's.
  std::string type = optional_string(
      given, "model_type", &given == &config ? at("model_type") : at("text_config.model_type"),
      std::string());
  if (type.empty() && &given != &config) {
    type = optional_string(config, "model_type", at("model_type"), std::string());
  }
  check_model_type(type);
  const json c = with_class_defaults(given, type);
  if (const int mlp_only = c.contains("mlp_only_layers") && c.at("mlp_only_layers").is_array()
                               ? static_cast<int>(c.at("mlp_only_layers").size())
                               : 0;
      mlp_only > 0) {
    throw NotModelledError(at("mlp_only_layers"),
                           "a list of dense layers among MoE layers is "
                           "not modelled (use first_dense_layers)");
  }

  json m = json::object();
  // The checkpoint's own name, else the file's; model_type names a family, not a model.
  const auto named = config.find("_name_or_path");
  const std::string from_file = name_from_file(file_name);
  m["name"] = named != config.end() && named->is_string() && !named->get<std::string>().empty()
                  ? named->get<std::string>()
              : !from_file.empty() ? from_file
                                   : std::string("custom model");
  const int hidden = required_int(c, {"hidden_size", "n_embd", "d_model"});
  const int heads = required_int(c, {"num_attention_heads", "n_head", "n_heads"});
  // The model reader's bounds, before any arithmetic on them (4 · hidden overflowed an int).
  check_int(at("hidden_size"), hidden, 1, kMaxHiddenSize);
  check_int(at("num_attention_heads"), heads, 1, kMaxHeads);
  const int layers = required_int(c, {"num_hidden_layers", "n_layer", "num_layers"});
  // The model reader's bound, checked before any per-layer work (2,147,483,647 layers once ran
  // 9.7 s through the local-attention pattern before the model was refused).
  check_int(at("num_hidden_layers"), layers, 1, kMaxLayers);
  m["num_layers"] = layers;
  m["hidden_size"] = hidden;
  m["num_heads"] = heads;
  const bool falcon_new = optional_bool(c, "new_decoder_architecture", false);
  const bool falcon_mqa = type == "falcon" && !falcon_new && optional_bool(c, "multi_query", true);
  m["num_kv_heads"] =
      falcon_mqa ? 1 : optional_int(c, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, heads);
  if (const int hd = optional_int(c, {"head_dim"}, 0); hd > 0) m["head_dim"] = hd;

  read_latent_attention(c, heads, m);

  const bool plain = type == "falcon" || type == "gpt2" || type == "gpt_neox" || type == "gptj" ||
                     type == "opt" || type == "bloom" || type == "gpt_bigcode";
  m["ffn"] = to_string(plain ? FfnKind::plain : FfnKind::gated);
  const int dense_width = optional_int(
      c, {"intermediate_size_mlp", "intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"},
      plain ? 4 * hidden : 0);
  if (dense_width == 0) throw SpecError(at("intermediate_size"), "required key is missing");
  m["intermediate_size"] = dense_width;
  m["vocab_size"] = required_int(c, {"vocab_size"});
  // transformers' PretrainedConfig ties embeddings by default; Llama-family configs override it.
  const bool tie_default =
      !(type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" ||
        type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe" || type == "deepseek_v2" ||
        type == "deepseek_v3" || type == "deepseek_v32" || type == "llama4_text" ||
        type == "gpt_oss" || type == "phi3" || type == "falcon_h1" || type == "jamba" ||
        type == "kimi_linear" || gated_deltanet_family(type));
  m["tie_embeddings"] = optional_bool(config, "tie_word_embeddings",
                                      optional_bool(c, "tie_word_embeddings", tie_default));
  // Falcon's published configs carry no context length; the models were trained at 2048.
  const int context = optional_int(
      c, {"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"},
      type == "falcon" ? 2048 : 0);
  if (context <= 0) throw SpecError(at("max_position_embeddings"), "required key is missing");
  m["max_context_tokens"] = context;
  const bool layernorm = (c.contains("layer_norm_epsilon") || c.contains("layer_norm_eps")) &&
                         !c.contains("rms_norm_eps");
  m["norm"] = to_string(layernorm ? NormKind::layernorm : NormKind::rmsnorm);
  m["qkv_bias"] = type == "qwen2" || type == "qwen2_moe" ||
                  optional_bool(c, "attention_bias", false) || optional_bool(c, "bias", false);
  m["linear_bias"] = optional_bool(c, "mlp_bias", false) || optional_bool(c, "bias", false) ||
                     type == "gpt_oss";  // gpt-oss: o_proj and expert biases
  m["position_embedding"] =
      (type == "gpt2" || type == "opt" || type == "gpt_bigcode") ? "learned" : "rope";

  if (type == "nemotron_h") {
    read_nemotron_h(c, m);
  } else if (type == "granitemoehybrid") {
    read_granite_hybrid(c, layers, m);
  } else if (type == "falcon_h1") {
    read_falcon_h1(c, layers, m);
  } else if (type == "jamba") {
    read_jamba(c, layers, m);
  } else if (type == "kimi_linear") {
    read_experts(c, type, dense_width, m);
    read_kimi_linear(c, layers, m);
  } else if (gated_deltanet_family(type)) {
    read_experts(c, type, dense_width, m);
    read_qwen3_next(c, layers, m);
  } else {
    read_experts(c, type, dense_width, m);
    read_local_attention(c, type, layers, context, m);
  }
  if (type == "deepseek_v32") {
    // DeepSeek-V3.2's sparse attention: its lightning indexer and top-k, every shape stated.
    m["dsa_index_heads"] = required_int(c, {"index_n_heads"});
    m["dsa_index_head_dim"] = required_int(c, {"index_head_dim"});
    m["dsa_topk_tokens"] = required_int(c, {"index_topk"});
  }
  // The result must itself be a valid model object.
  (void)detail::read_model(m, "model");
  // A quantized checkpoint's types (quantization_config) are the model's default precision.
  const json precision = precision_from_hf_config(config);
  if (precision.contains("weights")) m["checkpoint_weights"] = precision.at("weights");
  if (precision.contains("weight_scaling")) {
    m["checkpoint_weight_scaling"] = precision.at("weight_scaling");
  }
  if (precision.contains("attention_weights")) {
    m["checkpoint_attention_weights"] = precision.at("attention_weights");
  }
  return m;
}

namespace {

/// A weight dtype of compressed-tensors' config group: `weights` {num_bits, type, group_size}.
std::string compressed_tensors_weights(const json& weights, const std::string& path) {
  if (!weights.is_object()) {
    throw SpecError(path, "must be an object (got " + detail::describe_value(weights) + ")");
  }
  const auto bits_it = weights.find("num_bits");
  if (bits_it == weights.end()) throw SpecError(path + ".num_bits", "required key is missing");
  const int bits = detail::as_int(*bits_it, path + ".num_bits");
  const std::string kind = optional_string(weights, "type", path + ".type", "int");
  const auto group_it = weights.find("group_size");
  const int group = group_it != weights.end() && !group_it->is_null()
                        ? detail::as_int(*group_it, path + ".group_size")
                        : 0;
  if (kind == "int" && bits == 4) return "int4";
  if (kind == "int" && bits == 8) return "int8";
  if (kind == "float" && bits == 8) return "fp8";
  if (kind == "float" && bits == 4 && group == 16) return "fp4";    // NVFP4: E4M3 scale per 16
  if (kind == "float" && bits == 4 && group == 32) return "mxfp4";  // OCP MX: E8M0 scale per 32
  throw NotModelledError(path, "weights of " + std::to_string(bits) + "-bit " + kind +
                                   " (group size " + std::to_string(group) +
                                   ") are not modelled (int4, int8, fp8, fp4 with groups of 16, "
                                   "mxfp4 with groups of 32)");
}

/// Whether a quantization_config scales FP8 weights per block of the matrix: `weight_block_size`
/// (DeepSeek-V3/R1, Kimi K2, Qwen3's FP8 releases: [128, 128]) or compressed-tensors' block
/// strategy.
bool fp8_block_scaled(const json& q) {
  const auto size = q.find("weight_block_size");
  if (size != q.end() && !size->is_null()) return true;
  const auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object()) return false;
  for (const auto& [name, group] : groups->items()) {
    const auto w = group.is_object() ? group.find("weights") : group.end();
    if (w == group.end() || !w->is_object()) continue;
    const auto strategy = w->find("strategy");
    if (strategy != w->end() && *strategy == "block") return true;
  }
  return false;
}

/// Whether a quantization_config leaves every layer's attention projections unquantized:
/// `modules_to_not_convert` (fbgemm_fp8, mxfp4) or `ignore` (compressed-tensors) names them by a
/// pattern ("model.layers.*.self_attn", "re:.*self_attn.*") or layer by layer for at least half of
/// the layers (Meta's Llama 3.1 FP8 lists each self_attn projection of all 126 layers).
bool attention_left_unquantized(const json& q, const json& config) {
  std::set<std::string> layers;
  bool pattern = false;
  for (const char* key : {"modules_to_not_convert", "ignore"}) {
    const auto list = q.find(key);
    if (list == q.end() || !list->is_array()) continue;
    for (const json& entry : *list) {
      if (!entry.is_string()) continue;
      const std::string name = entry.get<std::string>();
      if (name.find("self_attn") == std::string::npos) continue;
      if (name.find('*') != std::string::npos) {
        pattern = true;
        continue;
      }
      // "model.layers.<i>.self_attn.q_proj": the layer index.
      const std::size_t at = name.find("layers.");
      if (at != std::string::npos)
        layers.insert(name.substr(at + 7, name.find('.', at + 7) - at - 7));
    }
  }
  const json& text = language_config(config);
  const auto n = text.find("num_hidden_layers");
  const int num_layers = n != text.end() && n->is_number_integer() ? n->get<int>() : 0;
  return pattern || (num_layers > 0 && 2 * static_cast<int>(layers.size()) >= num_layers);
}

}  // namespace

json precision_from_hf_config(const json& config) {
  require_object(config);
  const json* q = nullptr;
  for (const json* c : {&config, &language_config(config)}) {
    if (auto it = c->find("quantization_config"); !q && it != c->end() && !it->is_null()) q = &*it;
  }
  if (!q) return json::object();
  const std::string base = at("quantization_config");
  if (!q->is_object()) {
    throw SpecError(base, "must be an object (got " + detail::describe_value(*q) + ")");
  }
  const auto method_it = q->find("quant_method");
  if (method_it == q->end() || !method_it->is_string()) {
    throw SpecError(base + ".quant_method",
                    method_it == q->end()
                        ? "required key is missing"
                        : "must be a string (got " + detail::describe_value(*method_it) + ")");
  }
  std::string method = method_it->get<std::string>();
  std::transform(method.begin(), method.end(), method.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  std::string weights;
  if (method == "fp8" || method == "fbgemm_fp8") {
    weights = "fp8";
  } else if (method == "mxfp4") {
    weights = "mxfp4";  // gpt-oss: the experts in MXFP4, attention and embeddings in bf16
  } else if (method == "awq" || method == "gptq") {
    const char* key = q->contains("bits") ? "bits" : "w_bit";
    const auto bits_it = q->find(key);
    const int bits = bits_it == q->end() ? 4 : detail::as_int(*bits_it, base + "." + key);
    if (bits == 4) {
      weights = "int4";
    } else if (bits == 8 && method == "gptq") {
      weights = "int8";
    } else {
      throw NotModelledError(base + "." + key, method + " with " + std::to_string(bits) +
                                                   "-bit weights is not modelled (got " +
                                                   std::to_string(bits) + ")");
    }
  } else if (method == "compressed-tensors") {
    const auto groups = q->find("config_groups");
    if (groups == q->end() || !groups->is_object() || groups->empty()) {
      throw SpecError(base + ".config_groups", "must be an object with at least one group");
    }
    for (const auto& [name, group] : groups->items()) {
      const std::string path = base + ".config_groups." + name + ".weights";
      const auto w = group.is_object() ? group.find("weights") : group.end();
      if (!group.is_object() || w == group.end()) throw SpecError(path, "required key is missing");
      const std::string dtype = compressed_tensors_weights(*w, path);
      if (!weights.empty() && dtype != weights) {
        throw NotModelledError(base + ".config_groups",
                               "groups with different weight precisions (" + weights + ", " +
                                   dtype + ") are not modelled");
      }
      weights = dtype;
    }
  } else {
    throw NotModelledError(base + ".quant_method",
                           "quantization method \"" + method_it->get<std::string>() +
                               "\" is not modelled (awq, gptq, fp8, fbgemm_fp8, mxfp4, "
                               "compressed-tensors are)");
  }
  json out{{"weights", weights}};
  if (weights == "fp8" && fp8_block_scaled(*q)) out["weight_scaling"] = "block";
  if (attention_left_unquantized(*q, config)) {
    const auto dtype = config.find("torch_dtype");
    const bool fp16 = dtype != config.end() && dtype->is_string() && *dtype == "float16";
    out["attention_weights"] = fp16 ? "fp16" : "bf16";
  }
  return out;
}

}  // namespace flopcast::io
