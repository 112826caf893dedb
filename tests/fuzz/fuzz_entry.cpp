// SPDX-License-Identifier: MIT
// libFuzzer target over the JSON entry point, the link decoder and the Hugging Face config
// importer. Any input must give a valid envelope: ok with a result that satisfies its task's
// invariants, or an error with a message. Neither io::handle nor io::decode_link may throw; the
// importer throws only flopcast's named errors.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "fuzz_outcomes.hpp"
#include "invariants.hpp"

namespace {

using flopcast::io::json;

using flopcast::test::fuzz_outcomes;

void check_envelope(const std::string& text) {
  const json env = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (env.is_discarded() || !env.is_object()) __builtin_trap();
  const auto ok = env.find("ok");
  if (ok == env.end() || !ok->is_boolean()) __builtin_trap();
  if (ok->get<bool>()) {
    const auto result = env.find("result");
    if (result == env.end()) __builtin_trap();
    // Each task's own invariants: finite, positive times, MFU and HFU <= 1, each band ordered and
    // within 100x of its point, null latencies only when saturated (tests/common/invariants.hpp).
    if (!flopcast::test::violation(*result).empty()) __builtin_trap();
    const auto task = result->find("task");
    ++fuzz_outcomes()
          .counts[task != result->end() && task->is_string() ? task->get<std::string>() : "result"];
  } else {
    const auto error = env.find("error");
    if (error == env.end() || !error->is_object()) __builtin_trap();
    const auto message = error->find("message");
    if (message == error->end() || !message->is_string() || message->get<std::string>().empty()) {
      __builtin_trap();
    }
    const auto code = error->find("code");
    if (code == error->end() || !code->is_string()) __builtin_trap();
    ++fuzz_outcomes().counts["error " + code->get<std::string>()];
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string envelope;
  try {
    envelope = flopcast::io::handle(input);
  } catch (...) {
    __builtin_trap();  // handle() is documented never to throw
  }
  check_envelope(envelope);

  // The Hugging Face config importer: a named error or a model the reader accepts.
  const json config = json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (config.is_object()) {
    try {
      (void)flopcast::io::read_model(flopcast::io::model_from_hf_config(config), "model");
      ++fuzz_outcomes().counts["hf_config model"];
    } catch (const flopcast::Error&) {
      ++fuzz_outcomes().counts["hf_config error"];  // SpecError, NotModelledError: named
    } catch (...) {
      __builtin_trap();  // anything else (a json exception, a bad_alloc) is a defect
    }
  }

  try {
    const json decoded = flopcast::io::decode_link(input);
    if (!decoded.at("request").is_object() || !decoded.at("errors").is_array()) __builtin_trap();
    (void)decoded.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (...) {
    __builtin_trap();  // decode_link never throws for bad content
  }
  return 0;
}
