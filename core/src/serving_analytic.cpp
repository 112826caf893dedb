// SPDX-License-Identifier: MIT
// Analytic serving model: Little's-law fixed point for the steady-state batch, a G/G/1 queue of
// prefill work on the step's leftover token budget, an Erlang-C wait for a batch slot, and
// percentiles from quantile grids. Assumptions are listed in the result and in docs/model.md.
#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"
#include "flopcast/stats.hpp"
#include "serving_internal.hpp"

namespace flopcast {
namespace {

constexpr int kLengthPoints = 32;   // quantile points of prompt and output lengths
constexpr int kWaitPoints = 32;     // quantile points of the queueing wait
constexpr int kResidualPoints = 8;  // uniform phase of the running step at arrival

struct Workload {
  double lambda = 0;  // per instance, requests/s
  double ca2 = 1;     // squared coefficient of variation of inter-arrival times
  std::vector<double> prompt, output;  // quantile points
  double p_mean = 0, p_new_mean = 0, p_new_m2 = 0, n_mean = 0;
  double hit_tokens = 0;  // mean cached prefix tokens per request
};

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
  w.prompt = detail::length_points(spec, true, kLengthPoints);
  w.output = detail::length_points(spec, false, kLengthPoints);
  for (double p : w.prompt) {
    const double hit = spec.prefix.hit_rate * std::min<double>(spec.prefix.shared_prefix_tokens, p - 1);
    w.p_mean += p / kLengthPoints;
    w.hit_tokens += hit / kLengthPoints;
    w.p_new_mean += (p - hit) / kLengthPoints;
    w.p_new_m2 += (p - hit) * (p - hit) / kLengthPoints;
  }
  for (double n : w.output) w.n_mean += n / kLengthPoints;
  return w;
}

/// Erlang C: probability that an arrival waits with c servers at offered load a < c.
double erlang_c(double c, double a) {
  if (a <= 0) return 0;
  const int servers = static_cast<int>(std::floor(c));
  double b = 1;  // Erlang B by the stable recursion
  for (int k = 1; k <= servers; ++k) b = a * b / (k + a * b);
  const double rho = a / servers;
  if (rho >= 1) return 1;
  return b / (1 - rho + rho * b);
}

struct Model {
  const ServingSpec& spec;
  const detail::ServingSetup& setup;
  detail::StepCoster& coster;
  const Workload& w;
  double E = 1;     // tokens per decode step (speculative)
  double D = 1;     // steps a request occupies the batch: prefill + decode steps
  double c_mean = 0;  // mean context of a decoding sequence

