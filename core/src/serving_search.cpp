// SPDX-License-Identifier: MIT
#include "flopcast/serving_search.hpp"

#include <algorithm>

#include "flopcast/error.hpp"
#include "flopcast/parallel.hpp"
#include "search_common.hpp"

namespace flopcast {
namespace {

using search_detail::check_positive;
using search_detail::rule_of;
using search_detail::tensor_parallel_sizes;

double at(const Percentiles& p, SloPercentile q) {
  switch (q) {
    case SloPercentile::p50:
      return p.p50;
    case SloPercentile::p90:
      return p.p90;
    case SloPercentile::p99:
      return p.p99;
  }
  return p.p99;
}

/// A setup's TTFT at percentile `q`, the tie-breaker of both rankings (0 when it has none).
double ttft_at(const ServingCandidate& c, SloPercentile q) {
  return c.result.ttft_s ? at(*c.result.ttft_s, q) : 0.0;
}

/// The first SLO `r` misses at percentile `q` ("" when it meets them all).
std::string slo_miss(const ServingResult& r, const Slo& slo, SloPercentile q) {
  const auto misses = [&](double limit_s, const std::optional<Percentiles>& p) {
    return limit_s > 0 && (!p || at(*p, q) > limit_s);
  };
  const std::string suffix = " at " + std::string(to_string(q));
  if (misses(slo.ttft_s, r.ttft_s)) return "misses slo.ttft_ms" + suffix;
  if (misses(slo.tpot_s, r.tpot_s)) return "misses slo.tpot_ms" + suffix;
  if (misses(slo.e2e_s, r.e2e_s)) return "misses slo.e2e_ms" + suffix;
  return "";
}

/// The values each dimension takes for `base` (search_serving's defaults where a list is empty).
struct Lists {
  std::vector<int> tps, pps, seqs, budgets;
  std::vector<bool> experts, dpas, disaggs;
  std::vector<DType> weights, kv_caches;
  int two_nodes = 0;
  int gpus = 0;

  /// The prefill instance counts tried for instances of tp·pp GPUs, disaggregated: every split
  /// of up to 64 instances, the fifteen at sixteenths of more; none where pp > 1 (not
  /// modelled), tp does not divide the GPUs or they make one instance.
  [[nodiscard]] std::vector<int> prefill_counts(int tp, int pp) const {
    std::vector<int> out;
    if (pp != 1 || gpus % tp != 0) return out;
    const int n = gpus / tp;
    for (int k = 1; k < std::min(n, 16); ++k) {
      const int p = n <= 64 ? k : static_cast<int>(std::lround(n * k / 16.0));
      if (out.empty() || p != out.back()) out.push_back(p);
    }
    for (int p = 16; n <= 64 && p < n; ++p) out.push_back(p);
    return out;
  }

