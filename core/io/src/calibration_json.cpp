// SPDX-License-Identifier: MIT
// Tier-2 calibration files (presets/calibration/<hardware id>.json, written by `flopcast fit`) and
// the Tier-0 residual bands (presets/calibration/tier0.json).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "reader.hpp"
#include "specs.hpp"

// The typed API defined here is public (flopcast/io/specs.hpp); its bodies use the detail
// helpers of this file.
namespace flopcast::io {
using namespace detail;
}  // namespace flopcast::io

namespace flopcast::io {
Calibration read_calibration(const json& doc, const std::string& path) {
  ObjectReader r(doc, path, {"schema_version", "id", "name", "source", "notes", "fits"});
  Calibration c;
  c.source = r.string("source");
  const json& fits = r.require("fits");
  if (!fits.is_object()) throw SpecError(r.child("fits"), "must be an object");
  for (const auto& item : fits.items()) {
    const std::string p = r.child("fits") + "." + item.key();
    ObjectReader f(item.value(), p,
                   {"compute_efficiency", "compute_half_units", "memory_efficiency",
                    "memory_half_units", "fixed_us", "group_us", "block_us", "log_residual_p10",
                    "log_residual_p90", "min_units", "max_units", "train_rows", "train_mape"});
    CalibratedEfficiency e;
    e.efficiency.compute = f.number("compute_efficiency");
    e.efficiency.compute_half_units = f.number("compute_half_units");
    e.efficiency.memory = f.number("memory_efficiency");
    e.efficiency.memory_half_units = f.number("memory_half_units");
    e.efficiency.fixed_s = f.number("fixed_us") * kMicro;
    e.efficiency.group_s = f.number("group_us", 0.0) * kMicro;
    e.efficiency.block_s = f.number("block_us", 0.0) * kMicro;
    e.log_residual_p10 = f.number("log_residual_p10");
    e.log_residual_p90 = f.number("log_residual_p90");
    e.min_units = f.number("min_units");
    e.max_units = f.number("max_units");
    e.train_rows = f.integer("train_rows");
    e.train_mape = f.number("train_mape");
    if (!(e.efficiency.compute > 0) || !(e.efficiency.memory > 0) ||
        e.efficiency.compute_half_units < 0 || e.efficiency.memory_half_units < 0 ||
        e.efficiency.fixed_s < 0 || e.efficiency.group_s < 0 || e.efficiency.block_s < 0 ||
        e.log_residual_p10 > e.log_residual_p90) {
      throw SpecError(p, "is not a valid efficiency fit");
    }
    const auto key = parse_calibration_key(item.key());
    if (!key) throw SpecError(p, "is not an op class and math type such as gemm/bf16");
    c.fits[*key] = e;
  }
  c.build_index();
  return c;
}

json calibration_fit_to_json(const CalibratedEfficiency& e) {
  json j{{"compute_efficiency", e.efficiency.compute},
         {"compute_half_units", e.efficiency.compute_half_units},
         {"memory_efficiency", e.efficiency.memory},
         {"memory_half_units", e.efficiency.memory_half_units},
         {"fixed_us", e.efficiency.fixed_s / kMicro},
         {"log_residual_p10", e.log_residual_p10},
         {"log_residual_p90", e.log_residual_p90},
         {"min_units", e.min_units},
         {"max_units", e.max_units},
         {"train_rows", e.train_rows},
         {"train_mape", e.train_mape}};
  if (e.efficiency.group_s > 0) j["group_us"] = e.efficiency.group_s / kMicro;
  if (e.efficiency.block_s > 0) j["block_us"] = e.efficiency.block_s / kMicro;
  return j;
}

}  // namespace flopcast::io

namespace flopcast::io::detail {

namespace {

/// The embedded calibration file of `id` (the hardware id, or "tier0"), parsed and read strictly
/// on its first use, once, whichever thread asks first (a request reads its own GPU's file, not
/// every GPU's); nullptr when there is none. A broken file raises Error naming it (the preset
/// test reads every one through preset_list).
std::shared_ptr<const Calibration> calibration_of(std::string_view id) {
  struct File {
    std::string where;
    const char* text = nullptr;
    std::once_flag once;
    std::shared_ptr<const Calibration> fits;
  };
  static std::map<std::string, File, std::less<>> files = [] {
    std::map<std::string, File, std::less<>> m;
    for (const auto& [name, text] : embedded_presets("calibration")) {
      File& f = m[std::string(name)];
      f.where = "presets/calibration/" + std::string(name) + ".json";
      f.text = text;
    }
    return m;
  }();
  const auto it = files.find(id);
  if (it == files.end()) return nullptr;
  File& f = it->second;
  std::call_once(f.once, [&f] {
    json doc;
    try {
      doc = json::parse(f.text);
    } catch (const json::exception& e) {
      throw Error(f.where + ": invalid JSON: " + e.what());
    }
    try {
      f.fits = std::make_shared<const Calibration>(read_calibration(doc, "calibration"));
    } catch (const SpecError& e) {
      throw Error(f.where + ": " + e.what());
    }
  });
  return f.fits;
}

}  // namespace

}  // namespace flopcast::io::detail

namespace flopcast::io {
std::shared_ptr<const Calibration> calibration_for(const std::string& hardware_id) {
  if (hardware_id == "tier0") return nullptr;
  return detail::calibration_of(hardware_id);
}

}  // namespace flopcast::io

