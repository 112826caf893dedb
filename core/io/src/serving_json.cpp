// SPDX-License-Identifier: MIT
// Request document <-> ServingSpec, ServingResult -> response document (task "serving").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "common_json.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/serving.hpp"
#include "flopcast/serving_search.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io::detail {
namespace {

/// A length: a number (fixed) or {"kind": "fixed"|"uniform"|"lognormal", ...}.
LengthDist read_length(const json& v, const std::string& path, int max_context, json& resolved) {
  LengthDist d;
  if (v.is_number()) {
    d.kind = LengthKind::fixed;
    d.value = as_int(v, path);
    resolved = static_cast<int>(d.value);
    return d;
  }
  if (!v.is_object()) {
    throw SpecError(path, "must be a number of tokens or a distribution object (got " +
                              describe_value(v) + ")");
  }
  const json* kind = v.contains("kind") ? &v.at("kind") : nullptr;
  const std::string k = kind && kind->is_string() ? kind->get<std::string>() : "";
  if (k == "fixed") {
    ObjectReader r(v, path, {"kind", "value"});
    d.kind = LengthKind::fixed;
    d.value = r.integer("value");
    resolved = {{"kind", "fixed"}, {"value", static_cast<int>(d.value)}};
  } else if (k == "uniform") {
    ObjectReader r(v, path, {"kind", "min", "max"});
    d.kind = LengthKind::uniform;
    d.min = r.integer("min");
    d.max = r.integer("max");
    resolved = {
        {"kind", "uniform"}, {"min", static_cast<int>(d.min)}, {"max", static_cast<int>(d.max)}};
  } else if (k == "lognormal") {
    ObjectReader r(v, path, {"kind", "mean", "sigma", "min", "max"});
    d.kind = LengthKind::lognormal;
    d.mean = r.number("mean");
    d.sigma = r.number("sigma");
    d.min = r.integer("min", 1);
    d.max = r.integer("max", max_context);
    resolved = {{"kind", "lognormal"},
                {"mean", d.mean},
                {"sigma", d.sigma},
                {"min", static_cast<int>(d.min)},
                {"max", static_cast<int>(d.max)}};
  } else {
    ObjectReader r(v, path, {"kind", "value", "min", "max", "mean", "sigma"});
    throw SpecError(path + ".kind", "must be one of fixed, uniform, lognormal (got " +
                                        (kind ? describe_value(*kind) : std::string("nothing")) +
                                        ")");
  }
  return d;
}

std::vector<TraceRequest> read_trace(const json& v, const std::string& path) {
  if (!v.is_array()) {
    throw SpecError(path, "must be an array of [arrival_s, prompt_tokens, output_tokens] (got " +
                              describe_value(v) + ")");
  }
  if (v.size() > static_cast<std::size_t>(kMaxTraceRequests)) {
    fail(path, "must hold at most " + std::to_string(kMaxTraceRequests) + " requests",
         static_cast<double>(v.size()));
  }
  std::vector<TraceRequest> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const json& e = v[i];
    if (!e.is_array() || e.size() != 3) {
      throw SpecError(
          p, "must be [arrival_s, prompt_tokens, output_tokens] (got " + describe_value(e) + ")");
    }
    out.push_back({as_number(e[0], p + "[0]"), as_int(e[1], p + "[1]"), as_int(e[2], p + "[2]")});
  }
  return out;
}

struct Parsed {
  ServingSpec spec;
  bool simulate = false;
  GpuHourPrice price;  // the request's cost_per_gpu_hour_usd, else the hardware's list price
  json resolved;
};

/// features.disaggregated's KV link (kv_link_GBps, kv_link_latency_us), defaults kept.
void read_kv_link(const ObjectReader& f, Disaggregation& d) {
  d.kv_link_bytes_per_s = f.number("kv_link_GBps", d.kv_link_bytes_per_s / kGB) * kGB;
  d.kv_link_latency_s = f.number("kv_link_latency_us", d.kv_link_latency_s / kMicro) * kMicro;
}

/// The KV link as echoed (what read_kv_link reads).
json kv_link_json(const Disaggregation& d) {
  return {{"kv_link_GBps", round6(d.kv_link_bytes_per_s / kGB)},
          {"kv_link_latency_us", round6(d.kv_link_latency_s / kMicro)}};
}

/// features.disaggregated as echoed: the instances and the KV link.
json disaggregation_json(const Disaggregation& d) {
  json out = kv_link_json(d);
  out["prefill_instances"] = d.prefill_instances;
  out["decode_instances"] = d.decode_instances;
  return out;
}

