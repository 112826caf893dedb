// SPDX-License-Identifier: MIT
#pragma once

/// Serving under load: an analytic queueing model (instant) and a seeded discrete-event simulator
/// of a continuous-batching engine (vLLM-like scheduler), both pricing forward steps with
/// StepTimeModel. Plain structs and pure functions; the simulator is deterministic for a seed and
/// uses its own samplers over std::mt19937_64 (std:: distributions differ between standard
/// libraries, so native and WebAssembly builds would disagree).

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flopcast/engine.hpp"
#include "flopcast/inference.hpp"
#include "flopcast/names.hpp"

namespace flopcast {

// ---- Random numbers (own samplers; one draw per call) ----

/// Deterministic samplers over std::mt19937_64.
class Sampler {
 public:
  explicit Sampler(std::uint64_t seed) : rng_(seed) {}
  /// Uniform in [0, 1): the top 53 bits of one 64-bit draw.
  double uniform01();
  /// Exponential with the given mean: −mean · ln(1 − U).
  double exponential(double mean);
  /// Standard normal (Marsaglia's polar method; the second value is cached).
  double normal();
  /// Gamma(shape, scale) by Marsaglia–Tsang; shape < 1 through Gamma(shape + 1) · U^(1/shape).
  double gamma(double shape, double scale);
  /// Log-normal with the given mean and σ of ln X: exp(μ + σZ), μ = ln(mean) − σ²/2.
  double lognormal(double mean, double sigma);