namespace flopcast::io::detail {

void check_bands(const json& doc) {
  ObjectReader r(doc, "", {"schema_version", "id", "name", "source", "notes", "bands"});
  const json& bands = r.require("bands");
  if (!bands.is_object()) throw SpecError("bands", "must be an object");
  for (const auto& [kind, b] : bands.items()) {
    ObjectReader br(b, "bands." + kind,
                    {"slow_p10", "slow_p90", "tail_percent", "scale", "symmetric", "about_estimate",
                     "sources", "rows", "coverage_loso", "slow_median"});
    const double lo = br.number("slow_p10"), hi = br.number("slow_p90");
    if (!(lo <= hi)) fail("bands." + kind + ".slow_p10", "must be <= slow_p90", lo);
  }
}

}  // namespace flopcast::io::detail

namespace flopcast::io {
std::optional<E2EBand> e2e_band(const std::string& kind, bool tier0) {
  static const json bands = [] {
    for (const json& doc : detail::preset_list("bands")) {
      if (doc.at("id") == "e2e") return doc.at("bands");
    }
    return json::object();
  }();
  const auto it = bands.find(tier0 ? kind + "@tier0" : kind);
  if (it == bands.end()) return std::nullopt;
  const auto number = [&](const char* key) {
    const json& v = it->value(key, json());
    return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
  };
  E2EBand b{it->at("slow_p10").get<double>(), it->at("slow_p90").get<double>(),
            number("coverage_loso"), number("slow_median")};
  b.rows = it->value("rows", 0);
  b.sources = it->value("sources", 0);
  return b;
}

std::string e2e_band_kind(const std::string& kind, const std::string& vendor, bool mla_moe,
                          bool early_engines, bool moe) {
  if (kind == "training") return moe ? "training (moe)" : kind;
  if (vendor == "amd") return kind + " (amd)";
  // MoE max-throughput rows scatter twice as wide as dense ones (expert routing, attention DP):
  // banded apart, the dense band is sharp and the MoE band says how far off MoE can be.
  if (!mla_moe) return moe && kind == "inference throughput" ? kind + " (moe)" : kind;
  return kind + (early_engines ? " (mla-moe, early-2025 engines)" : " (mla-moe)");
}

std::optional<E2EBand> e2e_band(const std::string& kind, const HardwareSpec& hw,
                                const ModelSpec& model, bool tier0) {
  return e2e_band(
      e2e_band_kind(kind, hw.vendor, model.is_mla() && model.is_moe(), false, model.is_moe()),
      tier0);
}

void warn_early_mla_engines(const std::string& kind, const HardwareSpec& hw, const ModelSpec& model,
                            std::vector<std::string>& warnings) {
  if (!model.is_mla() || !model.is_moe() || hw.vendor == "amd") return;
  const auto b = e2e_band(e2e_band_kind(kind, hw.vendor, true, true), false);
  if (!b || !std::isfinite(b->slow_median)) return;
  // Slowness is ln(measured time / predicted time): above 0, the engines were slower.
  const double times = std::exp(std::fabs(b->slow_median));
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", times);
  warnings.push_back(
      "MLA + MoE models on the engine releases of early 2025 (SGLang <= 0.4.3, vLLM <= 0.7, "
      "TensorRT-LLM <= 0.18) measured a median " +
      std::string(buf) + "x " + (b->slow_median >= 0 ? "slower" : "faster") + " than estimated (" +
      kind + ", " + std::to_string(b->rows) + " rows of " + std::to_string(b->sources) +
      (b->sources == 1 ? " source" : " sources") +
      ", docs/validation.md); this estimate, and its band where it has one, is for later "
      "releases");
}

void warn_band_coverage(const std::string& figure, const E2EBand& band,
                        std::vector<std::string>& warnings) {
  constexpr double kMinBandCoverage = 0.73;  // the target's lower edge (issue 9)
  if (std::isnan(band.coverage_loso) && band.sources == 1) {
    warnings.push_back("the 80% band of " + figure + " is the spread of " +
                       std::to_string(band.rows) +
                       " measured rows of one source: how much of another source it holds is "
                       "not measured (docs/validation.md); read it as indicative");
    return;
  }
  if (!(band.coverage_loso < kMinBandCoverage)) return;
  warnings.push_back("the 80% band of " + figure + " held " +
                     std::to_string(static_cast<int>(std::lround(band.coverage_loso * 100))) +
                     "% of the measured rows of sources it was not built from (target 80%, "
                     "docs/validation.md): read it as indicative");
}

}  // namespace flopcast::io

namespace flopcast::io::detail {

double band_edge_factor(const E2EBand& band, bool rate, bool low) {
  // Where the measured rows lie: where they all lean one way (Tier 0 is faster than every
  // measurement) the band lies on that side of the estimate, not from it (an edge at the estimate
  // would say nothing on that side).
  const double p10 = band.slow_p10, p90 = band.slow_p90;
  // slow_* is log(measured / estimate) of a time; a rate's edges are the times' mirrored.
  return std::exp(low ? (rate ? -p90 : p10) : (rate ? -p10 : p90));
}

json band_json(double value, const E2EBand& band, bool rate) {
  return json{{"low", round6(value * band_edge_factor(band, rate, true))},
              {"high", round6(value * band_edge_factor(band, rate, false))}};
}

}  // namespace flopcast::io::detail

namespace flopcast::io {
const Calibration* tier0_residuals() {
  // The file lives as long as the process (a function-local static holds it).
  return detail::calibration_of("tier0").get();
}

}  // namespace flopcast::io