/// `workload`: the arrival process and the request lengths (or a trace). Returns the echo of
/// the resolved workload.
json read_workload(const ObjectReader& r, ServingSpec& s) {
  const int max_context = s.inference.model.max_context_tokens;
  static const std::vector<std::string> kWorkloadKeys = field_keys("workload", kServingField);
  static const std::vector<std::string> kArrivalKeys =
      field_keys("workload.arrival", kServingField);
  ObjectReader wl(r.require("workload"), "workload", kWorkloadKeys);
  ObjectReader ar(wl.require("arrival"), "workload.arrival", kArrivalKeys);
  s.arrival.kind = ar.choice("kind", kArrivalKindNames, ArrivalKind::poisson);
  json arrival{{"kind", ar.string("kind", "poisson")}};
  json prompt_resolved, output_resolved;
  if (s.arrival.kind == ArrivalKind::trace) {
    for (const char* key : {"rate_per_s", "cv", "concurrency"}) {
      if (ar.find(key)) throw SpecError(ar.child(key), "not used with kind trace; remove it");
    }
    for (const char* key : {"prompt_tokens", "output_tokens", "num_requests"}) {
      if (wl.find(key)) {
        throw SpecError(wl.child(key),
                        "comes from the trace (workload.arrival.requests); remove it");
      }
    }
    s.trace = read_trace(ar.require("requests"), "workload.arrival.requests");
    s.num_requests = static_cast<int>(s.trace.size());
    s.prompt.kind = s.output.kind = LengthKind::trace;
    arrival["requests"] = ar.require("requests");
  } else {
    if (ar.find("requests")) {
      throw SpecError(ar.child("requests"), "only with kind trace");
    }
    if (s.arrival.kind == ArrivalKind::concurrency) {
      for (const char* key : {"rate_per_s", "cv"}) {
        if (ar.find(key)) {
          throw SpecError(ar.child(key),
                          "not used with kind concurrency (a closed loop); remove it");
        }
      }
      s.arrival.concurrency = ar.integer("concurrency");
      arrival["concurrency"] = s.arrival.concurrency;
    } else {
      if (ar.find("concurrency"))
        throw SpecError(ar.child("concurrency"), "only with kind concurrency");
      s.arrival.rate_per_s = ar.number("rate_per_s");
      arrival["rate_per_s"] = s.arrival.rate_per_s;
    }
    if (s.arrival.kind == ArrivalKind::gamma) {
      s.arrival.cv = ar.number("cv");
      arrival["cv"] = s.arrival.cv;
    } else if (ar.find("cv")) {
      throw SpecError(ar.child("cv"), "only with kind gamma");
    }
    s.prompt = read_length(wl.require("prompt_tokens"), "workload.prompt_tokens", max_context,
                           prompt_resolved);
    s.output = read_length(wl.require("output_tokens"), "workload.output_tokens", max_context,
                           output_resolved);
    s.num_requests = wl.integer("num_requests", 1000);
  }
  const int seed = wl.integer("seed", 1);
  if (seed < 0) fail("workload.seed", "must be >= 0", seed);
  s.seed = static_cast<std::uint64_t>(seed);

  json workload{{"arrival", arrival}, {"seed", seed}};
  if (s.arrival.kind != ArrivalKind::trace) {
    workload["prompt_tokens"] = prompt_resolved;
    workload["output_tokens"] = output_resolved;
    workload["num_requests"] = s.num_requests;
  }
  return workload;
}

/// `engine`: the profile named by `name`, then the request's overrides; the kernels are priced
/// as this engine runs them (its framework's fits, its per-kernel cost). Returns the echo.
json read_serving_engine(const ObjectReader& r, ServingSpec& s) {
  InferenceSpec& inf = s.inference;
  const json& eng = object_or_empty(r, "engine");
  static const std::vector<std::string> kEngineKeys = field_keys("engine", kServingField);
  ObjectReader en(eng, "engine", kEngineKeys);
  const std::string name = en.string("name", "vllm");
  s.inference.engine = engine_profile(name, "engine.name");
  EngineProfile& e = s.inference.engine;
  e.max_num_seqs = en.integer("max_num_seqs", e.max_num_seqs);
  // vLLM runs pipeline-parallel setups synchronously (async scheduling excludes them).
  e.async_scheduling =
      en.boolean("async_scheduling", e.async_scheduling && !(e.id == "vllm" && inf.pp > 1));
  read_engine_overrides(en, e);
  e.tier = engine_tier(e, eng);
  apply_engine(e, inf.kernel);
  s.policy = en.choice("policy", kSchedulePolicyNames, SchedulePolicy::decode_first);
  s.batching = en.choice("batching", kBatchingNames, Batching::continuous);
  s.static_batch_size = en.integer("static_batch_size", 0);
  s.num_scheduler_steps = en.integer("num_scheduler_steps", 1);

  json engine = engine_profile_to_json(e);
  engine.erase("tier");
  engine["policy"] = to_string(s.policy);
  engine["batching"] = to_string(s.batching);
  engine["static_batch_size"] = s.static_batch_size;
  engine["num_scheduler_steps"] = s.num_scheduler_steps;
  engine["framework_reserve_GB"] = round6(framework_reserve_bytes(inf.engine, inf.tp) / kGB);
  return engine;
}

