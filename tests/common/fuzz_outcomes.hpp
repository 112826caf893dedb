// SPDX-License-Identifier: MIT
#pragma once
// What the fuzz targets reached: inputs counted by outcome (a result's task, an error's code),
// printed when the run ends.
#include <cstdio>
#include <map>
#include <string>

namespace flopcast::test {

struct FuzzOutcomes {
  std::map<std::string, long long> counts;
  FuzzOutcomes() = default;
  FuzzOutcomes(const FuzzOutcomes&) = delete;
  FuzzOutcomes& operator=(const FuzzOutcomes&) = delete;
  ~FuzzOutcomes() {
    std::fprintf(stderr, "fuzz inputs by outcome:");
    for (const auto& [outcome, n] : counts) std::fprintf(stderr, " %s %lld,", outcome.c_str(), n);
    std::fprintf(stderr, "\n");
  }
};

/// The process's counter.
inline FuzzOutcomes& fuzz_outcomes() {
  static FuzzOutcomes o;
  return o;
}

}  // namespace flopcast::test