  /// Step with `decodes` decoding sequences and `prefill` prefill tokens (integers).
  double step_at(int decodes, int prefill) {
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
    x.decodes = B * (D - 1) / D;
    const double prefill_per_step = B * w.p_new_mean / D;
    const int k1 = spec.speculative.num_tokens + 1;
    const double left =
        std::max(1.0, spec.engine.max_num_batched_tokens -
                          (spec.policy == SchedulePolicy::decode_first ? x.decodes * k1 : 0.0));
    x.chunk = std::min(std::max(w.p_new_mean, 1.0), left);
    x.f = std::min(1.0, prefill_per_step / x.chunk);
    if (x.f >= 1) x.chunk = std::min(left, prefill_per_step);
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

/// Sorted sums a_i + b_j of two point sets.
std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  out.reserve(a.size() * b.size());
  for (double x : a) {
    for (double y : b) out.push_back(x + y);
  }
  std::sort(out.begin(), out.end());
  return out;
}

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

double fraction_at_most(const std::vector<double>& sorted, double limit) {
  if (limit <= 0) return 1;
  const auto it = std::upper_bound(sorted.begin(), sorted.end(), limit);
  return static_cast<double>(it - sorted.begin()) / static_cast<double>(sorted.size());
}

}  // namespace

ServingResult estimate_serving(const ServingSpec& spec) {
  const detail::ServingSetup setup = detail::make_setup(spec);
  if (setup.prefill_instances > 0) {
    throw NotModelledError("features.disaggregated",
                           "the analytic engine does not model disaggregated pools; use mode "
                           "\"simulate\"");
  }
  if (spec.batching == Batching::static_batch) {
    throw NotModelledError("engine.batching",
                           "the analytic engine models continuous batching only; use mode "
                           "\"simulate\" for static batching");
  }
  detail::StepCoster coster(spec, setup);
  ServingResult r;
  r.fits = setup.fits;
  r.tier = coster.tier();
  r.replicas = setup.instances;
  r.warnings = setup.warnings;
  r.kv_capacity_tokens = setup.kv_capacity_tokens;
  Workload w = make_workload(spec, setup.instances);
  Model m{spec, setup, coster, w};
  m.E = setup.expected_tokens_per_step;
  m.D = 1 + std::max(0.0, w.n_mean - 1) / m.E;
  m.c_mean = w.p_mean + w.n_mean / 2;

  // The batch limit: max_num_seqs, the KV cache at the mean context (shared prefix blocks
  // counted once), and the token budget.
  const double block = setup.inference.kv_block_tokens;
  const double per_seq_tokens = std::max(1.0, m.c_mean - w.hit_tokens) + block / 2;
  const double b_kv = setup.kv_capacity_tokens / per_seq_tokens;
  r.max_batch_kv = static_cast<int>(std::floor(b_kv));
  const double tokens_per_seq_step =
      (m.D - 1) / m.D * (spec.speculative.num_tokens + 1) + w.p_new_mean / m.D;
  const double b_budget = spec.engine.max_num_batched_tokens / tokens_per_seq_step;
  const double b_max = std::min({static_cast<double>(spec.engine.max_num_seqs), b_kv, b_budget});

  double lambda_sat = 0;
  if (setup.fits && b_max >= 1) {
    lambda_sat = m.rate(b_max);
    for (int i = 1; i <= 16; ++i) lambda_sat = std::max(lambda_sat, m.rate(b_max * i / 16.0));
  }
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
  const double clients =
      closed ? std::min(spec.arrival.concurrency, spec.num_requests) /
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
  if (lambda_sat <= 0 || (!closed && w.lambda >= lambda_sat)) {
    r.saturated = true;
    r.requests_per_s = lambda_sat * setup.instances;
    r.input_tokens_per_s = r.requests_per_s * w.p_mean;
    r.output_tokens_per_s = r.requests_per_s * w.n_mean;
    r.mean_batch_size = b_max;
    r.mean_step_time_s = b_max >= 1 ? m.tau(b_max) : 0;
    r.warnings.push_back("saturated: the offered " +
                         format_number(w.lambda * setup.instances) +
                         " requests/s exceed the saturation rate of " +
                         format_number(r.saturation_rate_per_s) +
                         " requests/s; queues grow without bound, so no latency is given "
                         "(throughput is the saturation rate)");
    return r;
  }

  // Steady-state batch: λ(B) = λ_r, by bisection (λ(B) rises with B below b_max); a closed loop
  // runs min(clients, b_max).
  double lo = 1e-9, hi = b_max;
  for (int i = 1; i <= 16; ++i) {
    if (m.rate(b_max * i / 16.0) >= w.lambda) {
      hi = b_max * i / 16.0;
      break;
    }
    lo = b_max * i / 16.0;
  }
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (m.rate(mid) < w.lambda ? lo : hi) = mid;
  }
  const double B = closed ? std::min(clients, b_max) : 0.5 * (lo + hi);
  const double tau = m.tau(B);
  // The step a request sees holds itself and, by PASTA, the mean batch of the others (a closed
  // loop's batch already counts the request itself).
  const double B_seen = closed ? B : B + 1;
  const double tau_seen = m.tau(B_seen);
  r.mean_batch_size = B;
  r.mean_step_time_s = tau;

