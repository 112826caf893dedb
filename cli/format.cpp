// SPDX-License-Identifier: MIT
// Human table and CSV renderings of an estimate response.
#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "human.hpp"

namespace flopcast::cli {
namespace {

using human::pad;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// Three significant digits at least, never scientific notation for everyday magnitudes.
std::string num(double v) {
  const double a = v < 0 ? -v : v;
  if (a >= 100) return fixed(v, 0);
  if (a >= 10) return fixed(v, 1);
  if (a >= 1) return fixed(v, 2);
  return fixed(v, 3);
}

}  // namespace

std::string format_table(const json& r) {
  std::ostringstream out;
  const json& req = r.at("request");
  const json& mem = r.at("memory");
  out << r.at("model").at("name").get<std::string>() << " on " << r.at("num_gpus").get<int>()
      << " x " << r.at("hardware").at("name").get<std::string>() << "\n";
  const json& par = req.at("parallelism");
  const int tp = par.at("tp").get<int>();
  out << "tp " << tp;
  if (par.value("dp_attention", false)) {
    // Attention in tp / attention_tp data-parallel groups of attention_tp GPUs.
    const int group = par.value("attention_tp", 1);
    out << " (attention data-parallel: " << tp / group << " groups of " << group << ")";
  }
  out << ", replicas " << r.at("replicas").get<int>() << ", weights "
      << req.at("precision").at("weights").get<std::string>() << ", KV cache "
      << req.at("precision").at("kv_cache").get<std::string>() << ", prompt "
      << req.at("workload").at("prompt_tokens").get<int>() << ", output "
      << req.at("workload").at("output_tokens").get<int>() << ", batch "
      << req.at("workload").at("batch_size").get<int>() << " (tier " << r.at("tier").get<int>();
  if (r.at("tier").get<int>() == 0 && r.at("tier2_time_share").get<double>() > 0) {
    out << "; Tier-2 fits price " << fixed(100 * r.at("tier2_time_share").get<double>(), 0)
        << "% of the time";
  }
  out << ")\n\n";
  if (!mem.at("fits").get<bool>()) {
    // The verdict first, and what would make it fit (as the page says it), before numbers that
    // describe memory the GPUs do not have.
    out << "  DOES NOT FIT in the " << num(mem.at("budget_GB").get<double>())
        << " GB memory budget per GPU";
    if (mem.at("short_GB").get<double>() > 0) {
      out << ": short by " << num(mem.at("short_GB").get<double>()) << " GB";
    }
    out << " (the numbers below assume it did).\n  " << mem.at("to_fit").get<std::string>()
        << "\n\n";
  }

  auto line = [&](const std::string& label, const std::string& value, const std::string& unit) {
    out << "  " << pad(label, 22) << pad(value, 12, true) << " " << unit << "\n";
  };
  const json& band = r.at("interval");
  auto banded = [&](const char* key, const std::string& unit) {
    return unit + "   (80% band " + num(band.at(key).at("low")) + "-" +
           num(band.at(key).at("high")) + ")";
  };
  line("TTFT", num(r.at("ttft_ms")), banded("ttft_ms", "ms"));
  line("TPOT", num(r.at("tpot_ms")), banded("tpot_ms", "ms"));
  line("End-to-end latency", num(r.at("e2e_ms")), banded("e2e_ms", "ms"));
  line("Output throughput", num(r.at("output_tokens_per_s")),
       banded("output_tokens_per_s", "tokens/s"));
  if (r.contains("usd_per_million_output_tokens") &&
      r.at("usd_per_million_output_tokens").is_number()) {
    const json& c = r.at("cost_basis");
    std::string unit =
        "per million output tokens at $" + num(c.at("usd_per_gpu_hour")) + " per GPU-hour";
    if (c.at("usd_per_million_output_tokens_at_max_batch").is_number()) {
      unit += "; $" + num(c.at("usd_per_million_output_tokens_at_max_batch")) + " at batch " +
              num(c.at("max_batch_size")) + ", the largest that fits";
    }
    line("Cost", "$" + num(r.at("usd_per_million_output_tokens")), unit);
    line("Price", "", c.at("basis").get<std::string>());
  }
  if (r.contains("energy") && r.at("energy").is_object()) {
    const json& e = r.at("energy");
    line("Energy", num(e.at("joules_per_output_token")),
         "J per output token (GPUs at " + num(e.at("power_W")) + " of " +
             num(e.at("board_power_W")) + " W board power)");
  }
  line("Prefill throughput", num(r.at("prefill_tokens_per_s")), "tokens/s");

  out << "\nMemory per GPU (budget " << num(mem.at("budget_GB")) << " of "
      << num(mem.at("capacity_GB"))
      << " GB): " << (mem.at("fits").get<bool>() ? "fits" : "DOES NOT FIT") << "\n";
  line("Weights", num(mem.at("weights_GB")), "GB");
  line("KV cache", num(mem.at("kv_cache_GB")), "GB");
  if (mem.at("state_GB").get<double>() > 0) {
    line("Recurrent state", num(mem.at("state_GB")), "GB");  // hybrid models: flat in the context
  }
  line("Activations", num(mem.at("activations_GB")), "GB");
  line("Framework reserve", num(mem.at("reserve_GB")), "GB");
  line("Free", num(mem.at("free_GB")), "GB");
  line("Largest batch", std::to_string(mem.at("max_batch_size").get<int>()), "sequences");
  line("Longest context", std::to_string(mem.at("max_context_tokens").get<int>()), "tokens");

  out << "\nWhere the time goes\n  " << pad("phase", 9) << pad("op", 18) << pad("ms", 10, true)
      << pad("share", 8, true) << "  bound\n";
  for (const json& b : r.at("breakdown")) {
    out << "  " << pad(b.at("phase").get<std::string>(), 9)
        << pad(b.at("op").get<std::string>(), 18)
        << pad(num(b.at("time_ms").get<double>()), 10, true)
        << pad(fixed(100 * b.at("share").get<double>(), 1) + "%", 8, true) << "  "
        << b.at("bound").get<std::string>() << "\n";
  }
  out << "  (decode rows are one average decode step)\n";
  if (!r.at("warnings").empty()) {
    out << "\nWarnings\n";
    for (const json& w : r.at("warnings")) out << "  - " << w.get<std::string>() << "\n";
  }
  out << "\nAssumptions\n";
  for (const json& a : r.at("assumptions")) {
    out << "  " << pad(a.at("name").get<std::string>(), 26) << pad(num(a.at("value")), 8, true)
        << " " << a.at("unit").get<std::string>() << "\n";
  }
  return out.str();
}

std::string format_csv(const json& r) {
  // One header row and one data row of the scalar results; nested objects are flattened with
  // dots (memory.fits). The breakdown follows as its own table after a blank line.
  std::string header, row;
  auto add = [&](const std::string& key, const json& v) {
    header += (header.empty() ? "" : ",") + key;
    row += (row.empty() ? "" : ",") + csv_field(v);
  };
  for (const char* key : {"ttft_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s",
                          "prefill_tokens_per_s", "num_gpus", "replicas", "tier"}) {
    add(key, r.at(key));
  }
  for (const auto& item : r.at("memory").items()) add("memory." + item.key(), item.value());
  std::string out = header + "\n" + row + "\n\nphase,op,time_ms,share,bound,flops,bytes\n";
  for (const json& b : r.at("breakdown")) {
    out += csv_field(b.at("phase")) + "," + csv_field(b.at("op")) + "," +
           csv_field(b.at("time_ms")) + "," + csv_field(b.at("share")) + "," +
           csv_field(b.at("bound")) + "," + csv_field(b.at("flops")) + "," +
           csv_field(b.at("bytes")) + "\n";
  }
  return out;
}

}  // namespace flopcast::cli
