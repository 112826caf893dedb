// SPDX-License-Identifier: MIT
// `flopcast presets list|show|schema`.
#include <iostream>

#include "commands.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"

namespace flopcast::cli {

void setup_presets(CLI::App& app, PresetsOptions& o) {
  CLI::App* sub = app.add_subcommand("presets", "List or show the built-in presets");
  sub->require_subcommand(1);
  o.list = sub->add_subcommand("list", "List preset ids");
  o.list->add_option("--kind", o.kind, "models, hardware, setups or scenarios (default: all)")
      ->check(CLI::IsMember({"models", "hardware", "setups", "scenarios"}));
  o.list->add_option("--format", o.format, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  o.show = sub->add_subcommand("show", "Print one preset as JSON");
  o.show->add_option("id", o.id, "Preset id")->required();
  o.show
      ->add_option("--kind", o.kind, "models, hardware, setups or scenarios (default: search all)")
      ->check(CLI::IsMember({"models", "hardware", "setups", "scenarios"}));
  o.schema = sub->add_subcommand(
      "schema",
      "Print the request fields (path, type, unit, flag) and the values of the keys that take "
      "one of a list (as JSON)");
  o.schema->add_flag("--docs", o.docs,
                     "Each field with its default, help and documentation too (the source of "
                     "docs/schema.md's field tables: scripts/schema_tables.mjs)");
}

namespace {

/// schema() with each field's prose from the registry (flopcast/io/fields.hpp).
json schema_with_docs() {
  json out = io::schema();
  json& fields = out.at("fields");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const io::RequestField& f = io::request_fields()[i];
    fields[i]["default"] = f.fallback;
    fields[i]["help"] = f.help;
    fields[i]["doc"] = f.doc;
  }
  return out;
}

}  // namespace

int run_presets(const PresetsOptions& o) {
  try {
    if (o.schema->parsed()) {
      std::cout << (o.docs ? schema_with_docs() : io::schema()).dump(2) << "\n";
      return kOk;
    }
    const json& all = io::presets();
    const std::vector<std::string> kinds =
        o.kind.empty() ? std::vector<std::string>{"models", "hardware", "setups", "scenarios"}
                       : std::vector<std::string>{o.kind};
    if (o.list->parsed()) {
      if (o.format == "json") {
        json out = json::object();
        for (const auto& k : kinds) {
          out[k] = json::array();
          for (const json& p : all.at(k))
            out[k].push_back({{"id", p.at("id")}, {"name", p.at("name")}});
        }
        std::cout << out.dump(2) << "\n";
        return kOk;
      }
      for (const auto& k : kinds) {
        std::cout << k << ":\n";
        for (const json& p : all.at(k)) {
          std::string id = p.at("id").get<std::string>();
          id.resize(std::max<std::size_t>(id.size() + 2, 18), ' ');
          std::cout << "  " << id << p.at("name").get<std::string>() << "\n";
        }
      }
      return kOk;
    }
    for (const auto& k : kinds) {
      for (const json& p : all.at(k)) {
        if (p.at("id") == o.id) {
          std::cout << p.dump(2) << "\n";
          return kOk;
        }
      }
    }
    // Not found: let the lookup raise its "did you mean" error for the most likely kind.
    (void)io::preset(kinds.size() == 1 ? kinds.front() : "models", o.id, "id");
    return kInternal;
  } catch (...) {
    return report_error("table");
  }
}

}  // namespace flopcast::cli