 private:
  std::mt19937_64 rng_;
  bool has_spare_ = false;
  double spare_ = 0;
};

/// Φ⁻¹(p) for 0 < p < 1 (Acklam's rational approximation refined by one Halley step).
double normal_quantile(double p);

// ---- Workload ----

enum class ArrivalKind { poisson, gamma, constant, trace, concurrency };
inline constexpr std::array<Named<ArrivalKind>, 5> kArrivalKindNames{
    {{"poisson", ArrivalKind::poisson},
     {"gamma", ArrivalKind::gamma},
     {"constant", ArrivalKind::constant},
     {"trace", ArrivalKind::trace},
     {"concurrency", ArrivalKind::concurrency}}};
constexpr std::string_view to_string(ArrivalKind k) noexcept {
  return name_in(kArrivalKindNames, k);
}
enum class LengthKind { fixed, uniform, lognormal, trace };

struct ArrivalSpec {
  ArrivalKind kind = ArrivalKind::poisson;
  double rate_per_s = 1;
  double cv = 1;  ///< gamma: coefficient of variation of the inter-arrival times (shape 1/cv²)
  /// concurrency: a closed loop of this many clients, each sending its next request when its
  /// previous one finishes (all at t = 0 first); num_requests = concurrency is an offline batch.
  int concurrency = 0;
};

/// A token-length distribution; lengths are rounded to integers and clamped to [min, max].
struct LengthDist {
  LengthKind kind = LengthKind::fixed;
  double value = 0;  ///< fixed
  double min = 1;    ///< uniform bounds; clamp for lognormal
  double max = 1;
  double mean = 0;   ///< lognormal
  double sigma = 0;  ///< lognormal: σ of ln X
};

/// One request of a trace: arrival time and lengths.
struct TraceRequest {
  double arrival_s = 0;
  int prompt_tokens = 1;
  int output_tokens = 1;
};

enum class SchedulePolicy { decode_first, prefill_first };
enum class Batching { continuous, static_batch };
enum class Router { round_robin, least_loaded };
inline constexpr std::array<Named<SchedulePolicy>, 2> kSchedulePolicyNames{
    {{"decode_first", SchedulePolicy::decode_first},
     {"prefill_first", SchedulePolicy::prefill_first}}};
inline constexpr std::array<Named<Batching>, 2> kBatchingNames{
    {{"continuous", Batching::continuous}, {"static", Batching::static_batch}}};
inline constexpr std::array<Named<Router>, 2> kRouterNames{
    {{"round_robin", Router::round_robin}, {"least_loaded", Router::least_loaded}}};
constexpr std::string_view to_string(SchedulePolicy p) noexcept {
  return name_in(kSchedulePolicyNames, p);
}
constexpr std::string_view to_string(Batching b) noexcept { return name_in(kBatchingNames, b); }
constexpr std::string_view to_string(Router r) noexcept { return name_in(kRouterNames, r); }

/// Shared prompt prefix already in the KV cache (system prompt, RAG context): a request hits with
/// probability hit_rate; a hit skips the prefix's prefill and shares its KV blocks.
struct PrefixCaching {
  int shared_prefix_tokens = 0;
  double hit_rate = 1;
};

/// Speculative decoding: k draft tokens per step, each accepted with probability α (i.i.d.), so a
/// step yields 1 + accepted tokens, E = (1 − α^(k+1)) / (1 − α). Drafting costs k decode steps
/// of the draft model (when given) or draft_cost_fraction of a target decode step per token.
struct Speculative {
  int num_tokens = 0;  ///< k; 0 = off
  double acceptance_rate = 0.7;
  std::optional<ModelSpec> draft_model;
  double draft_cost_fraction = 0;
  bool mtp = false;  ///< the draft is the target's own multi-token-prediction layers
};

/// Disaggregated prefill and decode pools (DistServe / Splitwise): prefill instances emit the
/// first token, then the KV cache moves to a decode instance over the link.
struct Disaggregation {
  int prefill_instances = 0;  ///< 0 = collocated
  int decode_instances = 0;
  double kv_link_bytes_per_s = 50e9;  ///< per transfer (400 Gb/s InfiniBand by default)
  double kv_link_latency_s = 10e-6;
};

/// Multi-LoRA (Punica/S-LoRA style): each request uses one of num_adapters adapters (uniformly);
/// a step holds at most max_loras_per_batch distinct adapters; an adapter not resident among the
/// GPU's max_loras_per_batch slots is loaded first (LRU) at load_s.
struct Lora {
  int num_adapters = 0;  ///< 0 = off
  int rank = 16;
  int max_loras_per_batch = 4;
  double load_s = 5e-3;
};

/// MoE serving: expert parallelism adds two all-to-alls per layer; the busiest GPU's share of
/// routed tokens sets the expert time (imbalance_factor ≥ 1).
struct MoeServing {
  bool expert_parallel = false;
  double imbalance_factor = 1.0;
};

/// Service-level objectives for goodput (0 = no limit).
struct Slo {
  double ttft_s = 0;
  double tpot_s = 0;
  double e2e_s = 0;
  [[nodiscard]] bool any() const { return ttft_s > 0 || tpot_s > 0 || e2e_s > 0; }
};

/// Documented limits (SpecError beyond them): the simulator's memory is O(num_requests).
inline constexpr int kMaxSimRequests = 200'000;
inline constexpr int kMaxTraceRequests = 200'000;
inline constexpr double kMaxSimDuration_s = 7.0 * 24 * 3600;
inline constexpr int kMaxSimSteps = 20'000'000;
/// The simulator's work: tokens generated in all (Σ output_tokens), each one a sequence in one
/// step. ~5·10^7 a second natively and ~2·10^7 in the page's worker, so at most ~4 s and ~10 s
/// (issue 46: 5·10^8 took 9.9 s and 22.7 s).
inline constexpr double kMaxSimOutputTokens = 2e8;
inline constexpr int kMaxReplicas = 1024;
inline constexpr int kMaxTimelinePoints = 4096;

struct ServingSpec {
  /// Model, hardware, tp, num_gpus, precisions, memory knobs, kernel model and the engine
  /// (`inference.engine`: overheads and scheduler settings); the workload fields (prompt_tokens,
  /// output_tokens, batch_size) are ignored.
  InferenceSpec inference;
  SchedulePolicy policy = SchedulePolicy::decode_first;
  Batching batching = Batching::continuous;
  int static_batch_size = 0;    ///< static batching: sequences per batch (0: max_num_seqs)
  int num_scheduler_steps = 1;  ///< vLLM multi-step: new requests join every k steps
  ArrivalSpec arrival;
  LengthDist prompt{LengthKind::fixed, 512, 1, 1, 0, 0};
  LengthDist output{LengthKind::fixed, 128, 1, 1, 0, 0};
  std::vector<TraceRequest> trace;  ///< arrival.kind == trace
  int num_requests = 1000;
  std::uint64_t seed = 1;
  Router router = Router::round_robin;
  PrefixCaching prefix;
  Speculative speculative;
  Disaggregation disaggregation;
  Lora lora;
  MoeServing moe;
  Slo slo;
  int timeline_points = 256;
  bool per_request = false;  ///< keep every request's record in the result
};

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

/// One downsampled point of the simulation: means over its time bucket.
struct TimelinePoint {
  double t_s = 0;
  double batch_size = 0;  ///< sequences in a step
  double kv_use = 0;      ///< fraction of KV blocks in use
  double waiting = 0;     ///< requests waiting for admission
};

struct RequestRecord {
  double arrival_s = 0, scheduled_s = 0, first_token_s = 0, finish_s = 0;
  int prompt_tokens = 0, output_tokens = 0, cached_tokens = 0, preemptions = 0, instance = 0;
};

struct ServingResult {
  bool simulated = false;
  int tier = 0;
  bool fits = true;          ///< false: weights and reserve leave no room for a KV cache
  std::string unfit_reason;  ///< why it does not fit, as the warning says it; empty where it fits
  int replicas = 1;
  bool saturated = false;
  double saturation_rate_per_s = 0;  ///< whole system (all replicas)
  double utilization = 0;            ///< offered load / saturation rate
  /// Latencies; empty when saturated in the analytic engine (no steady state exists).
  std::optional<Percentiles> ttft_s, tpot_s, e2e_s, queueing_s;
  double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0;
  std::optional<double> goodput_requests_per_s, goodput_fraction;
  std::optional<long long> preemptions;  ///< simulator only
  double mean_batch_size = 0;  ///< sequences per step (analytic: steady-state decode batch)
  double mean_step_time_s = 0;
  double kv_capacity_tokens = 0;  ///< per replica
  /// Hybrid models: one running request's Mamba-2 state per GPU; it takes whole KV blocks.
  double state_bytes_per_request = 0;
  double kv_peak_use = 0, kv_mean_use = 0;
  int max_batch_kv = 0;  ///< sequences at mean context the KV cache holds per replica
  std::vector<TimelinePoint> timeline;
  std::vector<RequestRecord> requests;
  int completed = 0;
  int rejected = 0;  ///< requests whose prompt + output needs more KV blocks than the cache has
  long long steps = 0;
  double simulated_s = 0;
  std::vector<Assumption> assumptions;
  std::vector<std::string> warnings;
};

/// Checks the spec; SpecError / NotModelledError with JSON paths of the serving request.
void validate(const ServingSpec& spec);

/// Checks the KV link of disaggregated pools (features.disaggregated.kv_link_*).
void validate_kv_link(const Disaggregation& link);

/// Analytic engine: steady-state decode batch B from Little's law, B = λ_r · n̄ · τ(B), with the
/// step time τ(B) of a mixed step holding B decodes and B·p̄/n̄ prefill tokens; saturation where
/// B reaches min(max_num_seqs, KV capacity); TTFT from a G/G/1 (Allen–Cunneen) queue of prefill
/// work on the step's leftover token budget plus an Erlang-C wait for a batch slot; TPOT = τ;
/// percentiles from quantile grids (docs/model.md states every assumption).
ServingResult estimate_serving(const ServingSpec& spec);

/// The cost of one forward step, for tests that replace the kernel model.
using StepCostFn = std::function<double(const StepShape&)>;

/// A discrete-event simulation that can run in slices (for progress bars and cancellation in a
/// Web Worker): construct, call advance() until it returns true, then take result().
class ServingSimulation {
 public:
  explicit ServingSimulation(const ServingSpec& spec);
  ServingSimulation(const ServingSpec& spec, StepCostFn cost);
  ~ServingSimulation();
  ServingSimulation(const ServingSimulation&) = delete;
  ServingSimulation& operator=(const ServingSimulation&) = delete;

  /// Runs at most `max_events` events; true when the simulation is finished.
  bool advance(long long max_events);
  /// Finished requests / all requests, in [0, 1].
  [[nodiscard]] double progress() const;
  /// The result; call after advance() returned true.
  [[nodiscard]] ServingResult result() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Runs the discrete-event simulator to completion.
ServingResult simulate_serving(const ServingSpec& spec);
ServingResult simulate_serving(const ServingSpec& spec, StepCostFn cost);

/// Samples a length from the distribution (not for kind trace).
int sample_length(const LengthDist& d, Sampler& rng);
/// The q-quantile (0 < q < 1) of the distribution before rounding, clamped to [min, max].
double length_quantile(const LengthDist& d, double q);

}  // namespace flopcast
