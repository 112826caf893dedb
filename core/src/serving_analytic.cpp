// SPDX-License-Identifier: MIT
// Analytic serving model: Little's-law fixed point for the steady-state batch, a G/G/1 queue of
// prefill work on the step's leftover token budget, an Erlang-C wait for a batch slot, and
// percentiles from weighted quantile grids refined towards the tail. Assumptions are listed in the
// result and in docs/model.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "flopcast/error.hpp"
#include "flopcast/stats.hpp"
#include "serving_internal.hpp"

namespace flopcast {
namespace {

/// A distribution as weighted points on a fixed grid of quantile bins: 1/32 wide up to 0.875,
/// then narrower towards the tail so that p90 and p99 each fall between bins of their own (with
/// 32 equal bins, p90 and p99 both landed on the last point, 0.984). Each point is the mean of
/// its bin, so the mean is kept exactly through sums.
struct Dist {
  std::vector<double> x, w;  // ascending x; weights sum to 1
};

const std::vector<double>& bin_edges() {
  static const std::vector<double> edges = [] {
    std::vector<double> e;
    for (int i = 0; i <= 28; ++i) e.push_back(i / 32.0);
    for (double x : {0.9, 0.925, 0.95, 0.97, 0.98, 0.985, 0.99, 0.993, 0.996, 0.998, 0.999, 1.0}) {
      e.push_back(x);
    }
    return e;
  }();
  return edges;
}

/// Middle level of each bin (lengths are read there).
std::vector<double> bin_mids() {
  const auto& e = bin_edges();
  std::vector<double> m;
  for (std::size_t i = 0; i + 1 < e.size(); ++i) m.push_back(0.5 * (e[i] + e[i + 1]));
  return m;
}

/// Folds weighted points into the grid: each bin gets the mean of the mass inside it.
Dist compress(std::vector<std::pair<double, double>> pts) {
  std::sort(pts.begin(), pts.end());
  const auto& e = bin_edges();
  Dist d;
  std::size_t k = 0;
  double left = pts.empty() ? 0 : pts[0].second;  // weight of pts[k] not yet assigned
  for (std::size_t b = 0; b + 1 < e.size(); ++b) {
    double need = e[b + 1] - e[b], sum = 0;
    const double width = need;
    while (need > 1e-15 && k < pts.size()) {
      const double take = std::min(need, left);
      sum += take * pts[k].first;
      need -= take;
      left -= take;
      if (left <= 1e-15) {
        if (++k < pts.size()) left = pts[k].second;
      }
    }
    if (need > 1e-15 && !pts.empty()) sum += need * pts.back().first;  // rounding leftovers
    d.x.push_back(sum / width);
    d.w.push_back(width);
  }
  return d;
}

/// A distribution given by its quantile function, averaged over `sub` levels inside each bin.
template <typename Q>
Dist from_quantile(Q q, int sub = 16) {
  const auto& e = bin_edges();
  Dist d;
  for (std::size_t b = 0; b + 1 < e.size(); ++b) {
    double sum = 0;
    for (int j = 0; j < sub; ++j) sum += q(e[b] + (j + 0.5) / sub * (e[b + 1] - e[b]));
    d.x.push_back(sum / sub);
    d.w.push_back(e[b + 1] - e[b]);
  }
  return d;
}

/// Sum of two independent distributions.
Dist convolve(const Dist& a, const Dist& b) {
  std::vector<std::pair<double, double>> pts;
  pts.reserve(a.x.size() * b.x.size());
  for (std::size_t i = 0; i < a.x.size(); ++i) {
    for (std::size_t j = 0; j < b.x.size(); ++j) pts.emplace_back(a.x[i] + b.x[j], a.w[i] * b.w[j]);
  }
  return compress(std::move(pts));
}

/// Quantile at level q: linear between the bins' middle levels.
double quantile(const Dist& d, double q) {
  double c = 0, prev_level = 0, prev_x = 0;
  for (std::size_t i = 0; i < d.x.size(); ++i) {
    const double level = c + d.w[i] / 2;
    if (q <= level) {
      if (i == 0) return d.x[0];
      return prev_x + (d.x[i] - prev_x) * (q - prev_level) / (level - prev_level);
    }
    prev_level = level;
    prev_x = d.x[i];
    c += d.w[i];
  }
  return d.x.back();
}

Percentiles summarize(const Dist& d) {
  Percentiles p;
  for (std::size_t i = 0; i < d.x.size(); ++i) p.mean += d.w[i] * d.x[i];
  p.p50 = quantile(d, 0.50);
  p.p90 = quantile(d, 0.90);
  p.p99 = quantile(d, 0.99);
  return p;
}

struct Workload {
  double lambda = 0;                   // per instance, requests/s
  double ca2 = 1;                      // squared coefficient of variation of inter-arrival times
  std::vector<double> prompt, output;  // lengths at the bins' middle levels
  std::vector<double> weight;          // the bins' widths
  double p_mean = 0, p_new_mean = 0, p_new_m2 = 0, n_mean = 0;
  double hit_tokens = 0;  // mean cached prefix tokens per request
};

/// Mean prompt tokens a request of `prompt` tokens finds cached (prefix caching).
double cached_tokens(const ServingSpec& spec, double prompt) {
  return spec.prefix.hit_rate * std::min<double>(spec.prefix.shared_prefix_tokens, prompt - 1);
}

Workload make_workload(const ServingSpec& spec, int instances) {
  Workload w;
  double total_rate = spec.arrival.rate_per_s;
  if (spec.arrival.kind == ArrivalKind::trace) {
    const auto& t = spec.trace;
    const double span = t.back().arrival_s - t.front().arrival_s;
    total_rate = t.size() > 1 && span > 0 ? (t.size() - 1) / span : 1.0;
    double m = 0, m2 = 0;
    for (std::size_t i = 1; i < t.size(); ++i) {
      const double g = t[i].arrival_s - t[i - 1].arrival_s;
      m += g;
      m2 += g * g;
    }
    if (t.size() > 2 && m > 0) {
      m /= (t.size() - 1);
      m2 /= (t.size() - 1);
      w.ca2 = std::max(0.0, m2 / (m * m) - 1);
    }
  } else if (spec.arrival.kind == ArrivalKind::gamma) {
    w.ca2 = spec.arrival.cv * spec.arrival.cv;
  } else if (spec.arrival.kind == ArrivalKind::constant) {
    w.ca2 = 0;
  }
  w.lambda = total_rate / instances;
  const std::vector<double> levels = bin_mids();
  w.prompt = detail::length_points(spec, true, levels);
  w.output = detail::length_points(spec, false, levels);
  const auto& e = bin_edges();
  for (std::size_t i = 0; i + 1 < e.size(); ++i) w.weight.push_back(e[i + 1] - e[i]);
  for (std::size_t i = 0; i < w.prompt.size(); ++i) {
    const double p = w.prompt[i], f = w.weight[i];
    const double hit = cached_tokens(spec, p);
    w.p_mean += f * p;
    w.hit_tokens += f * hit;
    w.p_new_mean += f * (p - hit);
    w.p_new_m2 += f * (p - hit) * (p - hit);
  }
  for (std::size_t i = 0; i < w.output.size(); ++i) w.n_mean += w.weight[i] * w.output[i];
  return w;
}

/// Erlang C: probability that an arrival waits with c servers at offered load a < c.
double erlang_c(double c, double a) {
  if (a <= 0) return 0;
  const int servers = static_cast<int>(std::clamp(std::floor(c), 0.0, 1e9));
  double b = 1;  // Erlang B by the stable recursion
  for (int k = 1; k <= servers; ++k) b = a * b / (k + a * b);
  const double rho = a / servers;
  if (rho >= 1) return 1;
  return b / (1 - rho + rho * b);
}

/// The work an engine runs: both phases (collocated), or one pool of disaggregated serving, whose
/// prefill instances run prompts only and whose decode instances take the KV cache and decode.
enum class Pool { collocated, prefill, decode };

struct Model {
  const ServingSpec& spec;
  const detail::ServingSetup& setup;
  detail::StepCoster& coster;
  const Workload& w;
  double E = 1;       // tokens per decode step (speculative)
  double D = 1;       // steps a request occupies the batch (collocated: prefill + decode steps)
  double c_mean = 0;  // mean context of a decoding sequence
  Pool pool = Pool::collocated;
  /// step_at's answers so far: the searches for the batch and the saturation rate ask for the
  /// same few (decodes, prefill) pairs again and again (Llama-2-7B at 4 req/s: 324 asks, 74
  /// pairs). Valid as c_mean and the spec do not change after construction.
  std::unordered_map<std::uint64_t, double> priced;

