// SPDX-License-Identifier: MIT
// `flopcast serve`: serving under load, analytic by default, `--simulate` for the event simulator.
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "human.hpp"

namespace flopcast::cli {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

/// A trace file: CSV lines `arrival_s,prompt_tokens,output_tokens`; blank lines and lines starting
/// with '#' are skipped, and so is a first line of column names.
json read_trace(const std::string& path) {
  const std::string text = read_text(path);
  std::istringstream in(text);
  std::string line;
  json rows = json::array();
  int number = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (first && t.rfind("arrival_s", 0) == 0) {
      first = false;
      continue;
    }
    first = false;
    const std::string where = path + ":" + std::to_string(number);
    std::vector<std::string> cells;
    std::stringstream cs(t);
    std::string cell;
    while (std::getline(cs, cell, ',')) cells.push_back(trim(cell));
    if (cells.size() != 3) {
      throw SpecError(
          "workload.arrival.requests",
          where + ": expected arrival_s,prompt_tokens,output_tokens (got \"" + t + "\")");
    }
    try {
      std::size_t used = 0;
      const double arrival = std::stod(cells[0], &used);
      if (used != cells[0].size()) throw std::invalid_argument("arrival");
      const long prompt = std::stol(cells[1], &used);
      if (used != cells[1].size()) throw std::invalid_argument("prompt");
      const long output = std::stol(cells[2], &used);
      if (used != cells[2].size()) throw std::invalid_argument("output");
      rows.push_back(json::array({arrival, prompt, output}));
    } catch (const std::logic_error&) {
      throw SpecError("workload.arrival.requests",
                      where + ": expected a number, an integer and an integer (got \"" + t + "\")");
    }
  }
  return rows;
}

json build_serve_request(const ServeOptions& o) {
  if (!o.request_file.empty()) return read_task_file(o.request_file, "serving", "serve");
  json r{{"task", "serving"}};
  put_model_and_hardware(r,
                         {o.model, o.model_file, o.hf_config, o.hardware, o.hardware_file,
                          o.what_if, !o.search_hardware.empty()},
                         o.fields.given("precision.weights"),
                         o.fields.given("precision.attention_weights"));
  o.fields.put(r);
  // The flags that set more than one key, or read a file (FlagStyle::custom in the registry).
  if (!o.trace_file.empty()) {
    r["workload"]["arrival"]["kind"] = "trace";
    r["workload"]["arrival"]["requests"] = read_trace(o.trace_file);
  } else if (o.fields.given("workload.arrival.concurrency") &&
             !o.fields.given("workload.arrival.kind")) {
    r["workload"]["arrival"]["kind"] = "concurrency";
  } else if (!o.fields.given("workload.arrival.rate_per_s") &&
             !o.fields.given("workload.arrival.concurrency")) {
    throw SpecError("workload.arrival.rate_per_s", "give --rate (or --concurrency, --trace)");
  }
  if (!o.draft.empty()) {
    r["features"]["speculative"][o.draft == "mtp" ? "draft" : "draft_model"] = o.draft;
  }
  return r;
}

std::string fmt(const json& v) {
  if (v.is_null()) return "-";
  std::ostringstream s;
  s << v.get<double>();
  return s.str();
}

/// The value of the result's assumption `name` (null when it has none).
json assumption(const json& r, const char* name) {
  for (const json& a : r.at("assumptions")) {
    if (a.at("name") == name) return a.at("value");
  }
  return nullptr;
}