/// `features`: prefix caching, speculative decoding, disaggregation, LoRA, MoE serving. Returns
/// the echo of those given.
json read_features(const ObjectReader& r, ServingSpec& s) {
  // The keys of each feature's object, from the registry (flopcast/io/fields.hpp).
  const auto keys = [](const char* feature) {
    return field_keys(std::string("features.") + feature, kServingField);
  };
  static const std::vector<std::string> kFeatures = field_keys("features", kServingField);
  static const std::vector<std::string> kPrefix = keys("prefix_caching"),
                                        kSpeculative = keys("speculative"),
                                        kDisaggregated = keys("disaggregated"),
                                        kLora = keys("lora"), kMoe = keys("moe");
  ObjectReader fe(object_or_empty(r, "features"), "features", kFeatures);
  json features = json::object();
  if (const json* v = fe.find("prefix_caching")) {
    ObjectReader f(*v, "features.prefix_caching", kPrefix);
    s.prefix.shared_prefix_tokens = f.integer("shared_prefix_tokens");
    s.prefix.hit_rate = f.number("hit_rate", 1.0);
    features["prefix_caching"] = {{"shared_prefix_tokens", s.prefix.shared_prefix_tokens},
                                  {"hit_rate", s.prefix.hit_rate}};
  }
  if (const json* v = fe.find("speculative")) {
    ObjectReader f(*v, "features.speculative", kSpeculative);
    s.speculative.num_tokens = f.integer("num_tokens");
    s.speculative.acceptance_rate = f.number("acceptance_rate");
    json out{{"num_tokens", s.speculative.num_tokens},
             {"acceptance_rate", s.speculative.acceptance_rate}};
    if (f.find("draft")) {
      // The model's own multi-token-prediction layers (DeepSeek MTP) draft the tokens.
      s.speculative.mtp = f.choice<bool>("draft", {{"mtp", true}}, false);
      for (const char* other : {"draft_model", "draft_cost_fraction"}) {
        if (f.find(other))
          throw SpecError(f.child(other),
                          "give draft, draft_model or draft_cost_fraction, not two");
      }
      out["draft"] = "mtp";
    } else if (const json* dm = f.find("draft_model")) {
      if (f.find("draft_cost_fraction")) {
        throw SpecError(f.child("draft_cost_fraction"),
                        "give draft_model or draft_cost_fraction, not both");
      }
      s.speculative.draft_model = resolve_model(*dm, "features.speculative.draft_model");
      out["draft_model"] = *dm;
    } else if (f.find("draft_cost_fraction")) {
      s.speculative.draft_cost_fraction = f.number("draft_cost_fraction");
      out["draft_cost_fraction"] = s.speculative.draft_cost_fraction;
    } else {
      throw SpecError(f.path(),
                      "give the draft: draft (\"mtp\"), draft_model or draft_cost_fraction (the "
                      "CLI's --draft, --draft-cost-fraction)");
    }
    features["speculative"] = out;
  }
  if (const json* v = fe.find("disaggregated")) {
    ObjectReader f(*v, "features.disaggregated", kDisaggregated);
    Disaggregation& d = s.disaggregation;
    d.prefill_instances = f.integer("prefill_instances");
    d.decode_instances = f.integer("decode_instances");
    read_kv_link(f, d);
    features["disaggregated"] = disaggregation_json(d);
  }
  if (const json* v = fe.find("lora")) {
    ObjectReader f(*v, "features.lora", kLora);
    Lora& l = s.lora;
    l.num_adapters = f.integer("num_adapters");
    l.rank = f.integer("rank", l.rank);
    l.max_loras_per_batch = f.integer("max_loras_per_batch", l.max_loras_per_batch);
    l.load_s = f.number("load_ms", l.load_s / kMilli) * kMilli;
    if (l.num_adapters < 1) fail("features.lora.num_adapters", "must be >= 1", l.num_adapters);
    features["lora"] = {{"num_adapters", l.num_adapters},
                        {"rank", l.rank},
                        {"max_loras_per_batch", l.max_loras_per_batch},
                        {"load_ms", round6(l.load_s / kMilli)}};
  }
  if (const json* v = fe.find("moe")) {
    ObjectReader f(*v, "features.moe", kMoe);
    s.moe.expert_parallel = f.boolean("expert_parallel", false);
    s.moe.imbalance_factor = f.number("imbalance_factor", 1.0);
    features["moe"] = {{"expert_parallel", s.moe.expert_parallel},
                       {"imbalance_factor", s.moe.imbalance_factor}};
  }
  return features;
}

Parsed parse_request(const json& request) {
  static const std::vector<std::string> kKeys = field_keys("", kServingField);
  static const std::vector<std::string> kSloKeys = field_keys("slo", kServingField);
  static const std::vector<std::string> kOutputKeys = field_keys("output", kServingField);
  ObjectReader r(request, "", kKeys);
  Parsed p;
  ServingSpec& s = p.spec;
  InferenceSpec& inf = s.inference;
  p.simulate = r.choice("mode", kServingModeNames, false);
  read_target(r, inf.model, inf.hardware, inf.kernel);
  p.price = read_gpu_hour_price(r, inf.hardware);
  read_replica(r, inf);

  const json workload = read_workload(r, s);
  const json engine = read_serving_engine(r, s);
  const json features = read_features(r, s);
  s.router = r.choice("router", kRouterNames, Router::round_robin);
  ObjectReader sl(object_or_empty(r, "slo"), "slo", kSloKeys);
  s.slo.ttft_s = sl.number("ttft_ms", 0) * kMilli;
  s.slo.tpot_s = sl.number("tpot_ms", 0) * kMilli;
  s.slo.e2e_s = sl.number("e2e_ms", 0) * kMilli;
  ObjectReader out(object_or_empty(r, "output"), "output", kOutputKeys);
  s.per_request = out.boolean("per_request", false);
  s.timeline_points = out.integer("timeline_points", 256);
  if (s.per_request && !p.simulate) {
    throw SpecError("output.per_request", "needs mode \"simulate\"");
  }

  p.resolved =
      json{{"schema_version", kSchemaVersion},
           {"task", "serving"},
           {"mode", p.simulate ? "simulate" : "analytic"},
           {"model", request.at("model")},
           {"hardware", request.at("hardware")},
           {"num_gpus", inf.num_gpus},
           {"parallelism", parallelism_json(inf)},
           {"precision", precision_json(inf)},
           {"max_tier", inf.kernel.use_calibration ? 2 : 0},
           {"workload", workload},
           {"engine", engine},
           {"features", features},
           {"router", to_string(s.router)},
           {"slo",
            {{"ttft_ms", round6(s.slo.ttft_s / kMilli)},
             {"tpot_ms", round6(s.slo.tpot_s / kMilli)},
             {"e2e_ms", round6(s.slo.e2e_s / kMilli)}}},
           {"output", {{"per_request", s.per_request}, {"timeline_points", s.timeline_points}}}};
  if (p.price.from_request) p.resolved["cost_per_gpu_hour_usd"] = p.price.usd;
  return p;
}

