// SPDX-License-Identifier: MIT
#include "specs.hpp"

#include <cstdio>
#include <mutex>
#include <vector>

#include "common_json.hpp"
#include "flopcast/energy.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "reader.hpp"

// The typed API defined here is public (flopcast/io/specs.hpp); its bodies use the detail
// helpers of this file.
namespace flopcast::io {
using namespace detail;
}  // namespace flopcast::io

namespace flopcast::io {
ModelSpec read_model(const json& j, const std::string& path) {
  ObjectReader r(j, path,
                 {"name",
                  "num_layers",
                  "hidden_size",
                  "num_heads",
                  "num_kv_heads",
                  "head_dim",
                  "intermediate_size",
                  "ffn",
                  "vocab_size",
                  "tie_embeddings",
                  "max_context_tokens",
                  "norm",
                  "qkv_bias",
                  "linear_bias",
                  "position_embedding",
                  "num_experts",
                  "experts_per_token",
                  "shared_experts",
                  "shared_expert_intermediate_size",
                  "dense_intermediate_size",
                  "first_dense_layers",
                  "expert_groups",
                  "expert_groups_per_token",
                  "moe_latent_size",
                  "moe_layer_interval",
                  "kv_lora_rank",
                  "q_lora_rank",
                  "qk_rope_head_dim",
                  "qk_nope_head_dim",
                  "v_head_dim",
                  "sliding_window_tokens",
                  "local_attention",
                  "global_attention_every",
                  "mtp_layers",
                  "checkpoint_weights",
                  "checkpoint_attention_weights",
                  "checkpoint_weight_scaling",
                  "layer_pattern",
                  "mamba_heads",
                  "mamba_head_dim",
                  "mamba_state_dim",
                  "mamba_groups",
                  "mamba_conv_kernel",
                  "mamba_chunk_tokens",
                  "dsa_index_heads",
                  "dsa_index_head_dim",
                  "dsa_topk_tokens",
                  "mamba1_inner_size",
                  "mamba1_state_dim",
                  "mamba1_dt_rank",
                  "mamba1_conv_kernel",
                  "gdn_key_heads",
                  "gdn_value_heads",
                  "gdn_key_head_dim",
                  "gdn_value_head_dim",
                  "gdn_conv_kernel",
                  "gdn_chunk_tokens",
                  "gdn_channel_gate",
                  "attention_output_gate"});
  ModelSpec m;
  m.name = r.string("name", "custom model");
  m.num_layers = r.integer("num_layers");
  m.hidden_size = r.integer("hidden_size");
  m.num_heads = r.integer("num_heads");
  m.num_kv_heads = r.integer("num_kv_heads", m.num_heads);
  if (r.find("head_dim")) {
    m.head_dim = r.integer("head_dim");
  } else if (m.num_heads > 0 && m.hidden_size % m.num_heads == 0) {
    m.head_dim = m.hidden_size / m.num_heads;
  } else {
    throw SpecError(r.child("head_dim"),
                    "required when hidden_size is not a multiple of num_heads");
  }
  m.intermediate_size = r.integer("intermediate_size");
  m.ffn = r.choice("ffn", kFfnNames, FfnKind::gated);
  m.vocab_size = r.integer("vocab_size");
  m.tie_embeddings = r.boolean("tie_embeddings", false);
  m.max_context_tokens = r.integer("max_context_tokens");
  m.norm = r.choice("norm", kNormNames, NormKind::rmsnorm);
  m.qkv_bias = r.boolean("qkv_bias", false);
  m.linear_bias = r.boolean("linear_bias", false);
  m.position_embedding =
      r.choice("position_embedding", kPositionEmbeddingNames, PositionEmbedding::rope);
  m.num_experts = r.integer("num_experts", 0);
  m.experts_per_token = r.integer("experts_per_token", 0);
  m.shared_experts = r.integer("shared_experts", 0);
  m.shared_expert_intermediate_size = r.integer("shared_expert_intermediate_size", 0);
  m.dense_intermediate_size = r.integer("dense_intermediate_size", 0);
  m.first_dense_layers = r.integer("first_dense_layers", 0);
  m.expert_groups = r.integer("expert_groups", 0);
  m.expert_groups_per_token = r.integer("expert_groups_per_token", 0);
  m.moe_latent_size = r.integer("moe_latent_size", 0);
  m.mtp_layers = r.integer("mtp_layers", 0);
  if (r.find("checkpoint_weights")) m.checkpoint_weights = read_dtype(r, "checkpoint_weights", {});
  if (r.find("checkpoint_attention_weights")) {
    if (!m.checkpoint_weights) {
      fail(r.child("checkpoint_attention_weights"), "needs model.checkpoint_weights",
           describe_value(r.require("checkpoint_attention_weights")));
    }
    m.checkpoint_attention_weights = read_dtype(r, "checkpoint_attention_weights", {});
    if (is_gguf(*m.checkpoint_attention_weights)) {
      fail(r.child("checkpoint_attention_weights"), "must not be a GGUF type",
           std::string(to_string(*m.checkpoint_attention_weights)));
    }
  }
  m.checkpoint_weight_scaling =
      r.choice("checkpoint_weight_scaling", kWeightScalingNames, WeightScaling::tensor);
  if (m.checkpoint_weight_scaling == WeightScaling::block && m.checkpoint_weights != DType::fp8) {
    fail(r.child("checkpoint_weight_scaling"), "\"block\" needs model.checkpoint_weights \"fp8\"",
         m.checkpoint_weights
             ? "checkpoint_weights \"" + std::string(to_string(*m.checkpoint_weights)) + "\""
             : std::string("no checkpoint_weights"));
  }
  m.moe_layer_interval = r.integer("moe_layer_interval", 1);
  m.kv_lora_rank = r.integer("kv_lora_rank", 0);
  m.q_lora_rank = r.integer("q_lora_rank", 0);
  m.qk_rope_head_dim = r.integer("qk_rope_head_dim", 0);
  m.qk_nope_head_dim = r.integer("qk_nope_head_dim", 0);
  m.v_head_dim = r.integer("v_head_dim", 0);
  // A window as long as the context (or null) is full attention.
  if (const json* w = r.find("sliding_window_tokens"); w && !w->is_null()) {
    const int window = as_int(*w, r.child("sliding_window_tokens"));
    m.window_tokens = window < m.max_context_tokens ? window : 0;
    if (window <= 0) {
      fail(r.child("sliding_window_tokens"), "must be > 0 (or null: no window)", window);
    }
  }
  m.local_attention = r.choice("local_attention", kLocalAttentionNames, LocalAttention::sliding);
  m.global_attention_every = r.integer("global_attention_every", 0);
  if (m.window_tokens == 0) m.global_attention_every = 0;  // every layer attends to all
  m.layer_pattern = r.string("layer_pattern", "");
  m.mamba_heads = r.integer("mamba_heads", 0);
  m.mamba_head_dim = r.integer("mamba_head_dim", 0);
  m.mamba_state_dim = r.integer("mamba_state_dim", 0);
  m.mamba_groups = r.integer("mamba_groups", 0);
  m.mamba_conv_kernel = r.integer("mamba_conv_kernel", 4);
  m.mamba_chunk_tokens = r.integer("mamba_chunk_tokens", 128);
  m.dsa_index_heads = r.integer("dsa_index_heads", 0);
  m.dsa_index_head_dim = r.integer("dsa_index_head_dim", 0);
  m.dsa_topk_tokens = r.integer("dsa_topk_tokens", 0);
  m.mamba1_inner_size = r.integer("mamba1_inner_size", 0);
  m.mamba1_state_dim = r.integer("mamba1_state_dim", 0);
  m.mamba1_dt_rank = r.integer("mamba1_dt_rank", 0);
  m.mamba1_conv_kernel = r.integer("mamba1_conv_kernel", 4);
  m.gdn_key_heads = r.integer("gdn_key_heads", 0);
  m.gdn_value_heads = r.integer("gdn_value_heads", 0);
  m.gdn_key_head_dim = r.integer("gdn_key_head_dim", 0);
  m.gdn_value_head_dim = r.integer("gdn_value_head_dim", 0);
  m.gdn_conv_kernel = r.integer("gdn_conv_kernel", 4);
  m.gdn_chunk_tokens = r.integer("gdn_chunk_tokens", 64);
  m.gdn_channel_gate = r.boolean("gdn_channel_gate", false);
  m.attention_output_gate = r.boolean("attention_output_gate", false);
  validate(m, path);
  return m;
}

json model_to_json(const ModelSpec& m) {
  json j{{"name", m.name},
         {"num_layers", m.num_layers},
         {"hidden_size", m.hidden_size},
         {"num_heads", m.num_heads},
         {"num_kv_heads", m.num_kv_heads},
         {"head_dim", m.head_dim},
         {"intermediate_size", m.intermediate_size},
         {"ffn", to_string(m.ffn)},
         {"vocab_size", m.vocab_size},
         {"tie_embeddings", m.tie_embeddings},
         {"max_context_tokens", m.max_context_tokens},
         {"norm", to_string(m.norm)},
         {"qkv_bias", m.qkv_bias},
         {"linear_bias", m.linear_bias},
         {"position_embedding", to_string(m.position_embedding)},
         {"num_experts", m.num_experts},
         {"experts_per_token", m.experts_per_token}};
  // Architecture keys beyond the classic transformer only where they are set, so that the
  // objects of classic models read as before.
  const std::pair<const char*, int> extra[] = {
      {"shared_experts", m.shared_experts},
      {"shared_expert_intermediate_size", m.shared_expert_intermediate_size},
      {"dense_intermediate_size", m.dense_intermediate_size},
      {"first_dense_layers", m.first_dense_layers},
      {"expert_groups", m.expert_groups},
      {"expert_groups_per_token", m.expert_groups_per_token},
      {"moe_latent_size", m.moe_latent_size},
      {"kv_lora_rank", m.kv_lora_rank},
      {"q_lora_rank", m.q_lora_rank},
      {"qk_rope_head_dim", m.qk_rope_head_dim},
      {"qk_nope_head_dim", m.qk_nope_head_dim},
      {"v_head_dim", m.v_head_dim},
      {"sliding_window_tokens", m.window_tokens},
      {"global_attention_every", m.global_attention_every},
      {"mtp_layers", m.mtp_layers},
  };
  for (const auto& [key, value] : extra) {
    if (value != 0) j[key] = value;
  }
  if (m.moe_layer_interval != 1) j["moe_layer_interval"] = m.moe_layer_interval;
  if (m.checkpoint_weights) j["checkpoint_weights"] = to_string(*m.checkpoint_weights);
  if (m.checkpoint_attention_weights) {
    j["checkpoint_attention_weights"] = to_string(*m.checkpoint_attention_weights);
  }
  if (m.checkpoint_weight_scaling != WeightScaling::tensor) {
    j["checkpoint_weight_scaling"] = to_string(m.checkpoint_weight_scaling);
  }
  if (m.window_tokens > 0) j["local_attention"] = to_string(m.local_attention);
  if (m.is_hybrid()) j["layer_pattern"] = m.layer_pattern;
  if (m.has_mamba()) {
    j["mamba_heads"] = m.mamba_heads;
    j["mamba_head_dim"] = m.mamba_head_dim;
    j["mamba_state_dim"] = m.mamba_state_dim;
    j["mamba_groups"] = m.mamba_groups;
    j["mamba_conv_kernel"] = m.mamba_conv_kernel;
    j["mamba_chunk_tokens"] = m.mamba_chunk_tokens;
  }
  if (m.has_dsa()) {
    j["dsa_index_heads"] = m.dsa_index_heads;
    j["dsa_index_head_dim"] = m.dsa_index_head_dim;
    j["dsa_topk_tokens"] = m.dsa_topk_tokens;
  }
  if (m.has_mamba1()) {
    j["mamba1_inner_size"] = m.mamba1_inner_size;
    j["mamba1_state_dim"] = m.mamba1_state_dim;
    j["mamba1_dt_rank"] = m.mamba1_dt_rank;
    j["mamba1_conv_kernel"] = m.mamba1_conv_kernel;
  }
  if (m.has_gdn()) {
    j["gdn_key_heads"] = m.gdn_key_heads;
    j["gdn_value_heads"] = m.gdn_value_heads;
    j["gdn_key_head_dim"] = m.gdn_key_head_dim;
    j["gdn_value_head_dim"] = m.gdn_value_head_dim;
    j["gdn_conv_kernel"] = m.gdn_conv_kernel;
    j["gdn_chunk_tokens"] = m.gdn_chunk_tokens;
    if (m.gdn_channel_gate) j["gdn_channel_gate"] = true;
  }
  if (m.attention_output_gate) j["attention_output_gate"] = true;
  return j;
}

}  // namespace flopcast::io

