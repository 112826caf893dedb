// SPDX-License-Identifier: MIT
// Golden tests (label: golden): each benchmark scenario in presets/scenarios/ runs through the JSON
// entry point and is compared field by field with tests/golden/<id>.expected.json. Numbers match
// within a relative 1e-4, everything else exactly; missing and extra keys are reported. Refresh the
// expected files only with scripts/update_golden.sh and review the diff.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;

void compare(const json& actual, const json& expected, const std::string& path,
             std::vector<std::string>& diffs) {
  if (expected.is_number() && actual.is_number()) {
    const double a = actual.get<double>(), e = expected.get<double>();
    if (std::fabs(a - e) > 1e-4 * std::fabs(e) + 1e-12) {
      diffs.push_back(path + ": " + actual.dump() + " != expected " + expected.dump());
    }
    return;
  }
  if (expected.type() != actual.type()) {
    diffs.push_back(path + ": type " + actual.type_name() + " != expected " + expected.type_name());
    return;
  }
  if (expected.is_object()) {
    for (const auto& item : expected.items()) {
      if (!actual.contains(item.key())) {
        diffs.push_back(path + "." + item.key() + ": missing");
      } else {
        compare(actual[item.key()], item.value(), path + "." + item.key(), diffs);
      }
    }
    for (const auto& item : actual.items()) {
      if (!expected.contains(item.key())) diffs.push_back(path + "." + item.key() + ": extra key");
    }
  } else if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      diffs.push_back(path + ": " + std::to_string(actual.size()) + " items != expected " +
                      std::to_string(expected.size()));
      return;
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
      compare(actual[i], expected[i], path + "[" + std::to_string(i) + "]", diffs);
    }
  } else if (expected != actual) {
    diffs.push_back(path + ": " + actual.dump() + " != expected " + expected.dump());
  }
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, MatchesExpected) {
  const std::string id = GetParam();
  json scenario;
  for (const json& s : io::presets()["scenarios"]) {
    if (s["id"] == id) scenario = s;
  }
  ASSERT_TRUE(scenario.is_object()) << id;
  std::ifstream in(std::string(FLOPCAST_GOLDEN_DIR) + "/" + id + ".expected.json");
  ASSERT_TRUE(in) << "missing tests/golden/" << id << ".expected.json";
  std::stringstream text;
  text << in.rdbuf();
  const json expected = json::parse(text.str());
  std::vector<std::string> diffs;
  compare(io::run(scenario["request"]), expected, id, diffs);
  for (const auto& d : diffs) ADD_FAILURE() << d;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Golden,
                         ::testing::Values("i1.1", "i1.2", "i1.3", "i1.4", "i1.5", "i3.1", "i3.3",
                                           "i4.1", "i4.3", "i4.4"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace flopcast