json ms(const std::optional<Percentiles>& p) {
  if (!p) return nullptr;
  return json{{"mean", round6(p->mean / kMilli)},
              {"p50", round6(p->p50 / kMilli)},
              {"p90", round6(p->p90 / kMilli)},
              {"p99", round6(p->p99 / kMilli)}};
}

/// The 80% band of a serving estimate's output throughput. The throughput under load has one
/// source of its own; where its band was never checked on a source it was not built from, the
/// simulator's throughput band from the max-throughput runs (the "inference throughput" kind,
/// the same simulator and figure) stands in.
std::optional<E2EBand> throughput_band(const InferenceSpec& s) {
  const bool tier0 = !(s.kernel.use_calibration && s.hardware.calibration);
  auto throughput = e2e_band("serving throughput", s.hardware, s.model, tier0);
  if (!tier0 && (!throughput || !std::isfinite(throughput->coverage_loso))) {
    if (auto wider = e2e_band("inference throughput", s.hardware, s.model, tier0)) {
      throughput = wider;
    }
  }
  return throughput;
}

/// 80% bands (presets/bands/e2e.json) of the latency means, medians and p99, and of the output
/// throughput; null for a figure the model leaves null (saturated). A band that held too few rows
/// of sources it was not built from adds a warning to `warnings`.
json serving_interval(const ServingResult& r, const InferenceSpec& s,
                      std::vector<std::string>& warnings) {
  const HardwareSpec& hw = s.hardware;
  // As for inference: the "@tier0" band for physics-only estimates (no fit could price them).
  const bool tier0 = !(s.kernel.use_calibration && hw.calibration);
  json out = json::object();
  const std::pair<const char*, const std::optional<Percentiles>*> figures[] = {
      {"ttft_ms", &r.ttft_s}, {"tpot_ms", &r.tpot_s}, {"e2e_ms", &r.e2e_s}};
  for (const auto& [name, p] : figures) {
    if (!*p) continue;
    json f = json::object();
    const std::pair<const char*, std::pair<const char*, double>> stats[] = {
        {"mean", {"serving mean", (*p)->mean}},
        {"p50", {"serving p50", (*p)->p50}},
        {"p99", {"serving tail", (*p)->p99}}};
    for (const auto& [stat, kv] : stats) {
      if (const auto b = e2e_band(kv.first, hw, s.model, tier0)) {
        f[stat] = band_json(kv.second / kMilli, *b, false);
        warn_band_coverage(std::string(name) + "." + stat, *b, warnings);
      }
    }
    // A p99 is never below its p50: neither edge of its band is below the p50 band's.
    if (f.contains("p50") && f.contains("p99")) {
      for (const char* edge : {"low", "high"}) {
        f["p99"][edge] = std::max(f["p99"][edge].get<double>(), f["p50"][edge].get<double>());
      }
    }
    out[name] = f;
  }
  if (const auto b = throughput_band(s)) {
    out["output_tokens_per_s"] = band_json(r.output_tokens_per_s, *b, true);
    warn_band_coverage("the output throughput", *b, warnings);
  }
  warn_early_mla_engines("serving mean", hw, s.model, warnings);
  return out;
}

json optional_number(const std::optional<double>& v) {
  return v ? json(round6(*v)) : json(nullptr);
}

}  // namespace