void print_table(const json& r) {
  using namespace human;
  const auto d = [](const json& v) { return v.get<double>(); };
  // Replicas, or the prefill and decode instances of disaggregated pools.
  const json& split = r.at("request").at("features").value("disaggregated", json());
  const std::string instances = split.is_object()
                                    ? fmt(split.at("prefill_instances")) + " prefill + " +
                                          fmt(split.at("decode_instances")) + " decode instances"
                                    : fmt(r.at("replicas")) + " replica(s)";
  std::cout << "serving (" << r.at("mode").get<std::string>() << "), " << instances << ", engine "
            << r.at("engine").at("name").get<std::string>() << "\n";
  std::cout << "saturated: " << (r.at("saturated").get<bool>() ? "yes" : "no");
  if (!r.at("saturation_rate_per_s").is_null()) {
    std::cout << "  saturation rate: " << sig(d(r.at("saturation_rate_per_s")))
              << " req/s  utilization: " << percent(d(r.at("utilization")));
  }
  // Which pool binds: the one whose rate the system's saturation rate is.
  const json prefill = assumption(r, "prefill_pool_saturation_rate");
  const json decode = assumption(r, "decode_pool_saturation_rate");
  if (prefill.is_number() && decode.is_number()) {
    std::cout << "\n  pools saturate at " << sig(d(prefill)) << " req/s (prefill), "
              << sig(d(decode)) << " req/s (decode)";
  }
  std::cout << "\n\n  metric            mean        p50        p90        p99\n";
  for (const auto& [key, label] :
       {std::pair{"ttft_ms", "TTFT"}, std::pair{"tpot_ms", "TPOT"}, std::pair{"e2e_ms", "E2E"},
        std::pair{"queueing_ms", "queueing"}}) {
    const json& p = r.at(key);
    std::cout << "  " << label;
    for (std::size_t i = std::string(label).size(); i < 14; ++i) std::cout << ' ';
    for (const char* q : {"mean", "p50", "p90", "p99"}) {
      const std::string cell = p.is_null() ? "-" : duration(d(p.at(q)) / 1e3);
      std::cout << std::string(cell.size() < 11 ? 11 - cell.size() : 1, ' ') << cell;
    }
    std::cout << "\n";
  }
  // The 80 % bands the response carries (interval), under the table in its columns' order.
  const json& bands = r.value("interval", json::object());
  const auto range = [&](const json& b) {
    return duration(d(b.at("low")) / 1e3) + " - " + duration(d(b.at("high")) / 1e3);
  };
  // Label column as in the table above, then three left-aligned columns as wide as their widest
  // range plus two spaces ("8.812 min - 11.00 min" is 21 characters: a fixed width ran into it).
  using human::pad;
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  std::vector<std::size_t> widths(3, 0);
  for (const auto& [key, label] :
       {std::pair{"ttft_ms", "TTFT"}, std::pair{"tpot_ms", "TPOT"}, std::pair{"e2e_ms", "E2E"}}) {
    if (!bands.contains(key) || !bands.at(key).is_object()) continue;
    const json& b = bands.at(key);
    std::vector<std::string> cells;
    for (const char* q : {"mean", "p50", "p99"}) {
      cells.push_back(b.contains(q) ? range(b.at(q)) : "-");
      widths[cells.size() - 1] = std::max(widths[cells.size() - 1], cells.back().size() + 2);
    }
    rows.emplace_back(label, std::move(cells));
  }
  if (!rows.empty()) {
    std::cout << "\n  " << pad("80% band", 16) << pad("mean", widths[0]) << pad("p50", widths[1])
              << "p99\n";
  }
  for (const auto& [label, cells] : rows) {
    std::cout << "  " << pad(label, 16) << pad(cells[0], widths[0]) << pad(cells[1], widths[1])
              << cells[2] << "\n";
  }
  const json& t = r.at("throughput");
  std::cout << "\n  throughput: " << sig(d(t.at("requests_per_s"))) << " req/s, "
            << si(d(t.at("input_tokens_per_s"))) << " input tok/s, "
            << si(d(t.at("output_tokens_per_s"))) << " output tok/s";
  if (bands.contains("output_tokens_per_s") && bands.at("output_tokens_per_s").is_object()) {
    const json& b = bands.at("output_tokens_per_s");
    std::cout << " (80% band " << si(d(b.at("low"))) << " - " << si(d(b.at("high"))) << ")";
  }
  std::cout << "\n";
  if (r.contains("usd_per_million_output_tokens") &&
      r.at("usd_per_million_output_tokens").is_number()) {
    const json& c = r.at("cost_basis");
    std::cout << "  cost: " << money(d(r.at("usd_per_million_output_tokens")))
              << " per million output tokens at this load";
    if (c.at("usd_per_million_output_tokens_at_saturation").is_number()) {
      std::cout << ", " << money(d(c.at("usd_per_million_output_tokens_at_saturation")))
                << " at saturation";
    }
    std::cout << " (" << money(d(c.at("usd_per_gpu_hour")))
              << " per GPU-hour: " << c.at("basis").get<std::string>() << ")\n";
  }
  if (r.at("energy").is_object()) {
    const json& e = r.at("energy");
    std::cout << "  energy: " << si_unit(d(e.at("joules_per_output_token")), "J")
              << " per output token at this load (GPUs at " << si_unit(d(e.at("power_W")), "W")
              << " of " << si_unit(d(e.at("board_power_W")), "W") << " board power)\n";
  }
  if (!r.at("goodput").at("fraction").is_null()) {
    std::cout << "  goodput: " << sig(d(r.at("goodput").at("requests_per_s"))) << " req/s ("
              << percent(d(r.at("goodput").at("fraction"))) << " of requests meet the SLOs)\n";
  }
  std::cout << "  mean batch: " << sig(d(r.at("batch").at("mean_size")))
            << " sequences, mean step: "
            << duration(d(r.at("batch").at("mean_step_time_ms")) / 1e3);
  if (!r.at("preemptions").is_null()) std::cout << ", preemptions: " << r.at("preemptions");
  std::cout << "\n";
  for (const auto& w : r.at("warnings")) std::cout << "  warning: " << w.get<std::string>() << "\n";
}