  /// Step with `decodes` decoding sequences and `prefill` prefill tokens (integers).
  double step_at(int decodes, int prefill) {
    const std::uint64_t key =
        (std::uint64_t(std::uint32_t(decodes)) << 32) | std::uint64_t(std::uint32_t(prefill));
    if (const auto it = priced.find(key); it != priced.end()) return it->second;
    const double t = price_step(decodes, prefill);
    priced.emplace(key, t);
    return t;
  }

  double price_step(int decodes, int prefill) {
    StepShape s;
    PrefillChunk chunk{prefill, 0};
    s.decode_sequences = decodes;
    s.decode_context_tokens = decodes * c_mean;
    s.tokens_per_decode = spec.speculative.num_tokens > 0 ? spec.speculative.num_tokens + 1 : 1;
    if (prefill > 0) {
      s.prefills = &chunk;
      s.num_prefills = 1;
    }
    const int adapters = spec.lora.num_adapters > 0
                             ? std::min({spec.lora.num_adapters, spec.lora.max_loras_per_batch,
                                         std::max(1, decodes)})
                             : 0;
    double t = coster.cost(s, adapters, 0);
    if (prefill > 0 && w.p_new_mean > 0) {
      // Attention of the prefill share: a fraction of whole prompts after their cached prefix.
      StepTimeModel& m = coster.model();
      t -= m.prefill_attention_s(chunk);
      const PrefillChunk whole{static_cast<int>(std::round(w.p_new_mean)),
                               static_cast<int>(std::round(w.hit_tokens))};
      t += prefill / w.p_new_mean * m.prefill_attention_s(whole);
    }
    return t;
  }

  /// Steps of a mean batch of B sequences: decoding sequences, and the prefill chunk that a share
  /// f of the steps holds (chunks of a whole prompt, or of the budget the decodes leave).
  struct Mix {
    double decodes = 0, chunk = 0, f = 0;
  };
  Mix mix(double B) const {
    Mix x;
    if (pool == Pool::decode) {  // decodes only: every sequence of the batch in every step
      x.decodes = B;
      return x;
    }
    if (pool == Pool::prefill) {  // prompts only: B of them over D steps each, every step
      x.chunk = B * w.p_new_mean / D;
      x.f = 1;
      return x;
    }
    x.decodes = B * (D - 1) / D;
    const double prefill_per_step = B * w.p_new_mean / D;
    const int k1 = spec.speculative.num_tokens + 1;
    const double left =
        std::max(1.0, spec.inference.engine.max_num_batched_tokens -
                          (spec.policy == SchedulePolicy::decode_first ? x.decodes * k1 : 0.0));
    // Without chunking a prompt goes in whole, over the budget if it must (alone as a prefill).
    const bool chunked = spec.inference.engine.chunked_prefill;
    x.chunk = chunked ? std::min(std::max(w.p_new_mean, 1.0), left) : std::max(w.p_new_mean, 1.0);
    x.f = std::min(1.0, prefill_per_step / x.chunk);
    if (x.f >= 1) x.chunk = chunked ? std::min(left, prefill_per_step) : prefill_per_step;
    return x;
  }

  /// Step time with a fractional number of decoding sequences (interpolated between integers).
  double step_frac(double decodes, double prefill) {
    const int d0 = static_cast<int>(std::floor(decodes));
    const int p0 = static_cast<int>(std::round(prefill));
    const double base = step_at(d0, p0);
    return base + (decodes - d0) * (step_at(d0 + 1, p0) - base);
  }