json run_serving(const json& request) {
  Parsed p = parse_request(request);
  const ServingSpec& s = p.spec;
  const ServingResult r = p.simulate ? simulate_serving(s) : estimate_serving(s);

  json timeline{{"t_s", json::array()},
                {"batch_size", json::array()},
                {"kv_use", json::array()},
                {"waiting", json::array()}};
  for (const TimelinePoint& t : r.timeline) {
    timeline["t_s"].push_back(round6(t.t_s));
    timeline["batch_size"].push_back(round6(t.batch_size));
    timeline["kv_use"].push_back(round6(t.kv_use));
    timeline["waiting"].push_back(round6(t.waiting));
  }
  std::vector<std::string> warnings = r.warnings;
  json interval = serving_interval(r, s.inference, warnings);
  json out{
      {"schema_version", kSchemaVersion},
      {"task", "serving"},
      {"mode", p.simulate ? "simulate" : "analytic"},
      {"tier", r.tier},
      {"model", identity(request.at("model"), s.inference.model.name)},
      {"hardware", identity(request.at("hardware"), s.inference.hardware.name)},
      {"engine", {{"name", s.inference.engine.id}, {"tier", s.inference.engine.tier}}},
      {"num_gpus", s.inference.num_gpus},
      {"replicas", r.replicas},
      {"fits", r.fits},
      {"unfit_reason", r.fits ? json(nullptr) : json(r.unfit_reason)},
      {"saturated", r.saturated},
      {"saturation_rate_per_s", p.simulate ? json(nullptr) : json(round6(r.saturation_rate_per_s))},
      {"utilization", p.simulate ? json(nullptr) : json(round6(r.utilization))},
      {"ttft_ms", ms(r.ttft_s)},
      {"tpot_ms", ms(r.tpot_s)},
      {"e2e_ms", ms(r.e2e_s)},
      {"queueing_ms", ms(r.queueing_s)},
      {"interval", std::move(interval)},
      {"throughput",
       {{"requests_per_s", round6(r.requests_per_s)},
        {"input_tokens_per_s", round6(r.input_tokens_per_s)},
        {"output_tokens_per_s", round6(r.output_tokens_per_s)}}},
      {"goodput",
       {{"requests_per_s", optional_number(r.goodput_requests_per_s)},
        {"fraction", optional_number(r.goodput_fraction)}}},
      {"preemptions", r.preemptions ? json(*r.preemptions) : json(nullptr)},
      {"batch",
       {{"mean_size", round6(r.mean_batch_size)},
        {"mean_step_time_ms", round6(r.mean_step_time_s / kMilli)},
        {"max_size_kv", p.simulate ? json(nullptr) : json(r.max_batch_kv)}}},
      {"kv_cache",
       {{"capacity_tokens", round6(r.kv_capacity_tokens)},
        {"state_MB_per_request", round6(r.state_bytes_per_request / 1e6)},
        {"mean_use", p.simulate ? json(round6(r.kv_mean_use)) : json(nullptr)},
        {"peak_use", p.simulate ? json(round6(r.kv_peak_use)) : json(nullptr)}}},
      {"assumptions", assumptions_json(r.assumptions)},
      {"warnings", std::move(warnings)},
      {"request", std::move(p.resolved)}};
  if (p.simulate) {
    out["simulation"] = {{"num_requests", s.num_requests},
                         {"completed", r.completed},
                         {"rejected", r.rejected},
                         {"steps", r.steps},
                         {"simulated_s", round6(r.simulated_s)}};
    out["timeline"] = std::move(timeline);
  }
  if (s.per_request) {
    json rows = json::array();
    for (const RequestRecord& q : r.requests) {
      const bool done = q.finish_s >= 0;
      rows.push_back(
          {{"arrival_ms", round6(q.arrival_s / kMilli)},
           {"scheduled_ms", done ? json(round6(q.scheduled_s / kMilli)) : json(nullptr)},
           {"first_token_ms", done ? json(round6(q.first_token_s / kMilli)) : json(nullptr)},
           {"finish_ms", done ? json(round6(q.finish_s / kMilli)) : json(nullptr)},
           {"prompt_tokens", q.prompt_tokens},
           {"output_tokens", q.output_tokens},
           {"cached_tokens", q.cached_tokens},
           {"preemptions", q.preemptions},
           {"instance", q.instance}});
    }
    out["requests"] = std::move(rows);
  }
  // At the offered load (saturated: at the saturation rate).
  add_cost_per_million(out, p.price, s.inference.num_gpus, r.output_tokens_per_s);
  // Output tokens of the mean request (0 when none completes).
  const double output_per_request =
      r.requests_per_s > 0 ? r.output_tokens_per_s / r.requests_per_s : 0.0;
  if (p.price.usd > 0 && output_per_request > 0) {
    // At the saturation rate: the most output the GPUs give at this request mix.
    out["cost_basis"]["usd_per_million_output_tokens_at_saturation"] = usd_per_million_json(
        p.price, s.inference.num_gpus, r.saturation_rate_per_s * output_per_request);
  }
  out["energy"] = energy_json(estimate_energy(s.inference.hardware, s.inference.num_gpus,
                                              r.output_tokens_per_s, serving_activity(s, r)),
                              true, output_per_request);
  return out;
}