void write_per_request(const json& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw FileError(path + ": cannot write file");
  out << "id,arrival_ms,scheduled_ms,first_token_ms,finish_ms,ttft_ms,e2e_ms,prompt_tokens,"
         "output_tokens,cached_tokens,preemptions,instance\n";
  std::size_t id = 0;
  for (const json& q : r.at("requests")) {
    const bool done = !q.at("finish_ms").is_null();
    const double a = q.at("arrival_ms").get<double>();
    out << id++ << ',' << csv_field(q.at("arrival_ms")) << ',' << csv_field(q.at("scheduled_ms"))
        << ',' << csv_field(q.at("first_token_ms")) << ',' << csv_field(q.at("finish_ms")) << ','
        << (done ? csv_field(io::round6(q.at("first_token_ms").get<double>() - a)) : "") << ','
        << (done ? csv_field(io::round6(q.at("finish_ms").get<double>() - a)) : "") << ','
        << q.at("prompt_tokens") << ',' << q.at("output_tokens") << ',' << q.at("cached_tokens")
        << ',' << q.at("preemptions") << ',' << q.at("instance") << "\n";
  }
  if (!out) throw FileError(path + ": cannot write file");
}

}  // namespace

void setup_serve(CLI::App& app, ServeOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "serve",
      "Serving under load: latency percentiles, throughput and saturation at a request "
      "rate (analytic; --simulate for the discrete-event simulator)");
  sub->add_option("--request", o.request_file, "Serving request document (JSON file, - for stdin)");
  sub->add_option("--model", o.model, "Model preset id");
  sub->add_option("--model-file", o.model_file, "Model object (JSON file)");
  sub->add_option("--hf-config", o.hf_config, "Hugging Face config.json of the model");
  sub->add_option("--hardware", o.hardware, "Hardware preset id");
  sub->add_option("--hardware-file", o.hardware_file, "Hardware object (JSON file)");
  add_what_if_option(*sub, o.what_if);
  // One flag per serving request field (flopcast/io/fields.hpp); the custom ones below.
  o.fields.add(*sub, io::kServingField);
  sub->add_option("--draft", o.draft,
                  "Speculative decoding draft: mtp (the model's own multi-token-prediction layer) "
                  "or a model preset id");
  sub->add_flag("--simulate", o.simulate, "Run the discrete-event simulator");
  sub->add_option("--trace", o.trace_file,
                  "Trace CSV: arrival_s,prompt_tokens,output_tokens per line (implies --simulate)");
  sub->add_option("--per-request", o.per_request_file,
                  "Write every simulated request to this CSV (implies --simulate)");
  sub->add_flag("--search", o.search,
                "Search tp, pp, --max-num-seqs and --max-num-batched-tokens (the ones given are "
                "pinned) with the analytic engine: the setups meeting the SLOs with the most "
                "capacity, and the capacity / per-user speed frontier");
  sub->add_option("--top", o.search_top, "With --search: setups listed (default 10)");
  sub->add_option("--search-weights", o.search_weights,
                  "With --search: weight types to try, e.g. bf16,fp8,int4 (default: the "
                  "request's)")
      ->delimiter(',');
  sub->add_option("--search-kv-cache", o.search_kv_cache,
                  "With --search: KV-cache types to try, e.g. bf16,fp8 (default: the request's)")
      ->delimiter(',');
  sub->add_flag("--search-disaggregated", o.search_disaggregated,
                "With --search: also split the GPUs into prefill and decode instances (pp 1; "
                "--kv-link-GBps sets their link)");
  sub->add_flag("--fewest-gpus", o.fewest_gpus,
                "With --search: the fewest GPUs that serve the load within the SLOs (counts 1-8, "
                "then multiples of 8; --num-gpus is the ceiling, default 256), each setup's "
                "vLLM, SGLang and TensorRT-LLM flags in --format json");
  sub->add_option("--search-hardware", o.search_hardware,
                  "With --search: GPU types to compare at their prices, ID:GPUS:USD_PER_GPU_HOUR, "
                  "e.g. h100-sxm:8:2.49,h200-sxm:8:3.5 (instead of --hardware and --num-gpus; "
                  "ranked by output tokens per dollar)")
      ->delimiter(',');
  sub->add_option("--slo-percentile", o.slo_percentile,
                  "With --search: the percentile the SLOs hold at (default p90)")
      ->check(CLI::IsMember({"p50", "p90", "p99"}));
  sub->add_option("--format", o.format, "Output: table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  note_request_flags(*sub, o.request_flag,
                     {"--format", "--simulate", "--per-request", "--search", "--top",
                      "--slo-percentile", "--search-weights", "--search-kv-cache",
                      "--search-disaggregated", "--search-hardware", "--fewest-gpus"});
}

