// SPDX-License-Identifier: MIT
#pragma once
// What every successful result of the JSON entry point must satisfy, whatever the request: the
// fuzz target traps on a violation, the property test reports it. Header-only (the fuzz build
// links no test library).

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace flopcast::test {

namespace invariants_detail {

using nlohmann::json;

inline std::string non_finite(const json& j, const std::string& path) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) return path + " is not finite";
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (auto e = non_finite(v, path + "." + k); !e.empty()) return e;
    }
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (auto e = non_finite(j[i], path + "[" + std::to_string(i) + "]"); !e.empty()) return e;
    }
  }
  return {};
}

inline bool number(const json& r, const char* key) {
  return r.contains(key) && r.at(key).is_number();
}

/// A number > 0 (strict: a time or a rate of a result that fits).
inline std::string positive(const json& r, const char* key, const std::string& task) {
  if (!number(r, key)) return task + "." + key + " is not a number";
  if (!(r.at(key).get<double>() > 0)) return task + "." + key + " is not > 0";
  return {};
}

/// {low, high} is ordered, not negative and near `point`: a band lies where measured rows lie,
/// which need not hold the estimate (Tier 0 is faster than every measurement), but an 80 % band
/// more than 100x from its estimate is no estimate.
inline std::string holds(const json& band, double point, const std::string& path) {
  if (!band.is_object() || !band.contains("low") || !band.contains("high")) return {};
  const double lo = band.at("low").get<double>(), hi = band.at("high").get<double>();
  if (!(lo <= hi)) return path + ": band low > high";
  if (!(lo >= 0)) return path + ": band low < 0";
  if (point > 0 && (hi < point / 100 || lo > point * 100))
    return path + ": band 100x off its point";
  return {};
}

}  // namespace invariants_detail

