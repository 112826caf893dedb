// SPDX-License-Identifier: MIT
#pragma once

/// Helpers the layout searches share (training_search.cpp, serving_search.cpp).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <string>
#include <vector>
#ifndef __EMSCRIPTEN__
#include <thread>
#endif

#include "flopcast/error.hpp"

namespace flopcast::search_detail {

/// 1, 2, 4, … up to `limit`.
inline std::vector<int> powers_of_two(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

/// The tensor-parallel sizes a search tries: powers of two up to two nodes (and the GPUs there
/// are). Across nodes TP's all-reduces cross the NICs, which can still be the only way a large
/// model fits; hardware without a scale-out network rejects those layouts with the model's rule.
/// Wider than two nodes never pays.
inline std::vector<int> tensor_parallel_sizes(int gpus_per_node, int gpus) {
  return powers_of_two(std::min(2 * gpus_per_node, gpus));
}

/// The rule of a validation error without the values it quotes, so that layouts failing the
/// same rule count together: "parallelism.ep: must divide parallelism dp·cp (2) (got 4)" →
/// "parallelism.ep: must divide parallelism dp·cp".
inline std::string rule_of(const SpecError& e) {
  std::string text = e.what();
  const std::size_t colon = text.find(": ");
  if (const std::size_t paren = text.find(" (", colon == std::string::npos ? 0 : colon);
      paren != std::string::npos) {
    text.resize(paren);
  }
  return text;
}

/// SpecError at search.<path> when a value of the list is below 1.
inline void check_positive(const std::vector<int>& values, const char* path) {
  for (const int v : values) {
    if (v < 1) fail(std::string("search.") + path, "every value must be >= 1", v);
  }
}

/// Threads price_all uses for `n` calls.
inline std::size_t workers_for(std::size_t n) {
#ifndef __EMSCRIPTEN__
  return std::max<std::size_t>(
      1, std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), 16, n}));
#else
  (void)n;
  return 1;
#endif
}

/// Calls `price(worker, i)` once for every i in [0, n): natively on up to one thread per core
/// (at most 16), in WebAssembly (built without threads) on this one. `worker` (0 … workers − 1)
/// names the calling thread, so that each can keep its own scratch copy of a spec; each call
/// must write only the i-th result, so the results do not depend on the number of threads. An
/// exception other than the ones `price` handles is rethrown here, the lowest index's first.
template <typename Price>
void price_all(std::size_t n, Price price) {
  const std::size_t workers = workers_for(n);
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) price(std::size_t{0}, i);
    return;
  }
#ifndef __EMSCRIPTEN__
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failed(n);
  auto work = [&](std::size_t worker) {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        price(worker, i);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (auto& t : threads) t.join();
  for (const auto& e : failed) {
    if (e) std::rethrow_exception(e);
  }
#endif
}

}  // namespace flopcast::search_detail