namespace {

/// The GPU count a search with search.fewest_gpus goes up to when the request gives none.
constexpr int kDefaultGpuCeiling = 256;

/// search.*: the space, how many setups to list, the percentile the SLOs bound.
struct SearchAsked {
  ServingSearchSpace space;
  int top = 10;
  SloPercentile percentile = SloPercentile::p90;
  const json* offers = nullptr;  ///< search.hardware: GPU types with their counts and prices
  Disaggregation link;           ///< the KV link of disaggregated setups (features.disaggregated)
  bool fewest_gpus = false;  ///< search.fewest_gpus: the GPU count searched, num_gpus its ceiling
};

SearchAsked read_search(const ObjectReader& r) {
  ObjectReader sr(r.require("search"), "search",
                  {"target", "top", "tp", "pp", "expert_parallel", "dp_attention", "disaggregated",
                   "max_num_seqs", "max_num_batched_tokens", "weights", "kv_cache",
                   "slo_percentile", "hardware", "fewest_gpus"});
  SearchAsked out;
  out.offers = sr.find("hardware");
  out.fewest_gpus = sr.boolean("fewest_gpus", false);
  if (out.fewest_gpus && out.offers) {
    fail("search.fewest_gpus",
         "searches the GPU count of the request's one GPU type; compare GPU types with "
         "search.hardware without it",
         "true");
  }
  out.top = sr.integer("top", 10);
  ServingSearchSpace& space = out.space;
  space.tp = read_positive_list(sr, "tp");
  space.pp = read_positive_list(sr, "pp");
  space.max_num_seqs = read_positive_list(sr, "max_num_seqs");
  space.max_num_batched_tokens = read_positive_list(sr, "max_num_batched_tokens");
  const auto boolean = [](const json& v, const std::string& path) {
    if (!v.is_boolean()) fail(path, "must be true or false", describe_value(v));
    return v.get<bool>();
  };
  space.expert_parallel = read_list<bool>(sr, "expert_parallel", boolean);
  space.dp_attention = read_list<bool>(sr, "dp_attention", boolean);
  space.disaggregated = read_list<bool>(sr, "disaggregated", boolean);
  const auto dtype = [](const json& v, const std::string& path) {
    const auto t = v.is_string() ? parse_dtype(v.get<std::string>()) : std::nullopt;
    if (!t) fail(path, "must be a data type name such as bf16, fp8, int4", describe_value(v));
    return *t;
  };
  space.weights = read_list<DType>(sr, "weights", dtype);
  space.kv_cache = read_list<DType>(sr, "kv_cache", dtype);
  out.percentile = sr.choice("slo_percentile", kSloPercentileNames, SloPercentile::p90);
  return out;
}

/// What the search sets must be left to it (pinned through search.<pin>); what it cannot vary
/// is refused.
void check_left_to_search(const ObjectReader& r, const ServingSearchSpace& space) {
  const auto searched = [&](const char* object, const char* key, const char* pin,
                            const char* how = "") {
    const json* o = r.find(object);
    if (o && o->is_object() && o->contains(key)) {
      fail(std::string(object) + "." + key,
           std::string("is searched by task \"search\"") + how + " (pin it with search." + pin +
               ", or run task \"serving\")",
           describe_value(o->at(key)));
    }
  };
  searched("parallelism", "tp", "tp");
  searched("parallelism", "pp", "pp");
  searched("parallelism", "dp_attention", "dp_attention");
  searched("parallelism", "ep", "expert_parallel", " as ep = 1 or ep = tp");
  if (const json* p = r.find("parallelism"); p && p->is_object() && p->contains("moe_dispatch")) {
    fail("parallelism.moe_dispatch",
         "follows each layout the search tries (all_to_all where DP attention and ep = tp span "
         "nodes, else all_reduce); remove it or run task \"serving\"",
         describe_value(p->at("moe_dispatch")));
  }
  searched("engine", "max_num_seqs", "max_num_seqs");
  searched("engine", "max_num_batched_tokens", "max_num_batched_tokens");
  if (!space.weights.empty()) {
    searched("precision", "weights", "weights");
    searched("precision", "attention_weights", "weights");
  }
  if (!space.kv_cache.empty()) searched("precision", "kv_cache", "kv_cache");
  if (const json* m = r.find("mode"); m && *m != json("analytic")) {
    fail("mode", "must be \"analytic\" in a search (every setup is priced by the analytic engine)",
         describe_value(*m));
  }
}

/// Whether the search tries disaggregated setups (search.disaggregated holds true).
bool tries_splits(const ServingSearchSpace& space) {
  return std::find(space.disaggregated.begin(), space.disaggregated.end(), true) !=
         space.disaggregated.end();
}

/// Searching disaggregated setups (search.disaggregated holds true): the KV link they share,
/// from features.disaggregated, whose instance counts the search chooses; and the request
/// without it, for every setup sets its own.
Disaggregation read_search_link(json& base, const ServingSearchSpace& space) {
  Disaggregation link;
  json* features = base.contains("features") ? &base["features"] : nullptr;
  const json* given = features && features->is_object() && features->contains("disaggregated")
                          ? &features->at("disaggregated")
                          : nullptr;
  if (!given) return link;
  if (!tries_splits(space)) {
    fail("features.disaggregated",
         "sets the KV link of the disaggregated setups a search tries; ask for them with "
         "search.disaggregated [false, true], or remove it",
         describe_value(*given));
  }
  const ObjectReader f(
      *given, "features.disaggregated",
      {"prefill_instances", "decode_instances", "kv_link_GBps", "kv_link_latency_us"});
  for (const char* key : {"prefill_instances", "decode_instances"}) {
    if (const json* v = f.find(key)) {
      fail(std::string("features.disaggregated.") + key,
           "is searched by task \"search\" (search.disaggregated); give only kv_link_GBps and "
           "kv_link_latency_us",
           describe_value(*v));
    }
  }
  read_kv_link(f, link);
  validate_kv_link(link);
  features->erase("disaggregated");
  if (features->empty()) base.erase("features");
  return link;
}

/// The launch flags of one replica of setup `c` in vLLM (`vllm serve`), SGLang
/// (`python -m sglang.launch_server`) and TensorRT-LLM (`trtllm-serve`): its parallelism, batch
/// limits, memory share and KV-cache type. The weights' type is the checkpoint's (none of the
/// three is told it by a flag that works for every type). Under DP attention vLLM and
/// TensorRT-LLM take their limits per attention rank, SGLang for the whole replica; TensorRT-LLM
/// takes attention DP and an fp8 KV cache in the YAML file of --extra_llm_api_options
/// (`trtllm_extra_llm_api_options`, its text).
json launch_json(const ServingCandidate& c, double gpu_memory_utilization) {
  const int ranks = c.dp_attention ? c.tp : 1;
  const int seqs = c.max_num_seqs / ranks, tokens = c.max_num_batched_tokens / ranks;
  const bool kv8 = c.kv_cache == DType::fp8;
  char mem[32];
  std::snprintf(mem, sizeof mem, "%g", gpu_memory_utilization);
  const auto n = [](int v) { return std::to_string(v); };
  std::string vllm = c.dp_attention
                         ? "--data-parallel-size " + n(c.tp) + " --tensor-parallel-size 1"
                         : "--tensor-parallel-size " + n(c.tp);
  if (c.pp > 1) vllm += " --pipeline-parallel-size " + n(c.pp);
  if (c.ep > 1) vllm += " --enable-expert-parallel";
  vllm += " --max-num-seqs " + n(seqs) + " --max-num-batched-tokens " + n(tokens) +
          " --gpu-memory-utilization " + mem;
  if (kv8) vllm += " --kv-cache-dtype fp8";
  std::string sglang = "--tp " + n(c.tp);
  if (c.pp > 1) sglang += " --pp-size " + n(c.pp);
  if (c.dp_attention) sglang += " --enable-dp-attention --dp " + n(c.tp);
  if (c.ep > 1) sglang += " --ep-size " + n(c.ep);
  sglang += " --max-running-requests " + n(c.max_num_seqs) + " --chunked-prefill-size " +
            n(c.max_num_batched_tokens) + " --mem-fraction-static " + mem;
  if (kv8) sglang += " --kv-cache-dtype fp8_e4m3";
  std::string trtllm = "--tp_size " + n(c.tp);
  if (c.pp > 1) trtllm += " --pp_size " + n(c.pp);
  if (c.ep > 1) trtllm += " --ep_size " + n(c.ep);
  trtllm += " --max_batch_size " + n(seqs) + " --max_num_tokens " + n(tokens);
  json out{{"vllm", vllm}, {"sglang", sglang}, {"trtllm", trtllm}};
  std::string yaml;
  if (c.dp_attention) yaml += "enable_attention_dp: true\n";
  if (kv8) yaml += "kv_cache_config:\n  dtype: fp8\n";
  if (!yaml.empty()) out["trtllm_extra_llm_api_options"] = yaml;
  return out;
}

/// One listed setup: what the search chose, its figures, the task-"serving" request (`base`
/// with the setup's choices) that reproduces it, and the engines' launch flags.
json setup_json(const ServingCandidate& c, const json& base, const ServingSearchSpace& space,
                const Disaggregation& link, double gpu_memory_utilization) {
  json parallelism{{"tp", c.tp}};
  if (c.pp != 1) parallelism["pp"] = c.pp;
  if (c.ep != 1) parallelism["ep"] = c.ep;
  if (c.dp_attention) parallelism["dp_attention"] = true;
  if (c.redundant_experts != 0) parallelism["redundant_experts"] = c.redundant_experts;
  json one = base;
  one["parallelism"] = parallelism;
  if (!one.contains("engine")) one["engine"] = json::object();
  one["engine"]["max_num_seqs"] = c.max_num_seqs;
  one["engine"]["max_num_batched_tokens"] = c.max_num_batched_tokens;
  json precision = json::object();
  if (!space.weights.empty()) precision["weights"] = to_string(c.weights);
  if (!space.kv_cache.empty()) precision["kv_cache"] = to_string(c.kv_cache);
  if (!precision.empty()) one["precision"].update(precision);
  json disaggregated = nullptr;
  if (c.prefill_instances > 0) {
    Disaggregation d = link;
    d.prefill_instances = c.prefill_instances;
    d.decode_instances = c.decode_instances;
    one["features"]["disaggregated"] = disaggregation_json(d);
    disaggregated = {{"prefill_instances", d.prefill_instances},
                     {"decode_instances", d.decode_instances}};
  }
  const ServingResult& res = c.result;
  json row{{"parallelism", std::move(parallelism)},
           {"replicas", res.replicas},
           {"max_num_seqs", c.max_num_seqs},
           {"max_num_batched_tokens", c.max_num_batched_tokens},
           {"weights", to_string(c.weights)},
           {"kv_cache", to_string(c.kv_cache)},
           {"saturation_rate_per_s", round6(res.saturation_rate_per_s)},
           {"capacity_output_tokens_per_s_per_gpu", round6(c.capacity_output_tokens_per_s_per_gpu)},
           {"tokens_per_s_per_user", round6(c.tokens_per_s_per_user)},
           {"utilization", round6(res.utilization)},
           {"ttft_ms", ms(res.ttft_s)},
           {"tpot_ms", ms(res.tpot_s)},
           {"e2e_ms", ms(res.e2e_s)},
           {"tier", res.tier},
           {"launch", launch_json(c, gpu_memory_utilization)},
           {"request", std::move(one)}};
  // Asked for: a row says whether it splits the pools (null: collocated replicas).
  if (!space.disaggregated.empty()) row["disaggregated"] = std::move(disaggregated);
  return row;
}

/// The request echoed: the serving request with every default filled in, less what the search
/// chose, and the search as asked (with its percentile).
json resolved_search(json resolved, const json& request, const SearchAsked& asked) {
  resolved["task"] = "search";
  resolved.erase("parallelism");
  resolved["engine"].erase("max_num_seqs");
  resolved["engine"].erase("max_num_batched_tokens");
  if (!asked.space.weights.empty()) {
    resolved["precision"].erase("weights");
    resolved["precision"].erase("attention_weights");
  }
  if (!asked.space.kv_cache.empty()) resolved["precision"].erase("kv_cache");
  resolved["search"] = request.at("search");
  resolved["search"]["slo_percentile"] = std::string(to_string(asked.percentile));
  if (tries_splits(asked.space)) resolved["features"]["disaggregated"] = kv_link_json(asked.link);
  return resolved;
}

/// The keys of one search.hardware entry, set on the request it deploys.
constexpr const char* kOfferKeys[] = {"hardware", "num_gpus", "cost_per_gpu_hour_usd"};

/// parse_request(`base`) for the offer at `path` (search.hardware[i]): an error in what the offer
/// set names the offer's field ("search.hardware[1].hardware.hbm_GB: ..."), not the request's.
Parsed parse_offer(const json& base, const std::string& path) {
  const auto in_offer = [&](const SpecError& e) {
    for (const char* key : kOfferKeys) {
      const std::string k = key;
      if (e.path() == k || e.path().rfind(k + ".", 0) == 0) return true;
    }
    return false;
  };
  const auto rule = [](const SpecError& e) {
    return std::string(e.what()).substr(e.path().size() + 2);
  };
  try {
    return parse_request(base);
  } catch (const NotModelledError& e) {
    if (!in_offer(e)) throw;
    throw NotModelledError(path + "." + e.path(), rule(e));
  } catch (const SpecError& e) {
    if (!in_offer(e)) throw;
    throw SpecError(path + "." + e.path(), rule(e));
  }
}

/// search.hardware: the request deployed on each listed GPU type, count and price.
std::vector<std::pair<json, Parsed>> read_offers(const ObjectReader& r, const json& offers,
                                                 const json& base) {
  if (!offers.is_array() || offers.empty() || offers.size() > std::size_t{kMaxServingOffers}) {
    fail("search.hardware", "must be a list of 1 to 16 {hardware, num_gpus, cost_per_gpu_hour_usd}",
         describe_value(offers));
  }
  for (const char* key : kOfferKeys) {
    if (const json* v = r.find(key)) {
      fail(key, "is given per GPU type in search.hardware; leave it out", describe_value(*v));
    }
  }
  std::vector<std::pair<json, Parsed>> out;
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const std::string path = "search.hardware[" + std::to_string(i) + "]";
    const ObjectReader o(offers[i], path, {"hardware", "num_gpus", "cost_per_gpu_hour_usd"});
    json one = base;
    for (const char* key : kOfferKeys) one[key] = o.require(key);
    Parsed p = parse_offer(one, path);
    out.emplace_back(std::move(one), std::move(p));
  }
  return out;
}

}  // namespace

