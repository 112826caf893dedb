// SPDX-License-Identifier: MIT
// Task "search", target "hardware": which GPU, and how many of one node, for an inference request.
// Each GPU type gets the smallest power-of-two tensor parallelism whose memory holds the model,
// the workload's batch and its KV cache, priced by the inference estimate exactly as the request
// with that hardware and layout would be (each candidate carries that request).
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common_json.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "reader.hpp"
#include "specs.hpp"

namespace flopcast::io::detail {

namespace {

/// A number of a response, or +inf where it is null (a figure the estimate could not give).
double number_or_inf(const json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::infinity();
}

}  // namespace

json run_hardware_search(const json& request) {
  ObjectReader r(
      request, "",
      {"schema_version", "task", "search", "model", "precision", "workload", "engine", "max_tier"});
  ObjectReader sr(r.require("search"), "search", {"target", "hardware", "top"});
  const int top = sr.integer("top", 40);
  if (top < 1 || top > 100) fail(sr.child("top"), "must be between 1 and 100", top);
  // The GPU types: the list given (preset ids), else every hardware preset in preset order.
  std::vector<std::string> ids =
      read_list<std::string>(sr, "hardware", [](const json& v, const std::string& path) {
        if (!v.is_string()) fail(path, "must be a hardware preset id", describe_value(v));
        return v.get<std::string>();
      });
  if (ids.empty()) {
    for (const json& doc : detail::preset_list("hardware"))
      ids.push_back(doc.at("id").get<std::string>());
  }

  json base = request;
  base.erase("search");
  base["task"] = "inference";
  using Rank = std::pair<double, double>;
  struct Ranked {
    Rank rank;
    json row;
  };
  std::vector<Ranked> ranked;
  json rejected = json::array();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string path = sr.child("hardware") + "[" + std::to_string(i) + "]";
    const json& hw = preset("hardware", ids[i], path).at("hardware");
    const int per_node = hw.value("gpus_per_node", 1);
    std::string why = "does not fit on one node (" + std::to_string(per_node) +
                      (per_node == 1 ? " GPU)" : " GPUs)");
    bool found = false;
    for (int tp = 1; tp <= per_node && !found; tp *= 2) {
      json q = base;
      q["hardware"] = ids[i];
      q["num_gpus"] = tp;
      q["parallelism"] = {{"tp", tp}};
      json res;
      try {
        res = run_inference(q);
      } catch (const SpecError& e) {
        // A tensor parallelism the model's heads do not divide is not a layout: try the next.
        if (e.path().rfind("parallelism", 0) == 0) continue;
        // A type this GPU does not run (fp8 on an A100, an fp4 KV cache before Blackwell) rules
        // the GPU out; any other error is the request's own and is reported as such.
        if (e.path().rfind("precision", 0) != 0) throw;
        why = e.what();
        break;
      }
      if (!res.at("memory").at("fits").get<bool>()) continue;
      found = true;
      const json band = res.at("interval").value("output_tokens_per_s", json());
      const json usd = res.value("usd_per_million_output_tokens", json());
      // The cost at the low edge of the throughput's 80 % band: a GPU whose measured runs were
      // slower than estimated (AMD: 2-5x) is not ranked on an optimism its measurements refute.
      json usd_high = nullptr;
      if (usd.is_number() && band.is_object() && band.at("low").get<double>() > 0) {
        usd_high = round6(usd.get<double>() * res.at("output_tokens_per_s").get<double>() /
                          band.at("low").get<double>());
      }
      // One row (operator[] rather than an initializer list: the module stays smaller).
      json c = json::object();
      c["hardware"] = ids[i];
      c["name"] = res.at("hardware").at("name");
      c["num_gpus"] = tp;
      c["tp"] = tp;
      for (const char* key :
           {"tier", "tier2_time_share", "ttft_ms", "tpot_ms", "output_tokens_per_s"}) {
        c[key] = res.at(key);
      }
      c["output_tokens_per_s_low"] = band.is_object() ? band.at("low") : json(nullptr);
      c["usd_per_million_output_tokens"] = usd;
      c["usd_per_million_output_tokens_high"] = usd_high;
      const json& energy = res.at("energy");
      c["joules_per_output_token"] =
          energy.is_object() ? energy.at("joules_per_output_token") : json(nullptr);
      c["max_batch_size"] = res.at("memory").at("max_batch_size");
      c["request"] = res.at("request");
      // Cheapest per output token at the band's pessimistic edge first (unpriced after), then the
      // fastest decode: inserted in order, after its equals.
      const Rank rank{number_or_inf(usd_high), number_or_inf(c.at("tpot_ms"))};
      const auto at = std::find_if(ranked.begin(), ranked.end(),
                                   [&](const Ranked& x) { return rank < x.rank; });
      ranked.insert(at, Ranked{rank, std::move(c)});
    }
    if (!found) rejected.push_back({{"hardware", ids[i]}, {"reason", why}});
  }
  const std::size_t considered = ranked.size();
  json candidates = json::array();
  for (std::size_t k = 0; k < ranked.size() && k < static_cast<std::size_t>(top); ++k) {
    candidates.push_back(std::move(ranked[k].row));
  }
  return json{{"schema_version", 1},
              {"task", "search"},
              {"target", "hardware"},
              {"considered", ids.size()},
              {"fitting", considered},
              {"candidates", std::move(candidates)},
              {"rejected", std::move(rejected)}};
}

}  // namespace flopcast::io::detail
