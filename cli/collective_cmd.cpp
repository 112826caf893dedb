// SPDX-License-Identifier: MIT
// `flopcast collective`: one collective, or a sweep of sizes (size -> time, bus bandwidth) for
// plots. Builds a `task: "collective"` request and runs it through io::run like every front end.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"

namespace flopcast::cli {
namespace {

std::string size_check(const std::string& text) {
  std::string why;
  return io::parse_size(text, why) ? std::string() : why;
}

std::string sweep_check(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return "must be FROM:TO, e.g. 1KiB:1GiB (got \"" + text + "\")";
  std::string why;
  const auto lo = io::parse_size(text.substr(0, colon), why);
  if (!lo) return why;
  const auto hi = io::parse_size(text.substr(colon + 1), why);
  if (!hi) return why;
  if (!(*lo > 0) || *hi < *lo) {
    return "needs 0 < FROM <= TO (got \"" + text + "\")";
  }
  if (std::log2(*hi / *lo) > 63) return "spans more than 64 doublings (got \"" + text + "\")";
  return "";
}

json base_request(const CollectiveOptions& o) {
  if (!o.request_file.empty()) {
    refuse_request_flags(o.request_file, o.request_flag);
    return read_task_file(o.request_file, "collective", "collective");
  }
  json r{{"task", "collective"}};
  if (!o.hardware_file.empty()) {
    r["hardware"] = read_json_file(o.hardware_file);
  } else {
    r["hardware"] = o.hardware;
  }
  json c{{"op", o.op}, {"ranks", o.ranks}};
  if (!o.algorithm.empty()) c["algorithm"] = o.algorithm;
  r["collective"] = c;
  if (o.gpus_per_node) r["gpus_per_node"] = *o.gpus_per_node;
  put_network(r, o.network);
  if (o.max_tier) r["max_tier"] = *o.max_tier;
  return r;
}

const char* const kColumns[] = {
    "bytes",     "time_us",      "algorithm_bandwidth_GBps", "bus_bandwidth_GBps",
    "algorithm", "crosses_nodes"};

json point_of(const json& response) {
  json p;
  const double b = response.at("request").at("collective").at("bytes").get<double>();
  p["bytes"] = b == std::floor(b) && b < 9e15 ? json(static_cast<std::int64_t>(b)) : json(b);
  for (const char* k : kColumns) {
    if (std::string(k) != "bytes") p[k] = response.at(k);
  }
  return p;
}

std::string cell(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void print_points(const std::vector<json>& points, const std::string& format) {
  if (format == "csv") {
    std::string header;
    for (const char* k : kColumns) header += (header.empty() ? "" : ",") + std::string(k);
    std::cout << header << "\n";
    for (const json& p : points) {
      std::string row;
      for (const char* k : kColumns) row += (row.empty() ? "" : ",") + csv_field(p.at(k));
      std::cout << row << "\n";
    }
    return;
  }
  std::printf("%14s %14s %14s %14s  %s\n", "bytes", "time_us", "algbw_GBps", "busbw_GBps",
              "algorithm");
  for (const json& p : points) {
    std::printf("%14s %14s %14s %14s  %s%s\n", cell(p.at("bytes")).c_str(),
                cell(p.at("time_us")).c_str(), cell(p.at("algorithm_bandwidth_GBps")).c_str(),
                cell(p.at("bus_bandwidth_GBps")).c_str(), cell(p.at("algorithm")).c_str(),
                p.at("crosses_nodes").get<bool>() ? " (crosses nodes)" : "");
  }
}

}  // namespace

void setup_collective(CLI::App& app, CollectiveOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "collective", "Time and bus bandwidth of one NCCL-style collective, or a sweep of sizes");
  sub->add_option("--request", o.request_file, "A task \"collective\" request (file or -)");
  sub->add_option("--op", o.op,
                  "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, "
                  "send_recv");
  sub->add_option("--bytes", o.bytes, "Message size (nccl-tests size): 4096, 64MiB, 1GB, ...")
      ->check(CLI::Validator(size_check, "SIZE"));
  sub->add_option("--sweep", o.sweep, "Sizes FROM:TO, doubling (e.g. 1KiB:1GiB)")
      ->check(CLI::Validator(sweep_check, "FROM:TO"));
  sub->add_option("--ranks", o.ranks, "GPUs taking part")->capture_default_str();
  sub->add_option("--hardware", o.hardware, "Hardware preset id")->capture_default_str();
  sub->add_option("--hardware-file", o.hardware_file, "Hardware object (JSON file)");
  sub->add_option("--algorithm", o.algorithm, "automatic (default), ring, tree, hierarchical");
  sub->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node (default: the hardware's)");
  add_network_options(*sub, o.network);
  sub->add_option("--max-tier", o.max_tier, "2: fitted fabric models (default); 0: Tier 0");
  sub->add_option("--format", o.format, "Output: table (default), json, csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  // With --request the file is the collective; only its sizes and the output may be given.
  note_request_flags(*sub, o.request_flag, {"--bytes", "--sweep", "--format"});
}

int run_collective(const CollectiveOptions& o) {
  try {
    json request = base_request(o);
    std::vector<double> sizes;
    if (!o.sweep.empty()) {
      std::string why;
      const std::size_t colon = o.sweep.find(':');
      const double lo = *io::parse_size(o.sweep.substr(0, colon), why);
      const double hi = *io::parse_size(o.sweep.substr(colon + 1), why);
      for (double s = lo; s <= hi * (1 + 1e-12); s *= 2) sizes.push_back(s);
    } else if (!o.bytes.empty()) {
      std::string why;
      sizes.push_back(*io::parse_size(o.bytes, why));
    }
    if (o.request_file.empty()) {
      if (o.op.empty()) throw SpecError("--op", "required (or give --request)");
      if (sizes.empty()) throw SpecError("--bytes", "required: give --bytes or --sweep");
    }
    if (sizes.empty()) {  // a request file with its own bytes
      const json r = io::run(request);
      sizes.push_back(r.at("request").at("collective").at("bytes").get<double>());
    }
    std::vector<json> points;
    json single;
    for (double s : sizes) {
      if (request.contains("collective") && request["collective"].is_object()) {
        request["collective"]["bytes"] = s;
      }
      single = io::run(request);
      points.push_back(point_of(single));
    }
    if (o.format == "json") {
      if (o.sweep.empty()) {
        std::cout << single.dump(2) << "\n";
      } else {
        json req = single.at("request");
        req["collective"].erase("bytes");
        std::cout << json{{"request", req}, {"points", points}}.dump(2) << "\n";
      }
      return kOk;
    }
    print_points(points, o.format);
    return kOk;
  } catch (...) {
    return report_error(o.format);
  }
}

}  // namespace flopcast::cli
