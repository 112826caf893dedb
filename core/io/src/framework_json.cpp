// SPDX-License-Identifier: MIT
// Training framework profiles (presets/frameworks/<id>.json): the trainer constants a training
// request's `framework.profile` selects.
#include <map>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "reader.hpp"
#include "specs.hpp"

// The typed API defined here is public (flopcast/io/specs.hpp); its bodies use the detail
// helpers of this file.
namespace flopcast::io {
using namespace detail;
}  // namespace flopcast::io

namespace flopcast::io::detail {
namespace {

/// One scale, checked against its physical range: trainers never run kernels faster than the
/// kernel model prices them, nor several times slower.
double scale(const ObjectReader& r, const char* key, double lo, double hi) {
  const double v = r.number(key);
  if (!(v >= lo && v <= hi)) {
    fail(r.child(key), "must be between " + format_number(lo) + " and " + format_number(hi), v);
  }
  return v;
}

double compute_scale(const ObjectReader& r) { return scale(r, "compute_scale", 1.0, 2.5); }
double attention_scale(const ObjectReader& r) { return scale(r, "attention_scale", 1.0, 3.0); }

TrainingFramework read_constants(const ObjectReader& r) {
  TrainingFramework f;
  f.comm_overlap = r.number("comm_overlap");
  if (!(f.comm_overlap >= 0 && f.comm_overlap <= 1)) {
    fail(r.child("comm_overlap"), "must be between 0 and 1", f.comm_overlap);
  }
  const double overhead_ms = r.number("step_overhead_ms");
  if (!(overhead_ms >= 0)) fail(r.child("step_overhead_ms"), "must be >= 0", overhead_ms);
  f.step_overhead_s = overhead_ms * kMilli;
  const json& archs = r.require("architectures");
  ObjectReader ar(
      archs, r.child("architectures"),
      {"volta", "turing", "ampere", "ada", "hopper", "blackwell", "cdna2", "cdna3", "cdna4"});
  for (const auto& item : archs.items()) {
    ObjectReader sr(item.value(), ar.child(item.key().c_str()),
                    {"compute_scale", "attention_scale"});
    f.scales.push_back({item.key(), compute_scale(sr), attention_scale(sr)});
  }
  ObjectReader ur(r.require("unmeasured"), r.child("unmeasured"),
                  {"compute_scale", "attention_scale"});
  f.unmeasured_scale = compute_scale(ur);
  f.unmeasured_attention = attention_scale(ur);
  return f;
}

std::map<std::string, TrainingFramework, std::less<>> read_all() {
  std::map<std::string, TrainingFramework, std::less<>> m;
  std::map<std::string, std::string> aliases;  // id -> the profile whose constants it takes
  for (const json& doc : detail::preset_list("frameworks")) {
    // preset_list has read every file of the kind strictly already (read_framework_profile).
    if (doc.contains("same_as")) {
      aliases[doc.at("id").get<std::string>()] = doc.at("same_as").get<std::string>();
    } else {
      TrainingFramework f = read_framework_profile(doc, "");
      m.emplace(f.id, std::move(f));
    }
  }
  for (const auto& [id, target] : aliases) {
    auto it = m.find(target);
    if (it == m.end()) {
      throw Error("presets/frameworks/" + id + ".json: same_as: unknown framework profile (got \"" +
                  target + "\")");
    }
    TrainingFramework f = it->second;
    f.id = id;
    m.emplace(id, std::move(f));
  }
  return m;
}

const std::map<std::string, TrainingFramework, std::less<>>& profiles() {
  static const auto all = read_all();
  return all;
}

}  // namespace

}  // namespace flopcast::io::detail

namespace flopcast::io {
TrainingFramework read_framework_profile(const json& doc, const std::string& path) {
  ObjectReader head(
      doc, path,
      {"schema_version", "id", "name", "source", "notes", "tier", "fit", "framework", "same_as"});
  if (head.find("same_as")) {
    if (head.find("framework") || head.find("tier") || head.find("fit")) {
      throw SpecError(head.child("same_as"),
                      "a profile that takes another's constants has no tier, fit or framework");
    }
    (void)head.string("same_as");
    TrainingFramework f;
    f.id = head.string("id");
    return f;
  }
  ObjectReader r(head.require("framework"), head.child("framework"),
                 {"comm_overlap", "step_overhead_ms", "architectures", "unmeasured"});
  TrainingFramework f = read_constants(r);
  f.id = head.string("id");
  f.tier = head.integer("tier");
  if (f.tier != 0 && f.tier != 1) fail(head.child("tier"), "must be 0 or 1", f.tier);
  if (f.tier == 1) {
    if (!head.find("fit")) {
      throw SpecError(head.child("fit"), "a Tier-1 profile must say how it was fitted");
    }
    ObjectReader fit(head.require("fit"), head.child("fit"), {"method", "command", "measured"});
    (void)fit.string("method");
    (void)fit.string("command");
  }
  return f;
}

const TrainingFramework* framework_profile(std::string_view id) {
  const auto& all = profiles();
  const auto it = all.find(id);
  return it == all.end() ? nullptr : &it->second;
}

std::vector<std::string> framework_profile_ids() {
  std::vector<std::string> ids;
  for (const auto& [id, f] : profiles()) ids.push_back(id);
  return ids;
}

}  // namespace flopcast::io