json run_serving_search(const json& request) {
  ObjectReader r(request, "",
                 {"schema_version", "task", "search", "mode", "model", "hardware", "num_gpus",
                  "parallelism", "precision", "max_tier", "workload", "engine", "features",
                  "router", "slo", "output", "cost_per_gpu_hour_usd"});
  SearchAsked asked = read_search(r);
  check_left_to_search(r, asked.space);
  json base = request;
  base.erase("search");
  base["task"] = "serving";
  // With the GPU count searched, num_gpus is its ceiling (kDefaultGpuCeiling when not given).
  if (asked.fewest_gpus && !base.contains("num_gpus")) base["num_gpus"] = kDefaultGpuCeiling;
  asked.link = read_search_link(base, asked.space);
  // One request per GPU type (search.hardware), or the request as it is.
  std::vector<std::pair<json, Parsed>> deployed;
  if (asked.offers) {
    deployed = read_offers(r, *asked.offers, base);
  } else {
    Parsed p = parse_request(base);
    deployed.emplace_back(base, std::move(p));
  }
  if (deployed.front().second.spec.arrival.kind == ArrivalKind::trace) {
    // Each setup would price the whole trace again and echo it in its request: unbounded work
    // and output for a request of at most 1 MB.
    throw NotModelledError("workload.arrival.kind",
                           "a trace is not searched; give the load as a rate (or concurrency) "
                           "and length distributions, or price the setups with task \"serving\"");
  }
  ServingSearchResult found;
  int fewest_found = 0;
  json gpus_tried = json::array();
  for (auto& [one, p] : deployed) p.spec.disaggregation = asked.link;
  if (asked.offers) {
    std::vector<ServingOffer> offers;
    for (const auto& [one, p] : deployed) {
      // The band's low edge as a fraction of the estimate (what band_json reports for a rate).
      const auto band = throughput_band(p.spec.inference);
      const double low = band ? detail::band_edge_factor(*band, true, true) : 1.0;
      offers.push_back({p.spec, p.price.from_request ? p.price.usd : 0.0, low});
    }
    found = search_serving_offers(offers, asked.space, asked.top, asked.percentile);
  } else if (asked.fewest_gpus) {
    FewestGpusResult fewest =
        search_fewest_gpus(deployed.front().second.spec, asked.space, asked.top, asked.percentile);
    found = std::move(fewest.search);
    fewest_found = fewest.num_gpus;
    for (const int n : fewest.tried) gpus_tried.push_back(n);
    // The listed setups deploy on the count found (the ceiling's search when none was).
    deployed.front().first["num_gpus"] =
        fewest.num_gpus > 0 ? fewest.num_gpus : fewest.tried.back();
  } else {
    found = search_serving(deployed.front().second.spec, asked.space, asked.top, asked.percentile);
  }

  const auto listed = [&](const ServingCandidate& c) {
    const auto& [one, parsed] = deployed[static_cast<std::size_t>(c.offer)];
    json row = setup_json(c, one, asked.space, asked.link,
                          parsed.spec.inference.engine.gpu_memory_utilization);
    if (asked.offers) {
      for (const char* key : kOfferKeys) row[key] = one.at(key);
      row["output_tokens_per_usd"] = round6(c.output_tokens_per_usd);
      row["output_tokens_per_usd_low"] = round6(c.output_tokens_per_usd_low);
    }
    return row;
  };
  json candidates = json::array();
  for (const ServingCandidate& c : found.best) candidates.push_back(listed(c));
  json frontier = json::array();
  for (const ServingCandidate& c : found.frontier) frontier.push_back(listed(c));
  Parsed& p = deployed.front().second;
  if (asked.offers) {
    for (const char* key : kOfferKeys) p.resolved.erase(key);
  }
  json warnings = found.warnings;
  if (found.best.empty()) {
    warnings.push_back(found.keeping_up == 0 ? "no setup fits and keeps up with the offered load"
                                             : "no setup meets the SLOs at " +
                                                   std::string(to_string(asked.percentile)));
    if (asked.fewest_gpus) {
      warnings.push_back("on up to " + std::to_string(p.spec.inference.num_gpus) +
                         " GPUs (num_gpus, the search's ceiling)");
    }
  }
  json out{{"schema_version", kSchemaVersion},
           {"task", "search"},
           {"target", "serving"},
           {"mode", "analytic"},
           {"evaluated", found.evaluated},
           {"keeping_up", found.keeping_up},
           {"meeting_slo", found.meeting_slo},
           {"candidates", std::move(candidates)},
           {"frontier", std::move(frontier)},
           {"rejected", rejected_json(found.rejected)},
           {"warnings", std::move(warnings)},
           {"request", resolved_search(std::move(p.resolved), request, asked)}};
  if (asked.fewest_gpus) {
    out["num_gpus"] = fewest_found > 0 ? json(fewest_found) : json(nullptr);
    out["num_gpus_tried"] = std::move(gpus_tried);
  }
  return out;
}

}  // namespace flopcast::io::detail
