// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "presets_data.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io {
namespace {

/// A broken embedded preset is a build defect: it raises flopcast::Error naming the file when its
/// kind is first read, and the preset test (which reads every kind) fails.
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

/// The preset kinds, in the order presets() lists them.
constexpr const char* kKinds[] = {"models",  "hardware",   "scenarios",   "setups", "calibration",
                                  "engines", "frameworks", "collectives", "bands"};

/// The embedded presets of one kind, parsed and checked strictly (a broken one raises Error naming
/// its file); an alias names one preset, never another's id or alias.
json load_kind(const std::string& kind) {
  json list = json::array();
  for (std::size_t i = 0; i < detail::kEmbeddedPresetCount; ++i) {
    const detail::EmbeddedPreset& p = detail::kEmbeddedPresets[i];
    if (p.kind != kind) continue;
    const std::string where = std::string("presets/") + p.file;
    json doc;
    try {
      doc = json::parse(p.text);
    } catch (const json::exception& e) {
      throw Error(where + ": invalid JSON: " + e.what());
    }
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
    list.push_back(std::move(doc));
  }
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
  return list;
}

}  // namespace

namespace detail {

std::vector<std::pair<std::string_view, const char*>> embedded_presets(std::string_view kind) {
  std::vector<std::pair<std::string_view, const char*>> out;
  constexpr std::string_view kExt = ".json";
  for (std::size_t i = 0; i < kEmbeddedPresetCount; ++i) {
    const EmbeddedPreset& p = kEmbeddedPresets[i];
    const std::string_view file = p.file;
    if (p.kind != kind || file.size() <= kind.size() + 1 + kExt.size() ||
        file.substr(0, kind.size()) != kind || file[kind.size()] != '/' ||
        file.substr(file.size() - kExt.size()) != kExt) {
      continue;
    }
    out.emplace_back(file.substr(kind.size() + 1, file.size() - kind.size() - 1 - kExt.size()),
                     p.text);
  }
  return out;
}

const json& preset_list(std::string_view kind) {
  // Each kind parsed on first use, once, whichever thread asks first: a request reads only the
  // kinds it needs (an estimate never parses the scenarios or setups).
  // bugprone-exception-escape suspects a json member's noexcept move, as in e2e_serving.cpp.
  // NOLINTNEXTLINE(bugprone-exception-escape)
  struct Kind {
    std::once_flag once;
    json list;
  };
  static std::map<std::string, Kind, std::less<>> kinds = [] {
    std::map<std::string, Kind, std::less<>> m;
    for (const char* k : kKinds) m.try_emplace(k);
    for (std::size_t i = 0; i < kEmbeddedPresetCount; ++i) {
      if (m.find(std::string_view(kEmbeddedPresets[i].kind)) == m.end()) {
        throw Error(std::string("presets/") + kEmbeddedPresets[i].file + ": unknown preset kind " +
                    kEmbeddedPresets[i].kind);
      }
    }
    return m;
  }();
  const auto it = kinds.find(kind);
  if (it == kinds.end()) throw Error("unknown preset kind " + std::string(kind));
  std::call_once(it->second.once, [&] { it->second.list = load_kind(it->first); });
  return it->second.list;
}

}  // namespace detail

const json& presets() {
  static const json all = [] {
    json out = json::object();
    for (const char* k : kKinds) out[k] = detail::preset_list(k);
    return out;
  }();
  return all;
}

const json* find_preset(std::string_view kind, std::string_view name) {
  const json& list = detail::preset_list(kind);
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
  for (const json& p : detail::preset_list(kind)) ids.push_back(p.at("id").get<std::string>());
  std::string rule = "unknown " +
                     std::string(kind == "models"    ? "model"
                                 : kind == "engines" ? "engine"
                                                     : kind) +
                     " preset \"" + std::string(id) + "\"";
  if (auto guess = detail::nearest(id, ids)) rule += " (did you mean \"" + *guess + "\"?)";
  throw SpecError(path, rule);
}

}  // namespace flopcast::io
