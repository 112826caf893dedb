// SPDX-License-Identifier: MIT
// libFuzzer target over the validator's file readers (cli/validate: JSON-lines end-to-end rows
// and every CSV format), as `flopcast validate FILE` reads a file: any input ends in a report or
// in one of flopcast's named errors (a malformed file, a row that is not modelled), never in a
// signal, a sanitizer report or a library exception (json.exception, std::stod's
// invalid_argument), which the CLI could only print as an internal error.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "files.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "flopcast/kernel.hpp"
#include "fuzz_outcomes.hpp"
#include "validate/collector.hpp"
#include "validate/loaders.hpp"

using flopcast::test::fuzz_outcomes;

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
    ++fuzz_outcomes().counts[report.at("groups").empty() ? "report, no group" : "report"];
  } catch (const Error&) {
    ++fuzz_outcomes().counts["named error"];  // SpecError ("fuzz:<line>: ..."), NotModelledError
  } catch (...) {
    __builtin_trap();  // anything else would reach the user as an internal error
  }
  return 0;
}
