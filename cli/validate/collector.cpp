// SPDX-License-Identifier: MIT
#include "validate/collector.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "files.hpp"

namespace flopcast::cli::validate {
namespace {

std::size_t index_of(Split s) { return s == Split::train ? 0 : 1; }

}  // namespace

Split Collector::split(std::string_view group, std::string_view source,
                       std::string_view identity) const {
  for (const std::string& h : holdouts_) {
    if (group.find(h) != std::string_view::npos) return Split::test;
  }
  std::string key;
  key.reserve(source.size() + 1 + identity.size());
  key.append(source).append(" ").append(identity);
  return split_of(key);
}

void Collector::write_rows_to(std::ostream* out) {
  rows_out_ = out;
  if (out) *out << "group,split,row,measured,predicted,ape,band_low,band_high,in_band\n";
}

std::string e2e_kind(std::string_view row_kind, std::string_view metric) {
  const auto has = [&](std::string_view s) { return metric.find(s) != std::string_view::npos; };
  if (row_kind == "training") return "training";
  if (has("power_W") || has("joules")) return "energy";
  const bool throughput = has("tokens_per_s") || has("requests_per_s");
  if (row_kind == "inference") {
    return throughput && !has("per_user") ? "inference throughput" : "inference latency";
  }
  if (throughput) return "serving throughput";
  if (has("_p90") || has("_p99")) return "serving tail";
  if (has("_p50")) return "serving p50";
  return "serving mean";
}

void Collector::add(std::string_view source, const std::string& group, std::string_view identity,
                    std::size_t line, double measured, const Outcome& outcome) {
  auto it = groups_.find(group);
  if (it == groups_.end()) it = groups_.emplace(group, Group{}).first;
  const Split s = split(group, source, identity);
  Bucket& b = it->second.split[index_of(s)];
  std::string reason = outcome.skip;
  if (!(std::isfinite(measured) && measured > 0)) reason = "non-positive measurement";
  if (reason.empty() && !std::isfinite(outcome.predicted)) {
    reason = "prediction is not finite";
  }
  if (!reason.empty()) {
    ++b.skipped;
    ++skipped_[{std::string(source), reason}][index_of(s)];
    return;
  }
  b.predicted.push_back(outcome.predicted);
  b.measured.push_back(measured);
  ++predicted_rows_;
  if (rows_out_) {
    // Groups name GPUs as their sources do ("H100 (Grand Teton, 500W power limit)"): quoted.
    const std::string row =
        std::string(source) + ':' + std::to_string(line) + ' ' + std::string(identity);
    *rows_out_ << csv_field(group) << ',' << to_string(s) << ',' << csv_field(row) << ','
               << measured << ',' << outcome.predicted << ','
               << std::fabs(outcome.predicted - measured) / measured;
    // The estimate's own 80 % band (what a user of flopcast sees), where it has one.
    if (std::isfinite(outcome.low) && std::isfinite(outcome.high)) {
      *rows_out_ << ',' << outcome.low << ',' << outcome.high << ','
                 << (measured >= outcome.low && measured <= outcome.high ? "yes" : "no");
    } else {
      *rows_out_ << ",,,";
    }
    *rows_out_ << '\n';
  }
  if (record_ && outcome.op) {
    samples_.push_back(FitSample{outcome.hardware_id, to_string(outcome.op->calibration_key), s,
                                 measured * 1e-6, *outcome.op});
  }
  if (record_ && outcome.collective) {
    collective_samples_.push_back(*outcome.collective);
    collective_samples_.back().split = s;
  }
  if (record_ && !outcome.engine.empty()) {
    engine_samples_.push_back(
        EngineSample{outcome.engine, s, measured, outcome.predicted, group, outcome.kind,
                     std::string(identity), outcome.low, outcome.high, outcome.fits_engine,
                     outcome.light_load_ttft, outcome.mla_moe, outcome.early_engine, outcome.moe});
  }
  b.tier = std::max(b.tier, outcome.tier);
  if (std::isfinite(outcome.low) && std::isfinite(outcome.high) && outcome.high > outcome.low) {
    ++b.banded;
    if (measured >= outcome.low && measured <= outcome.high) ++b.covered;
  }
  const double ape = std::fabs(outcome.predicted - measured) / measured;
  if (ape > b.max_ape) {
    b.max_ape = ape;
    b.max_row.assign(source).append(":").append(std::to_string(line)).append(" ").append(identity);
  }
}

void Collector::skip_file(std::string_view source, const std::string& reason, std::size_t rows) {
  // No identity to split by: reported under every --split.
  skipped_[{std::string(source), reason}][2] += rows;
}

void Collector::warn(std::string_view source, const std::string& message) {
  ++warnings_[{std::string(source), message}];
}

void Collector::file(const std::string& path, const std::string& format, std::size_t rows) {
  files_.push_back(json{{"path", path}, {"format", format}, {"rows", rows}});
}

json Collector::report(std::optional<Split> only) const {
  json groups = json::array();
  for (const auto& [name, g] : groups_) {
    for (Split s : {Split::train, Split::test}) {
      if (only && *only != s) continue;
      const Bucket& b = g.split[index_of(s)];
      if (b.measured.empty()) continue;
      const ErrorStats st = error_stats(b.predicted, b.measured);
      json row{{"group", name},
               {"split", std::string(to_string(s))},
               {"count", st.count},
               {"skipped", b.skipped},
               {"mape", round6(st.mape)},
               {"median_ape", round6(st.median_ape)},
               {"p90_ape", round6(st.p90_ape)},
               {"max_ape", round6(st.max_ape)},
               {"max_row", b.max_row},
               {"bias", round6(st.bias)},
               {"tier", b.tier}};
      // Share of measurements inside the estimate's nominal 80% band (goal 0.75-0.85).
      if (b.banded > 0) {
        row["coverage_80"] = round6(static_cast<double>(b.covered) / static_cast<double>(b.banded));
      }
      groups.push_back(std::move(row));
    }
  }
  json skipped = json::array();
  for (const auto& [key, counts] : skipped_) {
    const std::size_t n = (only ? counts[index_of(*only)] : counts[0] + counts[1]) + counts[2];
    if (n == 0) continue;
    skipped.push_back(json{{"source", key.first}, {"reason", key.second}, {"count", n}});
  }
  json warnings = json::array();
  for (const auto& [key, n] : warnings_) {
    warnings.push_back(json{{"source", key.first}, {"message", key.second}, {"count", n}});
  }
  return json{{"groups", std::move(groups)},
              {"skipped", std::move(skipped)},
              {"warnings", std::move(warnings)},
              {"files", files_}};
}

std::map<std::string, double> Collector::test_mape() const {
  std::map<std::string, double> out;
  for (const auto& [name, g] : groups_) {
    const Bucket& b = g.split[1];
    if (b.measured.empty()) continue;
    out[name] = error_stats(b.predicted, b.measured).mape;
  }
  return out;
}

}  // namespace flopcast::cli::validate
