// SPDX-License-Identifier: MIT
// `flopcast estimate` and `flopcast link`: both build the same request document.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <tuple>

#include "commands.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "human.hpp"

namespace flopcast::cli {

json read_request_file(const std::string& path) {
  json doc = read_json_file(path);
  // A scenario preset (presets/scenarios/*.json) holds its request under "request", beside the
  // head every preset has; any other key is an error, as in a request.
  if (!doc.is_object() || doc.contains("task") || !doc.contains("request")) return doc;
  for (const auto& [key, value] : doc.items()) {
    static const std::set<std::string> kHead{"schema_version", "id",    "name",
                                             "source",         "notes", "request"};
    if (!kHead.count(key)) {
      throw SpecError(key,
                      "unknown key in a scenario file (it holds schema_version, id, name, "
                      "source, notes and request)");
    }
  }
  return std::move(doc.at("request"));
}

json read_task_file(const std::string& path, const std::string& task, const std::string& command) {
  json r = read_request_file(path);
  if (!r.is_object()) return r;  // the core names what is wrong with it
  const auto t = r.find("task");
  std::string got = t != r.end() && t->is_string() ? t->get<std::string>() : "inference";
  if (got == "search" && task != "collective") {
    const auto s = r.find("search");
    const json* target = nullptr;
    if (s != r.end() && s->is_object() && s->contains("target")) target = &s->at("target");
    const std::string of = target && target->is_string() ? target->get<std::string>() : "?";
    if (of == task) return r;
    got = "search of " + of;
  }
  if (got != task) {
    throw SpecError("task", "flopcast " + command + " runs task \"" + task + "\"" +
                                (task == "collective" ? "" : " (or a search of it)") +
                                "; run this file with flopcast estimate --request (got \"" + got +
                                "\")");
  }
  return r;
}

void add_network_options(CLI::App& app, NetworkFlags& n) {
  app.add_option("--nics-per-node", n.nics_per_node, "Scale-out NICs per node");
  app.add_option("--nic-bandwidth-Gbps", n.nic_bandwidth_Gbps, "Per NIC, per direction, Gb/s");
  app.add_option("--network-latency-us", n.latency_us, "Per inter-node hop");
}

void put_network(json& r, const NetworkFlags& n) {
  if (n.nics_per_node) r["network"]["nics_per_node"] = *n.nics_per_node;
  if (n.nic_bandwidth_Gbps) r["network"]["nic_bandwidth_Gbps"] = *n.nic_bandwidth_Gbps;
  if (n.latency_us) r["network"]["latency_us"] = *n.latency_us;
}

void add_request_options(CLI::App& app, RequestOptions& o) {
  app.add_option("--request", o.request_file, "Request document (JSON file, or - for stdin)");
  app.add_option("--scenario", o.scenario,
                 "A benchmark scenario preset by id, e.g. i1.1 (`flopcast presets list "
                 "--kind scenarios`): its request")
      ->excludes("--request");
  app.add_option("--setup", o.setup,
                 "A named starting setup by id, e.g. llama-3.1-70b-fp8-8xh100 (`flopcast presets "
                 "list --kind setups`): its request")
      ->excludes("--request")
      ->excludes("--scenario");
  app.add_option("--model", o.model, "Model preset id (see `flopcast presets list`)");
  app.add_option("--model-file", o.model_file, "Model object (JSON file)");
  app.add_option("--hf-config", o.hf_config, "Hugging Face config.json of the model");
  app.add_option("--hardware", o.hardware, "Hardware preset id");
  app.add_option("--hardware-file", o.hardware_file, "Hardware object (JSON file)");
  add_what_if_option(app, o.what_if);
  o.fields.add(app, io::kInferenceField);
}

void add_what_if_option(CLI::App& app, std::vector<std::string>& what_if) {
  const json schema = io::schema();
  std::string keys;
  for (const json& k : schema.at("hardware").at("scale")) {
    keys += (keys.empty() ? "" : ", ") + k.get<std::string>();
  }
  const json& range = schema.at("limits").at("what_if_scale");
  std::ostringstream help;
  help << "With --hardware: scale one of the preset's figures by X (" << range.at(0).get<double>()
       << "-" << range.at(1).get<double>() << "), KEY=X with KEY one of " << keys
       << " (repeatable; e.g. hbm_bandwidth=2)";
  app.add_option("--what-if", what_if, help.str())->delimiter(',');
}

namespace {

/// `{"preset": id, "scale": {KEY: X}}` from `--what-if KEY=X` entries; the core checks the keys
/// and the ranges.
json what_if_hardware(const std::string& preset, const std::vector<std::string>& entries) {
  json scale = json::object();
  for (const std::string& e : entries) {
    const auto eq = e.find('=');
    double x = 0;
    std::size_t used = 0;
    try {
      if (eq != std::string::npos) x = std::stod(e.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || used != e.size() - eq - 1) {
      throw SpecError("--what-if",
                      "must be KEY=X with X a number, e.g. hbm_bandwidth=2 (got \"" + e + "\")");
    }
    scale[e.substr(0, eq)] = x;
  }
  return json{{"preset", preset}, {"scale", scale}};
}

}  // namespace

void put_model_and_hardware(json& r, const ModelHardwareFlags& f, bool weights_flag,
                            bool attention_weights_flag) {
  const int model_sources = !f.model.empty() + !f.model_file.empty() + !f.hf_config.empty();
  if (model_sources != 1) {
    throw SpecError("model", "give exactly one of --model, --model-file, --hf-config");
  }
  const int hardware_sources = !f.hardware.empty() + !f.hardware_file.empty();
  if (f.hardware_elsewhere) {
    if (hardware_sources != 0 || !f.what_if.empty()) {
      throw SpecError("hardware",
                      "give --hardware or --search-hardware / --compare-gpus, not both");
    }
  } else if (hardware_sources != 1) {
    throw SpecError("hardware", "give exactly one of --hardware, --hardware-file");
  }
  if (!f.model.empty()) r["model"] = f.model;
  if (!f.model_file.empty()) r["model"] = read_json_file(f.model_file);
  if (!f.hf_config.empty()) {
    r["model"] = io::model_from_hf_config(read_json_file(f.hf_config), f.hf_config);
    // The importer keeps a quantized checkpoint's types in the model (checkpoint_weights), which
    // the core takes as the precision unless --weights says otherwise; say so where they apply.
    // Training requests have no weight precision: their weights train at the compute precision.
    const json& m = r["model"];
    if (m.contains("checkpoint_weights")) {
      const std::string weights = m.at("checkpoint_weights");
      if (r.at("task") == "training") {
        std::cerr << "flopcast: note: " << f.hf_config << " is quantized (" << weights
                  << "); training prices the weights at --precision (and --lora)\n";
      } else if (!weights_flag) {
        const bool block = m.value("checkpoint_weight_scaling", "tensor") == "block";
        std::cerr << "flopcast: note: weights precision " << weights
                  << (block ? " (scaled per 128x128 block)" : "") << " from " << f.hf_config
                  << " (quantization_config)\n";
        if (!attention_weights_flag && m.contains("checkpoint_attention_weights")) {
          std::cerr << "flopcast: note: attention weights "
                    << m.at("checkpoint_attention_weights").get<std::string>()
                    << " (quantization_config leaves the attention projections unquantized)\n";
        }
      }
    }
  }
  if (!f.what_if.empty() && f.hardware.empty()) {
    throw SpecError("--what-if",
                    "scales a preset: give --hardware, not --hardware-file (a "
                    "hardware file states its figures itself)");
  }
  if (f.hardware_elsewhere) return;
  if (!f.what_if.empty()) {
    r["hardware"] = what_if_hardware(f.hardware, f.what_if);
  } else {
    r["hardware"] = f.hardware.empty() ? read_json_file(f.hardware_file) : json(f.hardware);
  }
}

void note_request_flags(CLI::App& sub, std::string& given, std::vector<std::string> modes) {
  modes.emplace_back("--request");
  modes.emplace_back("--help");
  sub.parse_complete_callback([&sub, &given, modes = std::move(modes)] {
    for (const CLI::Option* opt : sub.get_options()) {
      const std::string name = opt->get_name();
      if (opt->count() > 0 && std::find(modes.begin(), modes.end(), name) == modes.end()) {
        given = name;
        return;
      }
    }
  });
}

void refuse_request_flags(const std::string& request_file, const std::string& given) {
  if (request_file.empty() || given.empty()) return;
  throw SpecError("", "--request cannot be combined with request flags such as " + given +
                          " (the file is the whole request); edit the request file instead");
}

json build_request(const RequestOptions& o, bool hardware_elsewhere) {
  if (!o.request_file.empty()) {
    refuse_request_flags(o.request_file, o.request_flag);
    return read_request_file(o.request_file);
  }
  for (const auto& [flag, kind, id] :
       {std::tuple{"--scenario", "scenarios", &o.scenario}, {"--setup", "setups", &o.setup}}) {
    if (id->empty()) continue;
    if (!o.request_flag.empty()) {
      throw SpecError("", std::string(flag) + " cannot be combined with request flags such as " +
                              o.request_flag + " (the preset is the whole request); write it out " +
                              "with `flopcast presets show " + *id + " --kind " + kind +
                              "` and edit its request");
    }
    return io::preset(kind, *id, flag).at("request");
  }
  json r{{"task", "inference"}};
  put_model_and_hardware(r,
                         {o.model, o.model_file, o.hf_config, o.hardware, o.hardware_file,
                          o.what_if, hardware_elsewhere},
                         o.fields.given("precision.weights"),
                         o.fields.given("precision.attention_weights"));
  o.fields.put(r);
  if (!r.contains("workload")) {
    throw SpecError("workload", "give --prompt-tokens and --output-tokens");
  }
  return r;
}

int report_error(const std::string& format) {
  int code = kInternal;
  io::ErrorInfo info;
  try {
    throw;
  } catch (const FileError& e) {
    info = {"file_error", "", e.what()};
    code = kFileError;
  } catch (...) {
    info = io::describe_current_exception();
    code = info.code == "internal" ? kInternal : kInvalidRequest;
  }
  std::cerr << "flopcast: error: " << info.message << "\n";
  if (format == "json") {
    std::cout << io::error_envelope(info).dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
  }
  return code;
}

void setup_estimate(CLI::App& app, EstimateOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "estimate", "Estimate TTFT, TPOT, throughput and memory of one request (or a batch)");
  add_request_options(*sub, o.request);
  sub->add_option("--format", o.format, "Output: table (default), json, csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--compare-gpus", o.compare_gpus,
                  "Which GPU, how many: every hardware preset (or these ids, comma-separated) at "
                  "the smallest tensor parallelism that fits this model and workload, cheapest "
                  "per output token at the 80% band's low edge first (replaces --hardware, "
                  "--num-gpus, --tp)")
      ->expected(0, 1);
  note_request_flags(*sub, o.request.request_flag,
                     {"--format", "--scenario", "--setup", "--compare-gpus"});
}

namespace {

/// --compare-gpus: the request as task "search", target "hardware".
json compare_request(const EstimateOptions& o) {
  // (A request file, scenario or setup is the whole request: the flag only names the search.)
  json r = build_request(o.request, true);
  if (r.value("task", "inference") != "inference") {
    throw SpecError("task", "--compare-gpus compares GPUs for an inference request (got \"" +
                                r.value("task", "") + "\")");
  }
  for (const char* key : {"hardware", "num_gpus", "parallelism", "cost_per_gpu_hour_usd"}) {
    if (r.contains(key)) {
      throw SpecError(key, std::string("--compare-gpus picks the GPU, its count and tensor "
                                       "parallelism and each GPU's list price itself: leave ") +
                               key + " out");
    }
  }
  r["task"] = "search";
  r["search"] = {{"target", "hardware"}};
  const std::string list = o.compare_gpus.value_or("");
  if (!list.empty() && list != "all") {
    json ids = json::array();
    std::stringstream in(list);
    for (std::string id; std::getline(in, id, ',');) {
      if (!id.empty()) ids.push_back(id);
    }
    r["search"]["hardware"] = ids;
  }
  return r;
}

/// The GPU comparison as a table: one row per GPU type that fits, then the ones that do not.
void print_compare_table(const json& res) {
  using human::duration, human::money, human::pad, human::percent, human::si, human::sig;
  const auto d = [](const json& v) { return v.get<double>(); };
  // A number column `width` wide, at least one space before it.
  const auto cell = [](const std::string& text, std::size_t width) {
    return " " + pad(text, width - 1, true);
  };
  std::cout << res.at("fitting").get<int>() << " of " << res.at("considered").get<int>()
            << " GPU types fit this model and workload within one node; cheapest per output "
               "token at the 80% band's low edge first (kernel fits: the share of the time priced "
               "by measured kernels)\n\n";
  std::cout << "   #  GPU                     GPUs       TTFT       TPOT     tok/s   80% low"
               "   $/Mtok  at 80% low  J/token  kernel fits\n";
  int rank = 0;
  for (const json& c : res.at("candidates")) {
    const std::string gpu = pad(c.at("hardware").get<std::string>(), 22);
    const json& usd = c.at("usd_per_million_output_tokens");
    const json& usd_high = c.at("usd_per_million_output_tokens_high");
    const json& low = c.at("output_tokens_per_s_low");
    const json& joules = c.at("joules_per_output_token");
    std::cout << cell(std::to_string(++rank), 4) << "  " << gpu
              << cell(std::to_string(c.at("num_gpus").get<int>()), 6)
              << cell(duration(d(c.at("ttft_ms")) / 1e3), 11)
              << cell(duration(d(c.at("tpot_ms")) / 1e3), 11)
              << cell(si(d(c.at("output_tokens_per_s"))), 10)
              << cell(low.is_number() ? si(d(low)) : "-", 10)
              << cell(usd.is_number() ? money(d(usd)) : "-", 9)
              << cell(usd_high.is_number() ? money(d(usd_high)) : "-", 12)
              << cell(joules.is_number() ? sig(d(joules)) : "-", 9)
              << cell(percent(d(c.at("tier2_time_share"))), 13) << "\n";
  }
  for (const json& x : res.at("rejected")) {
    std::cout << "  not " << x.at("hardware").get<std::string>() << ": "
              << x.at("reason").get<std::string>() << "\n";
  }
}

}  // namespace

int run_estimate(const EstimateOptions& o) {
  try {
    if (o.compare_gpus) {
      if (o.format == "csv") {
        throw SpecError("--format", "--compare-gpus prints a table or json (got csv)");
      }
      const json response = io::run(compare_request(o));
      if (o.format == "json") {
        std::cout << response.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
      } else {
        print_compare_table(response);
      }
      return kOk;
    }
    const json response = io::run(build_request(o.request));
    // Every task answers here in JSON; the tables of the other tasks are their commands'.
    const std::string task = response.value("task", "inference");
    if (o.format != "json" && task != "inference") {
      const std::string target = response.value("target", "");
      const std::string command =
          task == "training"  ? "train"
          : task == "serving" ? "serve"
          : task == "search"  ? (target == "serving" ? "serve" : "train") + std::string(" --search")
                              : task;
      std::cerr << "flopcast: error: --format " << o.format << " of a \"" << task
                << "\" request: use --format json, or `flopcast " << command
                << " --request FILE` for its table\n";
      return kUsage;
    }
    if (o.format == "json") {
      std::cout << response.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else if (o.format == "csv") {
      std::cout << format_csv(response);
    } else {
      std::cout << format_table(response);
    }
    return kOk;
  } catch (...) {
    return report_error(o.format);
  }
}

void setup_link(CLI::App& app, LinkOptions& o) {
  CLI::App* sub = app.add_subcommand("link", "Print the shareable web-calculator URL of a request");
  add_request_options(*sub, o.request);
  sub->add_option("--base-url", o.base_url, "URL of the web calculator")->capture_default_str();
  note_request_flags(*sub, o.request.request_flag, {"--base-url", "--scenario", "--setup"});
}

int run_link(const LinkOptions& o) {
  try {
    const json request = build_request(o.request);
    (void)io::run(request);  // a link to an invalid request would only show errors
    const std::string url = o.base_url + "#" + io::encode_link(request);  // whole, or nothing
    std::cout << url << "\n";
    return kOk;
  } catch (...) {
    return report_error("table");
  }
}

}  // namespace flopcast::cli
