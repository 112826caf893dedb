// SPDX-License-Identifier: MIT
// Samplers, length distributions, validation and the step pricing shared by both serving engines.
#include <algorithm>
#include <cmath>
#include <limits>

#include "flopcast/collective.hpp"
#include "flopcast/error.hpp"
#include "flopcast/stats.hpp"
#include "physical.hpp"
#include "serving_internal.hpp"

namespace flopcast {

// ---- Samplers ----

double Sampler::uniform01() {
  const std::uint64_t bits = rng_();
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

double Sampler::exponential(double mean) {
  const double u = uniform01();
  return -mean * std::log1p(-u);
}

double Sampler::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double x = 0, y = 0, r = 0;
  do {
    x = 2 * uniform01() - 1;
    y = 2 * uniform01() - 1;
    r = x * x + y * y;
  } while (r >= 1 || r == 0);
  const double f = std::sqrt(-2 * std::log(r) / r);
  spare_ = y * f;
  has_spare_ = true;
  return x * f;
}

double Sampler::gamma(double shape, double scale) {
  if (shape < 1) {
    // Gamma(a) = Gamma(a + 1) · U^(1/a) (Marsaglia & Tsang, 2000, section 6).
    const double g = gamma(shape + 1, 1.0);
    const double u = uniform01();
    return scale * g * std::pow(1 - u, 1 / shape);
  }
  const double d = shape - 1.0 / 3;
  const double c = 1 / std::sqrt(9 * d);
  while (true) {
    double z = 0, v = 0;
    do {
      z = normal();
      v = 1 + c * z;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform01();
    if (u < 1 - 0.0331 * z * z * z * z) return scale * d * v;
    if (std::log(u) < 0.5 * z * z + d * (1 - v + std::log(v))) return scale * d * v;
  }
}

double Sampler::lognormal(double mean, double sigma) {
  const double mu = std::log(mean) - 0.5 * sigma * sigma;
  const double z = normal();
  return std::exp(mu + sigma * z);
}

double normal_quantile(double p) {
  // Acklam's algorithm (relative error 1.15e-9), then one Halley step on erfc.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1 - 1e-16);
  double x = 0;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - 0.02425) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double length_quantile(const LengthDist& d, double q) {
  switch (d.kind) {
    case LengthKind::fixed:
      return d.value;
    case LengthKind::uniform:
      return d.min + q * (d.max - d.min);
    case LengthKind::lognormal: {
      const double mu = std::log(d.mean) - 0.5 * d.sigma * d.sigma;
      return std::clamp(std::exp(mu + d.sigma * normal_quantile(q)), d.min, d.max);
    }
    case LengthKind::trace:
      break;
  }
  return d.mean;
}

int sample_length(const LengthDist& d, Sampler& rng) {
  double x = d.value;
  if (d.kind == LengthKind::uniform) {
    // Integers min..max equally likely.
    x = d.min + std::floor(rng.uniform01() * (d.max - d.min + 1));
  } else if (d.kind == LengthKind::lognormal) {
    x = std::clamp(std::round(rng.lognormal(d.mean, d.sigma)), d.min, d.max);
  }
  return static_cast<int>(std::clamp(x, 1.0, 1e9));
}

// ---- Validation ----

namespace {

/// The draft of speculative decoding as a model the engine runs: the draft model, or the target's
/// own multi-token-prediction layers; none for a draft given as a cost fraction.
std::optional<InferenceSpec> draft_spec(const ServingSpec& spec, const InferenceSpec& target) {
  if (spec.speculative.num_tokens == 0) return std::nullopt;
  InferenceSpec d = target;
  if (spec.speculative.draft_model) {
    d.model = *spec.speculative.draft_model;
    return d;
  }
  if (!spec.speculative.mtp) return std::nullopt;
  // DeepSeek's MTP module: one transformer layer like the model's last (MoE, full attention),
  // run once per draft token, with the shared embedding and LM head. Its [2h -> h] projection
  // (0.1 GB at fp8 for DeepSeek-V3, over tp GPUs) is left out of the time.
  ModelSpec& m = d.model;
  m.num_layers = target.model.mtp_layers;
  m.first_dense_layers = 0;
  m.moe_layer_interval = 1;
  m.window_tokens = 0;
  m.global_attention_every = 0;
  m.mtp_layers = 0;
  d.pp = 1;
  return d;
}

void check_length(const LengthDist& d, const std::string& path, int max_context) {
  const double hi = max_context;
  switch (d.kind) {
    case LengthKind::fixed:
      check_real(path, d.value, 1, hi);
      if (d.value != std::floor(d.value)) fail(path, "must be an integer", d.value);
      break;
    case LengthKind::uniform:
      check_real(path + ".min", d.min, 1, hi);
      check_real(path + ".max", d.max, 1, hi);
      if (d.max < d.min)
        fail(path + ".max", "must be >= min (" + format_number(d.min) + ")", d.max);
      break;
    case LengthKind::lognormal:
      check_real(path + ".mean", d.mean, 1, hi);
      check_real(path + ".sigma", d.sigma, 0, 4);
      check_real(path + ".min", d.min, 1, hi);
      check_real(path + ".max", d.max, 1, hi);
      if (d.max < d.min)
        fail(path + ".max", "must be >= min (" + format_number(d.min) + ")", d.max);
      break;
    case LengthKind::trace:
      break;
  }
}

}  // namespace

void validate_kv_link(const Disaggregation& d) {
  check_real("features.disaggregated.kv_link_GBps", d.kv_link_bytes_per_s / 1e9, 1e-3, 1e5);
  check_real("features.disaggregated.kv_link_latency_us", d.kv_link_latency_s * 1e6, 0, 1e6);
}

/// What serving a hybrid model (model.layer_pattern) leaves out, each refused by name: a Mamba-2
/// layer keeps one state per request, not one entry per token.
void validate_hybrid_serving(const ServingSpec& s) {
  const auto refuse = [](const std::string& path, const std::string& what) {
    throw NotModelledError(path, what + " of a hybrid model (model.layer_pattern) is not modelled");
  };
  if (s.prefix.shared_prefix_tokens > 0) {
    // A hit needs the Mamba state at the prefix's end, kept beside its blocks (vLLM's
    // mamba_cache_mode "align", SGLang's MambaRadixCache).
    refuse("features.prefix_caching", "prefix caching");
  }
  // A rejected draft token must roll each Mamba state back.
  if (s.speculative.num_tokens > 0) refuse("features.speculative", "speculative decoding");
  // Adapters are priced on the attention and MLP projections only.
  if (s.lora.num_adapters > 0) refuse("features.lora", "LoRA adapters");
}

void validate(const ServingSpec& s) {
  if (s.inference.model.is_hybrid()) validate_hybrid_serving(s);
  const int max_context = s.inference.model.max_context_tokens;
  validate(s.inference.engine, "engine");
  const bool trace = s.arrival.kind == ArrivalKind::trace;
  const bool closed = s.arrival.kind == ArrivalKind::concurrency;
  if (closed) {
    check_real("workload.arrival.concurrency", s.arrival.concurrency, 1, kMaxSimRequests);
  }
  if (!trace) {
    if (!closed) check_real("workload.arrival.rate_per_s", s.arrival.rate_per_s, 1e-6, 1e6);
    if (s.arrival.kind == ArrivalKind::gamma)
      check_real("workload.arrival.cv", s.arrival.cv, 0.01, 100);
    if (s.num_requests < 1 || s.num_requests > kMaxSimRequests) {
      fail("workload.num_requests", "must be between 1 and " + std::to_string(kMaxSimRequests),
           s.num_requests);
    }
    if (!closed && static_cast<double>(s.num_requests) / s.arrival.rate_per_s > kMaxSimDuration_s) {
      fail("workload.num_requests",
           "num_requests / rate_per_s must be at most 604800 s (one week) of arrivals",
           s.num_requests);
    }
    check_length(s.prompt, "workload.prompt_tokens", max_context);
    check_length(s.output, "workload.output_tokens", max_context);
  } else {
    if (s.trace.empty()) fail("workload.arrival.requests", "must hold at least one request", 0);
    if (s.trace.size() > static_cast<std::size_t>(kMaxTraceRequests)) {
      fail("workload.arrival.requests",
           "must hold at most " + std::to_string(kMaxTraceRequests) + " requests",
           static_cast<double>(s.trace.size()));
    }
    double last = 0;
    for (std::size_t i = 0; i < s.trace.size(); ++i) {
      const TraceRequest& r = s.trace[i];
      const std::string p = "workload.arrival.requests[" + std::to_string(i) + "]";
      check_real(p + ".arrival_s", r.arrival_s, last, kMaxSimDuration_s);
      check_real(p + ".prompt_tokens", r.prompt_tokens, 1, max_context - 1);
      check_real(p + ".output_tokens", r.output_tokens, 1, max_context);
      last = r.arrival_s;
    }
  }
  check_real("engine.num_scheduler_steps", s.num_scheduler_steps, 1, 64);
  check_real("engine.static_batch_size", s.static_batch_size, 0, 1e6);
  check_real("features.prefix_caching.shared_prefix_tokens", s.prefix.shared_prefix_tokens, 0,
             max_context - 1);
  check_real("features.prefix_caching.hit_rate", s.prefix.hit_rate, 0, 1);
  check_real("features.speculative.num_tokens", s.speculative.num_tokens, 0, 16);
  check_real("features.speculative.acceptance_rate", s.speculative.acceptance_rate, 0, 0.999);
  check_real("features.speculative.draft_cost_fraction", s.speculative.draft_cost_fraction, 0, 1);
  if (s.speculative.mtp && s.speculative.num_tokens > 0 && s.inference.model.mtp_layers == 0) {
    fail("features.speculative.draft",
         "needs a model with multi-token-prediction layers (model.mtp_layers > 0: DeepSeek-V3 and "
         "R1 have 1)",
         "\"mtp\"");
  }
  if (s.speculative.num_tokens > 0 && s.batching == Batching::static_batch) {
    throw NotModelledError("features.speculative",
                           "speculative decoding with static batching is not modelled");
  }
  const int tp = s.inference.tp;
  if (s.inference.pp > 1 &&
      (s.disaggregation.prefill_instances > 0 || s.disaggregation.decode_instances > 0)) {
    throw NotModelledError("features.disaggregated",
                           "disaggregated pools with pipeline parallelism are not modelled");
  }
  if (s.disaggregation.prefill_instances > 0 || s.disaggregation.decode_instances > 0) {
    check_real("features.disaggregated.prefill_instances", s.disaggregation.prefill_instances, 1,
               kMaxReplicas);
    check_real("features.disaggregated.decode_instances", s.disaggregation.decode_instances, 1,
               kMaxReplicas);
    validate_kv_link(s.disaggregation);
    const long long need = static_cast<long long>(s.disaggregation.prefill_instances +
                                                  s.disaggregation.decode_instances) *
                           tp;
    if (need != s.inference.num_gpus) {
      fail("num_gpus",
           "must equal (prefill_instances + decode_instances) · tp = " + std::to_string(need),
           s.inference.num_gpus);
    }
    if (s.batching == Batching::static_batch) {
      throw NotModelledError("features.disaggregated",
                             "disaggregated pools with static batching are not modelled");
    }
  }
  if (tp >= 1 && s.inference.num_gpus / tp > kMaxReplicas) {
    fail("num_gpus", "must give at most " + std::to_string(kMaxReplicas) + " replicas",
         s.inference.num_gpus);
  }
  if (s.lora.num_adapters > 0) {
    check_real("features.lora.num_adapters", s.lora.num_adapters, 1, 100000);
    check_real("features.lora.rank", s.lora.rank, 1, 1024);
    check_real("features.lora.max_loras_per_batch", s.lora.max_loras_per_batch, 1, 1024);
    check_real("features.lora.load_ms", s.lora.load_s * 1e3, 0, 1e4);
  }
  check_real("features.moe.imbalance_factor", s.moe.imbalance_factor, 1, 100);
  if ((s.moe.expert_parallel || s.moe.imbalance_factor > 1) && !s.inference.model.is_moe()) {
    throw NotModelledError(
        "features.moe", "the model has no experts (model.num_experts is 0); remove features.moe");
  }
  if (s.moe.expert_parallel && s.inference.model.is_moe() &&
      moe_dispatch_of(s.inference) == MoeDispatch::all_to_all) {
    fail("features.moe.expert_parallel",
         "the step already prices the all-to-all dispatch (parallelism.moe_dispatch is "
         "all_to_all); remove one of them",
         "true");
  }
  check_real("slo.ttft_ms", s.slo.ttft_s * 1e3, 0, 1e9);
  check_real("slo.tpot_ms", s.slo.tpot_s * 1e3, 0, 1e9);
  check_real("slo.e2e_ms", s.slo.e2e_s * 1e3, 0, 1e9);
  check_real("output.timeline_points", s.timeline_points, 2, kMaxTimelinePoints);
}

namespace detail {

Percentiles summarize_sorted(const std::vector<double>& sorted) {
  Percentiles p;
  if (sorted.empty()) return p;
  double sum = 0;
  for (double x : sorted) sum += x;
  p.mean = sum / static_cast<double>(sorted.size());
  p.p50 = percentile(sorted, 50);
  p.p90 = percentile(sorted, 90);
  p.p99 = percentile(sorted, 99);
  return p;
}

ServingSetup make_setup(const ServingSpec& spec) {
  validate(spec);
  ServingSetup st;
  InferenceSpec& inf = st.inference;
  inf = spec.inference;
  const int max_context = inf.model.max_context_tokens;
  inf.prompt_tokens = std::max(1, std::min(inf.engine.max_num_batched_tokens, max_context - 1));
  inf.output_tokens = 1;
  inf.batch_size = 1;
  if (spec.disaggregation.prefill_instances > 0) {
    st.prefill_instances = spec.disaggregation.prefill_instances;
    st.instances = spec.disaggregation.prefill_instances + spec.disaggregation.decode_instances;
  } else {
    // A pipeline of pp stages keeps pp batches in flight, each through every layer: it serves
    // as pp instances (vLLM's virtual engines), each with 1/pp of the pipeline's KV cache.
    st.instances = std::max(1, inf.num_gpus / std::max(1, inf.tp));
  }
  // One prefill chunk of the full budget is the activation peak the KV pool must leave room for.
  const InferenceResult probe = estimate_inference(inf);
  const MemoryResult& m = probe.memory;
  double draft_bytes = 0;
  if (spec.speculative.num_tokens > 0 && spec.speculative.draft_model) {
    draft_bytes = weight_bytes_per_gpu(*draft_spec(spec, inf));
  } else if (spec.speculative.num_tokens > 0 && spec.speculative.mtp) {
    // The MTP layers: as many of the target's last layers (the weights a model that long less
    // them would not hold) plus each one's [2h -> h] projection; embedding and LM head are shared.
    InferenceSpec shorter = inf;
    shorter.model.num_layers -= inf.model.mtp_layers;
    shorter.pp = 1;
    InferenceSpec whole = inf;
    whole.pp = 1;
    const double h = inf.model.hidden_size;
    draft_bytes = weight_bytes_per_gpu(whole) - weight_bytes_per_gpu(shorter) +
                  inf.model.mtp_layers * 2 * h * h * bytes_per_element(inf.weights) / inf.tp;
  }
  const double others = m.weights_bytes + m.reserve_bytes + m.activations_bytes + draft_bytes;
  const double free = inf.engine.kv_cache_free_fraction > 0
                          ? inf.engine.kv_cache_free_fraction * (m.capacity_bytes - others)
                          : m.budget_bytes - others;
  st.kv_bytes_per_token = m.kv_cache_bytes_per_token;
  if (inf.model.window_tokens > 0) {
    // Local layers keep only their window: the KV pool holds more tokens of long requests.
    // Capacity is counted at the typical request (median prompt + median output; a trace's mean).
    double typical = 0;
    if (spec.arrival.kind == ArrivalKind::trace) {
      for (const TraceRequest& r : spec.trace) typical += r.prompt_tokens + r.output_tokens;
      typical /= std::max<std::size_t>(1, spec.trace.size());
    } else {
      typical = length_quantile(spec.prompt, 0.5) + length_quantile(spec.output, 0.5);
    }
    st.kv_bytes_per_token = kv_cache_bytes_per_token(inf, std::min<double>(typical, max_context));
  }
  st.kv_bytes_per_token *= std::max(1, inf.pp);
  if (spec.speculative.num_tokens > 0 && spec.speculative.mtp) {
    // Each MTP layer keeps its own attention's KV cache, one layer's worth per token.
    st.kv_bytes_per_token *= 1.0 + double(inf.model.mtp_layers) / inf.model.num_layers;
  }
  const double block_bytes = inf.engine.kv_block_tokens * st.kv_bytes_per_token;
  // Clamped: a long long holds 9.2e18; 1e15 blocks is far past any memory (and stays exact).
  st.kv_blocks =
      free > 0 ? static_cast<long long>(std::min(std::floor(free / block_bytes), 1e15)) : 0;
  st.kv_capacity_tokens = static_cast<double>(st.kv_blocks) * inf.engine.kv_block_tokens;
  if (m.state_bytes_per_sequence > 0) {
    // A hybrid model's Mamba-2 layers hold one fixed state per running request, taken from the
    // same memory as the KV blocks (vLLM's hybrid allocator pages both in one pool): a request
    // holds its state's worth of whole blocks from admission to its end.
    st.state_bytes_per_request = m.state_bytes_per_sequence * std::max(1, inf.pp);
    st.state_blocks =
        static_cast<long long>(std::min(std::ceil(st.state_bytes_per_request / block_bytes), 1e15));
  }
  st.fits = st.kv_blocks > 0;
  if (!st.fits) {
    st.unfit_reason =
        "weights, reserve and activations leave no memory for a KV cache "
        "(gpu_memory_utilization x device memory)";
  } else {
    // The shortest request the workload can send must fit the KV cache whole (prompt + output,
    // in blocks), as `inference` requires max batch >= 1; otherwise every request is refused.
    const auto least = [&](const LengthDist& d) {
      return d.kind == LengthKind::fixed ? d.value : d.min;
    };
    double shortest = 0;
    if (spec.arrival.kind == ArrivalKind::trace) {
      shortest = std::numeric_limits<double>::infinity();
      for (const TraceRequest& r : spec.trace) {
        shortest = std::min<double>(shortest, r.prompt_tokens + r.output_tokens);
      }
    } else {
      shortest = std::round(least(spec.prompt)) + std::round(least(spec.output));
    }
    shortest = std::min<double>(shortest, max_context);
    const double need_blocks =
        std::ceil(shortest / inf.engine.kv_block_tokens) + static_cast<double>(st.state_blocks);
    if (need_blocks > static_cast<double>(st.kv_blocks)) {
      st.fits = false;
      st.unfit_reason = "the KV cache holds " + format_number(st.kv_capacity_tokens) +
                        " tokens per replica, less than one whole request (" +
                        format_number(shortest) + " tokens of prompt + output" +
                        (st.state_blocks > 0 ? " and its Mamba state" : std::string()) +
                        "); no request can be served";
    }
  }
  if (!st.fits) st.warnings.push_back("does not fit: " + st.unfit_reason);
  if (spec.lora.num_adapters > 0) {
    // Rank-r A (in x r) and B (r x out) for the four linear layers of attention and MLP; the
    // output side is split by tensor parallelism like the base weights.
    const ModelSpec& md = inf.model;
    const double h = md.hidden_size, d = md.head_dim, tp = inf.tp;
    const double qkv_out = (md.num_heads + 2.0 * md.num_kv_heads) * d;
    const double up_out = (md.ffn == FfnKind::gated ? 2.0 : 1.0) * md.intermediate_size;
    const double per_layer = spec.lora.rank * (h + qkv_out / tp + md.num_heads * d / tp + h + h +
                                               up_out / tp + md.intermediate_size / tp + h);
    st.lora_bytes_per_adapter = md.num_layers * per_layer * bytes_per_element(inf.activations);
  }
  if (spec.speculative.num_tokens > 0) {
    const double a = spec.speculative.acceptance_rate;
    const int k = spec.speculative.num_tokens;
    st.expected_tokens_per_step = (1 - std::pow(a, k + 1)) / (1 - a);
  }
  if (std::string caveat = vendor_caveat(inf.hardware); !caveat.empty()) {
    st.warnings.push_back(std::move(caveat));
  }
  return st;
}

StepCoster::StepCoster(const ServingSpec& spec, const ServingSetup& setup)
    : spec_(spec),
      setup_(setup),
      model_(setup.inference, spec.moe.imbalance_factor),
      moe_layers_(count_params(setup.inference.model).moe_layers) {
  if (auto d = draft_spec(spec, setup.inference)) {
    d->engine.step_overhead_s = 0;  // the draft runs inside the target's engine step
    draft_.emplace(*d);
  }
}

double StepCoster::cost(const StepShape& shape, int lora_adapters, int lora_loads) {
  double t = model_.step_time_s(shape);
  const int k = spec_.speculative.num_tokens;
  if (k > 0 && shape.decode_sequences > 0) {
    // k draft tokens for every decoding sequence, one decode step of the draft each.
    StepShape d;
    d.decode_sequences = shape.decode_sequences;
    d.decode_context_tokens = shape.decode_context_tokens;
    if (draft_) {
      t += k * draft_->step_time_s(d);
    } else {
      d.tokens_per_decode = 1;
      const double target_decode = model_.step_time_s(d) - model_.step_overhead_s();
      t += k * spec_.speculative.draft_cost_fraction * target_decode;
    }
  }
  const InferenceSpec& inf = setup_.inference;
  const HardwareSpec& hw = inf.hardware;
  if (spec_.moe.expert_parallel && inf.tp > 1) {
    // Dispatch and combine all-to-alls per MoE layer on top of the step: each GPU sends its 1/tp
    // of the tokens to the GPUs of their experts (once per GPU, moe_dispatch_bytes), through the
    // collective model (across nodes where tp spans them).
    long long tokens = static_cast<long long>(shape.decode_sequences) * shape.tokens_per_decode;
    for (int i = 0; i < shape.num_prefills; ++i) tokens += shape.prefills[i].new_tokens;
    const ModelSpec& md = inf.model;
    const double buffer =
        moe_dispatch_bytes(md, inf.tp, static_cast<double>(tokens) / inf.tp,
                           bytes_per_element(inf.activations), inf.redundant_experts);
    const OpCost a2a = all_to_all_op("ep_all_to_all", hw, inf.kernel, Bytes(buffer), inf.tp);
    t += 2 * moe_layers_ * a2a.time.value;
  }
  if (lora_adapters > 0) {
    // SGMV-style kernels read each adapter in the batch once; two launches per adapted linear.
    const double bytes = lora_adapters * setup_.lora_bytes_per_adapter;
    t += bytes / (hw.hbm_bandwidth.value * inf.kernel.hbm_efficiency) +
         inf.model.num_layers * 4 * 2 * inf.kernel.kernel_overhead_s;
    t += lora_loads * spec_.lora.load_s;
  }
  return t;
}

std::vector<double> length_points(const ServingSpec& spec, bool prompt,
                                  const std::vector<double>& levels) {
  std::vector<double> pts;
  pts.reserve(levels.size());
  if (spec.arrival.kind == ArrivalKind::trace) {
    std::vector<double> all;
    all.reserve(spec.trace.size());
    for (const auto& r : spec.trace) all.push_back(prompt ? r.prompt_tokens : r.output_tokens);
    std::sort(all.begin(), all.end());
    for (double q : levels) {
      const std::size_t idx =
          std::min(all.size() - 1, static_cast<std::size_t>(q * static_cast<double>(all.size())));
      pts.push_back(all[idx]);
    }
    return pts;
  }
  const LengthDist& d = prompt ? spec.prompt : spec.output;
  for (double q : levels) pts.push_back(std::round(length_quantile(d, q)));
  return pts;
}

void check_physical(const ServingSpec& spec, const ServingResult& r) {
  if (!r.fits || !(r.requests_per_s > 0)) return;
  const InferenceSpec& inf = spec.inference;
  const Disaggregation& d = spec.disaggregation;
  const int gpus =
      std::max(inf.num_gpus, (d.prefill_instances + d.decode_instances) * inf.tp * inf.pp);
  // Prompt tokens computed per request at least: a hit on the shared prefix skips its prefill.
  const double prompt = std::max(
      0.0, r.input_tokens_per_s / r.requests_per_s - double(spec.prefix.shared_prefix_tokens));
  const double output = r.output_tokens_per_s / r.requests_per_s;
  physical::check_token_rate("input_tokens_per_s", r.requests_per_s * (prompt + output), inf.model,
                             inf.hardware, gpus);
  if (r.saturation_rate_per_s > 0) {
    physical::check_token_rate("saturation_rate_per_s", r.saturation_rate_per_s * (prompt + output),
                               inf.model, inf.hardware, gpus);
  }
}

}  // namespace detail
}  // namespace flopcast
