// SPDX-License-Identifier: MIT
// `flopcast fit PATH... --out presets/calibration`: refits the Tier-2 efficiencies from the train
// split of the measured kernels, and the Tier-0 residual bands. The data is read where it lies
// (../shared/groundtruth); only the fitted coefficients are written.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "commands.hpp"
#include "flopcast/calibration.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/stats.hpp"
#include "validate/collector.hpp"
#include "validate/loaders.hpp"
#include "validate/loso.hpp"

namespace flopcast::cli {
namespace {

constexpr std::size_t kMaxFitRows = 3000;  // deterministic subsample per group for the optimizer
constexpr double kTimeWeightedTolerance = 0.01;  // a fit may lose this much time-weighted error

double predict_s(const OpCost& op, const Efficiency& e) {
  double t = 0;
  for (int i = 0; i < op.num_parts; ++i) t += priced_time_s(op.parts[i], e);
  return t;
}

/// The term beyond the five every class fits: MoE's per-problem cost, decode attention's per-block
/// time (calibration.hpp).
FitExtra fit_extra(const CalibrationKey& k) {
  if (k.op == OpClass::moe) return FitExtra::per_problem;
  if (k.op == OpClass::attention_decode) {
    return k.variant == KernelVariant::mha ? FitExtra::per_block : FitExtra::per_block_grouped;
  }
  return FitExtra::none;
}

/// Residual quantiles, MAPE and parallel-work range of `rows` under efficiency `e`.
CalibratedEfficiency describe(const std::vector<const validate::FitSample*>& rows,
                              const Efficiency& e) {
  CalibratedEfficiency c;
  c.efficiency = e;
  std::vector<double> predicted, measured, logs;
  c.min_units = INFINITY;
  c.max_units = 0;
  for (const auto* r : rows) {
    predicted.push_back(predict_s(r->op, e));
    measured.push_back(r->measured_s);
    logs.push_back(std::log(measured.back() / predicted.back()));
    for (int i = 0; i < r->op.num_parts; ++i) {
      c.min_units = std::min(c.min_units, r->op.parts[i].units);
      c.max_units = std::max(c.max_units, r->op.parts[i].units);
    }
  }
  std::sort(logs.begin(), logs.end());
  c.log_residual_p10 = percentile(logs, 10);
  c.log_residual_p90 = percentile(logs, 90);
  c.train_rows = static_cast<int>(rows.size());
  c.train_mape = error_stats(predicted, measured).mape;
  return c;
}

/// Error of efficiency `e` on rows it was not fitted on: mean APE, and the time-weighted APE
/// Σ|predicted − measured| / Σ measured.
struct HeldOutError {
  double mape = 0;
  double time_weighted = 0;
};
HeldOutError held_out_error(const std::vector<const validate::FitSample*>& rows,
                            const Efficiency& e) {
  std::vector<double> predicted, measured;
  double abs_error_s = 0, total_s = 0;
  for (const auto* r : rows) {
    predicted.push_back(predict_s(r->op, e));
    measured.push_back(r->measured_s);
    abs_error_s += std::abs(predicted.back() - measured.back());
    total_s += measured.back();
  }
  return {error_stats(predicted, measured).mape, abs_error_s / total_s};
}

json fit_json(const CalibratedEfficiency& c) {
  json j = io::calibration_fit_to_json(c);
  for (auto& item : j.items()) {
    if (item.value().is_number_float()) item.value() = io::round6(item.value().get<double>());
  }
  return j;
}

void write_file(const std::string& path, const json& doc) {
  std::ofstream out(path);
  if (!out) throw FileError(path + ": cannot write file");
  out << doc.dump(2) << "\n";
}

}  // namespace

void setup_fit(CLI::App& app, FitOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "fit", "Refit Tier-2 kernel efficiencies from the train split of measured kernels");
  sub->add_option("paths", o.paths, "Ground-truth files or folders (e.g. ../shared/groundtruth)")
      ->required();
  sub->add_option("--out", o.out, "Folder for <hardware id>.json and tier0.json")
      ->capture_default_str();
  sub->add_option("--min-rows", o.min_rows, "Train rows a group needs to get a fit")
      ->capture_default_str();
  CLI::Option* engines =
      sub->add_flag("--engines", o.engines,
                    "Fit the Tier-1 engine overheads from end-to-end rows instead, writing "
                    "<engine>.json into --out (e.g. presets/engines); run after the kernel fit is "
                    "built in, since the overheads are fitted on top of it");
  CLI::Option* training =
      sub->add_flag("--training", o.training,
                    "Fit the training kernel scale per GPU architecture on every end-to-end "
                    "training row (shrunk toward physics, clamped to [1, 2.5]) and print "
                    "presets/frameworks/fitted.json");
  CLI::Option* request =
      sub->add_flag("--request-overhead", o.request_overhead,
                    "Fit the per-request latency of vLLM's and SGLang's HTTP servers on the "
                    "light-load TTFT rows of the end-to-end files (shrunk toward 0, at most 20 "
                    "ms) and write vllm.json and sglang.json into --out (e.g. presets/engines)");
  request->excludes(training);
  sub->add_flag("--collectives", o.collectives,
                "Fit the collective fabric model of every link type on the train split of the "
                "measured NCCL collectives (scale-up links on one node first, then scale-out "
                "links with them held) and print presets/collectives/fabrics.json")
      ->excludes(engines)
      ->excludes(training)
      ->excludes(request);
  engines->excludes(training);
  engines->excludes(request);
  sub->add_option("--engine-folds", o.engine_folds,
                  "Refit the engine overheads (as --engines) without each source that has train "
                  "rows of them, writing the overheads per source to this file "
                  "(validation/engine_folds.json) for `validate --by-source --engine-folds`")
      ->excludes(engines)
      ->excludes(training);
  sub->add_flag("--gate-only", o.gate_only,
                "With --engine-folds: keep the folds already in the file and recompute only the "
                "gate (which engine fits beat Tier 0 left one source out)");
}