  // Prefill service: the prompt's chunks on the budget left by the decodes.
  const int k1 = spec.speculative.num_tokens + 1;
  const double decodes = B * (m.D - 1) / m.D;
  const double budget = spec.engine.max_num_batched_tokens;
  const double left = std::max(1.0, budget - (spec.policy == SchedulePolicy::decode_first
                                                  ? decodes * k1 : 0.0));
  std::vector<double> service;
  for (double p : w.prompt) {
    const double hit = spec.prefix.hit_rate * std::min<double>(spec.prefix.shared_prefix_tokens, p - 1);
    const double p_new = p - hit;
    const double steps = spec.engine.chunked_prefill ? std::ceil(p_new / left) : 1.0;
    const int chunk = static_cast<int>(std::min(p_new, left));
    const int dec = spec.policy == SchedulePolicy::decode_first
                        ? static_cast<int>(std::round(decodes))
                        : 0;
    StepShape s;
    PrefillChunk c{chunk, static_cast<int>(std::round(hit))};
    s.prefills = &c;
    s.num_prefills = 1;
    s.decode_sequences = dec;
    s.decode_context_tokens = dec * m.c_mean;
    s.tokens_per_decode = k1;
    const double t = steps * coster.cost(s, 0, 0);
    service.push_back(t);
  }
  // Queue of prefill work: the budget left by decodes is the server.
  const double s_work = w.p_new_mean / left * tau;  // seconds of budget one prompt takes
  const double rho_p = closed ? 0.0 : std::min(0.999, w.lambda * s_work);
  const double cs2 = w.p_new_mean > 0 ? w.p_new_m2 / (w.p_new_mean * w.p_new_mean) - 1 : 0;
  const double w_prefill = (w.ca2 + std::max(0.0, cs2)) / 2 * rho_p / (1 - rho_p) * s_work;
  // Wait for a batch slot: c = batch limit servers, each holding a request for D steps.
  const double pw_slot = closed ? (clients > B ? 1 - B / clients : 0.0) : erlang_c(b_max, B);
  const double w_slot = b_max > B ? pw_slot * m.D * tau / (b_max - B) : 0;
  const double w_mean = w_prefill + w_slot;
  const double p_wait = std::clamp(std::max(rho_p, pw_slot), 1e-9, 1.0);
  std::vector<double> wait;
  for (int i = 0; i < kWaitPoints; ++i) {
    const double q = (i + 0.5) / kWaitPoints;
    if (closed) {
      wait.push_back(closed_wait(q, clients, B, w.lambda, spec.num_requests, setup.instances));
    } else {
      wait.push_back(q < 1 - p_wait ? 0 : w_mean / p_wait * std::log(p_wait / (1 - q)));
    }
  }
  // Arrivals land at a uniform phase of the step (or of the k-step window of multi-step); a
  // closed loop's request is sent as its predecessor ends and joins the next step.
  std::vector<double> phase;
  for (int i = 0; i < kResidualPoints; ++i) {
    phase.push_back(closed ? 0.0 : (i + 0.5) / kResidualPoints * spec.num_scheduler_steps * tau);
  }
  const std::vector<double> queueing = convolve(wait, phase);
  std::vector<double> ttft = convolve(queueing, service);
  for (double& x : ttft) x += setup.inference.request_overhead_s;

  // TPOT: a request's mean step time over its n − 1 tokens, mixing steps with and without a
  // prefill chunk (binomial share f of steps hold one).
  const Model::Mix mx = m.mix(B_seen);
  const double f = mx.f;
  const double tau_d = m.step_frac(mx.decodes, 0);
  const double tau_m =
      m.step_frac(spec.policy == SchedulePolicy::decode_first ? mx.decodes : 0.0, mx.chunk);
  const double tpot_mean = tau_seen / m.E;
  std::vector<double> tpot;
  for (double n : w.output) {
    if (n < 2) continue;
    const double sd = std::sqrt(f * (1 - f) / (n - 1)) * std::max(0.0, tau_m - tau_d) / m.E;
    for (int i = 0; i < kResidualPoints; ++i) {
      tpot.push_back(std::max(tau_d / m.E * 0.5,
                              tpot_mean + sd * normal_quantile((i + 0.5) / kResidualPoints)));
    }
  }
  if (tpot.empty()) tpot.push_back(tpot_mean);
  std::sort(tpot.begin(), tpot.end());
  std::vector<double> decode_time;
  for (double n : w.output) decode_time.push_back(std::max(0.0, n - 1) * tpot_mean);
  const std::vector<double> e2e = convolve(ttft, decode_time);

  r.queueing_s = detail::summarize_sorted(queueing);
  r.ttft_s = detail::summarize_sorted(ttft);
  r.tpot_s = detail::summarize_sorted(tpot);
  r.e2e_s = detail::summarize_sorted(e2e);
  const double total = w.lambda * setup.instances;
  r.requests_per_s = total;
  r.input_tokens_per_s = total * w.p_mean;
  r.output_tokens_per_s = total * w.n_mean;
  if (spec.slo.any()) {
    const double ok = fraction_at_most(ttft, spec.slo.ttft_s) *
                      fraction_at_most(tpot, spec.slo.tpot_s) *
                      (spec.slo.e2e_s > 0 ? fraction_at_most(e2e, spec.slo.e2e_s) : 1.0);
    r.goodput_fraction = ok;
    r.goodput_requests_per_s = ok * total;
  }
  r.assumptions.push_back({"prefill_utilization", rho_p, "fraction of the leftover token budget",
                           "prefill work per second / (leftover budget per step / step time)"});
  r.assumptions.push_back({"slot_wait_probability", pw_slot, "probability",
                           "Erlang C with the batch limit as servers and the mean batch as load"});
  return r;
}

}  // namespace flopcast
