// SPDX-License-Identifier: MIT
#pragma once

// The validator's passes over the measurements are independent (each has its own collector and
// context): they run side by side on the machine's cores, each writing only its own result, so
// the report does not depend on the number of threads.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace flopcast::cli::validate {

/// Calls `task(i)` once for every i in [0, n), on up to one thread per core. An exception is
/// rethrown here after every task ended, the lowest index's first.
template <typename Task>
void run_tasks(std::size_t n, Task task) {
  const std::size_t threads =
      std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failed(n);
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        task(i);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace flopcast::cli::validate