  /// Mean step time at a mean of B sequences in the batch: decode-only steps and, a share f of
  /// the time, steps with a prefill chunk (without decodes under prefill-first).
  double tau(double B) {
    B = std::max(B, 1.0);
    const Mix x = mix(B);
    const double with_decodes = spec.policy == SchedulePolicy::decode_first ? x.decodes : 0.0;
    return (1 - x.f) * step_frac(x.decodes, 0) + x.f * step_frac(with_decodes, x.chunk);
  }

  double rate(double B) { return B / (D * tau(B)); }
};

/// Closed loop, quantile q of the wait for a batch slot over a finite run of `requests` (all
/// instances): `clients` per instance start at t = 0 and the first B are admitted at once, the
/// others as slots free at `x` completions per second, so the initial ones wait 0..W linearly;
/// every later request is sent when one ends and waits W = (clients − B) / x (Little's law).
double closed_wait(double q, double clients, double B, double x, int requests, int instances) {
  if (clients <= B || x <= 0) return 0;
  const double per_instance = static_cast<double>(requests) / instances;
  const double k = q * per_instance;  // rank of the request within its instance's run
  if (k < B) return 0;
  if (k < clients) return (k - B) / x;
  return (clients - B) / x;
}

/// Multi-LoRA: a request whose adapter is not in the batch waits while max_loras_per_batch
/// others are (the simulator's rule, as vLLM's). Each adapter is a source of a finite-source
/// queue (machine repairman, Engset): idle until a request for it arrives (rate λ/A), then it
/// needs one of c = max_loras_per_batch slots, and it holds the slot for an M/G/∞ busy period of
/// its own requests, (e^(λ_a h) − 1) / λ_a with h the time a request spends in the batch. A
/// request finding its adapter idle waits the source's mean wait W_q; one finding it already
/// waiting, half of it.
struct LoraWait {
  double mean_s = 0, probability = 0;
};

LoraWait lora_wait(const ServingSpec& spec, double lambda, double hold_s) {
  LoraWait out;
  const int n = spec.lora.num_adapters, c = spec.lora.max_loras_per_batch;
  if (n <= c || lambda <= 0 || hold_s <= 0) return out;
  const double la = lambda / n;
  const double busy = std::expm1(std::min(50.0, la * hold_s)) / la;
  // Stationary distribution of k sources at the slots (busy or queued): birth (n − k) la,
  // death min(k, c) / busy.
  std::vector<double> pi(static_cast<std::size_t>(n) + 1, 0.0);
  pi[0] = 1;
  double total = 1;
  for (int k = 1; k <= n; ++k) {
    pi[k] = pi[k - 1] * (n - k + 1) * la * busy / std::min(k, c);
    total += pi[k];
  }
  double lq = 0, l = 0, arrivals = 0, arrivals_wait = 0;
  for (int k = 0; k <= n; ++k) {
    pi[k] /= total;
    l += k * pi[k];
    lq += std::max(0, k - c) * pi[k];
    arrivals += (n - k) * la * pi[k];
    if (k >= c) arrivals_wait += (n - k) * la * pi[k];
  }
  if (arrivals <= 0) return out;
  const double wq = lq / arrivals;  // Little's law over source activations
  const double p_idle = (n - l) / n, p_queued = lq / n;
  out.mean_s = p_idle * wq + p_queued * wq / 2;
  out.probability = std::min(1.0, p_idle * arrivals_wait / arrivals + p_queued);
  return out;
}

double fraction_at_most(const Dist& d, double limit) {
  if (limit <= 0) return 1;
  double f = 0;
  for (std::size_t i = 0; i < d.x.size(); ++i) f += d.x[i] <= limit ? d.w[i] : 0.0;
  return f;
}

/// The batch limit per replica: max_num_seqs, the KV cache at the mean context (shared prefix
/// blocks counted once), and the token budget; at least 1 for a setup that fits (it holds one
/// whole request, make_setup checks it, and the engine runs a prompt over the budget alone: the
/// budget at a 20k-token prompt and 2 output tokens gave 0.82, hence zero throughput while
/// fits: true).
struct BatchLimit {
  double sequences = 0;     // b_max
  double kv_sequences = 0;  // the KV cache's share of it
};

BatchLimit batch_limit(const ServingSpec& spec, const detail::ServingSetup& setup, const Model& m,
                       const Workload& w) {
  const double block = setup.inference.engine.kv_block_tokens;
  // A prefill instance holds a prompt's KV cache only until its first token; an engine that
  // guarantees no eviction reserves each request's whole sequence from its admission.
  const double context = m.pool == Pool::prefill                      ? w.p_mean
                         : setup.inference.engine.guaranteed_no_evict ? w.p_mean + w.n_mean
                                                                      : m.c_mean;
  // A hybrid model's request holds its Mamba state's blocks beside those of its KV.
  const double per_seq_tokens = std::max(1.0, context - w.hit_tokens) + block / 2 +
                                static_cast<double>(setup.state_blocks) * block;
  BatchLimit b;
  b.kv_sequences = setup.kv_capacity_tokens / per_seq_tokens;
  const int k1 = spec.speculative.num_tokens + 1;
  const double tokens_per_seq_step = m.pool == Pool::decode ? k1
                                     : m.pool == Pool::prefill
                                         ? w.p_new_mean / m.D
                                         : (m.D - 1) / m.D * k1 + w.p_new_mean / m.D;
  const double b_budget = spec.inference.engine.max_num_batched_tokens / tokens_per_seq_step;
  b.sequences = std::max(setup.fits ? 1.0 : 0.0,
                         std::min({static_cast<double>(spec.inference.engine.max_num_seqs),
                                   b.kv_sequences, b_budget}));
  return b;
}

/// Requests per second per replica at saturation: the best rate over batches up to b_max.
double saturation_rate(Model& m, bool fits, double b_max) {
  if (!fits || b_max < 1) return 0;
  double lambda_sat = m.rate(b_max);
  for (int i = 1; i <= 16; ++i) lambda_sat = std::max(lambda_sat, m.rate(b_max * i / 16.0));
  return lambda_sat;
}

/// Steady-state batch of an open loop: λ(B) = λ, by bisection (λ(B) rises with B below b_max).
double steady_batch(Model& m, double b_max, double lambda) {
  double lo = 1e-9, hi = b_max;
  for (int i = 1; i <= 16; ++i) {
    if (m.rate(b_max * i / 16.0) >= lambda) {
      hi = b_max * i / 16.0;
      break;
    }
    lo = b_max * i / 16.0;
  }
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (m.rate(mid) < lambda ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// Prefill of a request at a mean batch of B: its service (the prompt's chunks on the budget
/// the decodes leave) and the work it puts on the step loop, the server of the prefill queue:
/// the time its chunks add to the steps they ride in, the mixed steps' cost above the decode
/// step's (the budget fraction times a decode step undercounted it ~10x for 512-token prompts).
struct PrefillQueue {
  Dist service;
  double work_s = 0;
};

PrefillQueue prefill_queue(const ServingSpec& spec, detail::StepCoster& coster, const Model& m,
                           const Workload& w, double B) {
  const int k1 = spec.speculative.num_tokens + 1;
  const double decodes = B * (m.D - 1) / m.D;
  const double budget = spec.inference.engine.max_num_batched_tokens;
  const bool decode_first = spec.policy == SchedulePolicy::decode_first;
  const double left = std::max(1.0, budget - (decode_first ? decodes * k1 : 0.0));
  const int dec = decode_first ? static_cast<int>(std::round(decodes)) : 0;
  std::vector<std::pair<double, double>> service_pts;
  std::vector<double> service_raw, service_steps;  // per prompt point: time and steps
  for (std::size_t i = 0; i < w.prompt.size(); ++i) {
    const double hit = cached_tokens(spec, w.prompt[i]);
    const double p_new = w.prompt[i] - hit;
    const double steps = spec.inference.engine.chunked_prefill ? std::ceil(p_new / left) : 1.0;
    const int chunk =
        static_cast<int>(spec.inference.engine.chunked_prefill ? std::min(p_new, left) : p_new);
    StepShape s;
    PrefillChunk c{chunk, static_cast<int>(std::round(hit))};
    s.prefills = &c;
    s.num_prefills = 1;
    s.decode_sequences = dec;
    s.decode_context_tokens = dec * m.c_mean;
    s.tokens_per_decode = k1;
    const double t = steps * coster.cost(s, 0, 0);
    service_pts.emplace_back(t, w.weight[i]);
    service_raw.push_back(t);
    service_steps.push_back(steps);
  }
  PrefillQueue q;
  q.service = compress(std::move(service_pts));
  StepShape d0;
  d0.decode_sequences = dec;
  d0.decode_context_tokens = dec * m.c_mean;
  d0.tokens_per_decode = k1;
  const double decode_step = coster.cost(d0, 0, 0);
  for (std::size_t i = 0; i < service_steps.size(); ++i) {
    q.work_s += w.weight[i] * std::max(0.0, service_raw[i] - service_steps[i] * decode_step);
  }
  return q;
}

/// The distributions a request's tokens follow at a mean batch B_seen: its TPOT (the mean step
/// over its n − 1 tokens, mixing steps with and without a prefill chunk, a binomial share f of
/// them holding one) and its decode time after the first token.
struct DecodeTimes {
  Dist tpot, decode;
};

DecodeTimes decode_times(const ServingSpec& spec, Model& m, const Workload& w, double B_seen) {
  const Model::Mix mx = m.mix(B_seen);
  const double f = mx.f;
  const double tau_d = m.step_frac(mx.decodes, 0);
  const double tau_m =
      m.step_frac(spec.policy == SchedulePolicy::decode_first ? mx.decodes : 0.0, mx.chunk);
  const double tpot_mean = m.tau(B_seen) / m.E;
  Dist z = from_quantile([](double q) { return normal_quantile(q); });
  double z_mean = 0;  // the grid's truncated tails leave a small bias: centre it
  for (std::size_t i = 0; i < z.x.size(); ++i) z_mean += z.w[i] * z.x[i];
  for (double& x : z.x) x -= z_mean;
  std::vector<std::pair<double, double>> tpot_pts, decode_pts;
  double tpot_weight = 0;
  for (std::size_t k = 0; k < w.output.size(); ++k) {
    const double n = w.output[k];
    decode_pts.emplace_back(std::max(0.0, n - 1) * tpot_mean, w.weight[k]);
    if (n < 2) continue;
    tpot_weight += w.weight[k];
    const double sd = std::sqrt(f * (1 - f) / (n - 1)) * std::max(0.0, tau_m - tau_d) / m.E;
    for (std::size_t i = 0; i < z.x.size(); ++i) {
      tpot_pts.emplace_back(std::max(tau_d / m.E * 0.5, tpot_mean + sd * z.x[i]),
                            w.weight[k] * z.w[i]);
    }
  }
  if (tpot_pts.empty()) {
    tpot_pts.emplace_back(tpot_mean, 1.0);
    tpot_weight = 1;
  }
  for (auto& pt : tpot_pts) pt.second /= tpot_weight;  // requests with n >= 2 only
  return {compress(std::move(tpot_pts)), compress(std::move(decode_pts))};
}

/// Saturated (or a closed loop that cannot run): throughput is the saturation rate (already in
/// `r`), the batch is the (decoding) engine's limit, and no latency is given.
void set_saturated(ServingResult& r, Model& m, double offered_per_s, double b_max) {
  r.saturated = true;
  r.requests_per_s = r.saturation_rate_per_s;
  r.input_tokens_per_s = r.requests_per_s * m.w.p_mean;
  r.output_tokens_per_s = r.requests_per_s * m.w.n_mean;
  r.mean_batch_size = b_max;
  r.mean_step_time_s = b_max >= 1 ? m.tau(b_max) : 0;
  r.warnings.push_back("saturated: the offered " + format_number(offered_per_s) +
                       " requests/s exceed the saturation rate of " +
                       format_number(r.saturation_rate_per_s) +
                       " requests/s; queues grow without bound, so no latency is given "
                       "(throughput is the saturation rate)");
}

/// The running batch a request sees: the mean batch B, the limit, the mean step time, and for a
/// closed loop its clients per replica.
struct Batch {
  double B, b_max, tau, clients;
  bool closed;
};

/// A wait at quantile q that is 0 with probability 1 − p and otherwise exponential with mean
/// mean / p (so that its mean is `mean`).
double wait_quantile(double q, double mean, double p) {
  return q < 1 - p ? 0.0 : mean / p * std::log(p / (1 - q));
}

/// A request's wait before its prefill starts and what it is made of.
struct Waits {
  Dist wait;
  double rho_prefill = 0;  // utilization of the prefill queue
  double p_slot = 0;       // probability of waiting for a batch slot
  LoraWait lora;
};

/// Queue of prefill work (G/G/1 on the step loop) and the wait for a batch slot (c = batch limit
/// servers, each holding a request for D steps: Erlang C scaled by (ca² + cs²)/2 for general
/// arrivals and holding times), both Allen-Cunneen, and the adapters' wait under multi-LoRA.
Waits queue_waits(const ServingSpec& spec, const Model& m, const Workload& w,
                  const PrefillQueue& prefill, const Batch& batch,
                  const detail::ServingSetup& setup) {
  // Plain copies: a C++17 lambda cannot capture structured bindings.
  const double B = batch.B, b_max = batch.b_max, tau = batch.tau, clients = batch.clients;
  const bool closed = batch.closed;
  Waits out;
  out.rho_prefill = closed ? 0.0 : std::min(0.999, w.lambda * prefill.work_s);
  const double rho_p = out.rho_prefill;
  const double cs2 = w.p_new_mean > 0 ? w.p_new_m2 / (w.p_new_mean * w.p_new_mean) - 1 : 0;
  const double w_prefill = (w.ca2 + std::max(0.0, cs2)) / 2 * rho_p / (1 - rho_p) * prefill.work_s;
  double hold_m = 0, hold_m2 = 0;  // steps a request holds its slot: its prompt's and decodes'
  for (std::size_t i = 0; i < w.output.size(); ++i) {
    const double decode_steps = std::max(0.0, w.output[i] - 1) / m.E;
    const double d = m.pool == Pool::prefill  ? m.D
                     : m.pool == Pool::decode ? decode_steps
                                              : 1 + decode_steps;
    hold_m += w.weight[i] * d;
    hold_m2 += w.weight[i] * d * d;
  }
  const double cs2_hold = hold_m > 0 ? std::max(0.0, hold_m2 / (hold_m * hold_m) - 1) : 0;
  out.p_slot = closed ? (clients > B ? 1 - B / clients : 0.0) : erlang_c(b_max, B);
  const double w_slot =
      b_max > B ? (w.ca2 + cs2_hold) / 2 * out.p_slot * m.D * tau / (b_max - B) : 0;
  out.lora = closed ? LoraWait{} : lora_wait(spec, w.lambda, m.D * tau);
  const double w_mean = w_prefill + w_slot + out.lora.mean_s;
  const double p_wait = std::clamp(std::max({rho_p, out.p_slot, out.lora.probability}), 1e-9, 1.0);
  // Wait: 0 with probability 1 − p_wait, else exponential with mean w_mean / p_wait (so its mean
  // is w_mean); a closed loop's wait follows the clients' queue.
  out.wait = from_quantile(
      [&](double q) {
        if (closed) return closed_wait(q, clients, B, w.lambda, spec.num_requests, setup.instances);
        return wait_quantile(q, w_mean, p_wait);
      },
      64);
  return out;
}

}  // namespace

namespace {

/// What the analytic engine does not model: an explicit error, not a guess.
void check_analytic(const ServingSpec& spec, const detail::ServingSetup& setup) {
  if (setup.prefill_instances > 0 && spec.arrival.kind == ArrivalKind::concurrency) {
    throw NotModelledError("features.disaggregated",
                           "the analytic engine models disaggregated pools under an open-loop "
                           "arrival rate only; use mode \"simulate\" for a closed loop");
  }
  if (setup.prefill_instances > 0 && spec.lora.num_adapters > 0) {
    throw NotModelledError("features.disaggregated",
                           "the analytic engine does not model multi-LoRA in disaggregated pools; "
                           "use mode \"simulate\"");
  }
  if (spec.batching == Batching::static_batch) {
    throw NotModelledError("engine.batching",
                           "the analytic engine models continuous batching only; use mode "
                           "\"simulate\" for static batching");
  }
}

/// No request fits (see the setup's warning): nothing is served and no latency exists; any rate
/// exceeds the saturation rate of 0.
void set_does_not_fit(ServingResult& r) {
  r.saturated = true;
  r.saturation_rate_per_s = 0;
  r.utilization = 0;
}

struct Latencies {
  Dist queueing, ttft, tpot, e2e;
};

/// Summaries, throughput at `total` requests/s and goodput (the share meeting every SLO).
void set_latencies(ServingResult& r, const ServingSpec& spec, const Workload& w, double total,
                   const Latencies& l) {
  r.queueing_s = summarize(l.queueing);
  r.ttft_s = summarize(l.ttft);
  r.tpot_s = summarize(l.tpot);
  r.e2e_s = summarize(l.e2e);
  r.requests_per_s = total;
  r.input_tokens_per_s = total * w.p_mean;
  r.output_tokens_per_s = total * w.n_mean;
  if (spec.slo.any()) {
    const double ok = fraction_at_most(l.ttft, spec.slo.ttft_s) *
                      fraction_at_most(l.tpot, spec.slo.tpot_s) *
                      (spec.slo.e2e_s > 0 ? fraction_at_most(l.e2e, spec.slo.e2e_s) : 1.0);
    r.goodput_fraction = ok;
    r.goodput_requests_per_s = ok * total;
  }
}

/// Latency distributions (queueing, TTFT, TPOT, E2E), throughput and goodput of an unsaturated
/// setup whose running batch is `batch`.
void fill_latencies(ServingResult& r, const ServingSpec& spec, const detail::ServingSetup& setup,
                    detail::StepCoster& coster, Model& m, const Workload& w, const Batch& batch) {
  const double B = batch.B, tau = batch.tau;
  const double B_seen = batch.closed ? B : B + 1;
  const PrefillQueue prefill = prefill_queue(spec, coster, m, w, B);
  const Waits waits = queue_waits(spec, m, w, prefill, batch, setup);
  // Arrivals land at a uniform phase of the step (or of the k-step window of multi-step); a
  // closed loop's request is sent as its predecessor ends and joins the next step.
  const double window = batch.closed ? 0.0 : spec.num_scheduler_steps * tau;
  // Async scheduling: the next step was planned before the request arrived, so it joins one step
  // later whenever the engine is busy (a running batch of B sequences: busy min(1, B) of the time).
  const double async_lag = spec.inference.engine.async_scheduling ? std::min(1.0, B) * tau : 0.0;
  const Dist phase = from_quantile([&](double q) { return q * window + async_lag; });
  const Dist queueing = convolve(waits.wait, phase);
  Dist ttft = convolve(queueing, prefill.service);
  for (double& x : ttft.x) x += setup.inference.engine.request_overhead_s;

  const DecodeTimes decode = decode_times(spec, m, w, B_seen);
  const Dist e2e = convolve(ttft, decode.decode);

  set_latencies(r, spec, w, w.lambda * setup.instances, {queueing, ttft, decode.tpot, e2e});
  r.assumptions.push_back({"prefill_utilization", waits.rho_prefill,
                           "fraction of the leftover token budget",
                           "prefill work per second / (leftover budget per step / step time)"});
  if (waits.lora.mean_s > 0) {
    r.assumptions.push_back({"lora_slot_wait", waits.lora.mean_s, "s",
                             "adapters as sources of a finite-source queue for "
                             "max_loras_per_batch slots, each held for its M/G/inf busy period"});
  }
  r.assumptions.push_back({"slot_wait_probability", waits.p_slot, "probability",
                           "Erlang C with the batch limit as servers and the mean batch as load"});
}

/// A quantile function: 0 while the engine is idle (1 − busy of the time), else uniform on
/// [0, window]: the part of the running step (or multi-step window) an arrival waits for.
Dist step_phase(double busy, double window) {
  return from_quantile(
      [&](double q) { return q < 1 - busy ? 0.0 : (q - 1 + busy) / busy * window; });
}

/// Regularized lower incomplete gamma P(a, x), by its series.
double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  if (x > a + 40 * std::sqrt(a) + 40) return 1;
  double term = 1 / a, sum = term;
  for (int n = 1; n < 2000 && term > sum * 1e-12; ++n) {
    term *= x / (a + n);
    sum += term;
  }
  return std::min(1.0, std::exp(a * std::log(x) - x - std::lgamma(a)) * sum);
}

/// Probability that a request finds its instance busy when the router deals every `instances`-th
/// arrival to it (round robin) and the instance is busy a share `rho` of the time. Its gaps are
/// the sum of `instances` gaps of the whole stream: a gamma of shape instances / ca2 (Erlang for
/// Poisson arrivals), so the instance is busy when the gap is shorter than the step it last
/// started, P(shape, shape·rho), scaled so that one instance with Poisson arrivals gives rho
/// (PASTA). Three prefill instances at 27 % busy find their instance busy 5 % of the time, not 27.
double busy_on_arrival(double rho, double ca2, int instances) {
  if (rho >= 1) return 1;
  if (rho <= 0) return 0;
  const double shape = std::min(1e4, instances / std::max(ca2, 1e-4));
  return std::min(1.0, rho / -std::expm1(-rho) * gamma_p(shape, shape * rho));
}

/// Disaggregated prefill and decode pools (Splitwise, DistServe; vLLM's and SGLang's PD
/// disaggregation): each pool is an engine of its own at its share of the rate. A prefill
/// instance runs prompts only, B of them a step (Little's law, as the collocated batch), and
/// samples the first token: TTFT is the step an arrival finds running, a wait for a slot of the
/// step's token budget, and its prompt's steps beside the others'. The KV cache then crosses the
/// link (latency + prompt tokens x KV bytes per token / bandwidth) and waits for a decode slot;
/// the decode instance runs decodes only. Both count in TPOT, first token to last over n - 1
/// tokens, as the simulator and vLLM's benchmark count it.
void estimate_pools(ServingResult& r, const ServingSpec& spec, const detail::ServingSetup& setup,
                    detail::StepCoster& coster) {
  const int P = setup.prefill_instances, N = setup.instances - setup.prefill_instances;
  Workload wp = make_workload(spec, P);
  const double ca2 = wp.ca2;
  Workload wd = wp;
  wd.lambda = wp.lambda * P / N;
  // Round robin deals every P-th (N-th) arrival to an instance: the sum of P gaps, with 1/P of
  // their squared coefficient of variation.
  wp.ca2 = ca2 / P;
  wd.ca2 = ca2 / N;
  const double total = wp.lambda * P;
  if (wp.n_mean < 2) {
    throw NotModelledError("workload.output_tokens",
                           "disaggregated pools need a mean output of at least 2 tokens (the "
                           "decode pool takes a request after its first token)");
  }
  const auto& engine = spec.inference.engine;
  const double budget = engine.max_num_batched_tokens;
  const double E = setup.expected_tokens_per_step;
  Model pre{spec,      setup,
            coster,    wp,
            1.0,       engine.chunked_prefill ? std::max(1.0, wp.p_new_mean / budget) : 1.0,
            wp.p_mean, Pool::prefill,
            {}};
  Model dec{spec,         setup, coster, wd, E, (wd.n_mean - 1) / E, wd.p_mean + wd.n_mean / 2,
            Pool::decode, {}};
  const BatchLimit lp = batch_limit(spec, setup, pre, wp), ld = batch_limit(spec, setup, dec, wd);
  const double sat_p = saturation_rate(pre, setup.fits, lp.sequences);
  const double sat_d = saturation_rate(dec, setup.fits, ld.sequences);
  r.max_batch_kv = static_cast<int>(std::clamp(std::floor(ld.kv_sequences), 0.0, 1e9));
  r.saturation_rate_per_s = std::min(sat_p * P, sat_d * N);
  r.utilization = sat_p > 0 && sat_d > 0 ? std::max(wp.lambda / sat_p, wd.lambda / sat_d) : 0;
  r.assumptions = {
      {"arrival_scv", ca2, "squared CV of inter-arrival times",
       "Allen-Cunneen: each pool's slot wait scaled by (ca^2/instances + cs^2)/2 (round robin)"},
      {"tokens_per_decode_step", E, "tokens",
       "speculative decoding: (1 - a^(k+1)) / (1 - a); 1 without it"},
      {"prefill_pool_saturation_rate", sat_p * P, "requests/s",
       "prefill instances x the best prompts per second of one (token budget, KV, max_num_seqs)"},
      {"decode_pool_saturation_rate", sat_d * N, "requests/s",
       "decode instances x the best rate of one at its batch limit"},
      {"decode_batch_limit", ld.sequences, "sequences",
       "min(max_num_seqs, KV capacity at the mean context, token budget)"},
  };
  if (!setup.fits) {
    set_does_not_fit(r);
    return;
  }
  if (sat_p <= 0 || sat_d <= 0 || wp.lambda >= sat_p || wd.lambda >= sat_d) {
    set_saturated(r, dec, total, ld.sequences);
    return;
  }

  // Prefill pool: TTFT.
  const double B_p = steady_batch(pre, lp.sequences, wp.lambda), tau_p = pre.tau(B_p);
  const double busy_p = busy_on_arrival(std::min(1.0, B_p), ca2, P);
  // The prompts queued behind the running step: a G/G/1 queue of prompt work (Allen-Cunneen's
  // M/G/1 wait less the running step's residual, rho R, which the phase above is), with the
  // instance's work per request at its saturation rate; the probability of queued work behind
  // that step is taken as busy x rho (M/M/1: rho^2). A prefill instance serves its queue as one
  // server of tokens, not as slots: Erlang C on budget / prompt slots put the queue of
  // 2,000-token lognormal prompts at 83 % load at 35 ms, the simulator at 232 ms.
  const double rho_p = wp.lambda / sat_p;
  const double cs2 =
      wp.p_new_mean > 0 ? std::max(0.0, wp.p_new_m2 / (wp.p_new_mean * wp.p_new_mean) - 1) : 0;
  const double queued_mean = (wp.ca2 + cs2) / 2 * rho_p * rho_p / (1 - rho_p) / sat_p;
  const double p_queued = std::clamp(busy_p * rho_p, 1e-9, 1.0);
  const Dist queued =
      from_quantile([&](double q) { return wait_quantile(q, queued_mean, p_queued); }, 64);
  Dist queueing = convolve(queued, step_phase(busy_p, tau_p));
  // A prompt's steps, each holding its chunk (exactly priced) and the others' prompts: B - 1 of
  // them when the instance runs back to back, else those that arrived during the step it waited
  // for (half a step's arrivals when it found the instance busy). Whole prompts (or chunks of
  // p/D), interpolated between counts: 4 tokens more than 1,024 cost a tile row (+23 % on an
  // H100), one more prompt in a quarter of the steps does not.
  const double others = std::max(B_p - 1, wp.lambda * busy_p * tau_p / 2);
  const double unit = wp.p_new_mean / pre.D;
  const int whole = static_cast<int>(std::floor(others));
  std::vector<std::pair<double, double>> service;
  for (std::size_t i = 0; i < wp.prompt.size(); ++i) {
    const double hit = cached_tokens(spec, wp.prompt[i]), p_new = wp.prompt[i] - hit;
    const double steps = engine.chunked_prefill ? std::ceil(p_new / budget) : 1.0;
    const double own = p_new / steps;
    const auto with = [&](int k) {
      const double tokens = own + k * unit;
      return pre.step_frac(0, engine.chunked_prefill ? std::min(budget, tokens) : tokens);
    };
    const double marginal = std::max(
        0.0, (1 - (others - whole)) * with(whole) + (others - whole) * with(whole + 1) - with(0));
    PrefillChunk chunk{static_cast<int>(std::round(own)), static_cast<int>(std::round(hit))};
    StepShape alone;
    alone.prefills = &chunk;
    alone.num_prefills = 1;
    service.emplace_back(steps * (coster.cost(alone) + marginal), wp.weight[i]);
  }
  // Async scheduling: the step after the running one was planned as it began, so an arrival
  // waits one step more, unless that step would have been empty (an idle prefill instance plans
  // again when work arrives): when other prompts wait too.
  const double async_lag = engine.async_scheduling ? busy_p * std::min(1.0, others) * tau_p : 0.0;
  for (double& x : queueing.x) x += async_lag;
  Dist ttft = convolve(queueing, compress(std::move(service)));
  for (double& x : ttft.x) x += engine.request_overhead_s;

  // Decode pool: the KV transfer, a wait for a slot, the step running on arrival, n - 1 tokens.
  const double B_d = steady_batch(dec, ld.sequences, wd.lambda), tau_d = dec.tau(B_d);
  const Waits waits_d =
      queue_waits(spec, dec, wd, PrefillQueue{}, {B_d, ld.sequences, tau_d, 0, false}, setup);
  std::vector<std::pair<double, double>> transfer;
  double transfer_mean = 0;
  for (std::size_t i = 0; i < wd.prompt.size(); ++i) {
    const double t = spec.disaggregation.kv_link_latency_s +
                     (wd.prompt[i] * setup.kv_bytes_per_token + setup.state_bytes_per_request) /
                         spec.disaggregation.kv_link_bytes_per_s;
    transfer.emplace_back(t, wd.weight[i]);
    transfer_mean += wd.weight[i] * t;
  }
  const Dist handoff = convolve(convolve(compress(std::move(transfer)), waits_d.wait),
                                step_phase(std::min(1.0, B_d), spec.num_scheduler_steps * tau_d));
  const double per_token = dec.tau(B_d + 1) / E;  // the step holds the request and B others
  std::vector<std::pair<double, double>> tpot, after_first;
  double tpot_weight = 0;
  for (std::size_t k = 0; k < wd.output.size(); ++k) {
    const double n = wd.output[k];
    if (n < 2) {  // done at its first token, on the prefill instance
      after_first.emplace_back(0.0, wd.weight[k]);
      continue;
    }
    tpot_weight += wd.weight[k];
    for (std::size_t i = 0; i < handoff.x.size(); ++i) {
      const double wk = wd.weight[k] * handoff.w[i];
      tpot.emplace_back(handoff.x[i] / (n - 1) + per_token, wk);
      after_first.emplace_back(handoff.x[i] + (n - 1) * per_token, wk);
    }
  }
  for (auto& pt : tpot) pt.second /= tpot_weight;
  const Dist e2e = convolve(ttft, compress(std::move(after_first)));

  r.mean_batch_size = B_d;
  r.mean_step_time_s = tau_d;
  set_latencies(r, spec, wp, total, {queueing, ttft, compress(std::move(tpot)), e2e});
  r.assumptions.push_back({"prefill_pool_batch", B_p, "prompts per step",
                           "Little's law: rate per prefill instance x steps per prompt x step "
                           "time; below 1 it is the share of time the instance is busy"});
  r.assumptions.push_back({"decode_pool_batch", B_d, "sequences",
                           "Little's law: rate per decode instance x (n - 1)/tokens per step x "
                           "step time"});
  r.assumptions.push_back({"kv_transfer_ms", transfer_mean * 1e3, "ms",
                           "kv_link_latency + prompt tokens x KV bytes per token / kv_link"});
}

/// estimate_serving before its physical bounds are checked.
ServingResult estimate_serving_unchecked(const ServingSpec& spec) {
  const detail::ServingSetup setup = detail::make_setup(spec);
  check_analytic(spec, setup);
  detail::StepCoster coster(spec, setup);
  ServingResult r;
  r.fits = setup.fits;
  r.unfit_reason = setup.unfit_reason;
  r.tier = coster.tier();
  r.replicas = setup.instances;
  r.warnings = setup.warnings;
  r.kv_capacity_tokens = setup.kv_capacity_tokens;
  r.state_bytes_per_request = setup.state_bytes_per_request;
  if (setup.prefill_instances > 0) {
    estimate_pools(r, spec, setup, coster);
    return r;
  }
  Workload w = make_workload(spec, setup.instances);
  const double E = setup.expected_tokens_per_step;
  Model m{spec,
          setup,
          coster,
          w,
          E,
          1 + std::max(0.0, w.n_mean - 1) / E,
          w.p_mean + w.n_mean / 2,
          Pool::collocated,
          {}};

  const BatchLimit limit = batch_limit(spec, setup, m, w);
  const double b_max = limit.sequences;
  r.max_batch_kv = static_cast<int>(std::clamp(std::floor(limit.kv_sequences), 0.0, 1e9));
  const double lambda_sat = saturation_rate(m, setup.fits, b_max);
  r.saturation_rate_per_s = lambda_sat * setup.instances;
  r.utilization = lambda_sat > 0 ? w.lambda / lambda_sat : 0;
  r.assumptions = {
      {"arrival_scv", w.ca2, "squared CV of inter-arrival times",
       "Allen-Cunneen G/G/1 wait: (ca^2 + cs^2)/2 * rho/(1-rho) * E[S]"},
      {"tokens_per_decode_step", m.E, "tokens",
       "speculative decoding: (1 - a^(k+1)) / (1 - a); 1 without it"},
      {"batch_limit", b_max, "sequences",
       "min(max_num_seqs, KV capacity at the mean context, token budget)"},
      {"mean_context", m.c_mean, "tokens", "mean prompt + half the mean output"},
  };
  // Closed loop (arrival kind concurrency): N clients per instance each keep one request
  // outstanding, so the running batch is min(N, batch limit) and the rest wait in the engine.
  const bool closed = spec.arrival.kind == ArrivalKind::concurrency;
  const double clients = closed ? std::min(spec.arrival.concurrency, spec.num_requests) /
                                      static_cast<double>(setup.instances)
                                : 0.0;
  if (closed && lambda_sat > 0) {
    w.lambda = m.rate(std::min(clients, b_max));
    r.utilization = w.lambda / lambda_sat;
    r.assumptions.push_back({"clients_per_replica", clients, "requests",
                             "closed loop: concurrency / replicas, each sends its next request "
                             "when the previous one ends; batch = min(clients, batch_limit), "
                             "throughput = batch / (steps per request x step time), wait by "
                             "Little's law"});
  }
  if (!setup.fits) {
    set_does_not_fit(r);
    return r;
  }
  if (lambda_sat <= 0 || (!closed && w.lambda >= lambda_sat)) {
    set_saturated(r, m, w.lambda * setup.instances, b_max);
    return r;
  }

  // The mean batch: the steady state of an open loop, min(clients, b_max) for a closed one. The
  // step a request sees holds itself and, by PASTA, the mean batch of the others (a closed
  // loop's batch already counts the request itself).
  const double B = closed ? std::min(clients, b_max) : steady_batch(m, b_max, w.lambda);
  const double tau = m.tau(B);
  r.mean_batch_size = B;
  r.mean_step_time_s = tau;
  fill_latencies(r, spec, setup, coster, m, w, {B, b_max, tau, clients, closed});
  return r;
}

}  // namespace

ServingResult estimate_serving(const ServingSpec& spec) {
  ServingResult r = estimate_serving_unchecked(spec);
  detail::check_physical(spec, r);
  return r;
}

}  // namespace flopcast
