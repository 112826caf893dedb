// SPDX-License-Identifier: MIT
// Engine profiles (presets/engines/<id>.json): the overheads and scheduler defaults of a serving
// engine that a request's `engine.name` selects.
#include <array>
#include <map>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/names.hpp"
#include "reader.hpp"
#include "specs.hpp"

// The typed API defined here is public (flopcast/io/specs.hpp); its bodies use the detail
// helpers of this file.
namespace flopcast::io {
using namespace detail;
}  // namespace flopcast::io

namespace flopcast::io::detail {

bool read_capacity_policy(const ObjectReader& r, bool fallback) {
  return r.choice("capacity_policy", kCapacityPolicyNames, fallback);
}

void read_kernel_fixed(const ObjectReader& r, EngineProfile& e) {
  if (r.find("kernel_fixed_us")) e.kernel_fixed_s = r.number("kernel_fixed_us") * kMicro;
}

void read_engine_overrides(const ObjectReader& en, EngineProfile& e) {
  e.gpu_memory_utilization = en.number("gpu_memory_utilization", e.gpu_memory_utilization);
  e.kv_cache_free_fraction = en.number("kv_cache_free_gpu_mem_fraction", e.kv_cache_free_fraction);
  e.kv_block_tokens = en.integer("kv_block_tokens", e.kv_block_tokens);
  e.max_num_batched_tokens = en.integer("max_num_batched_tokens", e.max_num_batched_tokens);
  e.chunked_prefill = en.boolean("chunked_prefill", e.chunked_prefill);
  e.cuda_graphs = en.boolean("cuda_graphs", e.cuda_graphs);
  e.guaranteed_no_evict = read_capacity_policy(en, e.guaranteed_no_evict);
  e.step_overhead_s = en.number("step_overhead_us", e.step_overhead_s / kMicro) * kMicro;
  e.request_overhead_s = en.number("request_overhead_us", e.request_overhead_s / kMicro) * kMicro;
  e.host_per_sequence_s =
      en.number("host_us_per_sequence", e.host_per_sequence_s / kMicro) * kMicro;
  if (en.find("framework_reserve_GB")) {  // a flat reserve in place of the engine's line
    e.reserve_bytes = en.number("framework_reserve_GB") * kGB;
    e.reserve_per_tp_doubling_bytes = 0;
  }
  read_kernel_fixed(en, e);
  validate(e, "engine");
}

}  // namespace flopcast::io::detail

namespace flopcast::io {
int engine_tier(const EngineProfile& profile, const json& overrides) {
  const bool overridden = overrides.is_object() && (overrides.contains("step_overhead_us") ||
                                                    overrides.contains("request_overhead_us") ||
                                                    overrides.contains("kernel_fixed_us"));
  return overridden ? 0 : profile.tier;
}

EngineProfile read_engine_profile(const json& doc, const std::string& path) {
  ObjectReader head(doc, path,
                    {"schema_version", "id", "name", "source", "notes", "tier", "fit", "engine"});
  EngineProfile e;
  e.id = head.string("id");
  e.tier = head.integer("tier");
  if (e.tier != 0 && e.tier != 1) fail(head.child("tier"), "must be 0 or 1", e.tier);
  if (e.tier == 1 && !head.find("fit")) {
    throw SpecError(head.child("fit"), "a Tier-1 profile must say how it was fitted");
  }
  ObjectReader r(
      head.require("engine"), head.child("engine"),
      {"step_overhead_us", "request_overhead_us", "kernel_fixed_us", "max_num_seqs",
       "max_num_batched_tokens", "chunked_prefill", "gpu_memory_utilization", "kv_block_tokens",
       "custom_all_reduce_max_MiB", "async_scheduling", "capacity_policy", "host_us_per_sequence"});
  e.step_overhead_s = r.number("step_overhead_us") * kMicro;
  e.request_overhead_s = r.number("request_overhead_us") * kMicro;
  read_kernel_fixed(r, e);
  e.max_num_seqs = r.integer("max_num_seqs");
  e.max_num_batched_tokens = r.integer("max_num_batched_tokens");
  e.chunked_prefill = r.boolean("chunked_prefill", true);
  e.gpu_memory_utilization = r.number("gpu_memory_utilization");
  e.kv_block_tokens = r.integer("kv_block_tokens");
  e.async_scheduling = r.boolean("async_scheduling", false);
  e.guaranteed_no_evict = read_capacity_policy(r, false);
  e.custom_all_reduce_max_bytes = r.number("custom_all_reduce_max_MiB", 0) * kMiB;
  e.host_per_sequence_s = r.number("host_us_per_sequence", 0) * kMicro;
  validate(e, r.path());
  return e;
}

const EngineProfile& engine_profile(const std::string& id, const std::string& path) {
  static const std::map<std::string, EngineProfile, std::less<>> profiles = [] {
    std::map<std::string, EngineProfile, std::less<>> m;
    for (const json& doc : detail::preset_list("engines")) {
      EngineProfile e = read_engine_profile(doc, "");
      m.emplace(e.id, std::move(e));
    }
    return m;
  }();
  if (auto it = profiles.find(id); it != profiles.end()) return it->second;
  (void)preset("engines", id, path);  // raises "unknown engines preset ... (did you mean ...)"
  throw SpecError(path, "unknown engine \"" + id + "\"");
}

}  // namespace flopcast::io

namespace flopcast::io::detail {

json engine_profile_to_json(const EngineProfile& e) {
  json j{{"name", e.id},
         {"tier", e.tier},
         {"step_overhead_us", round6(e.step_overhead_s / kMicro)},
         {"request_overhead_us", round6(e.request_overhead_s / kMicro)},
         {"max_num_seqs", e.max_num_seqs},
         {"max_num_batched_tokens", e.max_num_batched_tokens},
         {"chunked_prefill", e.chunked_prefill},
         {"gpu_memory_utilization", round6(e.gpu_memory_utilization)},
         {"kv_block_tokens", e.kv_block_tokens},
         {"async_scheduling", e.async_scheduling},
         {"cuda_graphs", e.cuda_graphs},
         {"capacity_policy", name_in(kCapacityPolicyNames, e.guaranteed_no_evict)}};
  if (e.kernel_fixed_s) j["kernel_fixed_us"] = round6(*e.kernel_fixed_s / kMicro);
  if (e.kv_cache_free_fraction > 0) {
    j["kv_cache_free_gpu_mem_fraction"] = round6(e.kv_cache_free_fraction);
  }
  if (e.host_per_sequence_s > 0) j["host_us_per_sequence"] = round6(e.host_per_sequence_s / kMicro);
  return j;
}

}  // namespace flopcast::io::detail