namespace {

/// Mean |ln(predicted / measured)| over the train rows of `engine` with its overheads set to
/// `x` = {step µs, request µs}; also the row count. Absolute, not squared: a few serving rows near
/// saturation miss by several times and would otherwise decide the fit, and the targets are
/// median errors.
std::pair<double, std::size_t> engine_loss(const std::vector<std::string>& files,
                                           const std::string& engine, std::array<double, 3> x,
                                           const std::string& leave_out = {}) {
  validate::Collector collector({});
  collector.record_samples();
  validate::Context ctx(collector, KernelModel{});
  ctx.set_engine_override(validate::EngineOverheads{engine, x[0], x[1], x[2]});
  for (const std::string& file : files) validate::load_file(file, ctx);
  double sum = 0;
  std::size_t n = 0;
  for (const auto& r : collector.engine_samples()) {
    if (r.engine != engine || r.split != Split::train || !r.fits_engine) continue;
    if (!leave_out.empty() && validate::source_of(r.group) == leave_out) continue;
    sum += std::fabs(std::log(r.predicted / r.measured));
    ++n;
  }
  return {n > 0 ? sum / static_cast<double>(n) : 0.0, n};
}

/// Overheads of one engine by coordinate descent, each coordinate searched on a log grid in 25%
/// steps (step and request: 0 and 1 µs to 100 ms; per-kernel cost: the kernels' own (-1), 0 and
/// 0.1 to 50 µs), two rounds: deterministic, and the loss is unimodal in each overhead, since more
/// overhead only ever lengthens every step or request.
/// `best` is the loss at the start point `x`; on return both are the optimum's. `leave_out`: a
/// source whose rows are not fitted on.
void fit_engine(const std::vector<std::string>& files, const std::string& engine,
                std::array<double, 3>& x, double& best, const std::string& leave_out = {}) {
  std::vector<double> grid{0.0}, kernel_grid{-1.0, 0.0};
  for (double v = 1; v <= 1e5; v *= 1.25) grid.push_back(v);
  for (double v = 0.1; v <= 50; v *= 1.25) kernel_grid.push_back(v);
  for (int round = 0; round < 2; ++round) {
    for (int c = 0; c < 3; ++c) {
      for (double v : c == 2 ? kernel_grid : grid) {
        std::array<double, 3> cand = x;
        cand[c] = v;
        const double l = engine_loss(files, engine, cand, leave_out).first;
        if (l < best) {
          best = l;
          x = cand;
        }
      }
    }
  }
}

/// presets/frameworks/fitted.json from the training fit (fit_training_scales): architectures
/// measured by too few sources have no scale of their own and get the unmeasured one.
json fitted_framework(const json& fit) {
  const double attention = fit.at("attention_scale").get<double>();
  json architectures = json::object(), measured = json::object();
  std::set<std::string> sources;
  std::size_t rows = 0;
  for (const auto& [family, a] : fit.at("architectures").items()) {
    measured[family] = {{"rows", a.at("rows")}, {"sources", a.at("sources")}};
    rows += a.at("rows").get<std::size_t>();
    for (const json& s : a.at("sources")) sources.insert(s.get<std::string>());
    if (a.at("compute_scale").is_null()) continue;
    architectures[family] = {{"compute_scale", a.at("compute_scale")},
                             {"attention_scale", a.at("attention_scale")}};
  }
  std::string source_list;
  for (const std::string& s : sources) source_list += (source_list.empty() ? "" : ", ") + s;
  return json{
      {"schema_version", 1},
      {"id", "fitted"},
      {"name", "Trainer constants fitted on end-to-end training runs"},
      {"source",
       "flopcast fit --training on every end-to-end training row of "
       "../shared/groundtruth/e2e (" +
           source_list + ": " + std::to_string(rows) + " rows), each source weighted alike"},
      {"notes",
       "Constants on top of Tier-0 GEMM and elementwise pricing and the Tier-2 attention fits "
       "(Tier 0 where a GPU has none), the same for every trainer (the pytorch_fsdp "
       "and megatron profiles take them too: per-trainer constants fitted on one source each "
       "did not carry over to new sources). attention_scale: trainers' attention "
       "(FlashAttention-2 backward above all; unfused softmax before it) runs that many times "
       "longer than the inference attention kernels measured (or the Tier-0 roofline) price "
       "it. compute_scale per GPU architecture multiplies "
       "every kernel of a micro-batch (launch gaps, unfused elementwise ops, clocks under load). "
       "An architecture measured by fewer than two sources gets `unmeasured` (the geometric mean "
       "of the fitted architectures' scales), with a warning. comm_overlap and step_overhead_ms "
       "are not fitted (1, 0). docs/validation.md reports these constants left one source out. "
       "Regenerate with `flopcast fit --training ../shared/groundtruth/e2e > "
       "presets/frameworks/fitted.json`; do not edit by hand."},
      {"tier", 1},
      {"fit",
       {{"method",
         "attention_scale: the value of 1, 1.25, …, 3 (steps of 0.25) with the least mean "
         "|ln(predicted / measured)| (sources weighted alike), per architecture measured by at "
         "least two sources and over all sources for `unmeasured`; compute_scale of each "
         "architecture "
         "measured by at least two sources: exp of the sum over sources of their mean "
         "ln(measured / predicted) divided by (sources + 1), i.e. shrunk toward physics by one "
         "pseudo-source at 1, clamped to [1, 2.5]"},
        {"command",
         "flopcast fit --training ../shared/groundtruth/e2e > presets/frameworks/fitted.json"},
        {"measured", measured}}},
      {"framework",
       {{"comm_overlap", 1.0},
        {"step_overhead_ms", 0},
        {"architectures", architectures},
        {"unmeasured",
         {{"compute_scale", fit.at("unmeasured_compute_scale")},
          {"attention_scale", attention}}}}}};
}

/// Engine → source → the train rows a fit of that engine's overheads is fitted on. Training
/// rows, rows without an engine, and the generic profile (Tier 0 by definition) are not engine
/// fits.
using EngineRows = std::map<std::string, std::map<std::string, std::size_t>>;
EngineRows engine_train_rows(const std::vector<std::string>& files) {
  validate::Collector probe({});
  probe.record_samples();
  validate::Context ctx(probe, KernelModel{});
  for (const std::string& file : files) validate::load_file(file, ctx);
  EngineRows rows;
  for (const auto& r : probe.engine_samples()) {
    const bool fitted =
        std::any_of(std::begin(validate::kFittedEngines), std::end(validate::kFittedEngines),
                    [&](const char* e) { return r.engine == e; });
    if (r.split == Split::train && fitted && r.fits_engine) {
      ++rows[r.engine][validate::source_of(r.group)];
    }
  }
  return rows;
}

int run_fit_engines(const FitOptions& o) {
  const std::vector<std::string> files = expand_paths(o.paths);
  std::map<std::string, std::size_t> train_rows;
  for (const auto& [engine, by_source] : engine_train_rows(files)) {
    for (const auto& [source, n] : by_source) train_rows[engine] += n;
  }
  for (const auto& [engine, n] : train_rows) {
    if (n < static_cast<std::size_t>(o.min_rows)) {
      std::cerr << "fit: engine " << engine << ": " << n
                << " train rows, fewer than --min-rows; stays Tier 0\n";
      continue;
    }
    json doc = io::preset("engines", engine, "engine");
    const double start_step = doc.at("engine").at("step_overhead_us").get<double>();
    const double start_request = doc.at("engine").at("request_overhead_us").get<double>();
    const double start_kernel = doc.at("engine").value("kernel_fixed_us", -1.0);
    std::array<double, 3> x{start_step, start_request, start_kernel};
    const double before = engine_loss(files, engine, x).first;
    double after = before;
    fit_engine(files, engine, x, after);
    std::cerr << "fit: engine " << engine << ": " << n << " train rows, step " << x[0]
              << " us, request " << x[1] << " us, kernel "
              << (x[2] >= 0 ? std::to_string(x[2]) + " us" : std::string("own"))
              << ", mean |ln error| " << after << " (was " << before << ")\n";
    doc["engine"]["step_overhead_us"] = io::round6(x[0]);
    doc["engine"]["request_overhead_us"] = io::round6(x[1]);
    if (x[2] >= 0) {
      doc["engine"]["kernel_fixed_us"] = io::round6(x[2]);
    } else {
      doc["engine"].erase("kernel_fixed_us");
    }
    doc["tier"] = 1;
    doc["fit"] = json{
        {"method",
         "coordinate descent on a 25% log grid minimizing the mean |ln(predicted / measured)| of "
         "the engine's end-to-end train rows (70% by FNV-1a hash of the row identity; serving "
         "rows through the discrete-event simulator), kernels priced by the embedded Tier-2 "
         "fits"},
        {"command", "flopcast fit --engines ../shared/groundtruth/e2e --out presets/engines"},
        {"train_rows", n},
        {"mean_abs_log_error", io::round6(after)},
        {"mean_abs_log_error_before", io::round6(before)}};
    std::filesystem::create_directories(o.out);
    write_file(o.out + "/" + engine + ".json", doc);
    std::cout << o.out << "/" << engine << ".json\n";
  }
  return kOk;
}

/// The keys of an engine profile that `fit --engines` fits.
constexpr const char* kOverheadKeys[] = {"step_overhead_us", "request_overhead_us",
                                         "kernel_fixed_us"};

std::string engine_preset_path(const std::string& engine) {
  return "presets/engines/" + engine + ".json";  // run from the repository root, as fit --engines
}

/// Median APE of the leave-one-source-out predictions of the rows of `sources`.
double loso_median_ape(const json& report, const std::set<std::string>& sources) {
  std::vector<double> ape;
  for (const json& r : report.at("rows")) {
    if (!sources.count(validate::source_of(r.at("group").get<std::string>()))) continue;
    if (!r.at("loso").is_number()) continue;
    const double m = r.at("measured").get<double>();
    ape.push_back(std::fabs(r.at("loso").get<double>() - m) / m);
  }
  if (ape.empty()) return 0;
  std::sort(ape.begin(), ape.end());
  return percentile(ape, 50);
}

/// The gate of the engine fits: an engine keeps its fitted overheads only where, left one source
/// out, they predict the rows of its sources better (median APE) than the engine at Tier 0 (the
/// generic profile's overheads) does. A losing engine's preset (presets/engines/<engine>.json) is
/// rewritten to Tier 0 with the fitted overheads kept under fit.fitted_overheads; a winning one
/// gets them back. Returns {engine: {sources, refit_median_ape, tier0_median_ape, used}}.
json gate_engines(const std::vector<std::string>& files, const EngineRows& rows,
                  const json& folds_doc) {
  // Every engine at Tier 0 for the sources it has rows of; then one engine at a time refitted.
  const auto only = [&](const std::string& keep) {
    json doc = folds_doc;
    for (auto& [source, engines] : doc.at("folds").items()) {
      for (auto& [engine, fold] : engines.items()) {
        if (engine != keep) fold = nullptr;
      }
    }
    return doc;
  };
  const json tier0 = validate::leave_one_source_out(files, only(""), true);
  const json generic = io::preset("engines", "generic", "engine").at("engine");
  json gate = json::object();
  for (const auto& [engine, by_source] : rows) {
    std::set<std::string> sources;
    bool evaluated = false;  // some fold was refitted, not Tier 0 for lack of rows
    for (const auto& [source, n] : by_source) {
      sources.insert(source);
      const json& f = folds_doc.at("folds").at(source).at(engine);
      evaluated = evaluated || !f.is_null();
    }
    const json refit =
        evaluated ? validate::leave_one_source_out(files, only(engine), true) : tier0;
    const double a = loso_median_ape(refit, sources), b = loso_median_ape(tier0, sources);
    // Never evaluated on a source it was not fitted on: no evidence that it transfers.
    const bool used = evaluated && a < b;
    json list = json::array();
    for (const std::string& s : sources) list.push_back(s);
    gate[engine] = {{"sources", list},
                    {"refit_median_ape", evaluated ? json(io::round6(a)) : json(nullptr)},
                    {"tier0_median_ape", io::round6(b)},
                    {"used", used}};
    std::cerr << "fit: engine " << engine << " left one source out: median APE " << a
              << " refitted, " << b << " at Tier 0: " << (used ? "fit used" : "Tier 0") << "\n";
    const std::string path = engine_preset_path(engine);
    json p = read_json_file(path);
    json& fit = p.at("fit");
    if (!used && !fit.contains("fitted_overheads")) {
      json fitted = json::object();
      for (const char* k : kOverheadKeys) {
        if (p.at("engine").contains(k)) fitted[k] = p.at("engine").at(k);
      }
      fit["fitted_overheads"] = fitted;
    }
    json values = used ? fit.value("fitted_overheads", p.at("engine")) : generic;
    // The API server's own fit (fit --request-overhead), where it passed its gate.
    const bool request_fit_used = fit.contains("request_overhead") &&
                                  fit.at("request_overhead").at("gate").at("used").get<bool>();
    // Losing, the request overhead falls back to that fit, not to 0.
    if (!used && request_fit_used) {
      values["request_overhead_us"] = fit.at("request_overhead").at("request_overhead_us");
    }
    for (const char* k : kOverheadKeys) {
      if (values.contains(k)) {
        p["engine"][k] = values.at(k);
      } else {
        p["engine"].erase(k);
      }
    }
    if (used) fit.erase("fitted_overheads");
    fit["gate"] = gate[engine];
    p["tier"] = used || request_fit_used ? 1 : 0;
    write_file(path, p);
  }
  return gate;
}

/// For each source with train rows of a fitted engine, the engine's overheads refitted without
/// that source: {"<source>": {"<engine>": {overheads, train_rows} or null (the other sources
/// hold fewer than `min_rows` of its rows: Tier 0)}}.
json refit_folds(const std::vector<std::string>& files, const EngineRows& rows, int min_rows) {
  json folds = json::object();
  for (const auto& [engine, by_source] : rows) {
    std::size_t total = 0;
    for (const auto& [source, n] : by_source) total += n;
    // Start from the engine's fitted overheads (kept under fit.fitted_overheads once a gate has
    // set the profile to Tier 0).
    const json preset_doc = read_json_file(engine_preset_path(engine));
    const json profile = preset_doc.at("fit").contains("fitted_overheads")
                             ? preset_doc.at("fit").at("fitted_overheads")
                             : preset_doc.at("engine");
    for (const auto& [source, own] : by_source) {
      if (total - own < static_cast<std::size_t>(min_rows)) {
        std::cerr << "fit: engine " << engine << " without " << source << ": " << total - own
                  << " train rows, fewer than --min-rows; Tier 0\n";
        folds[source][engine] = nullptr;
        continue;
      }
      std::array<double, 3> x{profile.at("step_overhead_us").get<double>(),
                              profile.at("request_overhead_us").get<double>(),
                              profile.value("kernel_fixed_us", -1.0)};
      double loss = engine_loss(files, engine, x, source).first;
      fit_engine(files, engine, x, loss, source);
      std::cerr << "fit: engine " << engine << " without " << source << ": " << total - own
                << " train rows, step " << x[0] << " us, request " << x[1] << " us, kernel " << x[2]
                << " us, mean |ln error| " << loss << "\n";
      json f{{"step_overhead_us", io::round6(x[0])}, {"request_overhead_us", io::round6(x[1])}};
      if (x[2] >= 0) f["kernel_fixed_us"] = io::round6(x[2]);
      f["train_rows"] = total - own;
      folds[source][engine] = f;
    }
  }
  return folds;
}

/// `fit --engine-folds FILE`: the folds of refit_folds and the gate of gate_engines, for
/// `validate --by-source --engine-folds`.
int run_fit_engine_folds(const FitOptions& o) {
  const std::vector<std::string> files = expand_paths(o.paths);
  const EngineRows rows = engine_train_rows(files);
  const json folds = o.gate_only ? read_json_file(o.engine_folds).at("folds")
                                 : refit_folds(files, rows, o.min_rows);
  json doc{{"folds", folds}};
  const json gate = gate_engines(files, rows, doc);
  doc = json{{"method",
              "for each end-to-end source with train rows of a fitted engine, the engine's "
              "step, request and per-kernel overheads refitted as `fit --engines` does, on "
              "every other source's train rows; null: fewer than --min-rows rows elsewhere "
              "(the source is predicted with the engine at Tier 0)"},
             {"command",
              "flopcast fit --engine-folds validation/engine_folds.json "
              "../shared/groundtruth/e2e --min-rows " +
                  std::to_string(o.min_rows)},
             {"gate", gate},
             {"folds", folds}};
  write_file(o.engine_folds, doc);
  std::cout << o.engine_folds << "\n";
  return kOk;
}

/// `fit --request-overhead`: the fitted value into each HTTP engine's profile, with how it was
/// fitted; the engines' other overheads stay as their own fit's gate left them.
int run_fit_request_overhead(const FitOptions& o) {
  const std::vector<std::string> files = expand_paths(o.paths);
  json fit = validate::fit_request_overhead(files);
  fit["method"] =
      "per source, the median of measured minus predicted TTFT (predicted without this overhead) "
      "over its mean and median TTFT rows under light load (arrivals at a rate under 70% of the "
      "analytic saturation rate) of vLLM and SGLang on dense models and GPUs with measured "
      "kernels; the sources' medians summed over their count plus one (a pseudo-source at 0: "
      "shrinkage toward physics), clamped to [0, 20000] us. Used only if, left one source out "
      "(validate --by-source refits it without each source), it predicts every row of the "
      "sources it was fitted on better (median APE) than the engines without it (gate)";
  fit["command"] =
      "flopcast fit --request-overhead ../shared/groundtruth/e2e --out presets/engines";
  // The gate: used only where, left one source out, it predicts the rows of the sources it was
  // fitted on better than the engines without it (Tier 0).
  std::set<std::string> sources;
  for (const auto& [source, m] : fit.at("source_median_residual_us").items()) {
    sources.insert(source);
  }
  const double refit = loso_median_ape(validate::leave_one_source_out(files), sources);
  const double tier0 =
      loso_median_ape(validate::leave_one_source_out(files, nullptr, false, false), sources);
  const bool used = !sources.empty() && refit < tier0;
  fit["gate"] = {{"refit_median_ape", io::round6(refit)},
                 {"tier0_median_ape", io::round6(tier0)},
                 {"used", used}};
  std::cerr << "fit: request overhead " << fit.at("request_overhead_us").get<double>()
            << " us; left one source out, median APE " << refit << " with it, " << tier0
            << " without: " << (used ? "used" : "Tier 0 (0 us)") << "\n";
  std::filesystem::create_directories(o.out);
  for (const char* engine : validate::kHttpEngines) {
    const std::string path = o.out + "/" + engine + ".json";
    json p = io::preset("engines", engine, "engine");
    p["engine"]["request_overhead_us"] = used ? fit.at("request_overhead_us") : json(0);
    p["fit"]["request_overhead"] = fit;
    // A constant fitted on measurements and tested out of source is Tier 1.
    p["tier"] = used || p.at("fit").at("gate").value("used", false) ? 1 : 0;
    write_file(path, p);
    std::cout << path << ": request_overhead_us " << p["engine"]["request_overhead_us"].dump()
              << "\n";
  }
  return kOk;
}

}  // namespace

