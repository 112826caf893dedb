// SPDX-License-Identifier: MIT
// libFuzzer target over the JSON entry point and the link decoder. Any input must give a valid
// envelope: ok with only finite numbers in the result, or an error with a non-empty message.
// Neither io::handle nor io::decode_link may throw.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "flopcast/io/api.hpp"

namespace {

using flopcast::io::json;

bool all_finite(const json& j) {
  switch (j.type()) {
    case json::value_t::number_float:
      return std::isfinite(j.get<double>());
    case json::value_t::object:
    case json::value_t::array:
      for (const json& item : j) {
        if (!all_finite(item)) return false;
      }
      return true;
    default:
      return true;
  }
}

void check_envelope(const std::string& text) {
  const json env = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (env.is_discarded() || !env.is_object()) __builtin_trap();
  const auto ok = env.find("ok");
  if (ok == env.end() || !ok->is_boolean()) __builtin_trap();
  if (ok->get<bool>()) {
    const auto result = env.find("result");
    if (result == env.end() || !result->is_object() || !all_finite(*result)) __builtin_trap();
    // Headline numbers are never null (how a NaN would have been written).
    for (const char* key : {"ttft_ms", "tpot_ms", "e2e_ms"}) {
      const auto v = result->find(key);
      if (v == result->end() || !v->is_number()) __builtin_trap();
    }
  } else {
    const auto error = env.find("error");
    if (error == env.end() || !error->is_object()) __builtin_trap();
    const auto message = error->find("message");
    if (message == error->end() || !message->is_string() || message->get<std::string>().empty()) {
      __builtin_trap();
    }
    const auto code = error->find("code");
    if (code == error->end() || !code->is_string()) __builtin_trap();
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

  try {
    const json decoded = flopcast::io::decode_link(input);
    if (!decoded.at("request").is_object() || !decoded.at("errors").is_array()) __builtin_trap();
    (void)decoded.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (...) {
    __builtin_trap();  // decode_link never throws for bad content
  }
  return 0;
}
