// SPDX-License-Identifier: MIT
#include "flopcast/engine.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"
#include "flopcast/kernel.hpp"
#include "flopcast/units.hpp"

namespace flopcast {
void apply_engine(const EngineProfile& e, KernelModel& km) {
  km.framework = parse_framework(e.id).value_or(Framework::any);
  km.engine_kernel_fixed_s = e.kernel_fixed_s;
  km.custom_all_reduce_max_bytes = e.custom_all_reduce_max_bytes;
}

double framework_reserve_bytes(const EngineProfile& e, int tp) {
  return e.reserve_bytes + e.reserve_per_tp_doubling_bytes * std::log2(std::max(1, tp));
}

double host_step_s(const EngineProfile& e, double sequences, int dp) {
  return e.host_per_sequence_s * sequences / std::max(1, dp);
}

void validate(const EngineProfile& e, const std::string& path) {
  const std::string p = path.empty() ? "" : path + ".";
  check_real(p + "step_overhead_us", e.step_overhead_s, 0, 10, kMicro);
  check_real(p + "request_overhead_us", e.request_overhead_s, 0, 100, kMicro);
  check_real(p + "host_us_per_sequence", e.host_per_sequence_s, 0, 1e-2, kMicro);
  check_real(p + "framework_reserve_GB", e.reserve_bytes, 0, 1e15, kGB);
  if (e.kernel_fixed_s) check_real(p + "kernel_fixed_us", *e.kernel_fixed_s, 0, 1e-3, kMicro);
  check_real(p + "max_num_seqs", e.max_num_seqs, 1, 1e6, 1);
  check_real(p + "max_num_batched_tokens", e.max_num_batched_tokens, 1, 1e7, 1);
  check_real(p + "kv_block_tokens", e.kv_block_tokens, 1, 1024, 1);
  if (e.kv_cache_free_fraction != 0) {
    check_real(p + "kv_cache_free_gpu_mem_fraction", e.kv_cache_free_fraction, 0.01, 1, 1);
  }
  check_real(p + "custom_all_reduce_max_MiB", e.custom_all_reduce_max_bytes, 0, 1024 * kMiB, kMiB);
  if (!(e.gpu_memory_utilization > 0 && e.gpu_memory_utilization <= 1)) {
    fail(p + "gpu_memory_utilization", "must be > 0 and <= 1", e.gpu_memory_utilization);
  }
}

}  // namespace flopcast
