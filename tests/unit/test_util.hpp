// SPDX-License-Identifier: MIT
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "flopcast/io/api.hpp"

namespace flopcast::test {

/// |actual − expected| ≤ rel · |expected|.
inline ::testing::AssertionResult near_rel(double actual, double expected, double rel) {
  if (std::fabs(actual - expected) <= rel * std::fabs(expected)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "actual " << actual << " vs expected " << expected << " (rel error "
         << std::fabs(actual - expected) / std::fabs(expected) << " > " << rel << ")";
}

/// The error message and path of running `request` through the JSON entry point.
struct Failure {
  std::string code, path, message;
};
inline Failure failure_of(const io::json& request) {
  const io::json out = io::json::parse(io::handle(request.dump()));
  if (out.at("ok").get<bool>()) return {"", "", "(no error)"};
  const io::json& e = out.at("error");
  return {e.at("code"), e.at("path"), e.at("message")};
}

/// A published config.json from tests/fixtures/hf/ (see SOURCES.md there), parsed.
inline io::json hf_fixture(const std::string& id) {
  const std::string path = std::string(FLOPCAST_FIXTURES_DIR) + "/hf/" + id + ".json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return io::json::parse(text.str());
}

inline io::json base_request() {
  return io::json{{"task", "inference"},
                  {"model", "llama-2-7b"},
                  {"hardware", "a100-sxm-80g"},
                  {"num_gpus", 1},
                  {"parallelism", {{"tp", 1}}},
                  {"precision", {{"weights", "bf16"}, {"kv_cache", "bf16"}}},
                  {"workload", {{"prompt_tokens", 128}, {"output_tokens", 128}, {"batch_size", 1}}},
                  // Hand derivations are of the Tier-0 physics; Tier 2 has tests of its own.
                  {"max_tier", 0}};
}

}  // namespace flopcast::test