  /// Setups of the space: a layout that is rejected whole counts once, as it is filed.
  [[nodiscard]] double size() const {
    double layouts = 0;
    for (const int tp : tps) {
      for (const int pp : pps) {
        for (const bool split : disaggs) {
          layouts += split ? std::max<double>(1, prefill_counts(tp, pp).size()) : 1;
        }
      }
    }
    return layouts * experts.size() * dpas.size() * seqs.size() * budgets.size() * weights.size() *
           kv_caches.size();
  }
};

Lists resolve(const ServingSpec& base, const ServingSearchSpace& space) {
  // Before anything is enumerated from it (no GPUs would enumerate nothing, silently).
  check_int("num_gpus", base.inference.num_gpus, 1, 1'000'000);
  check_positive(space.tp, "tp");
  check_positive(space.pp, "pp");
  check_positive(space.max_num_seqs, "max_num_seqs");
  check_positive(space.max_num_batched_tokens, "max_num_batched_tokens");
  const int gpus = base.inference.num_gpus;
  const bool moe = base.inference.model.is_moe();
  Lists l;
  l.tps = space.tp.empty() ? tensor_parallel_sizes(base.inference.hardware.gpus_per_node, gpus)
                           : space.tp;
  // A MoE model may also spread one replica over more than two nodes as wide expert parallelism
  // (DP attention, ep = tp: only the routed tokens cross the network, moe_dispatch all_to_all);
  // those group sizes are tried for that layout alone.
  l.two_nodes = 2 * base.inference.hardware.gpus_per_node;
  if (moe && space.tp.empty()) {
    for (int t = 2 * (l.tps.empty() ? 1 : l.tps.back()); t <= gpus; t *= 2) {
      if (t > l.two_nodes) l.tps.push_back(t);
    }
  }
  l.pps = space.pp.empty() ? std::vector<int>{1} : space.pp;
  l.seqs = space.max_num_seqs.empty() ? std::vector<int>{32, 64, 128, 256, 512, 1024}
                                      : space.max_num_seqs;
  l.budgets = space.max_num_batched_tokens.empty() ? std::vector<int>{2048, 4096, 8192, 16384}
                                                   : space.max_num_batched_tokens;
  const std::vector<bool> both{false, true}, off{false};
  l.experts = !space.expert_parallel.empty() ? space.expert_parallel : moe ? both : off;
  l.dpas = !space.dp_attention.empty() ? space.dp_attention : moe ? both : off;
  l.disaggs = space.disaggregated.empty() ? off : space.disaggregated;
  l.gpus = gpus;
  l.weights = space.weights.empty() ? std::vector<DType>{base.inference.weights} : space.weights;
  l.kv_caches =
      space.kv_cache.empty() ? std::vector<DType>{base.inference.kv_cache} : space.kv_cache;
  return l;
}

/// Whether two setups differ at most in their engine limits (max_num_seqs,
/// max_num_batched_tokens).
bool same_layout(const ServingCandidate& a, const ServingCandidate& b) {
  return a.offer == b.offer && a.tp == b.tp && a.pp == b.pp && a.ep == b.ep &&
         a.dp_attention == b.dp_attention && a.weights == b.weights && a.kv_cache == b.kv_cache &&
         a.redundant_experts == b.redundant_experts && a.prefill_instances == b.prefill_instances &&
         a.decode_instances == b.decode_instances;
}

/// The setups no other beats in both `value` and tokens/s per user: by `value` (descending, ties:
/// faster per user first), each one faster per user than every one before it.
std::vector<ServingCandidate> pareto_frontier(std::vector<ServingCandidate> setups,
                                              double ServingCandidate::*value) {
  std::stable_sort(setups.begin(), setups.end(),
                   [value](const ServingCandidate& a, const ServingCandidate& b) {
                     if (a.*value != b.*value) return a.*value > b.*value;
                     return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
                   });
  // Faster by more than the reported 6 significant digits: setups that differ only in limits
  // that do not bind at this load give the same TPOT up to rounding, not a better one.
  std::vector<ServingCandidate> out;
  double fastest = -1;
  for (ServingCandidate& c : setups) {
    if (c.tokens_per_s_per_user <= fastest * (1 + 1e-6)) continue;
    fastest = c.tokens_per_s_per_user;
    out.push_back(std::move(c));
  }
  return out;
}

void check_budget(double setups) {
  if (setups > kMaxServingSearchSetups) {
    fail("search",
         "would consider more than 20,000 setups; pin dimensions with search.tp, search.pp, "
         "search.expert_parallel, search.dp_attention, search.disaggregated, "
         "search.max_num_seqs, search.max_num_batched_tokens, search.weights or "
         "search.kv_cache",
         setups);
  }
}

}  // namespace

ServingSearchResult search_serving(const ServingSpec& base, const ServingSearchSpace& space,
                                   int top, SloPercentile percentile) {
  if (top < 1 || top > 100) fail("search.top", "must be between 1 and 100", top);
  const Lists lists = resolve(base, space);
  if (base.inference.attention_tp != 1) {
    throw NotModelledError("parallelism.attention_tp",
                           "the search tries attention split over tp or data-parallel over "
                           "single GPUs (search.dp_attention), not attention groups; leave it "
                           "out (got " +
                               std::to_string(base.inference.attention_tp) + ")");
  }
  check_budget(lists.size());
  const auto& [tps, pps, seqs, budgets, experts, dpas, disaggs, weights, kv_caches, two_nodes,
               gpus] = lists;

  // The setups to price, in the order they are filed (what a serial search would do).
  ServingSearchResult out;
  std::vector<ServingCandidate> setups;
  const int per_layout =
      static_cast<int>(seqs.size() * budgets.size() * weights.size() * kv_caches.size());
  for (const int tp : tps) {
    for (const int pp : pps) {
      for (const bool expert : experts) {
        for (const bool dpa : dpas) {
          for (const bool split : disaggs) {
            const auto reject = [&](const std::string& reason) {
              out.evaluated += per_layout;
              out.rejected[reason] += per_layout;
            };
            if (gpus % (1LL * tp * pp) != 0) {
              reject("num_gpus: tp·pp must divide it");
              continue;
            }
            if ((expert || dpa) && tp == 1) {
              reject("expert parallelism and DP attention need tp > 1");
              continue;
            }
            if (space.tp.empty() && tp > two_nodes && !(expert && dpa)) {
              reject("beyond two nodes only as wide expert parallelism (DP attention, ep = tp)");
              continue;
            }
            if (split && pp != 1) {
              reject("disaggregated pools need pp = 1");
              continue;
            }
            const std::vector<int> prefill =
                split ? lists.prefill_counts(tp, pp) : std::vector<int>{0};
            if (prefill.empty()) {
              reject("disaggregated pools need two instances of tp GPUs or more");
              continue;
            }
            // Whole experts over ep = tp GPUs: the fewest replicas that make the slots divide.
            const int routed = base.inference.model.num_experts;
            const int redundant = expert ? fewest_redundant_experts(routed, tp) : 0;
            for (const int p : prefill) {
              for (const DType w : weights) {
                for (const DType kv : kv_caches) {
                  for (const int max_seqs : seqs) {
                    for (const int budget : budgets) {
                      // Under DP attention each of the tp ranks schedules its own batch (vLLM's
                      // data-parallel engines, TensorRT-LLM's attention DP): the values searched
                      // are per rank, the replica's tp times as large.
                      const int ranks = dpa ? tp : 1;
                      ServingCandidate c;
                      c.tp = tp;
                      c.pp = pp;
                      c.ep = expert ? tp : 1;
                      c.dp_attention = dpa;
                      c.max_num_seqs = max_seqs * ranks;
                      c.max_num_batched_tokens = budget * ranks;
                      c.weights = w;
                      c.kv_cache = kv;
                      c.redundant_experts = redundant;
                      c.prefill_instances = p;
                      c.decode_instances = split ? gpus / tp - p : 0;
                      setups.push_back(std::move(c));
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  // Price them (on every core natively), each into its own slot; each thread sets the setup
  // into a copy of the request of its own.
  std::vector<std::string> rejected(setups.size());
  std::vector<ServingSpec> scratch(parallel_workers(setups.size()), base);
  parallel_for(setups.size(), [&](std::size_t worker, std::size_t i) {
    ServingCandidate& c = setups[i];
    ServingSpec& spec = scratch[worker];
    spec.inference.tp = c.tp;
    spec.inference.pp = c.pp;
    spec.inference.ep = c.ep;
    spec.inference.dp_attention = c.dp_attention;
    spec.inference.redundant_experts = c.redundant_experts;
    spec.inference.engine.max_num_seqs = c.max_num_seqs;
    spec.inference.engine.max_num_batched_tokens = c.max_num_batched_tokens;
    spec.inference.weights = c.weights;
    spec.inference.attention_weights =
        c.weights == base.inference.weights ? base.inference.attention_weights : std::nullopt;
    spec.inference.kv_cache = c.kv_cache;
    spec.disaggregation.prefill_instances = c.prefill_instances;
    spec.disaggregation.decode_instances = c.decode_instances;
    try {
      c.result = estimate_serving(spec);
    } catch (const SpecError& e) {
      rejected[i] = rule_of(e);
    }
  });

  // File them in order: rejected with their reason, kept, and among the best that meet the SLOs.
  std::vector<ServingCandidate> keeping_up;
  const auto better = [percentile](const ServingCandidate& a, const ServingCandidate& b) {
    if (a.result.saturation_rate_per_s != b.result.saturation_rate_per_s)
      return a.result.saturation_rate_per_s > b.result.saturation_rate_per_s;
    return ttft_at(a, percentile) < ttft_at(b, percentile);
  };
  for (std::size_t i = 0; i < setups.size(); ++i) {
    ServingCandidate& c = setups[i];
    ++out.evaluated;
    if (!rejected[i].empty()) {
      ++out.rejected[rejected[i]];
      continue;
    }
    const ServingResult& r = c.result;
    if (!r.fits) {
      ++out.rejected["does not fit in memory"];
      continue;
    }
    if (r.saturated || !r.tpot_s) {
      ++out.rejected["saturated at the offered load"];
      continue;
    }
    const double mean_output = r.requests_per_s > 0 ? r.output_tokens_per_s / r.requests_per_s : 0;
    c.capacity_output_tokens_per_s_per_gpu = r.saturation_rate_per_s * mean_output / gpus;
    c.tokens_per_s_per_user = r.tpot_s->mean > 0 ? 1.0 / r.tpot_s->mean : 0;
    ++out.keeping_up;
    keeping_up.push_back(c);
    if (const std::string miss = slo_miss(r, base.slo, percentile); !miss.empty()) {
      ++out.rejected[miss];
      continue;
    }
    ++out.meeting_slo;
    // One row per layout: the best of its engine limits (max_num_seqs, max_num_batched_tokens),
    // not ten rows that differ only in them.
    const auto twin = std::find_if(out.best.begin(), out.best.end(),
                                   [&](const ServingCandidate& b) { return same_layout(b, c); });
    if (twin != out.best.end()) {
      if (!better(c, *twin)) continue;
      out.best.erase(twin);
    }
    if (static_cast<int>(out.best.size()) == top && !better(c, out.best.back())) continue;
    out.best.insert(std::upper_bound(out.best.begin(), out.best.end(), c, better), std::move(c));
    if (static_cast<int>(out.best.size()) > top) out.best.pop_back();
  }

  // Pareto frontier of capacity per GPU against speed per user.
  out.frontier = pareto_frontier(std::move(keeping_up),
                                 &ServingCandidate::capacity_output_tokens_per_s_per_gpu);
  if (std::string caveat = vendor_caveat(base.inference.hardware); !caveat.empty()) {
    out.warnings.push_back(std::move(caveat));
  }
  return out;
}

FewestGpusResult search_fewest_gpus(const ServingSpec& base, const ServingSearchSpace& space,
                                    int top, SloPercentile percentile) {
  // Work budget, decided before any count is searched: the counts the ladder can try (1 to 8,
  // then doubling and bisection over the groups) times the setups of the ceiling's space (the
  // most any count's has). resolve() checks num_gpus.
  const double per_count = resolve(base, space).size();
  const int ceiling = base.inference.num_gpus;
  constexpr int kGroup = 8;
  int counts = std::min(kGroup, ceiling);
  for (int groups = 2; groups * kGroup <= ceiling; groups *= 2) counts += 2;
  const double setups = double(counts + 1) * per_count;
  if (setups > kMaxServingSearchSetups) {
    fail("search.fewest_gpus",
         "would consider more than 20,000 setups over the GPU counts it may try; lower num_gpus "
         "(the ceiling) or pin dimensions with search.tp, search.expert_parallel, "
         "search.dp_attention, search.max_num_seqs or search.max_num_batched_tokens",
         setups);
  }
  FewestGpusResult out;
  ServingSearchResult last;  // the latest search, whatever it found
  ServingSpec spec = base;
  // Searches `gpus`; true when a setup there meets the SLOs (out then holds that search). The
  // counts that meet them are tried in decreasing order, so out ends with the fewest.
  const auto meets = [&](int gpus) {
    spec.inference.num_gpus = gpus;
    last = search_serving(spec, space, top, percentile);
    out.tried.push_back(gpus);
    if (last.best.empty()) return false;
    out.num_gpus = gpus;
    out.search = last;
    return true;
  };
  for (int gpus = 1; gpus <= std::min(kGroup, ceiling); ++gpus) {
    if (meets(gpus)) return out;
  }
  // Whole groups: double until a count meets the SLOs, then bisect (in groups) below it.
  int missed = 1, met = 0;
  for (int groups = 2; groups * kGroup <= ceiling; groups *= 2) {
    if (meets(groups * kGroup)) {
      met = groups;
      break;
    }
    missed = groups;
  }
  if (met == 0) {
    // None up to the last doubling: the ceiling itself, unless it was just searched.
    if (out.tried.back() != ceiling && meets(ceiling)) return out;
    out.search = std::move(last);
    return out;
  }
  while (met - missed > 1) {
    const int mid = missed + (met - missed) / 2;
    if (meets(mid * kGroup)) {
      met = mid;
    } else {
      missed = mid;
    }
  }
  return out;
}

ServingSearchResult search_serving_offers(const std::vector<ServingOffer>& offers,
                                          const ServingSearchSpace& space, int top,
                                          SloPercentile percentile) {
  if (offers.empty() || offers.size() > std::size_t{kMaxServingOffers}) {
    fail("search.hardware", "must list 1 to 16 GPU types", double(offers.size()));
  }
  if (top < 1 || top > 100) fail("search.top", "must be between 1 and 100", top);
  double setups = 0;
  for (std::size_t i = 0; i < offers.size(); ++i) {
    check_int("search.hardware[" + std::to_string(i) + "].num_gpus",
              offers[i].base.inference.num_gpus, 1, 1'000'000);
    if (!(offers[i].usd_per_gpu_hour > 0)) {
      fail("search.hardware[" + std::to_string(i) + "].cost_per_gpu_hour_usd", "must be > 0",
           offers[i].usd_per_gpu_hour);
    }
    if (!(offers[i].throughput_low_factor > 0 && offers[i].throughput_low_factor <= 1)) {
      fail("search.hardware[" + std::to_string(i) + "]", "throughput band edge must be in (0, 1]",
           offers[i].throughput_low_factor);
    }
    setups += resolve(offers[i].base, space).size();
  }
  check_budget(setups);

  ServingSearchResult out;
  std::vector<ServingCandidate> best, frontier;
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const ServingOffer& offer = offers[i];
    ServingSearchResult one = search_serving(offer.base, space, top, percentile);
    const HardwareSpec& hw = offer.base.inference.hardware;
    const std::string name = hw.name + " x " + std::to_string(offer.base.inference.num_gpus);
    // Output tokens per dollar: capacity per GPU (tokens/s) over the price of a GPU-second.
    const auto priced = [&](ServingCandidate& c) {
      c.offer = static_cast<int>(i);
      c.output_tokens_per_usd =
          c.capacity_output_tokens_per_s_per_gpu * 3600 / offer.usd_per_gpu_hour;
      c.output_tokens_per_usd_low = c.output_tokens_per_usd * offer.throughput_low_factor;
    };
    for (ServingCandidate& c : one.best) {
      priced(c);
      best.push_back(std::move(c));
    }
    for (ServingCandidate& c : one.frontier) {
      priced(c);
      frontier.push_back(std::move(c));
    }
    out.evaluated += one.evaluated;
    out.keeping_up += one.keeping_up;
    out.meeting_slo += one.meeting_slo;
    for (const auto& [reason, count] : one.rejected) {
      std::string key = name;
      key.append(": ").append(reason);
      out.rejected[key] += count;
    }
    for (const std::string& w : one.warnings) {
      std::string said = name;
      said.append(": ").append(w);
      out.warnings.push_back(std::move(said));
    }
  }

  // Most tokens per dollar at the band's low edge first (a GPU type whose measurements ran
  // slower than its estimates is not ranked on the estimate), then at the estimate; stable, so
  // ties keep the offers' and each search's order.
  std::stable_sort(best.begin(), best.end(),
                   [percentile](const ServingCandidate& a, const ServingCandidate& b) {
                     if (a.output_tokens_per_usd_low != b.output_tokens_per_usd_low)
                       return a.output_tokens_per_usd_low > b.output_tokens_per_usd_low;
                     if (a.output_tokens_per_usd != b.output_tokens_per_usd)
                       return a.output_tokens_per_usd > b.output_tokens_per_usd;
                     return ttft_at(a, percentile) < ttft_at(b, percentile);
                   });
  if (static_cast<int>(best.size()) > top) best.resize(static_cast<std::size_t>(top));
  out.best = std::move(best);

  // Every offer's frontier holds the setups no other of its own beats; of their union, keep those
  // that no setup of any offer beats in both tokens per dollar at the band's low edge (as the
  // ranking: an AMD estimate measured 2-5x optimistic is not on the frontier by its estimate) and
  // tokens/s per user.
  out.frontier = pareto_frontier(std::move(frontier), &ServingCandidate::output_tokens_per_usd_low);
  return out;
}

}  // namespace flopcast