int run_fit(const FitOptions& o) {
  try {
    if (!o.engine_folds.empty()) return run_fit_engine_folds(o);
    if (o.engines) return run_fit_engines(o);
    if (o.collectives) return run_fit_collectives(o);
    if (o.request_overhead) return run_fit_request_overhead(o);
    if (o.training) {
      std::cout << fitted_framework(validate::fit_training_scales(expand_paths(o.paths))).dump(2)
                << "\n";
      return kOk;
    }
    validate::Collector collector({});
    collector.record_samples();
    KernelModel tier0;
    tier0.use_calibration = false;  // fit from physics, never from an earlier fit
    validate::Context ctx(collector, tier0);
    for (const std::string& file : expand_paths(o.paths)) validate::load_file(file, ctx);

    // Train rows by (hardware, key) and by key alone (the Tier-0 bands span all GPUs); the test
    // rows of each (hardware, key) decide whether its fit is used.
    using Rows = std::vector<const validate::FitSample*>;
    std::map<std::pair<std::string, std::string>, Rows> groups, held_out;
    std::map<std::string, Rows> by_key;
    // A row measured in one framework trains that framework's fit and the pooled one.
    for (const auto& s : collector.samples()) {
      const std::string pooled = s.key.substr(0, s.key.find('@'));
      auto& into = s.split == Split::train ? groups : held_out;
      into[{s.hardware_id, s.key}].push_back(&s);
      if (pooled != s.key) into[{s.hardware_id, pooled}].push_back(&s);
      if (s.split == Split::train) by_key[pooled].push_back(&s);
    }

    std::map<std::string, json> files;  // hardware id -> fits
    for (const auto& [id, rows] : groups) {
      const auto& [hardware, key] = id;
      if (rows.size() < static_cast<std::size_t>(o.min_rows)) {
        std::cerr << "fit: " << hardware << " " << key << ": " << rows.size()
                  << " train rows, fewer than --min-rows; stays Tier 0\n";
        continue;
      }
      std::vector<const validate::FitSample*> subset;
      const std::size_t stride = (rows.size() + kMaxFitRows - 1) / kMaxFitRows;
      for (std::size_t i = 0; i < rows.size(); i += stride) subset.push_back(rows[i]);
      std::vector<double> measured;
      measured.reserve(subset.size());
      for (const auto* r : subset) measured.push_back(r->measured_s);
      const Efficiency start = tier0.tier0(rows.front()->op.op_class);
      const Efficiency e = fit_efficiency(
          [&](const Efficiency& cand, std::size_t i) { return predict_s(subset[i]->op, cand); },
          measured, start, fit_extra(rows.front()->op.calibration_key));
      const CalibratedEfficiency c = describe(rows, e);
      const double tier0_mape = describe(rows, start).train_mape;
      std::cerr << "fit: " << hardware << " " << key << ": " << rows.size()
                << " train rows, train MAPE " << io::round6(100 * c.train_mape) << "% (Tier 0 "
                << io::round6(100 * tier0_mape) << "%)";
      // The fit minimizes log error; where that leaves the mean absolute percentage error above
      // Tier 0's, the five-parameter model does not describe these kernels (several kernel
      // families in one group, say) and the group stays Tier 0.
      if (c.train_mape >= tier0_mape) {
        std::cerr << ": rejected, stays Tier 0\n";
        continue;
      }
      // And on the rows it never saw it must beat Tier 0 per row (MAPE) and not lose to it
      // weighted by time (by more than the ratchet's 1 percentage point): an estimate is a sum
      // of kernel times, dominated by the long kernels, and a fit that follows the many short
      // kernels while missing the long ones makes it worse.
      const auto it = held_out.find(id);
      if (it != held_out.end()) {
        const HeldOutError fit_err = held_out_error(it->second, e);
        const HeldOutError tier0_err = held_out_error(it->second, start);
        std::cerr << "; test MAPE " << io::round6(100 * fit_err.mape) << "% (Tier 0 "
                  << io::round6(100 * tier0_err.mape) << "%), time-weighted "
                  << io::round6(100 * fit_err.time_weighted) << "% (Tier 0 "
                  << io::round6(100 * tier0_err.time_weighted) << "%)";
        if (fit_err.mape >= tier0_err.mape ||
            fit_err.time_weighted > tier0_err.time_weighted + kTimeWeightedTolerance) {
          std::cerr << ": rejected, stays Tier 0\n";
          continue;
        }
      }
      std::cerr << "\n";
      files[hardware][key] = fit_json(c);
    }

    const std::string source =
        "flopcast fit on the train split (70% by FNV-1a hash of each row's identity) of "
        "../shared/groundtruth kernel files (aiconfigurator, vidur)";
    for (const auto& [hardware, fits] : files) {
      const json doc{{"schema_version", 1},
                     {"id", hardware},
                     {"name", "Tier-2 kernel efficiencies of " + hardware},
                     {"source", source},
                     {"notes",
                      "Per op class and math type: compute and bandwidth efficiency, the parallel "
                      "work at which each is half reached, a fixed cost per kernel "
                      "(calibration.hpp), the 10th/90th percentiles of ln(measured/predicted) on "
                      "the train rows and the parallel-work range they cover. Regenerate with "
                      "scripts/fit_calibration.sh; do not edit by hand."},
                     {"fits", fits}};
      write_file(o.out + "/" + hardware + ".json", doc);
      std::cout << o.out << "/" << hardware << ".json\n";
    }
    json bands = json::object();
    for (const auto& [key, rows] : by_key) {
      if (rows.size() < static_cast<std::size_t>(o.min_rows)) continue;
      bands[key] = fit_json(describe(rows, tier0.tier0(rows.front()->op.op_class)));
    }
    write_file(o.out + "/tier0.json",
               json{{"schema_version", 1},
                    {"id", "tier0"},
                    {"name", "Tier-0 residual bands"},
                    {"source", source},
                    {"notes",
                     "The Tier-0 constants themselves (efficiencies unfitted) with the 10th/90th "
                     "percentiles of ln(measured/predicted) over all GPUs' train rows per op class "
                     "and math type: the 80% band of an estimate on hardware without a Tier-2 "
                     "fit. Regenerate with scripts/fit_calibration.sh."},
                    {"fits", bands}});
    std::cout << o.out << "/tier0.json\n";
    return kOk;
  } catch (...) {
    return report_error("table");
  }
}

}  // namespace flopcast::cli
