// SPDX-License-Identifier: MIT
#include "flopcast/io/api.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include "flopcast/error.hpp"
#include "reader.hpp"
#include "specs.hpp"

#ifndef FLOPCAST_VERSION
#define FLOPCAST_VERSION "0.0.0"
#endif

namespace flopcast::io {

std::string version() { return FLOPCAST_VERSION; }

namespace {

template <std::size_t N>
json dtype_names_json(const std::array<DType, N>& types, bool gguf_only = false) {
  json out = json::array();
  for (DType t : types) {
    if (!gguf_only || is_gguf(t)) out.push_back(to_string(t));
  }
  return out;
}

template <typename E, std::size_t N>
json names_json(const std::array<Named<E>, N>& table) {
  json out = json::array();
  for (const Named<E>& n : table) out.push_back(n.name);
  return out;
}

}  // namespace

json schema() {
  return json{
      {"precision",
       {{"weights", dtype_names_json(kWeightTypes)},
        {"gguf_weights", dtype_names_json(kWeightTypes, true)},
        {"attention_weights", dtype_names_json(kAttentionWeightTypes)},
        {"kv_cache", dtype_names_json(kKvCacheTypes)},
        {"activations", dtype_names_json(kActivationTypes)},
        {"compute", dtype_names_json(kTrainingComputeTypes)}}},
      {"parallelism", {{"moe_dispatch", names_json(kMoeDispatchNames)}}},
      {"workload",
       {{"recompute", names_json(kRecomputeNames)}, {"optimizer", names_json(kOptimizerNames)}}}};
}

double round6(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

json run(const json& request) {
  if (!request.is_object()) {
    throw SpecError(
        "", "a request must be a JSON object (got " + detail::describe_value(request) + ")");
  }
  if (auto it = request.find("schema_version"); it != request.end()) {
    if (detail::as_int(*it, "schema_version") != kSchemaVersion) {
      fail("schema_version", "must be 1", it->dump());
    }
  }
  auto task = request.find("task");
  if (task == request.end()) throw SpecError("task", "required key is missing");
  if (!task->is_string()) {
    throw SpecError("task", "must be a string (got " + detail::describe_value(*task) + ")");
  }
  const std::string name = task->get<std::string>();
  if (name == "inference") return detail::run_inference(request);
  if (name == "collective") return detail::run_collective(request);
  if (name == "training") return detail::run_training(request);
  if (name == "serving") return detail::run_serving(request);
  if (name == "search") {
    // search.target picks the search; the training one reports a bad or missing target.
    const auto search = request.find("search");
    if (search != request.end() && search->is_object() &&
        search->value("target", json()) == json("serving")) {
      return detail::run_serving_search(request);
    }
    return detail::run_training_search(request);
  }
  const std::vector<std::string> tasks{"inference", "collective", "training", "serving", "search"};
  std::string rule = "unknown task; supported: inference, collective, training, serving, search";
  if (auto guess = detail::nearest(name, tasks); guess && *guess != name) {
    rule += " (did you mean \"" + *guess + "\"?)";
  }
  fail("task", rule, "\"" + name + "\"");
}

json run_text(std::string_view text) { return run(parse_json(text)); }

ErrorInfo describe_current_exception() noexcept {
  try {
    throw;
  } catch (const NotModelledError& e) {
    return {"not_modelled", e.path(), e.what()};
  } catch (const SpecError& e) {
    const bool malformed =
        e.path().empty() && std::string(e.what()).rfind("malformed JSON", 0) == 0;
    return {malformed ? "invalid_json" : "invalid_request", e.path(), e.what()};
  } catch (const std::exception& e) {
    return {"internal", "", e.what()};
  } catch (...) {
    return {"internal", "", "unknown error"};
  }
}

json ok_envelope(json result) { return json{{"ok", true}, {"result", std::move(result)}}; }

json error_envelope(const ErrorInfo& e) {
  return json{{"ok", false},
              {"error", {{"code", e.code}, {"path", e.path}, {"message", e.message}}}};
}

std::string handle(std::string_view request_text) {
  return enveloped([&] { return run_text(request_text); });
}

}  // namespace flopcast::io
