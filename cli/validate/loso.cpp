// SPDX-License-Identifier: MIT
// Leave-one-source-out accuracy of the end-to-end figures. See loso.hpp and docs/validation.md.
//
// What is refitted per held-out source S:
// - Training: the framework-agnostic kernel scale per GPU architecture (compute_scale = s_f, which
//   scales every kernel, attention included; overlap 1, no per-step overhead), in closed form from
//   the other sources' residuals of the physics constants: ln s_f = Σ_{S'≠S} m_{S',f} / (K_f + 1),
//   where m_{S',f} is the mean ln(predicted / measured) of source S' on architecture f and K_f the
//   number of such sources (the +1 is one pseudo-source at physics: shrinkage toward Tier 0),
//   clamped to [1, 2.5] (a trainer never runs faster than the kernel model prices its kernels,
//   and none measured runs at less than 40% of it).
// - Engines (Tier-1 overheads of vLLM, SGLang, TensorRT-LLM): refitted without S by `flopcast fit
//   --engine-folds` (the fit takes minutes, so its folds are committed in
//   validation/engine_folds.json and read here); Tier 0 (the generic profile's overheads) where
//   the other sources hold fewer than kMinEngineRows train rows. Without the folds, the committed
//   fit stands in for the refit where the other sources hold most of the engine's rows (an
//   approximation the report names).
// - Kernel fits (Tier 2) are fitted on kernel benchmarks, never on an end-to-end source, so they
//   are out-of-source for every row here and stay as committed.
#include "validate/loso.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <variant>

#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/parallel.hpp"
#include "flopcast/stats.hpp"
#include "validate/bands.hpp"
#include "validate/collector.hpp"
#include "validate/e2e.hpp"
#include "validate/loaders.hpp"

