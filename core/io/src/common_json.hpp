// SPDX-License-Identifier: MIT
// Request reading and response shaping shared by tasks inference, serving and training, so the
// three keep the same keys, defaults and error messages.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flopcast/error.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/fields.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io::detail {

/// The object at `key`, or {} when the key is absent (so its reader applies every default).
inline const json& object_or_empty(const ObjectReader& r, const char* key) {
  static const json empty = json::object();
  const json* v = r.find(key);
  return v ? *v : empty;
}

inline DType read_dtype(const ObjectReader& r, const char* key, DType fallback) {
  const json* v = r.find(key);
  if (!v) return fallback;
  if (v->is_string()) {
    if (auto t = parse_dtype(v->get<std::string>())) return *t;
  }
  throw SpecError(r.child(key),
                  "must be a data type name such as bf16, fp16, fp8, int8, int4 "
                  "(got " +
                      describe_value(*v) + ")");
}

/// A search's list at `key` (1 to 64 values, each read by `one`); empty when absent.
template <typename T, typename Read>
inline std::vector<T> read_list(const ObjectReader& r, const char* key, Read one) {
  std::vector<T> out;
  const json* v = r.find(key);
  if (!v) return out;
  const std::string path = r.child(key);
  if (!v->is_array() || v->empty() || v->size() > 64) {
    fail(path, "must be a list of 1 to 64 values", describe_value(*v));
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(one(v->at(i), path + "[" + std::to_string(i) + "]"));
  }
  return out;
}

/// A search's rejected candidates as [{reason, count}], by reason.
inline json rejected_json(const std::map<std::string, int>& rejected) {
  json out = json::array();
  for (const auto& [reason, count] : rejected)
    out.push_back({{"reason", reason}, {"count", count}});
  return out;
}

/// A search's list of integers >= 1 at `key`; empty when absent.
inline std::vector<int> read_positive_list(const ObjectReader& r, const char* key) {
  return read_list<int>(r, key, [](const json& v, const std::string& path) {
    const int value = as_int(v, path);
    if (value < 1) fail(path, "must be >= 1", value);
    return value;
  });
}

/// `model`, `hardware` and `max_tier` (0 or 2): the keys every estimating task starts with.
inline void read_target(const ObjectReader& r, ModelSpec& model, HardwareSpec& hardware,
                        KernelModel& kernel) {
  model = resolve_model(r.require("model"), "model");
  hardware = resolve_hardware(r.require("hardware"), "hardware");
  kernel.tier0_residuals = tier0_residuals();
  const int max_tier = r.integer("max_tier", 2);
  if (max_tier != 0 && max_tier != 2) fail("max_tier", "must be 0 or 2", max_tier);
  kernel.use_calibration = max_tier == 2;
}

/// The `parallelism` echoed in a response: pp only where the request pipelines.
inline json parallelism_json(const InferenceSpec& s) {
  json p{{"tp", s.tp}};
  if (s.pp != 1) p["pp"] = s.pp;
  if (s.dp_attention) p["dp_attention"] = true;
  if (s.attention_tp != 1) p["attention_tp"] = s.attention_tp;
  if (s.ep != 1) p["ep"] = s.ep;
  if (s.model.is_moe() && s.tp > 1) p["moe_dispatch"] = to_string(moe_dispatch_of(s));
  if (s.redundant_experts != 0) p["redundant_experts"] = s.redundant_experts;
  return p;
}

/// `parallelism` (tp, pp, dp_attention, attention_tp, ep, moe_dispatch, redundant_experts),
/// `num_gpus` and
/// `precision` of one inference replica (tasks inference, serving).
inline void read_replica(const ObjectReader& r, InferenceSpec& s) {
  // Inference and serving read the same parallelism and precision keys (tests/unit/fields_test).
  static const std::vector<std::string> kParallelismKeys =
      field_keys("parallelism", kInferenceField);
  static const std::vector<std::string> kPrecisionKeys = field_keys("precision", kInferenceField);
  ObjectReader pr(object_or_empty(r, "parallelism"), "parallelism", kParallelismKeys);
  s.tp = pr.integer("tp", 1);
  s.pp = pr.integer("pp", 1);
  s.dp_attention = pr.boolean("dp_attention", false);
  s.attention_tp = pr.integer("attention_tp", 1);
  s.ep = pr.integer("ep", 1);
  s.redundant_experts = pr.integer("redundant_experts", 0);
  if (pr.find("moe_dispatch")) {
    s.moe_dispatch = pr.choice("moe_dispatch", kMoeDispatchNames, MoeDispatch::all_reduce);
  }
  s.num_gpus = r.integer("num_gpus", s.tp * std::clamp(s.pp, 1, 4096));

  ObjectReader pc(object_or_empty(r, "precision"), "precision", kPrecisionKeys);
  // The checkpoint's own types are the default (model.checkpoint_weights); the attention
  // projections keep the checkpoint's apart only while the weights are the checkpoint's too.
  const bool weights_given = pc.find("weights") != nullptr;
  s.weights = read_dtype(pc, "weights", s.model.checkpoint_weights.value_or(DType::bf16));
  if (pc.find("attention_weights")) {
    s.attention_weights = read_dtype(pc, "attention_weights", s.weights);
  } else if (!weights_given && s.model.checkpoint_attention_weights) {
    s.attention_weights = s.model.checkpoint_attention_weights;
  }
  const bool has_bf16 = s.hardware.peak(DType::bf16).has_value();
  const DType default_act = (s.weights == DType::fp16 || !has_bf16) ? DType::fp16 : DType::bf16;
  s.activations = read_dtype(pc, "activations", default_act);
  s.kv_cache = read_dtype(pc, "kv_cache", s.activations);
}

/// The resolved `precision` object of read_replica.
inline json precision_json(const InferenceSpec& s) {
  return json{{"weights", to_string(s.weights)},
              {"attention_weights", to_string(attention_weight_type(s))},
              {"kv_cache", to_string(s.kv_cache)},
              {"activations", to_string(s.activations)}};
}

/// A model or hardware in a response: the preset id when one was named, and the spec's name.
inline json identity(const json& given, const std::string& name) {
  return json{{"id", given.is_string() ? json(given) : json(nullptr)}, {"name", name}};
}

/// One `breakdown` row; Item is BreakdownItem or TrainingBreakdownItem (the keys they share).
template <class Item>
json breakdown_row(const Item& b) {
  return json{{"phase", b.phase},
              {"op", b.op},
              {"time_ms", round6(b.time_s / kMilli)},
              {"share", round6(b.share)},
              {"bound", to_string(b.bound)},
              {"flops", round6(b.flops)}};
}

inline json assumptions_json(const std::vector<Assumption>& assumptions) {
  json out = json::array();
  for (const auto& a : assumptions) {
    out.push_back(
        {{"name", a.name}, {"value", round6(a.value)}, {"unit", a.unit}, {"source", a.source}});
  }
  return out;
}

}  // namespace flopcast::io::detail
