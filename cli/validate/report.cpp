// SPDX-License-Identifier: MIT
#include "validate/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "files.hpp"
#include "flopcast/error.hpp"

namespace flopcast::cli::validate {
namespace {

std::string percent(const json& fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", fraction.get<double>() * 100);
  return buf;
}

/// Columns padded to their widest cell; the first `left` columns left-aligned, the rest right.
std::string aligned(const std::vector<std::vector<std::string>>& rows, std::size_t left) {
  std::vector<std::size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()), 0);
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::ostringstream out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - r[i].size(), ' ');
      if (i > 0) line += "  ";
      line += i < left ? r[i] + pad : pad + r[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  return out.str();
}

}  // namespace

std::string format_table(const json& report) {
  std::ostringstream out;
  std::vector<std::vector<std::string>> rows{
      {"group", "split", "n", "skipped", "MAPE %", "median %", "P90 %", "max %", "bias %"}};
  for (const json& g : report.at("groups")) {
    rows.push_back({g.at("group").get<std::string>(), g.at("split").get<std::string>(),
                    std::to_string(g.at("count").get<std::size_t>()),
                    std::to_string(g.at("skipped").get<std::size_t>()), percent(g.at("mape")),
                    percent(g.at("median_ape")), percent(g.at("p90_ape")), percent(g.at("max_ape")),
                    percent(g.at("bias"))});
  }
  out << aligned(rows, 2);
  if (!report.at("skipped").empty()) {
    out << "\nSkipped rows\n";
    std::vector<std::vector<std::string>> skips{{"source", "reason", "count"}};
    for (const json& s : report.at("skipped")) {
      skips.push_back({s.at("source").get<std::string>(), s.at("reason").get<std::string>(),
                       std::to_string(s.at("count").get<std::size_t>())});
    }
    out << aligned(skips, 2);
  }
  if (!report.at("warnings").empty()) {
    out << "\nWarnings\n";
    std::vector<std::vector<std::string>> warns{{"source", "message", "count"}};
    for (const json& w : report.at("warnings")) {
      warns.push_back({w.at("source").get<std::string>(), w.at("message").get<std::string>(),
                       std::to_string(w.at("count").get<std::size_t>())});
    }
    out << aligned(warns, 2);
  }
  return out.str();
}

std::string format_csv(const json& report) {
  static const char* const keys[] = {"group",   "split",      "count",   "skipped",
                                     "mape",    "median_ape", "p90_ape", "max_ape",
                                     "max_row", "bias",       "tier"};
  std::ostringstream out;
  for (std::size_t i = 0; i < std::size(keys); ++i) out << (i ? "," : "") << keys[i];
  out << "\n";
  for (const json& g : report.at("groups")) {
    for (std::size_t i = 0; i < std::size(keys); ++i) {
      out << (i ? "," : "") << csv_field(g.at(keys[i]));
    }
    out << "\n";
  }
  return out.str();
}

json make_ceilings(const std::map<std::string, double>& test_mape) {
  json groups = json::object();
  for (const auto& [name, mape] : test_mape) {
    // Round up to 3 decimals (the 1e-9 keeps 0.123 from becoming 0.124 through 123.0000000001).
    const double ceiling = std::ceil(mape * 1000 - 1e-9) / 1000;
    groups[name] = json{{"test_mape", ceiling}};
  }
  return json{
      {"schema_version", 1},
      {"note",
       "Test-split MAPE per validation group (fraction), rounded up to 3 decimals. CI fails "
       "when a group gets more than 0.01 (1 percentage point) worse. Update only on purpose: "
       "flopcast validate ../shared/groundtruth --write-ceilings validation/ceilings.json"},
      {"groups", std::move(groups)}};
}

CeilingCheck check_ceilings(const json& ceilings, const std::map<std::string, double>& test_mape,
                            const std::string& file) {
  if (!ceilings.is_object() || !ceilings.contains("groups") || !ceilings.at("groups").is_object()) {
    throw SpecError("", file + ": not a ceilings file (expected an object with \"groups\")");
  }
  const json& groups = ceilings.at("groups");
  CeilingCheck check;
  for (const auto& [name, mape] : test_mape) {
    const auto it = groups.find(name);
    if (it == groups.end()) {
      check.new_groups.push_back(name + ": new group (no ceiling), test MAPE " +
                                 percent(json(mape)) + " %");
      continue;
    }
    const json* c = it->is_object() && it->contains("test_mape") ? &it->at("test_mape") : nullptr;
    if (c == nullptr || !c->is_number()) {
      throw SpecError("", file + ": groups." + name + ".test_mape: must be a number");
    }
    const double ceiling = c->get<double>();
    if (mape > ceiling + kCeilingSlack + 1e-12) {
      check.violations.push_back(name + ": test MAPE " + percent(json(mape)) + " % > ceiling " +
                                 percent(json(ceiling)) + " % + 1 pp");
    } else {
      ++check.within;
    }
  }
  for (const auto& [name, value] : groups.items()) {
    (void)value;
    if (test_mape.count(name) == 0) {
      check.missing.push_back(name + ": has a ceiling but no test rows in this run");
    }
  }
  return check;
}

}  // namespace flopcast::cli::validate