namespace flopcast::io::detail {

GpuHourPrice read_gpu_hour_price(const ObjectReader& r, const HardwareSpec& hw) {
  const double usd = r.number("cost_per_gpu_hour_usd", 0);
  if (!(usd >= 0 && usd <= 1e6)) {
    fail("cost_per_gpu_hour_usd", "must be between 0 and 1000000", usd);
  }
  if (usd > 0) return {usd, "cost_per_gpu_hour_usd of the request", true};
  return {hw.usd_per_gpu_hour, hw.price_basis, false};
}

json usd_per_million_json(const GpuHourPrice& price, int gpus, double output_tokens_per_s) {
  const double usd = usd_per_million_tokens(price.usd, gpus, output_tokens_per_s);
  return usd > 0 ? json(round6(usd)) : json(nullptr);
}

void add_cost_per_million(json& result, const GpuHourPrice& price, int gpus,
                          double output_tokens_per_s) {
  if (!(price.usd > 0)) return;
  result["usd_per_million_output_tokens"] = usd_per_million_json(price, gpus, output_tokens_per_s);
  result["cost_basis"] = cost_basis_json(price);
}

json cost_basis_json(const GpuHourPrice& price) {
  return json{{"usd_per_gpu_hour", round6(price.usd)}, {"basis", price.basis}};
}

json energy_json(const std::optional<Energy>& e, bool per_output, double tokens_per_request) {
  if (!e) return nullptr;
  const std::string token = per_output ? "output_token" : "token";
  json j{{"basis",
          "power model: idle power + the share of the rest of the board power the kernels "
          "keep busy (GPUs only; host, network and cooling excluded)"},
         {"power_W", round6(e->power_W)},
         {"board_power_W", round6(e->board_power_W)},
         {"activity", round6(e->activity)},
         {"joules_per_" + token, round6(e->joules_per_token)},
         {(per_output ? "output_tokens" : "tokens") + std::string("_per_kWh"),
          round6(e->tokens_per_kWh)}};
  if (tokens_per_request > 0) {
    j["joules_per_request"] = round6(e->joules_per_token * tokens_per_request);
  }
  return j;
}

void read_network_fields(const ObjectReader& n, HardwareSpec& hw) {
  hw.scaleout_nics_per_node = n.integer("nics_per_node", hw.scaleout_nics_per_node);
  if (hw.scaleout_nics_per_node < 0 || hw.scaleout_nics_per_node > kMaxNicsPerNode) {
    fail(n.child("nics_per_node"), "must be between 0 and " + std::to_string(kMaxNicsPerNode),
         hw.scaleout_nics_per_node);
  }
  const double gbps = n.number("nic_bandwidth_Gbps", hw.scaleout_nic_bandwidth.value * 8 / kGB);
  if (gbps < 0 || (hw.scaleout_nics_per_node > 0 && !(gbps > 0))) {
    fail(n.child("nic_bandwidth_Gbps"), "must be > 0", gbps);
  }
  if (hw.scaleout_nics_per_node > 0 && !(gbps >= kMinNicGbps && gbps <= kMaxNicGbps)) {
    fail(n.child("nic_bandwidth_Gbps"),
         "must be between " + format_number(kMinNicGbps) + " and " + format_number(kMaxNicGbps),
         gbps);
  }
  hw.scaleout_nic_bandwidth = BytesPerSecond(gbps * kGB / 8);
  const double latency_us = n.number("latency_us", hw.scaleout_latency_s / kMicro);
  if (!(latency_us >= 0 && latency_us <= 1e6)) {
    fail(n.child("latency_us"), "must be between 0 and 1000000", latency_us);
  }
  hw.scaleout_latency_s = latency_us * kMicro;
}

namespace {

/// `key` as written times `scale` (its unit to SI). A value whose SI form overflows is refused
/// here, with the value as written: checked after conversion, 1e300 GB would read "Infinity".
double si(const ObjectReader& r, const char* key, double scale) {
  const double v = r.number(key);
  if (!std::isfinite(v * scale)) fail(r.child(key), "too large", v);
  return v * scale;
}

double si(const ObjectReader& r, const char* key, double scale, double fallback) {
  return r.find(key) ? si(r, key, scale) : fallback * scale;
}

}  // namespace

}  // namespace flopcast::io::detail

