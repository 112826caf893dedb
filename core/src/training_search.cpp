// SPDX-License-Identifier: MIT
#include "flopcast/training_search.hpp"

#include <algorithm>
#include <map>

#include "flopcast/error.hpp"
#include "flopcast/parallel.hpp"
#include "search_common.hpp"
#include "training_detail.hpp"

namespace flopcast {
using search_detail::check_positive;
using search_detail::powers_of_two;
using search_detail::rule_of;
using search_detail::tensor_parallel_sizes;

TrainingSearchResult search_training(const TrainingSpec& base, const TrainingSearchSpace& space,
                                     int top) {
  if (top < 1 || top > 100) fail("search.top", "must be between 1 and 100", top);
  // Before anything is enumerated from it (no GPUs would enumerate nothing, silently).
  check_int("num_gpus", base.num_gpus, 1, 1'000'000);
  check_positive(space.tp, "tp");
  check_positive(space.pp, "pp");
  check_positive(space.vpp, "vpp");
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
  // Virtual stages per pipeline size: interleaving needs a pipeline, and by default every v up to
  // 8 whose chunks split the layers evenly. A larger v saves less than an eighth of the
  // non-interleaved bubble more while it multiplies the fill's and drain's transfers.
  const auto virtual_stages = [&](int pp) {
    if (pp == 1) return std::vector<int>{1};
    if (!space.vpp.empty()) return space.vpp;
    std::vector<int> out{1};
    for (int v = 2; v <= 8 && base.model.num_layers % pp == 0; ++v) {
      if ((base.model.num_layers / pp) % v == 0) out.push_back(v);
    }
    return out;
  };
  double pipelines = 0;  // (pp, vpp) pairs
  for (const int pp : pps) pipelines += double(virtual_stages(pp).size());

  check_positive(space.micro_batch_size, "micro_batch_size");
  // 0: the estimate prices every micro-batch size that fits and keeps the fastest.
  const std::vector<int> micro_batches =
      space.micro_batch_size.empty() ? std::vector<int>{0} : space.micro_batch_size;

  // Work budget: a layout costs up to ~0.3 ms natively (an MoE model with its micro-batch search),
  // so 20,000 keep any search within a few seconds, and within the page's budget in WebAssembly.
  const double space_size = double(tps.size()) * pipelines * cps.size() * eps.size() *
                            shardings.size() * recomputes.size() * computes.size() *
                            micro_batches.size();
  if (space_size > kMaxSearchLayouts) {
    fail("search",
         "would consider more than 20,000 layouts; pin dimensions with search.tp, search.pp, "
         "search.vpp, search.cp, search.ep, search.zero, search.recompute, search.compute or "
         "search.micro_batch_size",
         space_size);
  }

  // The layouts to price, in the order they are filed (what a serial search would do).
  struct Layout {
    int tp, pp, vpp, cp, ep;
    Sharding sharding;
    Recompute recompute;
    DType compute;
    int micro_batch;
  };
  TrainingSearchResult out;
  std::vector<Layout> layouts;
  for (const int tp : tps) {
    for (const int pp : pps) {
      const std::vector<int> vpps = virtual_stages(pp);
      for (const int cp : cps) {
        if (base.num_gpus % (1LL * tp * pp * cp) != 0) {
          const int skipped = static_cast<int>(vpps.size() * eps.size() * shardings.size() *
                                               recomputes.size() * computes.size());
          out.evaluated += skipped;
          out.rejected["num_gpus: tp·pp·cp must divide it"] += skipped;
          continue;
        }
        for (const int vpp : vpps) {
          for (const int ep : eps) {
            for (const Sharding sharding : shardings) {
              for (const Recompute recompute : recomputes) {
                for (const DType compute : computes) {
                  for (const int micro : micro_batches) {
                    layouts.push_back({tp, pp, vpp, cp, ep, sharding, recompute, compute, micro});
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  // Work budget on the step estimates: a layout whose micro-batch is searched prices up to one
  // per divisor of its per-rank batch (a global batch of 86,486,400 sequences has 768), each
  // ~3 us natively and ~10 us in WebAssembly: at most 1,000,000 keep a search within seconds.
  double pricings = 0;
  std::map<long long, double> divisor_counts;  // per-rank batch -> its divisors
  for (const Layout& l : layouts) {
    const long long model_ranks = 1LL * l.tp * l.pp * l.cp;
    if (l.micro_batch != 0 || base.num_gpus % model_ranks != 0) {
      pricings += 1;
      continue;
    }
    const long long dp = base.num_gpus / model_ranks;
    if (base.global_batch_size % dp != 0) continue;  // rejected before pricing
    const long long per_rank = base.global_batch_size / dp;
    auto [it, added] = divisor_counts.emplace(per_rank, 0.0);
    if (added) it->second = double(training_detail::divisors(static_cast<int>(per_rank)).size());
    pricings += it->second;
  }
  if (pricings > kMaxSearchMicroBatches) {
    fail("search",
         "could price up to " + format_number(pricings) +
             " step estimates, more than 1,000,000 (every micro-batch size dividing each "
             "layout's batch per data rank); pin search.micro_batch_size, or narrow the layouts "
             "with search.tp, search.pp, search.cp, search.zero, search.recompute or "
             "search.compute",
         pricings);
  }

  const auto set_layout = [&base](TrainingSpec& s, const Layout& l) {
    s.tp = l.tp;
    s.pp = l.pp;
    s.cp = l.cp;
    s.dp = static_cast<int>(base.num_gpus / (1LL * l.tp * l.pp * l.cp));
    s.sp = l.tp > 1;  // sequence parallelism: the same traffic, 1/tp of the activations
    s.vpp = l.vpp;
    s.pp_first_stage_layers = s.pp_last_stage_layers = 0;
    s.micro_batch_size = l.micro_batch;
    s.ep = l.ep;
    // The experts' TP follows the layout's unless the request folds them (expert_tp 1).
    s.expert_tp = base.experts_tp() == 1 && base.tp > 1 ? 1 : 0;
    s.sharding = l.sharding;
    s.recompute = l.recompute;
    s.compute = l.compute;
  };

  // Price them (on every core natively), each into its own slot: its result, or the rule it
  // breaks. Each thread sets the layout into a copy of the request of its own.
  struct Priced {
    TrainingResult result;
    std::string rejected;
  };
  std::vector<Priced> priced(layouts.size());
  std::vector<TrainingSpec> scratch(parallel_workers(layouts.size()), base);
  parallel_for(layouts.size(), [&](std::size_t worker, std::size_t i) {
    TrainingSpec& s = scratch[worker];
    set_layout(s, layouts[i]);
    try {
      priced[i].result = estimate_training(s);
    } catch (const SpecError& e) {
      priced[i].rejected = rule_of(e);
    }
  });

  // File them in order: rejected with their reason, or among the `top` fastest that fit.
  const auto faster = [](const TrainingCandidate& a, const TrainingCandidate& b) {
    return a.result.step_time_s < b.result.step_time_s;
  };
  for (std::size_t i = 0; i < priced.size(); ++i) {
    Priced& p = priced[i];
    ++out.evaluated;
    out.micro_batches_priced += p.result.micro_batches_priced;
    if (!p.rejected.empty()) {
      ++out.rejected[p.rejected];
      continue;
    }
    if (!p.result.memory.fits) {
      ++out.rejected["does not fit in memory at micro-batch " +
                     std::to_string(p.result.micro_batch_size)];
      continue;
    }
    ++out.fitting;
    if (static_cast<int>(out.best.size()) == top &&
        !(p.result.step_time_s < out.best.back().result.step_time_s)) {
      continue;
    }
    TrainingCandidate c{base, std::move(p.result)};
    set_layout(c.spec, layouts[i]);
    c.spec.micro_batch_size = c.result.micro_batch_size;
    out.best.insert(std::upper_bound(out.best.begin(), out.best.end(), c, faster), std::move(c));
    if (static_cast<int>(out.best.size()) > top) out.best.pop_back();
  }
  return out;
}

}  // namespace flopcast
