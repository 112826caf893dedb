// SPDX-License-Identifier: MIT
#include "flopcast/training_search.hpp"

#include <algorithm>

#include "flopcast/error.hpp"
#include "search_common.hpp"

namespace flopcast {
using search_detail::check_positive;
using search_detail::powers_of_two;
using search_detail::rule_of;
using search_detail::tensor_parallel_sizes;

TrainingSearchResult search_training(const TrainingSpec& base, const TrainingSearchSpace& space,
                                     int top) {
  if (top < 1 || top > 100) fail("search.top", "must be between 1 and 100", top);
  check_positive(space.tp, "tp");
  check_positive(space.pp, "pp");
  check_positive(space.cp, "cp");
  check_positive(space.ep, "ep");
  const std::vector<int> tps =
      space.tp.empty() ? tensor_parallel_sizes(base.gpus_per_node, base.num_gpus) : space.tp;
  const std::vector<int> pps =
      space.pp.empty() ? powers_of_two(std::min(base.num_gpus, base.model.num_layers)) : space.pp;
  const std::vector<int> cps =
      space.cp.empty() ? powers_of_two(std::min(base.num_gpus, 8)) : space.cp;
  std::vector<int> eps = space.ep;
  if (eps.empty()) {
    eps = {1};
    for (int e = 2; base.model.is_moe() && e <= base.model.num_experts && e <= base.num_gpus;
         e *= 2) {
      if (base.model.num_experts % e == 0) eps.push_back(e);
    }
  }
  const std::vector<Sharding> shardings =
      space.sharding.empty()
          ? std::vector<Sharding>{Sharding::none, Sharding::zero1, Sharding::zero2, Sharding::zero3}
          : space.sharding;
  const std::vector<Recompute> recomputes =
      space.recompute.empty() ? std::vector<Recompute>{Recompute::none, Recompute::selective,
                                                       Recompute::op, Recompute::full}
                              : space.recompute;
  const std::vector<DType> computes =
      space.compute.empty() ? std::vector<DType>{base.compute} : space.compute;

  // Work budget: a layout costs up to ~0.3 ms natively (an MoE model with its micro-batch search),
  // so 20,000 keep any search within a few seconds, and within the page's budget in WebAssembly.
  const double space_size = double(tps.size()) * pps.size() * cps.size() * eps.size() *
                            shardings.size() * recomputes.size() * computes.size();
  if (space_size > kMaxSearchLayouts) {
    fail("search",
         "would consider more than 20,000 layouts; pin dimensions with search.tp, search.pp, "
         "search.cp, search.ep, search.zero, search.recompute or search.compute",
         space_size);
  }

  TrainingSearchResult out;
  const auto faster = [](const TrainingCandidate& a, const TrainingCandidate& b) {
    return a.result.step_time_s < b.result.step_time_s;
  };
  // Prices one layout (its micro-batch searched) and keeps it among the `top` fastest that fit.
  const auto consider = [&](const TrainingSpec& s) {
    ++out.evaluated;
    TrainingCandidate c{s, {}};
    try {
      c.result = estimate_training(s);
    } catch (const SpecError& e) {
      ++out.rejected[rule_of(e)];
      return;
    }
    if (!c.result.memory.fits) {
      ++out.rejected["does not fit in memory at micro-batch 1"];
      return;
    }
    ++out.fitting;
    c.spec.micro_batch_size = c.result.micro_batch_size;
    if (static_cast<int>(out.best.size()) == top && !faster(c, out.best.back())) return;
    out.best.insert(std::upper_bound(out.best.begin(), out.best.end(), c, faster), std::move(c));
    if (static_cast<int>(out.best.size()) > top) out.best.pop_back();
  };
  for (const int tp : tps) {
    for (const int pp : pps) {
      for (const int cp : cps) {
        const long long model_parallel = 1LL * tp * pp * cp;
        if (base.num_gpus % model_parallel != 0) {
          const int layouts =
              static_cast<int>(eps.size() * shardings.size() * recomputes.size() * computes.size());
          out.evaluated += layouts;
          out.rejected["num_gpus: tp·pp·cp must divide it"] += layouts;
          continue;
        }
        TrainingSpec s = base;
        s.tp = tp;
        s.pp = pp;
        s.cp = cp;
        s.dp = static_cast<int>(base.num_gpus / model_parallel);
        s.sp = tp > 1;  // sequence parallelism: the same traffic, 1/tp of the activations
        s.vpp = 1;
        s.pp_first_stage_layers = s.pp_last_stage_layers = 0;
        s.micro_batch_size = 0;  // the fastest that fits
        for (const int ep : eps) {
          s.ep = ep;
          for (const Sharding sharding : shardings) {
            s.sharding = sharding;
            for (const Recompute recompute : recomputes) {
              s.recompute = recompute;
              for (const DType compute : computes) {
                s.compute = compute;
                consider(s);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace flopcast