namespace flopcast::cli::validate {
namespace {

using nlohmann::json;

constexpr std::size_t kMinEngineRows = 8;  // as scripts/fit_calibration.sh's `fit --engines`
constexpr double kMaxTrainingScale = 2.5;

using Pass = std::map<std::string, EngineSample>;  // "<group> <id>" → row

std::vector<std::string> e2e_files(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (const std::string& f : files) {
    if (f.size() > 6 && f.compare(f.size() - 6, 6, ".jsonl") == 0) out.push_back(f);
  }
  return out;
}

/// The end-to-end rows of `files` (those `filter` accepts) predicted with these training
/// constants and engine overheads.
Pass run_pass(const std::vector<std::string>& files, bool calibrated, const json& training,
              const std::vector<EngineOverheads>& engines, Context::RowFilter filter = {}) {
  Collector c({});
  c.record_samples();
  KernelModel km;
  km.use_calibration = calibrated;
  km.tier0_residuals = io::tier0_residuals();
  Context ctx(c, km);
  ctx.set_training_override(training);
  ctx.set_engine_overrides(engines);
  ctx.set_row_filter(std::move(filter));
  for (const std::string& f : files) load_file(f, ctx);
  Pass p;
  for (const EngineSample& s : c.engine_samples()) p[s.group + " " + s.id] = s;
  return p;
}

std::string gpu_of(const std::string& group) {
  const std::size_t a = group.find('/', group.find('/') + 1) + 1;
  return group.substr(a, group.rfind('/') - a);
}

std::string family_of(const std::string& group) {
  const auto id = hardware_preset_for(gpu_of(group));
  return id ? architecture_of(*id) : std::string();
}

/// The kind a row is reported and banded under: the estimates' own rule
/// (io::e2e_band_kind: AMD GPUs apart, MLA + MoE inference and serving apart).
std::string kind_of(const EngineSample& s) {
  const auto id = hardware_preset_for(gpu_of(s.group));
  if (!id) return s.kind;
  const json& hw = io::preset("hardware", *id, "hardware").at("hardware");
  return io::e2e_band_kind(s.kind, hw.value("vendor", std::string()), s.mla_moe, s.early_engine,
                           s.moe);
}

/// Slowness of a row: ln(measured time / predicted time), i.e. ln(measured / predicted) for a
/// time and ln(predicted / measured) for a rate. Positive: the estimate was too fast.
double slowness(const EngineSample& s, double predicted) {
  const bool rate = s.group.find("per_s") != std::string::npos ||
                    s.group.find("tflops") != std::string::npos ||
                    s.group.find("/mfu") != std::string::npos;
  const double r = std::log(s.measured / predicted);
  return rate ? -r : r;
}

/// The training constants of physics, with the attention kernel `attention` times slower.
json physics_override(double attention = 1.0) {
  return json{{"*",
               {{"compute_scale", 1.0},
                {"attention_scale", attention},
                {"comm_overlap", 1.0},
                {"step_overhead_ms", 0.0}}}};
}

std::vector<EngineOverheads> tier0_engines(const std::set<std::string>& names) {
  const json& g = io::preset("engines", "generic", "engine").at("engine");
  std::vector<EngineOverheads> out;
  out.reserve(names.size());
  for (const std::string& n : names) {
    out.push_back(EngineOverheads{n, g.at("step_overhead_us").get<double>(),
                                  g.at("request_overhead_us").get<double>(),
                                  g.value("kernel_fixed_us", -1.0)});
  }
  return out;
}

// ---- The API server's per-request latency (engine.request_overhead_us of vLLM and SGLang) ----

/// Physical bound of the fitted constant: more than 20 ms per request would be a server fault,
/// not its path.
constexpr double kMaxRequestOverheadUs = 20000;

bool http_engine(const std::string& engine) {
  return std::any_of(std::begin(kHttpEngines), std::end(kHttpEngines),
                     [&](const char* e) { return engine == e; });
}

/// The HTTP engines with their profiles' step and kernel overheads and this request overhead.
std::vector<EngineOverheads> http_engines(double request_overhead_us) {
  std::vector<EngineOverheads> out;
  for (const char* e : kHttpEngines) {
    const json& p = io::preset("engines", e, "engine").at("engine");
    out.push_back(EngineOverheads{e, p.at("step_overhead_us").get<double>(), request_overhead_us,
                                  p.value("kernel_fixed_us", -1.0)});
  }
  return out;
}

/// Whether the engine's profile carries its own fitted step, request and kernel overheads (`fit
/// --engines` and its gate); the API server's request overhead is refitted here instead.
bool overheads_fitted(const std::string& engine) {
  const json& p = io::preset("engines", engine, "engine");
  const json gate = p.value("fit", json::object()).value("gate", json::object());
  return gate.is_object() && gate.contains("used") ? gate.at("used").get<bool>()
                                                   : p.value("tier", 0) > 0;
}

/// Rows of `source` alone.
Context::RowFilter of_source(const std::string& source) {
  return [source](const json&, const std::string& group) { return source_of(group) == source; };
}

/// Rows that may inform the request-overhead fit (a central TTFT figure of a dense model), so
/// that its pass simulates no other run.
bool request_fit_candidate(const json& row, const std::string&) {
  if (!central_ttft_metric(row.value("metric", std::string()))) return false;
  const auto model = row_model(row, 1);
  const json* m = std::get_if<json>(&model);
  return m != nullptr && m->value("num_experts", 0) == 0;
}

/// Per source: the median of (measured − predicted) TTFT, in µs, of its light-load TTFT rows of
/// an HTTP engine on a dense model and a GPU with measured kernels (`zero`: every such engine
/// without a request overhead). Under light load the TTFT is the request's own path plus its
/// prefill, so what the model lacks per request shows there; under queueing it is swamped.
std::map<std::string, double> request_residuals_us(const Pass& zero) {
  std::map<std::string, std::vector<double>> by_source;
  for (const auto& [key, s] : zero) {
    if (!s.light_load_ttft || !s.fits_engine || !http_engine(s.engine)) continue;
    by_source[source_of(s.group)].push_back((s.measured - s.predicted) * 1e3);  // ms → µs
  }
  std::map<std::string, double> out;
  for (auto& [source, v] : by_source) {
    std::sort(v.begin(), v.end());
    out[source] = percentile(v, 50);
  }
  return out;
}

/// The request overhead fitted on every source but `held_out` ("": all): the sources' medians
/// summed over their count plus one pseudo-source at physics (0), so that one source alone moves
/// it half way, clamped to [0, kMaxRequestOverheadUs].
double request_overhead_without(const std::map<std::string, double>& medians,
                                const std::string& held_out) {
  double sum = 0;
  int k = 0;
  for (const auto& [source, m] : medians) {
    if (source == held_out) continue;
    sum += m;
    ++k;
  }
  return std::clamp(sum / (k + 1), 0.0, kMaxRequestOverheadUs);
}

/// Per architecture and source: the slowness of every training row.
using Residuals = std::map<std::string, std::map<std::string, std::vector<double>>>;

Residuals training_residuals(const Pass& physics) {
  Residuals r;
  for (const auto& [key, s] : physics) {
    if (s.kind != "training") continue;
    const std::string f = family_of(s.group);
    if (!f.empty()) r[f][source_of(s.group)].push_back(slowness(s, s.predicted));
  }
  return r;
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

/// An architecture gets a scale of its own only when at least this many sources measured it,
/// so that leaving one out can check it; the others get the measured ones' geometric mean.
constexpr int kMinSourcesPerArchitecture = 2;

/// Shrunk, clamped scale per architecture from every source but `held_out` ("" : all), and
/// under key "" the scale of an architecture measured by fewer sources.
std::map<std::string, double> scales_without(const Residuals& r, const std::string& held_out) {
  std::map<std::string, double> out;
  double ln_sum = 0;
  int fitted = 0;
  for (const auto& [f, by_source] : r) {
    double sum = 0;
    int k = 0;
    for (const auto& [source, v] : by_source) {
      if (source == held_out) continue;
      sum += mean(v);
      ++k;
    }
    if (k < kMinSourcesPerArchitecture) continue;
    const double ln_s = std::clamp(sum / (k + 1), 0.0, std::log(kMaxTrainingScale));
    out[f] = std::exp(ln_s);
    ln_sum += ln_s;
    ++fitted;
  }
  out[""] = fitted > 0 ? std::exp(ln_sum / fitted) : 1.0;
  return out;
}

double scale_of(const std::map<std::string, double>& scales, const std::string& family) {
  const auto it = scales.find(family);
  return it != scales.end() ? it->second : scales.at("");
}

/// Mean |ln error| of every source but `held_out` (sources weighted alike) once each
/// architecture's kernels are scaled by `scales` (a uniform scale shifts every residual).
double fit_loss(const Residuals& r, const std::map<std::string, double>& scales,
                const std::string& held_out) {
  std::map<std::string, std::pair<double, int>> by_source;
  for (const auto& [f, sources] : r) {
    for (const auto& [source, v] : sources) {
      if (source == held_out) continue;
      for (double x : v) {
        by_source[source].first += std::fabs(x - std::log(scale_of(scales, f)));
        by_source[source].second += 1;
      }
    }
  }
  double sum = 0;
  for (const auto& [source, acc] : by_source) sum += acc.first / acc.second;
  return by_source.empty() ? 0.0 : sum / static_cast<double>(by_source.size());
}

/// Attention multipliers tried: trainers' attention (FlashAttention-2 backward above all) runs
/// further below the roofline than their GEMMs; 1 is physics.
constexpr double kAttentionGrid[] = {1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0};

bool training_row(const json& row, const std::string&) {
  return row.value("kind", "") == "training";
}

/// The physics residuals at the i-th attention multiplier of the grid.
Residuals residuals_at(const std::vector<std::string>& files, std::size_t i) {
  return training_residuals(
      run_pass(files, true, physics_override(kAttentionGrid[i]), {}, training_row));
}

/// Physics residuals at each attention multiplier of the grid.
std::vector<Residuals> residuals_per_attention(const std::vector<std::string>& files) {
  std::vector<Residuals> out(std::size(kAttentionGrid));
  parallel_for(out.size(), [&](std::size_t, std::size_t i) { out[i] = residuals_at(files, i); });
  return out;
}

struct TrainingFit {
  double attention = 1.0;                    ///< architectures without a fit of their own
  std::map<std::string, double> attentions;  ///< per architecture with a scale of its own
  std::map<std::string, double> scales;      ///< per architecture; "" : the others
};

/// The residuals of one architecture alone.
Residuals only(const Residuals& r, const std::string& family) {
  Residuals out;
  const auto it = r.find(family);
  if (it != r.end()) out[family] = it->second;
  return out;
}

/// The attention multipliers and architecture scales that fit every source but `held_out` best.
/// Each architecture measured by enough sources gets its own multiplier (the attention kernels a
/// trainer runs differ by GPU generation: FlashAttention-2 reaches a smaller share of the peak
/// on Hopper than on Ampere); the others get the one that fits all sources together best.
TrainingFit fit_training(const std::vector<Residuals>& per_attention, const std::string& held_out) {
  TrainingFit best;
  double best_loss = INFINITY;
  for (std::size_t i = 0; i < per_attention.size(); ++i) {
    const auto scales = scales_without(per_attention[i], held_out);
    const double loss = fit_loss(per_attention[i], scales, held_out);
    if (loss < best_loss - 1e-9) {
      best_loss = loss;
      best = TrainingFit{kAttentionGrid[i], {}, scales};
    }
  }
  for (const auto& [family, by_source] : per_attention.front()) {
    if (!best.scales.count(family)) continue;  // too few sources: the common constants
    double family_loss = INFINITY;
    for (std::size_t i = 0; i < per_attention.size(); ++i) {
      const Residuals r = only(per_attention[i], family);
      const auto scales = scales_without(r, held_out);
      const double loss = fit_loss(r, scales, held_out);
      if (loss < family_loss - 1e-9) {
        family_loss = loss;
        best.attentions[family] = kAttentionGrid[i];
        best.scales[family] = scales.at(family);
      }
    }
  }
  return best;
}

json scale_override(const TrainingFit& fit) {
  json o = physics_override(fit.attention);
  o["*"]["compute_scale"] = fit.scales.at("");  // architectures without a scale of their own
  for (const auto& [f, s] : fit.scales) {
    if (f.empty()) continue;  // every kernel, attention included
    o["*@" + f] = {{"compute_scale", s}, {"attention_scale", fit.attentions.at(f)}};
  }
  return o;
}

double median(std::vector<double> xs) {
  if (xs.empty()) return NAN;
  std::sort(xs.begin(), xs.end());
  return percentile(xs, 50);
}

double ape(double predicted, double measured) { return std::fabs(predicted - measured) / measured; }

}  // namespace

// TensorRT-LLM v0.9's static-batch and first-token tables are one document (its perf overview),
// so one source.
std::string source_of(const std::string& group) {
  const std::size_t a = group.find('/') + 1, b = group.find('/', a);
  std::string s = group.substr(a, b - a);
  if (s.rfind("trtllm-v0.9", 0) == 0) s = "trtllm-v0.9";
  if (s.rfind("megatron-bridge", 0) == 0) s = "megatron-bridge";
  return s;
}

json fit_training_scales(const std::vector<std::string>& files) {
  const auto per_attention = residuals_per_attention(e2e_files(files));
  const TrainingFit fit = fit_training(per_attention, "");
  json out{{"attention_scale", fit.attention},
           {"unmeasured_compute_scale", round6(fit.scales.at(""))},
           {"architectures", json::object()}};
  const Residuals& r = per_attention.front();
  for (const auto& [f, by_source] : r) {
    std::size_t rows = 0;
    json sources = json::array();
    for (const auto& [source, v] : by_source) {
      rows += v.size();
      sources.push_back(source);
    }
    const auto it = fit.scales.find(f);
    const auto at = fit.attentions.find(f);
    out["architectures"][f] = {
        {"compute_scale", it != fit.scales.end() ? json(round6(it->second)) : json(nullptr)},
        {"attention_scale", at != fit.attentions.end() ? json(at->second) : json(nullptr)},
        {"sources", sources},
        {"rows", rows}};
  }
  return out;
}

json fit_request_overhead(const std::vector<std::string>& all_files) {
  const std::vector<std::string> files = e2e_files(all_files);
  const auto medians = request_residuals_us(
      run_pass(files, true, json::object(), http_engines(0), request_fit_candidate));
  json sources = json::object();
  for (const auto& [source, m] : medians) sources[source] = round6(m);
  return {{"request_overhead_us", round6(request_overhead_without(medians, ""))},
          {"source_median_residual_us", sources}};
}

json leave_one_source_out(const std::vector<std::string>& all_files, const json& engine_folds,
                          bool folds_for_tier0_profiles, bool request_overhead) {
  const std::vector<std::string> files = e2e_files(all_files);
  std::set<std::string> all_engines(std::begin(kFittedEngines), std::end(kFittedEngines));
  // The passes every fold reads, side by side: the default, Tier 0, the request overhead's
  // residuals (without it, its gate's other side, nothing is fitted: no such pass) and the
  // training residuals at each attention multiplier.
  Pass def, t0, request_pass;
  std::vector<Residuals> per_attention(std::size(kAttentionGrid));
  const std::size_t shared_passes = 3;
  parallel_for(shared_passes + per_attention.size(), [&](std::size_t, std::size_t i) {
    if (i == 0) {
      def = run_pass(files, true, json::object(), {});
    } else if (i == 1) {
      t0 = run_pass(files, false, physics_override(), tier0_engines(all_engines));
    } else if (i == 2) {
      if (request_overhead) {
        request_pass =
            run_pass(files, true, json::object(), http_engines(0), request_fit_candidate);
      }
    } else {
      per_attention[i - shared_passes] = residuals_at(files, i - shared_passes);
    }
  });
  const auto request_medians =
      request_overhead ? request_residuals_us(request_pass) : std::map<std::string, double>{};
  const double committed_request_us = io::preset("engines", kHttpEngines[0], "engine")
                                          .at("engine")
                                          .at("request_overhead_us")
                                          .get<double>();

  // Train rows of each fitted engine per source (what `fit --engines` fitted on).
  std::map<std::string, std::map<std::string, std::size_t>> engine_rows;
  std::set<std::string> sources, http_sources;
  for (const auto& [key, s] : def) {
    sources.insert(source_of(s.group));
    if (http_engine(s.engine)) http_sources.insert(source_of(s.group));
    if (s.split == Split::train && all_engines.count(s.engine) && s.fits_engine) {
      ++engine_rows[s.engine][source_of(s.group)];
    }
  }

  // Leave-one-source-out prediction of every row.
  std::map<std::string, double> loso;       // row key → prediction
  std::map<std::string, bool> loso_fitted;  // source → any fitted constant used
  std::map<std::string, json> scales_used;  // training source → its fold's scales
  const bool refitted = engine_folds.is_object();
  const json no_folds = json::object();
  const json& folds = refitted ? engine_folds.at("folds") : no_folds;
  // What each fold runs: the training scales refitted without its source, or the engines'
  // overheads so refitted, or the default pass itself.
  struct FoldPlan {
    std::string source;
    json training;  ///< null: the committed training constants
    std::vector<EngineOverheads> engines;
    bool is_default;
  };
  std::vector<FoldPlan> plans;
  for (const std::string& source : sources) {
    std::set<std::string> dropped;
    std::vector<EngineOverheads> overrides;
    bool fitted = false;
    for (const auto& [engine, by_source] : engine_rows) {
      std::size_t others = 0, own = 0;
      for (const auto& [s, n] : by_source) (s == source ? own : others) += n;
      if (own == 0) continue;  // the committed fit never saw this source
      if (!folds_for_tier0_profiles && !overheads_fitted(engine)) {
        continue;  // the default prices this engine's overheads at Tier 0: nothing to leave out
      }
      if (refitted) {
        // The engine refitted without this source (`fit --engine-folds`); null: too few rows
        // elsewhere, Tier 0. A source the folds do not name was not among the rows the engine
        // was fitted on (a user's own file): the committed fit never saw it.
        const json* f = folds.contains(source) && folds.at(source).contains(engine)
                            ? &folds.at(source).at(engine)
                            : nullptr;
        if (f == nullptr) {
          fitted = true;
        } else if (f->is_null()) {
          dropped.insert(engine);
        } else {
          overrides.push_back(EngineOverheads{engine, f->at("step_overhead_us").get<double>(),
                                              f->at("request_overhead_us").get<double>(),
                                              f->value("kernel_fixed_us", -1.0)});
          fitted = true;
        }
        continue;
      }
      // Without folds, the committed fit stands for a refit without this source where the other
      // sources hold most of its rows; else the engine is priced at Tier 0 for this source.
      const bool kept = others >= kMinEngineRows && others >= own;
      if (!kept) dropped.insert(engine);
      if (kept) fitted = true;
    }
    for (const EngineOverheads& t : tier0_engines(dropped)) overrides.push_back(t);
    // The API server's request overhead refitted without this source (an engine whose own fold
    // is in force keeps that fold's).
    const double request_us =
        request_overhead ? request_overhead_without(request_medians, source) : 0.0;
    for (const EngineOverheads& h : http_engines(request_us)) {
      if (std::none_of(overrides.begin(), overrides.end(),
                       [&](const EngineOverheads& o) { return o.engine == h.engine; })) {
        overrides.push_back(h);
      }
    }
    fitted = fitted || (request_us > 0 && http_sources.count(source));
    const bool has_training = std::any_of(def.begin(), def.end(), [&](const auto& kv) {
      return kv.second.kind == "training" && source_of(kv.second.group) == source;
    });
    FoldPlan plan{source, {}, {}, false};
    if (has_training) {
      const TrainingFit fit = fit_training(per_attention, source);
      json used{{"attention_scale", fit.attention}};
      for (const auto& [f, s] : fit.scales) {
        used[f.empty() ? std::string("unmeasured") : f] = round6(s);
        if (!f.empty()) used["attention_scale@" + f] = fit.attentions.at(f);
        fitted = fitted || s > 1;
      }
      scales_used[source] = used;
      plan.training = scale_override(fit);
    } else if (std::fabs(request_us - committed_request_us) < 0.01 &&
               overrides.size() == std::size(kHttpEngines)) {
      // Only the HTTP engines' request overhead, at the committed value (written to 0.01 µs): the
      // default is this fold (the committed fit never saw this source).
      plan.is_default = true;
    } else {
      plan.engines = std::move(overrides);
    }
    plans.push_back(std::move(plan));
    loso_fitted[source] = fitted;
  }
  // The folds side by side, each pricing only its own source's rows.
  std::vector<Pass> folds_run(plans.size());
  parallel_for(plans.size(), [&](std::size_t, std::size_t i) {
    const FoldPlan& p = plans[i];
    if (p.is_default) return;
    folds_run[i] = run_pass(files, true, p.training.is_null() ? json::object() : p.training,
                            p.engines, of_source(p.source));
  });
  for (std::size_t i = 0; i < plans.size(); ++i) {
    for (const auto& [key, s] : plans[i].is_default ? def : folds_run[i]) {
      if (source_of(s.group) == plans[i].source) loso[key] = s.predicted;
    }
  }

  // Per kind: slowness of the leave-one-source-out (and of the Tier-0) predictions per source,
  // for the bands.
  std::map<std::string, std::map<std::string, std::vector<double>>> logs, logs_t0;
  for (const auto& [key, s] : def) {
    const auto it = loso.find(key);
    if (it == loso.end()) continue;
    logs[kind_of(s)][source_of(s.group)].push_back(slowness(s, it->second));
    const auto t = t0.find(key);
    if (t != t0.end())
      logs_t0[kind_of(s)][source_of(s.group)].push_back(slowness(s, t->second.predicted));
  }

  // The band rule per kind: the narrowest band (tail percentiles of the other sources' slowness,
  // widened away from the estimate) that holds at least 80 % of the rows of sources it was not
  // built from (band_rules); the nominal 10 % tails for a kind with one source.
  const std::map<std::string, BandRule> rule_of = band_rules(logs);
  struct Acc {
    std::vector<double> loso, t0, def;
    std::vector<double> widths;  ///< high / low of each banded row's band
    std::size_t banded = 0, covered = 0;
  };
  std::map<std::pair<std::string, std::string>, Acc> by;  // (kind, source)
  std::map<std::string, Acc> by_kind;
  for (const auto& [key, s] : def) {
    const auto it = loso.find(key);
    const auto t = t0.find(key);
    if (it == loso.end()) continue;
    const std::string source = source_of(s.group);
    Acc& a = by[{kind_of(s), source}];
    Acc& k = by_kind[kind_of(s)];
    for (Acc* x : {&a, &k}) {
      x->loso.push_back(ape(it->second, s.measured));
      x->def.push_back(ape(s.predicted, s.measured));
      if (t != t0.end()) x->t0.push_back(ape(t->second.predicted, s.measured));
    }
    // The band of this source: the kind's rule over the other sources' slowness.
    std::map<std::string, std::vector<double>> others = logs[kind_of(s)];
    others.erase(source);
    if (!others.empty()) {
      const auto [lo, hi] = band_of(others, rule_of.at(kind_of(s)));
      const double x = slowness(s, it->second);
      const bool in = x >= lo && x <= hi;
      // The band as an estimate shows it always holds the estimate (io::detail::band_json).
      const double width = std::exp(std::max(hi, 0.0) - std::min(lo, 0.0));
      for (Acc* y : {&a, &k}) {
        ++y->banded;
        y->covered += in ? 1 : 0;
        y->widths.push_back(width);
      }
    }
  }

  const auto pct = [](double x) { return std::isfinite(x) ? json(round6(x)) : json(nullptr); };
  const auto coverage = [](const Acc& a) {
    return a.banded ? json(round6(static_cast<double>(a.covered) / a.banded)) : json(nullptr);
  };
  const auto width = [&](const Acc& a) { return pct(median(a.widths)); };  // high / low
  json report{{"sources", json::array()}, {"kinds", json::array()}};
  std::map<std::string, std::pair<std::string, double>> worst;
  std::map<std::string, int> source_count;
  for (const auto& [kk, a] : by) {
    const double m = median(a.loso);
    report["sources"].push_back({{"kind", kk.first},
                                 {"source", kk.second},
                                 {"rows", a.loso.size()},
                                 {"median_ape", pct(m)},
                                 {"tier0_median_ape", pct(median(a.t0))},
                                 {"default_median_ape", pct(median(a.def))},
                                 {"band_coverage_80", coverage(a)},
                                 {"band_width_80", width(a)},
                                 {"fitted", loso_fitted[kk.second]}});
    ++source_count[kk.first];
    if (!worst.count(kk.first) || m > worst[kk.first].second) worst[kk.first] = {kk.second, m};
  }
  for (const auto& [kind, a] : by_kind) {
    const double m = median(a.loso), t = median(a.t0);
    report["kinds"].push_back({{"kind", kind},
                               {"sources", source_count[kind]},
                               {"rows", a.loso.size()},
                               {"median_ape", pct(m)},
                               {"tier0_median_ape", pct(t)},
                               {"default_median_ape", pct(median(a.def))},
                               {"band_coverage_80", coverage(a)},
                               {"band_width_80", width(a)},
                               {"worst_source", worst[kind].first},
                               {"beats_tier0", std::isfinite(m) && std::isfinite(t) && m <= t}});
  }
  report["training_scales"] = scales_used;
  report["engine_refits"] =
      refitted ? "engine overheads refitted without each source (fit --engine-folds)"
               : "approximate: the committed engine fit stands for a refit without a source "
                 "wherever the other sources hold most of its rows (pass --engine-folds for "
                 "true refits)";
  // Every row, for inspection (--format json): measured and the three predictions.
  json row_list = json::array();
  for (const auto& [key, s] : def) {
    const auto it = loso.find(key);
    const auto t = t0.find(key);
    if (it == loso.end()) continue;
    row_list.push_back(
        {{"id", s.id},
         {"group", s.group},
         {"kind", kind_of(s)},
         {"measured", round6(s.measured)},
         {"loso", round6(it->second)},
         {"tier0", t != t0.end() ? json(round6(t->second.predicted)) : json(nullptr)},
         {"default", round6(s.predicted)}});
  }
  report["rows"] = row_list;
  // The committed bands: every source's leave-one-source-out slowness, sources weighted alike.
  json bands = json::object();
  for (const auto& [kind, by_source] : logs) {
    std::size_t rows = 0;
    for (const auto& [src, v] : by_source) rows += v.size();
    const BandRule& rule = rule_of.at(kind);
    const auto [lo, hi] = band_of(by_source, rule);
    bands[kind] = {{"slow_p10", round6(lo)},
                   {"slow_p90", round6(hi)},
                   {"slow_median", round6(source_weighted_percentile(by_source, 50))},
                   {"tail_percent", rule.tail},
                   {"scale", round6(rule.scale)},
                   {"symmetric", rule.symmetric},
                   {"about_estimate", rule.about_estimate},
                   {"sources", by_source.size()},
                   {"rows", rows},
                   {"coverage_loso", coverage(by_kind[kind])}};
  }
  for (const auto& [kind, by_source] : logs_t0) {
    std::size_t rows = 0;
    for (const auto& [src, v] : by_source) rows += v.size();
    bands[kind + "@tier0"] = {{"slow_p10", round6(source_weighted_percentile(by_source, 10))},
                              {"slow_p90", round6(source_weighted_percentile(by_source, 90))},
                              {"sources", by_source.size()},
                              {"rows", rows}};
  }
  report["bands"] = bands;
  return report;
}

std::map<std::string, double> loso_medians(const json& report) {
  std::map<std::string, double> out;
  for (const json& s : report.at("sources")) {
    if (s.at("median_ape").is_number()) {
      out[s.at("kind").get<std::string>() + "/" + s.at("source").get<std::string>()] =
          s.at("median_ape").get<double>();
    }
  }
  return out;
}

std::string format_loso_table(const json& report) {
  std::ostringstream o;
  // A number of the report as printed ("-" for null): a share in % with one decimal (p), a band
  // width as "1.72x" (x).
  const auto number = [](const json& v, double scale, int digits, const char* unit) {
    std::ostringstream s;
    if (v.is_number()) {
      s << std::fixed << std::setprecision(digits) << v.get<double>() * scale << unit;
    } else {
      s << "-";
    }
    return s.str();
  };
  const auto p = [&](const json& v) { return number(v, 100, 1, ""); };
  const auto x = [&](const json& v) { return number(v, 1, 2, "x"); };
  o << "Leave-one-source-out (each source predicted with every end-to-end fit refitted without "
       "it; "
    << report.value("engine_refits", std::string()) << ")\n";
  // Columns as wide as their longest entry, so that a long kind never runs into its source.
  std::size_t kind_w = 4, source_w = 6;
  for (const json& s : report.at("sources")) {
    kind_w = std::max(kind_w, s.at("kind").get<std::string>().size());
    source_w = std::max(source_w, s.at("source").get<std::string>().size());
  }
  for (const json& k : report.at("kinds")) {
    kind_w = std::max(kind_w, k.at("kind").get<std::string>().size());
  }
  const int kw = static_cast<int>(kind_w) + 2, sw = static_cast<int>(source_w) + 2;
  o << std::left << std::setw(kw) << "kind" << std::setw(sw) << "source" << std::right
    << std::setw(6) << "rows" << std::setw(11) << "median %" << std::setw(10) << "Tier0 %"
    << std::setw(12) << "in-source %" << std::setw(11) << "band 80 %" << std::setw(11) << "width"
    << "\n";
  for (const json& s : report.at("sources")) {
    o << std::left << std::setw(kw) << s.at("kind").get<std::string>() << std::setw(sw)
      << s.at("source").get<std::string>() << std::right << std::setw(6)
      << s.at("rows").get<std::size_t>() << std::setw(11) << p(s.at("median_ape")) << std::setw(10)
      << p(s.at("tier0_median_ape")) << std::setw(12) << p(s.at("default_median_ape"))
      << std::setw(11) << p(s.at("band_coverage_80")) << std::setw(11) << x(s.at("band_width_80"))
      << "\n";
  }
  o << "\nPer kind (rows pooled over sources)\n";
  for (const json& k : report.at("kinds")) {
    o << std::left << std::setw(kw) << k.at("kind").get<std::string>() << std::right << std::setw(3)
      << k.at("sources").get<int>() << " sources" << std::setw(6) << k.at("rows").get<std::size_t>()
      << " rows  median " << std::setw(5) << p(k.at("median_ape")) << " %  Tier 0 " << std::setw(5)
      << p(k.at("tier0_median_ape")) << " %  band coverage " << std::setw(5)
      << p(k.at("band_coverage_80")) << " %  width " << std::setw(5) << x(k.at("band_width_80"))
      << "  worst " << k.at("worst_source").get<std::string>() << "\n";
  }
  return o.str();
}

}  // namespace flopcast::cli::validate