/// "" when `result` (the `result` of an ok envelope) is physically possible, else what is not.
inline std::string violation(const nlohmann::json& result) {
  using namespace invariants_detail;
  if (!result.is_object()) return "result is not an object";
  if (auto e = non_finite(result, "result"); !e.empty()) return e;
  const std::string task = result.value("task", std::string());
  const json interval = result.value("interval", json(nullptr));
  std::string e;
  if (task == "inference") {
    for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s"}) {
      if (e = positive(result, k, task); !e.empty()) return e;
      if (interval.is_object() && interval.contains(k)) {
        if (e = holds(interval.at(k), result.at(k).get<double>(), std::string("interval.") + k);
            !e.empty()) {
          return e;
        }
      }
    }
  } else if (task == "training") {
    for (const char* k : {"step_time_s", "tokens_per_s", "mfu", "hfu"}) {
      if (e = positive(result, k, task); !e.empty()) return e;
    }
    if (result.at("mfu").get<double>() > 1) return "training.mfu > 1";
    if (result.at("hfu").get<double>() > 1) return "training.hfu > 1";
    if (interval.is_object()) {
      for (const char* k : {"step_time_s", "tokens_per_s", "mfu"}) {
        if (!interval.contains(k)) continue;
        if (e = holds(interval.at(k), result.at(k).get<double>(), std::string("interval.") + k);
            !e.empty()) {
          return e;
        }
      }
    }
  } else if (task == "collective") {
    // One rank moves nothing: 0 µs. Any more take time.
    const json ranks = result.value("request", json::object())
                           .value("collective", json::object())
                           .value("ranks", json(2));
    if (ranks.is_number() && ranks.get<double>() <= 1) {
      if (!number(result, "time_us") || result.at("time_us").get<double>() != 0) {
        return "collective.time_us of one rank is not 0";
      }
    } else if (e = positive(result, "time_us", task); !e.empty()) {
      return e;
    }
  } else if (task == "serving") {
    const bool fits = result.value("fits", false), saturated = result.value("saturated", true);
    for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms"}) {
      const json& v = result.at(k);
      if (v.is_null()) {
        // Null latencies only where the schema says: no steady state (saturated) or no fit.
        if (fits && !saturated) return std::string("serving.") + k + " is null but not saturated";
        continue;
      }
      for (const char* q : {"mean", "p50", "p90", "p99"}) {
        if (!number(v, q) || v.at(q).get<double>() < 0) {
          return std::string("serving.") + k + "." + q + " is not a number >= 0";
        }
      }
      if (!(v.at("p50").get<double>() <= v.at("p90").get<double>() * (1 + 1e-5) &&
            v.at("p90").get<double>() <= v.at("p99").get<double>() * (1 + 1e-5))) {
        return std::string("serving.") + k + ": percentiles out of order";
      }
      if (interval.is_object() && interval.contains(k)) {
        for (const char* q : {"mean", "p50", "p99"}) {
          if (!interval.at(k).contains(q)) continue;
          if (e = holds(interval.at(k).at(q), v.at(q).get<double>(),
                        std::string("interval.") + k + "." + q);
              !e.empty()) {
            return e;
          }
        }
      }
    }
  } else if (task == "search" && result.value("target", "") == "serving") {
    // Most capacity first, each a setup that keeps up (not saturated, utilization below 1) with
    // positive latencies; every setup considered either meets the SLOs or is counted under a
    // reason; the frontier is not dominated.
    double previous = INFINITY, rejected = 0;
    const json& candidates = result.at("candidates");
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const json& c = candidates[i];
      const std::string at = "search.candidates[" + std::to_string(i) + "]";
      for (const char* k : {"saturation_rate_per_s", "capacity_output_tokens_per_s_per_gpu",
                            "tokens_per_s_per_user"}) {
        if (e = positive(c, k, at); !e.empty()) return e;
      }
      if (c.at("utilization").get<double>() >= 1) return at + ": listed but saturated";
      // A search over several GPU types ranks by output tokens per dollar at the band's low
      // edge (the pessimistic one), one over a single GPU by capacity.
      const char* rank_key = c.contains("output_tokens_per_usd_low") ? "output_tokens_per_usd_low"
                                                                     : "saturation_rate_per_s";
      if (c.at(rank_key).get<double>() > previous) return at + ": not most first";
      previous = c.at(rank_key).get<double>();
    }
    for (const json& r : result.at("rejected")) rejected += r.at("count").get<double>();
    const double meeting = result.at("meeting_slo").get<double>();
    if (meeting < double(candidates.size())) return "search: fewer meeting the SLOs than listed";
    if (meeting + rejected != result.at("evaluated").get<double>()) {
      return "search: evaluated is not meeting + rejected";
    }
    const json& f = result.at("frontier");
    for (std::size_t i = 1; i < f.size(); ++i) {
      // Each faster per user than the one before (equal only after rounding to 6 digits).
      if (f[i].at("tokens_per_s_per_user").get<double>() <
          f[i - 1].at("tokens_per_s_per_user").get<double>()) {
        return "search.frontier[" + std::to_string(i) + "]: dominated";
      }
    }
  } else if (task == "search") {
    // Fastest first, each a layout that fits with a physical step; every layout considered is
    // either one that fit or counted under a reason.
    double previous = 0, rejected = 0;
    const json& candidates = result.at("candidates");
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const json& c = candidates[i];
      const std::string at = "search.candidates[" + std::to_string(i) + "]";
      if (e = positive(c, "step_time_s", at); !e.empty()) return e;
      if (e = positive(c, "mfu", at); !e.empty()) return e;
      if (c.at("mfu").get<double>() > 1) return at + ".mfu > 1";
      if (c.at("step_time_s").get<double>() < previous) return at + ": not fastest first";
      previous = c.at("step_time_s").get<double>();
      if (c.at("memory_GB").get<double>() > c.at("capacity_GB").get<double>() * (1 + 1e-5)) {
        return at + ": listed but does not fit";
      }
    }
    for (const json& r : result.at("rejected")) rejected += r.at("count").get<double>();
    const double fitting = result.at("fitting").get<double>();
    if (fitting < double(candidates.size())) return "search: fewer fitting than listed";
    if (fitting + rejected != result.at("evaluated").get<double>()) {
      return "search: evaluated is not fitting + rejected";
    }
  } else {
    return "result.task is \"" + task + "\"";
  }
  return {};
}

}  // namespace flopcast::test
