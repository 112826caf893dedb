// SPDX-License-Identifier: MIT
// libFuzzer target over the validator's file readers (cli/validate: JSON-lines end-to-end rows
// and every CSV format), as `flopcast validate FILE` reads a file: any input ends in a report or
// in one of flopcast's named errors (a malformed file, a row that is not modelled), never in a
// signal, a sanitizer report or a library exception (json.exception, std::stod's
// invalid_argument), which the CLI could only print as an internal error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "files.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/kernel.hpp"
#include "validate/collector.hpp"
#include "validate/loaders.hpp"

namespace {

/// Inputs by outcome, printed when the run ends: what shows that the fuzzer reaches the readers.
struct Outcomes {
  std::map<std::string, long long> counts;
  Outcomes() = default;
  Outcomes(const Outcomes&) = delete;
  Outcomes& operator=(const Outcomes&) = delete;
  ~Outcomes() {
    std::fprintf(stderr, "fuzz inputs by outcome:");
    for (const auto& [outcome, n] : counts) std::fprintf(stderr, " %s %lld,", outcome.c_str(), n);
    std::fprintf(stderr, "\n");
  }
};

Outcomes& outcomes() {
  static Outcomes o;
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flopcast;
  using namespace flopcast::cli::validate;
  std::string text(reinterpret_cast<const char*>(data), size);
  Collector collector({});
  KernelModel km;
  km.tier0_residuals = io::tier0_residuals();
  Context ctx(collector, km);
  try {
    load_text("fuzz", std::move(text), ctx);
    const auto report = collector.report(std::nullopt);
    ++outcomes().counts[report.at("groups").empty() ? "report, no group" : "report"];
  } catch (const Error&) {
    ++outcomes().counts["named error"];  // SpecError ("fuzz:<line>: ..."), NotModelledError
  } catch (...) {
    __builtin_trap();  // anything else would reach the user as an internal error
  }
  return 0;
}