namespace {

/// --search: the same request as task "search"; the setup flags given pin their dimension
/// (search.tp = [--tp], …), the others are searched.
json build_serve_search_request(const ServeOptions& o) {
  json r = build_serve_request(o);
  if (!o.request_file.empty() && r.value("task", "") == "search") return r;
  json search{{"target", "serving"}};
  if (o.search_top) search["top"] = *o.search_top;
  if (!o.slo_percentile.empty()) search["slo_percentile"] = o.slo_percentile;
  for (const char* key : {"tp", "pp"}) {
    if (r.contains("parallelism") && r["parallelism"].contains(key)) {
      search[key] = json::array({r["parallelism"][key]});
      r["parallelism"].erase(key);
    }
  }
  // --ep pins expert parallelism on (ep = tp, the only ep > 1 the search tries) or off (1);
  // --dp-attention pins DP attention on.
  if (r.contains("parallelism") && r["parallelism"].contains("ep")) {
    search["expert_parallel"] = json::array({r["parallelism"]["ep"].get<int>() > 1});
    r["parallelism"].erase("ep");
  }
  if (r.contains("parallelism") && r["parallelism"].contains("dp_attention")) {
    search["dp_attention"] = json::array({true});
    r["parallelism"].erase("dp_attention");
  }
  if (r.contains("parallelism") && r["parallelism"].empty()) r.erase("parallelism");
  for (const char* key : {"max_num_seqs", "max_num_batched_tokens"}) {
    if (r.contains("engine") && r["engine"].contains(key)) {
      search[key] = json::array({r["engine"][key]});
      r["engine"].erase(key);
    }
  }
  if (!o.search_weights.empty()) search["weights"] = o.search_weights;
  if (!o.search_kv_cache.empty()) search["kv_cache"] = o.search_kv_cache;
  if (o.search_disaggregated) search["disaggregated"] = json::array({false, true});
  if (o.fewest_gpus) search["fewest_gpus"] = true;
  if (!o.search_hardware.empty()) {
    if (r.contains("num_gpus") || r.contains("cost_per_gpu_hour_usd")) {
      throw SpecError(r.contains("num_gpus") ? "--num-gpus" : "--cost-per-gpu-hour-usd",
                      "is given per GPU type in --search-hardware ID:GPUS:USD_PER_GPU_HOUR");
    }
    search["hardware"] = json::array();
    for (const std::string& entry : o.search_hardware) {
      const std::size_t a = entry.find(':'), b = entry.rfind(':');
      std::size_t gpus_end = 0, usd_end = 0;
      json offer;
      try {
        if (a == std::string::npos || a == b) throw std::invalid_argument("parts");
        const std::string gpus = entry.substr(a + 1, b - a - 1), usd = entry.substr(b + 1);
        offer = {{"hardware", entry.substr(0, a)},
                 {"num_gpus", std::stoi(gpus, &gpus_end)},
                 {"cost_per_gpu_hour_usd", std::stod(usd, &usd_end)}};
        if (gpus_end != gpus.size() || usd_end != usd.size()) throw std::invalid_argument("tail");
      } catch (const std::logic_error&) {
        throw SpecError(
            "--search-hardware",
            "each entry must be ID:GPUS:USD_PER_GPU_HOUR, e.g. h100-sxm:8:2.49 (got \"" + entry +
                "\")");
      }
      search["hardware"].push_back(offer);
    }
  }
  r["task"] = "search";
  r["search"] = search;
  return r;
}

void print_search_table(const json& r) {
  const json& q = r.at("request");
  const json& offers = q.at("search").value("hardware", json());
  const std::string on =
      offers.is_array() ? std::to_string(offers.size()) + " GPU types at their prices"
                        : fmt(q.at("num_gpus")) + " x " +
                              (q.at("hardware").is_string() ? q.at("hardware").get<std::string>()
                                                            : std::string("hardware"));
  if (r.contains("num_gpus")) {
    // search.fewest_gpus: the count found (the setups below deploy on it) and those tried.
    std::string tried;
    for (const json& n : r.at("num_gpus_tried")) tried += (tried.empty() ? "" : ", ") + fmt(n);
    std::printf("fewest GPUs meeting the SLOs: %s (of up to %s; counts searched: %s)\n",
                r.at("num_gpus").is_null() ? "none" : fmt(r.at("num_gpus")).c_str(),
                fmt(q.at("num_gpus")).c_str(), tried.c_str());
  }
  const std::string at =
      r.contains("num_gpus") && !r.at("num_gpus").is_null()
          ? fmt(r.at("num_gpus")) + " x " +
                (q.at("hardware").is_string() ? q.at("hardware").get<std::string>()
                                              : std::string("hardware"))
          : on;
  std::printf("serving setups of %s: %s considered, %s keep up with the load, %s meet the SLOs\n",
              at.c_str(), fmt(r.at("evaluated")).c_str(), fmt(r.at("keeping_up")).c_str(),
              fmt(r.at("meeting_slo")).c_str());
  // With GPU types: which one, how many, and the output tokens a dollar buys at saturation.
  const bool priced = offers.is_array();
  const auto row = [priced](const char* label, int rank, const json& c) {
    const json& p = c.at("parallelism");
    // ep, and the redundant expert slots that make it divide the experts: "24+8".
    std::string ep = fmt(p.value("ep", json(1)));
    if (p.contains("redundant_experts")) ep += "+" + fmt(p.at("redundant_experts"));
    // Replicas, or the prefill and decode instances of a disaggregated setup: "1P+3D".
    const json& split = c.value("disaggregated", json());
    const std::string replicas = split.is_object() ? fmt(split.at("prefill_instances")) + "P+" +
                                                         fmt(split.at("decode_instances")) + "D"
                                                   : fmt(c.at("replicas"));
    std::printf("  %-8s %4d", label, rank);
    if (priced) {
      const json& hw = c.at("hardware");
      std::printf(" %-12s %4s %10s %10s", hw.is_string() ? hw.get<std::string>().c_str() : "object",
                  fmt(c.at("num_gpus")).c_str(),
                  human::si(c.at("output_tokens_per_usd").get<double>()).c_str(),
                  human::si(c.at("output_tokens_per_usd_low").get<double>()).c_str());
    }
    std::printf(" %3s %3s %6s %3s %7s %7s %8s %9s %8s %10s %14s %12s %11s %11s\n",
                fmt(p.at("tp")).c_str(), fmt(p.value("pp", json(1))).c_str(), ep.c_str(),
                p.value("dp_attention", false) ? "dp" : "tp",
                c.at("weights").get<std::string>().c_str(),
                c.at("kv_cache").get<std::string>().c_str(), replicas.c_str(),
                fmt(c.at("max_num_seqs")).c_str(), fmt(c.at("max_num_batched_tokens")).c_str(),
                human::sig(c.at("saturation_rate_per_s").get<double>()).c_str(),
                human::si(c.at("capacity_output_tokens_per_s_per_gpu").get<double>()).c_str(),
                human::sig(c.at("tokens_per_s_per_user").get<double>()).c_str(),
                human::sig(c.at("ttft_ms").at("p90").get<double>()).c_str(),
                human::sig(c.at("tpot_ms").at("p90").get<double>()).c_str());
  };
  std::printf("  %-8s %4s", "", "rank");
  // Ranked by the tokens a dollar buys at the low edge of the throughput's 80 % band.
  if (priced) std::printf(" %-12s %4s %10s %10s", "hardware", "gpus", "tok/USD", "80%-low");
  std::printf(" %3s %3s %6s %3s %7s %7s %8s %9s %8s %10s %14s %12s %11s %11s\n", "tp", "pp", "ep",
              "att", "weights", "kv", "replicas", "max_seqs", "budget", "max_req/s",
              "cap_tok/s/GPU", "tok/s/user", "ttft_p90_ms", "tpot_p90_ms");
  int rank = 0;
  for (const json& c : r.at("candidates")) row("best", ++rank, c);
  rank = 0;
  for (const json& c : r.at("frontier")) row("frontier", ++rank, c);
  for (const json& x : r.at("rejected")) {
    std::printf("  rejected %s: %s\n", fmt(x.at("count")).c_str(),
                x.at("reason").get<std::string>().c_str());
  }
  for (const json& w : r.at("warnings"))
    std::printf("  warning: %s\n", w.get<std::string>().c_str());
}

}  // namespace

