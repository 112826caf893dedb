// SPDX-License-Identifier: MIT
#pragma once

/// Serving setup search: every tensor and pipeline parallel size the GPUs allow (the rest of the
/// GPUs as replicas) and every engine batch limit of the space, each priced by the analytic
/// serving engine at the request's load; the setups meeting the SLOs with the most capacity
/// first, the Pareto frontier of capacity per GPU against speed per user, and why the others
/// were rejected.

#include <array>
#include <map>
#include <string>
#include <vector>

#include "flopcast/serving.hpp"

namespace flopcast {

/// Which percentile of TTFT, TPOT and E2E must be within the SLO.
enum class SloPercentile { p50, p90, p99 };
inline constexpr std::array<Named<SloPercentile>, 3> kSloPercentileNames{
    {{"p50", SloPercentile::p50}, {"p90", SloPercentile::p90}, {"p99", SloPercentile::p99}}};
constexpr std::string_view to_string(SloPercentile p) noexcept {
  return name_in(kSloPercentileNames, p);
}

/// The values each dimension may take; an empty list enumerates it: tp over the powers of two up
/// to the GPUs of two nodes (for a MoE model, beyond them up to every GPU as wide expert
/// parallelism only: DP attention with ep = tp, its tokens dispatched all-to-all), pp over 1,
/// max_num_seqs and max_num_batched_tokens per attention rank under DP attention (the
/// replica's limits tp times the values),
/// max_num_seqs over 32, 64, …, 1024, max_num_batched_tokens over 2048, 4096, 8192, 16384; for a
/// MoE model expert_parallel (ep = tp, SGLang's and vLLM's expert parallelism, against ep = 1) and
/// dp_attention over false and true, else false; weights and kv_cache over the request's own types
/// only (a precision changes what the model answers, so the search varies it only when asked). A
/// searched weights type other than the request's takes the attention projections with it.
/// disaggregated over false only (collocated replicas); true adds, for every tp with pp = 1 and
/// at least two instances of tp GPUs, the splits into P prefill and N decode instances: every P
/// up to 64 instances, beyond that the fifteen at sixteenths of them. The KV link is the base
/// spec's `disaggregation` (its instance counts are ignored).
struct ServingSearchSpace {
  std::vector<int> tp, pp, max_num_seqs, max_num_batched_tokens;
  std::vector<bool> expert_parallel, dp_attention, disaggregated;
  std::vector<DType> weights, kv_cache;
};

/// One setup: the request's spec with these four values set.
struct ServingCandidate {
  int tp = 1;
  int pp = 1;
  int ep = 1;  ///< 1 or tp
  bool dp_attention = false;
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  DType weights = DType::bf16;
  DType kv_cache = DType::bf16;
  /// With ep = tp not dividing the experts: the fewest extra expert slots that make it divide
  /// them (replicas of busy experts, SGLang's --ep-num-redundant-experts); else 0.
  int redundant_experts = 0;
  /// Disaggregated: the prefill and decode instances (of tp GPUs each); 0 and 0 collocated.
  int prefill_instances = 0;
  int decode_instances = 0;
  ServingResult result;
  /// Output tokens/s per GPU at the saturation rate: the most this setup serves.
  double capacity_output_tokens_per_s_per_gpu = 0;
  /// 1 / mean TPOT at the offered load: what one user sees.
  double tokens_per_s_per_user = 0;
  /// search_serving_offers: the offer deployed on (its index), and the output tokens one dollar
  /// buys at the saturation rate (capacity per GPU · 3600 / the price of a GPU-hour).
  int offer = 0;
  double output_tokens_per_usd = 0;
  /// The same at the low edge of the throughput's 80 % band (ServingOffer::throughput_low_factor).
  double output_tokens_per_usd_low = 0;
};

struct ServingSearchResult {
  /// Setups that fit, keep up with the offered load and meet every SLO at the percentile, most
  /// capacity first (ties: lower TTFT at the percentile, then enumeration order); one per layout
  /// (GPU type, tp, pp, ep, attention, types, instances), at the best of its engine limits.
  std::vector<ServingCandidate> best;
  /// Setups that fit and keep up (SLOs aside) that no other beats in both capacity per GPU and
  /// tokens/s per user (by more than one part in a million), by capacity.
  std::vector<ServingCandidate> frontier;
  int evaluated = 0;    ///< setups considered (every combination of the space)
  int keeping_up = 0;   ///< of which fit and are not saturated at the offered load
  int meeting_slo = 0;  ///< of which meet the SLOs
  /// Setups rejected, counted by reason: tp·pp not dividing the GPUs, "does not fit in memory",
  /// "saturated at the offered load", "misses slo.ttft_ms at p90", or a validation rule.
  std::map<std::string, int> rejected;
  /// What the hardware's estimates carry for every setup (vendor_caveat), per GPU type.
  std::vector<std::string> warnings;
};

/// Setups one search may consider: an analytic serving estimate costs ~0.1-0.2 ms per core
/// natively (bench: BM_ServingSearch70b10k), so 20,000 take 1-2 s on two cores and stay inside
/// the 10 s any request may take in the page's single-threaded worker.
inline constexpr double kMaxServingSearchSetups = 20000;

/// Searches the setups of `base` (model, hardware, GPUs, precision, workload, engine and features
/// kept; tp, pp, ep, dp_attention, max_num_seqs and max_num_batched_tokens replaced) with the
/// analytic engine.
/// Throws SpecError for a bad `top` (1-100), a space value below 1, or more than
/// kMaxServingSearchSetups setups (blaming `search`).
ServingSearchResult search_serving(const ServingSpec& base, const ServingSearchSpace& space,
                                   int top, SloPercentile percentile);

/// The fewest GPUs that serve the request's load within its SLOs, and the search there.
struct FewestGpusResult {
  int num_gpus = 0;            ///< the fewest found; 0 when no count up to the ceiling does
  ServingSearchResult search;  ///< search_serving at num_gpus (at the ceiling when none)
  std::vector<int> tried;      ///< the counts searched, in the order tried
};

/// search_serving with the GPU count free, up to `base.inference.num_gpus` (the ceiling): every
/// count from 1 to 8, then whole groups of 8 (multiples of 8, as nodes of 8 GPUs and the
/// NVLink domains built of them are deployed), the first by doubling and then by bisection
/// between the last count that missed and the first that met the SLOs (more replicas of the same
/// setup never serve a load worse, so the whole-group counts are ordered). The ceiling itself is
/// tried last when no count below it meets them. Each count is a full search_serving, its budget
/// and errors included.
FewestGpusResult search_fewest_gpus(const ServingSpec& base, const ServingSearchSpace& space,
                                    int top, SloPercentile percentile);

/// A GPU type the search may deploy on: the request on that hardware and GPU count, and the
/// price of one GPU-hour (> 0).
struct ServingOffer {
  ServingSpec base;
  double usd_per_gpu_hour = 0;
  /// The low edge of the 80 % band of this hardware's output throughput, as a fraction of the
  /// estimate (from the measured errors of its kind, presets/bands/e2e.json: ~0.19 on AMD GPUs,
  /// whose measured runs were 2-5x slower than estimated); 1 where none is known. The ranking
  /// uses tokens per dollar at that edge, so a GPU type is not put first on an optimism the
  /// measurements contradict.
  double throughput_low_factor = 1;
};

/// Offers one search may compare.
inline constexpr int kMaxServingOffers = 16;

/// The search over several GPU types at their prices: every offer's setups (search_serving's
/// space on each), ranked by output tokens per dollar at saturation at the low edge of the
/// throughput's band (ties: more at the estimate, lower TTFT at the percentile, then offer and
/// enumeration order); the frontier is that of tokens per dollar at the same low edge
/// against tokens/s per user. Rejections are counted per offer, their reasons prefixed with the
/// hardware's name and GPU count ("h100-sxm x 8: does not fit in memory"). Throws SpecError at
/// `search.hardware` for no offer or more than kMaxServingOffers, and at `search` for more than
/// kMaxServingSearchSetups setups in all.
ServingSearchResult search_serving_offers(const std::vector<ServingOffer>& offers,
                                          const ServingSearchSpace& space, int top,
                                          SloPercentile percentile);

}  // namespace flopcast
