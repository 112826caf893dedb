// SPDX-License-Identifier: MIT
#pragma once

/// Independent calls spread over the machine's cores: the searches' candidates
/// (training_search.cpp, serving_search.cpp) and the validator's passes (cli/validate/loso.cpp).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <vector>
#ifndef __EMSCRIPTEN__
#include <thread>
#endif

namespace flopcast {

/// Threads parallel_for uses for `n` calls.
inline std::size_t parallel_workers(std::size_t n) {
#ifndef __EMSCRIPTEN__
  return std::max<std::size_t>(
      1, std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), 16, n}));
#else
  (void)n;
  return 1;
#endif
}

/// Calls `task(worker, i)` once for every i in [0, n): natively on up to one thread per core
/// (at most 16), in WebAssembly (built without threads) on this one. `worker` (0 … workers − 1)
/// names the calling thread, so that each can keep its own scratch copy of a spec; each call
/// must write only the i-th result, so the results do not depend on the number of threads. An
/// exception other than the ones `task` handles is rethrown here, the lowest index's first.
template <typename Task>
void parallel_for(std::size_t n, Task task) {
  const std::size_t workers = parallel_workers(n);
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) task(std::size_t{0}, i);
    return;
  }
#ifndef __EMSCRIPTEN__
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failed(n);
  auto work = [&](std::size_t worker) {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        task(worker, i);
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

}  // namespace flopcast