namespace flopcast::io {
HardwareSpec read_hardware(const json& j, const std::string& path) {
  ObjectReader r(j, path,
                 {"name",
                  "vendor",
                  "architecture",
                  "dense_peak_TFLOPS",
                  "hbm_GB",
                  "hbm_bandwidth_GBps",
                  "l2_cache_MB",
                  "num_sms",
                  "min_gemm_rows",
                  "scaleup_link",
                  "scaleup_bandwidth_GBps",
                  "scaleup_latency_us",
                  "gpus_per_node",
                  "scaleout_link",
                  "scaleout_nics_per_node",
                  "scaleout_nic_bandwidth_Gbps",
                  "scaleout_latency_us",
                  "tdp_W",
                  "power_limit_W",
                  "on_demand_price"});
  HardwareSpec h;
  h.name = r.string("name", "custom hardware");
  h.vendor = r.choice<std::string>("vendor",
                                   {{"nvidia", "nvidia"},
                                    {"amd", "amd"},
                                    {"intel", "intel"},
                                    {"apple", "apple"},
                                    {"other", "other"}},
                                   "other");
  h.architecture = r.choice<std::string>("architecture",
                                         {{"volta", "volta"},
                                          {"turing", "turing"},
                                          {"ampere", "ampere"},
                                          {"ada", "ada"},
                                          {"hopper", "hopper"},
                                          {"blackwell", "blackwell"},
                                          {"cdna2", "cdna2"},
                                          {"cdna3", "cdna3"},
                                          {"cdna4", "cdna4"}},
                                         "");
  ObjectReader peaks(r.require("dense_peak_TFLOPS"), r.child("dense_peak_TFLOPS"),
                     {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"});
  for (const auto& item : r.require("dense_peak_TFLOPS").items()) {
    const DType type = *parse_dtype(item.key());
    h.dense_peak[type] = FlopsPerSecond(si(peaks, item.key().c_str(), kTera));
  }
  h.hbm_capacity = Bytes(si(r, "hbm_GB", kGB));
  h.hbm_bandwidth = BytesPerSecond(si(r, "hbm_bandwidth_GBps", kGB));
  h.l2_cache = Bytes(si(r, "l2_cache_MB", kMB, 0));
  h.num_sms = r.integer("num_sms");
  h.min_gemm_rows = r.integer("min_gemm_rows", 0);
  h.scaleup_link = r.string("scaleup_link", "unspecified");
  h.scaleup_bandwidth = BytesPerSecond(si(r, "scaleup_bandwidth_GBps", kGB));
  h.scaleup_latency_s = r.number("scaleup_latency_us") * kMicro;
  h.gpus_per_node = r.integer("gpus_per_node");
  h.scaleout_link = r.string("scaleout_link", "none");
  h.scaleout_nics_per_node = r.integer("scaleout_nics_per_node", 0);
  h.scaleout_nic_bandwidth = BytesPerSecond(r.number("scaleout_nic_bandwidth_Gbps", 0) * kGB / 8);
  h.scaleout_latency_s = r.number("scaleout_latency_us", 0) * kMicro;
  h.tdp_W = r.number("tdp_W", 0);
  h.power_limit_W = r.number("power_limit_W", 0);
  if (const json* price = r.find("on_demand_price")) {
    const ObjectReader pr(*price, r.child("on_demand_price"), {"usd_per_gpu_hour", "basis"});
    h.usd_per_gpu_hour = pr.number("usd_per_gpu_hour");
    if (!(h.usd_per_gpu_hour > 0 && h.usd_per_gpu_hour <= 1e6)) {
      fail(pr.child("usd_per_gpu_hour"), "must be > 0 and at most 1000000", h.usd_per_gpu_hour);
    }
    h.price_basis = pr.string("basis");
    if (h.price_basis.empty()) {
      fail(pr.child("basis"), "must name where and when it was listed", std::string("\"\""));
    }
  }
  validate(h, path);
  return h;
}

json hardware_to_json(const HardwareSpec& h) {
  json peaks = json::object();
  for (const auto& [type, peak] : h.dense_peak)
    peaks[std::string(to_string(type))] = peak.value / kTera;
  json j{{"name", h.name},
         {"vendor", h.vendor},
         {"dense_peak_TFLOPS", peaks},
         {"hbm_GB", h.hbm_capacity.value / kGB},
         {"hbm_bandwidth_GBps", h.hbm_bandwidth.value / kGB},
         {"l2_cache_MB", h.l2_cache.value / kMB},
         {"num_sms", h.num_sms},
         {"scaleup_link", h.scaleup_link},
         {"scaleup_bandwidth_GBps", h.scaleup_bandwidth.value / kGB},
         {"scaleup_latency_us", h.scaleup_latency_s / kMicro},
         {"gpus_per_node", h.gpus_per_node},
         {"scaleout_link", h.scaleout_link},
         {"scaleout_nics_per_node", h.scaleout_nics_per_node},
         {"scaleout_nic_bandwidth_Gbps", h.scaleout_nic_bandwidth.value * 8 / kGB},
         {"scaleout_latency_us", h.scaleout_latency_s / kMicro},
         {"tdp_W", h.tdp_W}};
  if (!h.architecture.empty()) j["architecture"] = h.architecture;
  if (h.min_gemm_rows > 0) j["min_gemm_rows"] = h.min_gemm_rows;
  if (h.power_limit_W > 0) j["power_limit_W"] = h.power_limit_W;
  if (h.usd_per_gpu_hour > 0) {
    j["on_demand_price"] = {{"usd_per_gpu_hour", h.usd_per_gpu_hour}, {"basis", h.price_basis}};
  }
  return j;
}

namespace {

/// The specs of the presets of one kind, each read from its JSON the first time a request names
/// it, once even under concurrent requests (a preset named once costs what it did before the
/// cache; every preset is read by the preset tests, so none fails here). A request naming a
/// preset copies its spec instead of reading the preset's JSON again.
template <class Spec>
class PresetSpecs {
 public:
  using Read = Spec (*)(const json&);
  PresetSpecs(const char* kind, Read read)
      : list_(preset_list(kind).get_ref<const json::array_t&>()),
        read_(read),
        once_(list_.size()),
        specs_(list_.size()) {}

  /// The spec of `doc`, an element of the kind's preset list.
  const Spec& of(const json& doc) {
    const auto i = static_cast<std::size_t>(&doc - list_.data());
    std::call_once(once_.at(i), [&] { specs_[i] = read_(doc); });
    return specs_[i];
  }

 private:
  const json::array_t& list_;
  Read read_;
  std::vector<std::once_flag> once_;
  std::vector<Spec> specs_;
};

const ModelSpec& model_preset(const json& doc) {
  static PresetSpecs<ModelSpec> specs(
      "models", [](const json& p) { return read_model(p.at("model"), "model"); });
  return specs.of(doc);
}

/// An alias ("h100", "4090") names the preset: its fits are under the preset's id.
const HardwareSpec& hardware_preset(const json& doc) {
  static PresetSpecs<HardwareSpec> specs("hardware", [](const json& p) {
    HardwareSpec h = read_hardware(p.at("hardware"), "hardware");
    h.calibration = calibration_for(p.at("id").get<std::string>());
    attach_collective_fits(h);
    return h;
  });
  return specs.of(doc);
}

}  // namespace

ModelSpec resolve_model(const json& j, const std::string& path) {
  if (j.is_string()) return model_preset(preset("models", j.get<std::string>(), path));
  if (j.is_object()) return read_model(j, path);
  throw SpecError(path, "must be a preset id or a model object (got " + describe_value(j) + ")");
}

}  // namespace flopcast::io

namespace flopcast::io::detail {

namespace {

/// The figures a what-if hardware scales: its `scale` key, how the name says it, what it
/// multiplies.
struct ScaleFactor {
  const char* key;
  const char* label;
  void (*apply)(HardwareSpec&, double);
};
constexpr ScaleFactor kScaleFactors[] = {
    {"compute", "compute",
     [](HardwareSpec& hw, double x) {
       for (auto& [type, peak] : hw.dense_peak) peak = FlopsPerSecond(peak.value * x);
     }},
    {"hbm_bandwidth", "memory bandwidth",
     [](HardwareSpec& hw, double x) {
       hw.hbm_bandwidth = BytesPerSecond(hw.hbm_bandwidth.value * x);
     }},
    {"hbm_capacity", "memory",
     [](HardwareSpec& hw, double x) { hw.hbm_capacity = Bytes(hw.hbm_capacity.value * x); }},
    {"scaleup_bandwidth", "scale-up bandwidth",
     [](HardwareSpec& hw, double x) {
       hw.scaleup_bandwidth = BytesPerSecond(hw.scaleup_bandwidth.value * x);
     }},
    {"scaleout_bandwidth", "scale-out bandwidth", [](HardwareSpec& hw, double x) {
       hw.scaleout_nic_bandwidth = BytesPerSecond(hw.scaleout_nic_bandwidth.value * x);
     }}};

/// What-if hardware: `{"preset": id, "scale": {...}}`, the preset with its compute peaks, HBM
/// bandwidth or capacity, or link bandwidths multiplied. It keeps the preset's Tier-2 fits and
/// collective fits, whose efficiencies are fractions of the peaks they scale with (an assumption
/// the docs state: a faster part is assumed to reach the same share of its peaks).
HardwareSpec what_if_hardware(const json& j, const std::string& path) {
  ObjectReader r(j, path, {"preset", "scale"});
  const json& id = r.require("preset");
  if (!id.is_string()) fail(r.child("preset"), "must be a hardware preset id", describe_value(id));
  HardwareSpec h = resolve_hardware(id, r.child("preset"));
  static const std::vector<std::string> kKeys = what_if_scale_keys();
  ObjectReader sr(r.require("scale"), r.child("scale"), kKeys);
  std::string what;
  for (const ScaleFactor& f : kScaleFactors) {
    const double x = sr.number(f.key, 1);
    check_real(sr.child(f.key), x, kWhatIfScaleMin, kWhatIfScaleMax);
    if (x == 1) continue;
    f.apply(h, x);
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", x);
    what += (what.empty() ? "" : ", ") + std::string(factor) + "x " + f.label;
  }
  if (!what.empty()) h.name += " (what-if: " + what + ")";
  validate(h, path);
  return h;
}

}  // namespace

std::vector<std::string> what_if_scale_keys() {
  std::vector<std::string> keys;
  for (const ScaleFactor& f : kScaleFactors) keys.emplace_back(f.key);
  return keys;
}

}  // namespace flopcast::io::detail

namespace flopcast::io {
HardwareSpec resolve_hardware(const json& j, const std::string& path) {
  if (j.is_object() && j.contains("preset")) return what_if_hardware(j, path);
  if (j.is_string()) return hardware_preset(preset("hardware", j.get<std::string>(), path));
  if (j.is_object()) {
    HardwareSpec h = read_hardware(j, path);
    attach_collective_fits(h);
    return h;
  }
  throw SpecError(path, "must be a preset id or a hardware object (got " + describe_value(j) + ")");
}

json hardware_object(const json& hardware) {
  return hardware_to_json(resolve_hardware(hardware, "hardware"));
}

}  // namespace flopcast::io