int run_serve(const ServeOptions& o) {
  try {
    refuse_request_flags(o.request_file, o.request_flag);
    if (!o.search && (!o.search_weights.empty() || !o.search_kv_cache.empty() ||
                      !o.search_hardware.empty() || o.search_disaggregated || o.fewest_gpus)) {
      throw SpecError(!o.search_hardware.empty() ? "--search-hardware"
                      : o.search_disaggregated   ? "--search-disaggregated"
                      : o.fewest_gpus            ? "--fewest-gpus"
                      : o.search_weights.empty() ? "--search-kv-cache"
                                                 : "--search-weights",
                      "needs --search");
    }
    if (!o.search && (o.search_top || !o.slo_percentile.empty())) {
      throw SpecError(o.search_top ? "--top" : "--slo-percentile", "needs --search");
    }
    if (o.search) {
      if (o.simulate || !o.trace_file.empty() || !o.per_request_file.empty()) {
        throw SpecError("--search",
                        "prices every setup with the analytic engine; drop --simulate, --trace "
                        "and --per-request");
      }
      const json r = io::run(build_serve_search_request(o));
      if (o.format == "json") {
        std::cout << r.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
      } else {
        print_search_table(r);
      }
      return kOk;
    }
    json request = build_serve_request(o);
    const bool simulate = o.simulate || !o.trace_file.empty() || !o.per_request_file.empty();
    if (simulate) request["mode"] = "simulate";
    if (!o.per_request_file.empty()) request["output"]["per_request"] = true;
    json response = io::run(request);
    if (!o.per_request_file.empty()) {
      write_per_request(response, o.per_request_file);
      response.erase("requests");
    }
    if (o.format == "json") {
      std::cout << response.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else if (response.contains("candidates")) {
      print_search_table(response);  // a --request file of task "search"
    } else {
      print_table(response);
    }
    return kOk;
  } catch (...) {
    return report_error(o.format);
  }
}

}  // namespace flopcast::cli
