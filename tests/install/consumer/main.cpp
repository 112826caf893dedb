// SPDX-License-Identifier: MIT
// Prints the TTFT of the README's request through the installed JSON entry point, and the
// error of a bad request, so that tests/install/run.cmake can compare them with the CLI's.
#include <flopcast/io/api.hpp>
#include <iostream>

int main() {
  const auto ok = flopcast::io::run_text(
      R"({"task": "inference", "model": "llama-2-7b", "hardware": "a100-sxm-80g",
          "workload": {"prompt_tokens": 128, "output_tokens": 128}})");
  std::cout << "ttft_ms " << ok.at("ttft_ms").dump() << "\n";
  std::cout << flopcast::io::handle(R"({"task": "inference", "model": "nope"})") << "\n";
  return 0;
}
