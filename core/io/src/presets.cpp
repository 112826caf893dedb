// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "presets_data.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io {
namespace {

/// Parses and strictly checks every embedded preset once. A broken preset is a build defect:
/// it raises flopcast::Error naming the file, and the preset test fails.
/// `aliases`: lower-case names (letters, digits, '-', '.') other than the preset's id.
void check_aliases(const json& doc) {
  const auto it = doc.find("aliases");
  if (it == doc.end()) return;
  if (!it->is_array()) throw SpecError("aliases", "must be an array of names");
  for (const json& a : *it) {
    const bool ok = a.is_string() && !a.get<std::string>().empty() &&
                    std::all_of(a.get_ref<const std::string&>().begin(),
                                a.get_ref<const std::string&>().end(), [](char c) {
                                  return std::islower(static_cast<unsigned char>(c)) ||
                                         std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
                                         c == '.';
                                });
    if (!ok) {
      throw SpecError("aliases", "must be lower-case names of letters, digits, '-' and '.' (got " +
                                     detail::describe_value(a) + ")");
    }
  }
}

json load_all() {
  json all = {
      {"models", json::array()},     {"hardware", json::array()},    {"scenarios", json::array()},
      {"setups", json::array()},     {"calibration", json::array()}, {"engines", json::array()},
      {"frameworks", json::array()}, {"collectives", json::array()}, {"bands", json::array()}};
  for (std::size_t i = 0; i < detail::kEmbeddedPresetCount; ++i) {
    const detail::EmbeddedPreset& p = detail::kEmbeddedPresets[i];
    const std::string where = std::string("presets/") + p.file;
    json doc;
    try {
      doc = json::parse(p.text);
    } catch (const json::exception& e) {
      throw Error(where + ": invalid JSON: " + e.what());
    }
    const std::string kind = p.kind;
    try {
      if (kind == "models") {
        detail::ObjectReader r(
            doc, "",
            {"schema_version", "id", "name", "source", "notes", "published_params_B",
             "published_active_params_B", "published_params_source", "model"});
        (void)r.number("published_params_B");
        (void)r.string("published_params_source");
        (void)detail::read_model(r.require("model"), "model");
      } else if (kind == "hardware") {
        detail::ObjectReader r(
            doc, "", {"schema_version", "id", "name", "source", "notes", "aliases", "hardware"});
        (void)detail::read_hardware(r.require("hardware"), "hardware");
        check_aliases(doc);
      } else if (kind == "scenarios" || kind == "setups") {
        detail::ObjectReader r(doc, "",
                               {"schema_version", "id", "name", "source", "notes", "request"});
        if (!r.require("request").is_object()) throw SpecError("request", "must be an object");
      } else if (kind == "calibration") {
        (void)detail::read_calibration(doc, "");
      } else if (kind == "engines") {
        (void)detail::read_engine_profile(doc, "");
      } else if (kind == "frameworks") {
        (void)detail::read_framework_profile(doc, "");
      } else if (kind == "collectives") {
        detail::check_collective_fits(doc);
      } else if (kind == "bands") {
        detail::check_bands(doc);
      } else {
        throw Error(where + ": unknown preset kind " + kind);
      }
      detail::ObjectReader head(doc, "",
                                {"schema_version",
                                 "id",
                                 "name",
                                 "source",
                                 "notes",
                                 "published_params_B",
                                 "published_active_params_B",
                                 "published_params_source",
                                 "model",
                                 "hardware",
                                 "request",
                                 "fits",
                                 "tier",
                                 "fit",
                                 "engine",
                                 "fabrics",
                                 "bands",
                                 "framework",
                                 "same_as",
                                 "aliases"});
      if (head.integer("schema_version") != kSchemaVersion) {
        throw SpecError("schema_version", "must be 1");
      }
      const std::string id = head.string("id");
      (void)head.string("name");
      (void)head.string("source");
      (void)head.string("notes");
      if (where.find("/" + id + ".json") == std::string::npos) {
        throw SpecError("id", "must match the file name (got \"" + id + "\")");
      }
    } catch (const SpecError& e) {
      throw Error(where + ": " + e.what());
    }
    all[kind].push_back(std::move(doc));
  }
  // An alias names one preset: never another preset's id or alias.
  for (const auto& [kind, list] : all.items()) {
    std::vector<std::string> names;
    for (const json& p : list) {
      names.push_back(p.at("id").get<std::string>());
      for (const json& a : p.value("aliases", json::array())) names.push_back(a.get<std::string>());
    }
    std::sort(names.begin(), names.end());
    const auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) {
      throw Error("presets/" + kind + ": \"" + *dup + "\" names two presets (an id or an alias)");
    }
  }
  return all;
}

}  // namespace

const json& presets() {
  static const json all = load_all();
  return all;
}

const json* find_preset(std::string_view kind, std::string_view name) {
  const json& list = presets().at(std::string(kind));
  for (const json& p : list) {
    if (p.at("id") == name) return &p;
  }
  // The names people type ("4090", "RTX4090", "h100"): a preset's aliases, in any case.
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const json& p : list) {
    if (p.at("id") == lower) return &p;
    const auto aliases = p.find("aliases");  // read in place: value() would copy the list
    if (aliases == p.end() || !aliases->is_array()) continue;
    for (const json& a : *aliases) {
      if (a == lower) return &p;
    }
  }
  return nullptr;
}

const json& preset(std::string_view kind, std::string_view id, const std::string& path) {
  if (const json* p = find_preset(kind, id)) return *p;
  std::vector<std::string> ids;
  for (const json& p : presets().at(std::string(kind)))
    ids.push_back(p.at("id").get<std::string>());
  std::string rule = "unknown " +
                     std::string(kind == "models"    ? "model"
                                 : kind == "engines" ? "engine"
                                                     : kind) +
                     " preset \"" + std::string(id) + "\"";
  if (auto guess = detail::nearest(id, ids)) rule += " (did you mean \"" + *guess + "\"?)";
  throw SpecError(path, rule);
}

}  // namespace flopcast::io
