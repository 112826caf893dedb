// SPDX-License-Identifier: MIT
// Discrete-event simulator of a continuous-batching serving engine (vLLM-like scheduler).
//
// Events are arrivals (pre-generated, sorted), step completions and KV transfers (disaggregated
// pools), ordered by (time, sequence number). Each instance runs one forward step at a time; a
// step's plan is made when it starts and its tokens appear when it ends. Memory is O(requests +
// instances + timeline points): per-step data is folded into a bounded timeline.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

#include "flopcast/error.hpp"
#include "flopcast/stats.hpp"
#include "serving_internal.hpp"

namespace flopcast {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Req {
  double arrival = 0, scheduled = -1, first_token = -1, finish = -1;
  int prompt = 0, output = 0, cached = 0;  // cached: prefix tokens already in the cache
  int computed = 0;                        // tokens with KV in the cache (this instance)
  int target = 0;     // tokens to prefill before sampling (prompt + recomputed output)
  int generated = 0;  // output tokens produced
  int blocks = 0;     // KV blocks held (beyond the shared prefix)
  int preemptions = 0;
  int lora = -1;
  int instance = -1;
  bool rejected = false;
};

enum class Role { collocated, prefill, decode };

/// One planned piece of a step.
struct Work {
  int req;
  int tokens;   // new tokens computed in the step
  bool decode;  // a decode token (or speculative verify) rather than a prefill chunk
};

struct Instance {
  Role role = Role::collocated;
  std::deque<int> waiting;
  std::vector<int> running;  // admission order
  long long free_blocks = 0;
  long long total_blocks = 0;
  long long prefix_blocks = 0;  // shared prefix, pinned
  bool busy = false;
  long long step_counter = 0;  // for multi-step scheduling
  double step_start = -1;      // when the running (or last) step began
  double step_end = -1;        // when the last step ended
  bool static_active = false;  // static batching: a batch is in flight
  std::vector<Work> plan;
  std::vector<int> lora_resident;  // LRU order, most recent last
  std::vector<int> lora_running;   // adapter -> sequences in `running` (sized num_adapters)
  int lora_distinct = 0;
  std::vector<int> lora_mark;  // adapter -> last step that counted it
  int lora_epoch = 0;
  int outstanding = 0;  // routed and not finished (router load)
};

struct Event {
  double t;
  long long seq;
  int kind;    // 0 step done, 1 KV transfer arrived
  int target;  // instance (step) or request (transfer)
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

/// Timeline folded into at most `cap` buckets; the width doubles whenever it fills.
class Timeline {
 public:
  explicit Timeline(int points) : cap_(static_cast<std::size_t>(points)) {}
  void add(double t, double batch, double kv, double waiting) {
    // A bucket index past the cap is never cast (a double beyond size_t is undefined
    // behaviour): the width doubles until t falls inside; the loop ends for any finite t.
    if (!std::isfinite(t) || t < 0) return;
    while (t / width_ >= static_cast<double>(cap_)) merge();
    const auto i = static_cast<std::size_t>(t / width_);
    if (buckets_.size() <= i) buckets_.resize(i + 1);
    Bucket& b = buckets_[i];
    b.n += 1;
    b.batch += batch;
    b.kv += kv;
    b.waiting += waiting;
  }
  std::vector<TimelinePoint> points() const {
    std::vector<TimelinePoint> out;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      const Bucket& b = buckets_[i];
      if (b.n == 0) continue;
      out.push_back({(i + 0.5) * width_, b.batch / b.n, b.kv / b.n, b.waiting / b.n});
    }
    return out;
  }

 private:
  struct Bucket {
    double n = 0, batch = 0, kv = 0, waiting = 0;
  };
  void merge() {
    std::vector<Bucket> merged((buckets_.size() + 1) / 2);
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      Bucket& m = merged[i / 2];
      m.n += buckets_[i].n;
      m.batch += buckets_[i].batch;
      m.kv += buckets_[i].kv;
      m.waiting += buckets_[i].waiting;
    }
    buckets_ = std::move(merged);
    width_ *= 2;
  }
  std::size_t cap_;
  double width_ = 1e-3;
  std::vector<Bucket> buckets_;
};

Percentiles summarize(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  return detail::summarize_sorted(v);
}

}  // namespace

struct ServingSimulation::State {
  ServingSpec spec;
  detail::ServingSetup setup;
  std::optional<detail::StepCoster> coster;
  StepCostFn custom_cost;
  std::vector<Req> reqs;
  std::vector<Instance> inst;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  long long seq = 0;
  std::size_t next_arrival = 0;
  double now = 0;
  int finished = 0;
  int rejected = 0;
  long long steps = 0;
  long long preemptions = 0;
  double step_time_sum = 0, batch_sum = 0, kv_sum = 0, kv_peak = 0;
  int rr_prefill = 0, rr_decode = 0;
  double last_arrival = 0;
  int waiting_at_last_arrival = -1;
  Timeline timeline{kMaxTimelinePoints};
  std::vector<PrefillChunk> chunks;  // scratch for step pricing
  int block = 16;
  int max_seqs = 256;
  int budget = 8192;
  int spec_k = 0;
  Sampler accept_rng{0};
  bool closed = false;           // arrival kind concurrency: a closed loop of clients
  std::size_t next_release = 0;  // closed loop: the next request a client sends

  void init(const ServingSpec& s) {
    spec = s;
    setup = detail::make_setup(spec);
    coster.emplace(spec, setup);
    block = setup.inference.engine.kv_block_tokens;
    max_seqs = spec.inference.engine.max_num_seqs;
    budget = spec.inference.engine.max_num_batched_tokens;
    spec_k = spec.speculative.num_tokens;
    closed = spec.arrival.kind == ArrivalKind::concurrency;
    timeline = Timeline(std::max(2, spec.timeline_points));
    accept_rng = Sampler(spec.seed ^ 0x9E3779B97F4A7C15ULL);
    make_requests();
    make_instances();
  }

  void make_requests() {
    Sampler rng(spec.seed);
    const int max_context = setup.inference.model.max_context_tokens;
    if (spec.arrival.kind == ArrivalKind::trace) {
      reqs.resize(spec.trace.size());
      for (std::size_t i = 0; i < spec.trace.size(); ++i) {
        reqs[i].arrival = spec.trace[i].arrival_s;
        reqs[i].prompt = spec.trace[i].prompt_tokens;
        reqs[i].output = spec.trace[i].output_tokens;
      }
    } else {
      reqs.resize(static_cast<std::size_t>(spec.num_requests));
      const double mean_gap = 1 / spec.arrival.rate_per_s;
      const double shape = 1 / (spec.arrival.cv * spec.arrival.cv);
      double t = 0;
      for (std::size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].arrival = t;
        switch (spec.arrival.kind) {
          case ArrivalKind::poisson:
            t += rng.exponential(mean_gap);
            break;
          case ArrivalKind::gamma:
            t += rng.gamma(shape, mean_gap / shape);
            break;
          case ArrivalKind::concurrency:
            // The first `concurrency` requests at t = 0; each later one when a client's previous
            // request finishes (release()).
            reqs[i].arrival = static_cast<int>(i) < spec.arrival.concurrency ? 0 : kInf;
            break;
          default:
            t += mean_gap;
        }
      }
      next_release =
          std::min(reqs.size(), static_cast<std::size_t>(std::max(0, spec.arrival.concurrency)));
      for (Req& r : reqs) r.prompt = sample_length(spec.prompt, rng);
      for (Req& r : reqs) r.output = sample_length(spec.output, rng);
    }
    for (Req& r : reqs) {
      r.prompt = std::min(r.prompt, max_context - 1);
      r.output = std::max(1, std::min(r.output, max_context - r.prompt));
      const int prefix = std::min(spec.prefix.shared_prefix_tokens, r.prompt - 1);
      if (prefix > 0 && (spec.prefix.hit_rate >= 1 || rng.uniform01() < spec.prefix.hit_rate)) {
        r.cached = prefix;
      }
      if (spec.lora.num_adapters > 0) {
        r.lora = std::min(spec.lora.num_adapters - 1,
                          static_cast<int>(rng.uniform01() * spec.lora.num_adapters));
      }
      r.computed = r.cached;
      r.target = r.prompt;
    }
    // Bounded work, checked before any step: every generated token is a sequence in a step.
    double generated = 0;
    for (const Req& r : reqs) generated += r.output;
    if (generated > kMaxSimOutputTokens) {
      fail(spec.arrival.kind == ArrivalKind::trace ? "workload.arrival.requests"
                                                   : "workload.num_requests",
           "the simulation may generate at most 2e8 tokens in all (num_requests x output_tokens); "
           "simulate fewer or shorter requests",
           generated);
    }
  }

  void make_instances() {
    inst.resize(static_cast<std::size_t>(setup.instances));
    const long long prefix_blocks = spec.prefix.shared_prefix_tokens / block;
    for (std::size_t i = 0; i < inst.size(); ++i) {
      Instance& in = inst[i];
      in.role = setup.prefill_instances == 0                    ? Role::collocated
                : static_cast<int>(i) < setup.prefill_instances ? Role::prefill
                                                                : Role::decode;
      in.total_blocks = setup.kv_blocks;
      in.prefix_blocks = std::min(prefix_blocks, setup.kv_blocks);
      in.free_blocks = setup.kv_blocks - in.prefix_blocks;
      if (spec.lora.num_adapters > 0) {
        in.lora_running.assign(static_cast<std::size_t>(spec.lora.num_adapters), 0);
        in.lora_mark.assign(static_cast<std::size_t>(spec.lora.num_adapters), 0);
      }
    }
    // A request that cannot fit even alone is rejected up front (vLLM refuses it too).
    for (Req& r : reqs) {
      const long long need = blocks_for(r, r.prompt + r.output);
      if (need > inst[0].free_blocks) {
        r.rejected = true;
        ++rejected;
      }
    }
  }

  /// Blocks a request holds at `tokens` of context, beyond the shared prefix blocks, with its
  /// Mamba state's blocks in a hybrid model.
  long long blocks_for(const Req& r, long long tokens) const {
    const long long all = (tokens + block - 1) / block;
    const long long shared = r.cached / block;
    return std::max(0LL, all - shared) + setup.state_blocks;
  }

  int route(Role role) {
    int lo = 0, hi = static_cast<int>(inst.size());
    if (setup.prefill_instances > 0) {
      if (role == Role::prefill)
        hi = setup.prefill_instances;
      else
        lo = setup.prefill_instances;
    }
    const int n = hi - lo;
    if (spec.router == Router::round_robin) {
      int& rr = role == Role::decode ? rr_decode : rr_prefill;
      const int pick = lo + rr % n;
      rr = (rr + 1) % n;
      return pick;
    }
    int best = lo;
    for (int i = lo + 1; i < hi; ++i) {
      if (inst[static_cast<std::size_t>(i)].outstanding <
          inst[static_cast<std::size_t>(best)].outstanding) {
        best = i;
      }
    }
    return best;
  }

  void push(double t, int kind, int target) { events.push(Event{t, seq++, kind, target}); }

  int total_waiting() const {
    int w = 0;
    for (const Instance& in : inst) w += static_cast<int>(in.waiting.size());
    return w;
  }

  /// Closed loop: the client whose request just ended (finished or rejected) sends its next one.
  void release() {
    if (closed && next_release < reqs.size()) reqs[next_release++].arrival = now;
  }

  void arrive(int id, bool start = true) {
    Req& r = reqs[static_cast<std::size_t>(id)];
    if (static_cast<std::size_t>(id) + 1 == reqs.size()) {
      last_arrival = r.arrival;
    }
    if (r.rejected) {
      release();
      return;
    }
    const int i = route(setup.prefill_instances > 0 ? Role::prefill : Role::collocated);
    r.instance = i;
    Instance& in = inst[static_cast<std::size_t>(i)];
    in.waiting.push_back(id);
    ++in.outstanding;
    if (start) schedule(i);
  }

  /// Closed loop: requests sent at `now` by clients whose requests ended in this step join the
  /// waiting queues before the next step is planned (they would otherwise miss it).
  void take_released() {
    while (next_arrival < reqs.size() && reqs[next_arrival].arrival <= now) {
      arrive(static_cast<int>(next_arrival++), false);
    }
  }

  void free_request(Instance& in, Req& r) {
    in.free_blocks += r.blocks;
    r.blocks = 0;
    if (r.lora >= 0 && !in.lora_running.empty()) {
      if (--in.lora_running[static_cast<std::size_t>(r.lora)] == 0) --in.lora_distinct;
    }
  }

  /// Recompute preemption of the last running request (vLLM's lowest priority); returns it.
  int preempt_last(Instance& in) {
    const int victim = in.running.back();
    in.running.pop_back();
    Req& r = reqs[static_cast<std::size_t>(victim)];
    free_request(in, r);
    r.computed = r.cached;
    r.target = r.prompt + r.generated;
    ++r.preemptions;
    ++preemptions;
    in.plan.erase(std::remove_if(in.plan.begin(), in.plan.end(),
                                 [&](const Work& w) { return w.req == victim; }),
                  in.plan.end());
    in.waiting.push_front(victim);
    return victim;
  }

  /// Grows `id`'s blocks to hold `tokens` of context. Running requests may preempt others from the
  /// back of the running list (themselves last); admissions never preempt.
  bool reserve(Instance& in, int id, long long tokens, bool may_preempt) {
    Req& r = reqs[static_cast<std::size_t>(id)];
    const long long need = blocks_for(r, tokens) - r.blocks;
    while (need > in.free_blocks) {
      if (!may_preempt || in.running.empty()) return false;
      if (preempt_last(in) == id) return false;
    }
    if (need > 0) {
      in.free_blocks -= need;
      r.blocks += static_cast<int>(need);
    }
    return true;
  }

  /// The KV tokens a request is admitted with: those it needs now, or, where the engine guarantees
  /// no eviction (TensorRT-LLM's GUARANTEED_NO_EVICT), its whole sequence up front (at most the
  /// pool: a longer one is admitted as it grows, as under MAX_UTILIZATION).
  long long admission_tokens(const Instance& in, const Req& r, long long now_tokens) const {
    if (!spec.inference.engine.guaranteed_no_evict) return now_tokens;
    const long long whole = static_cast<long long>(r.prompt) + r.output;
    return blocks_for(r, whole) <= in.total_blocks ? std::max(whole, now_tokens) : now_tokens;
  }

  bool in_decode(const Req& r) const { return r.computed >= r.target && r.generated > 0; }

  static bool has_prefill(const Instance& in) {
    for (const Work& w : in.plan) {
      if (!w.decode) return true;
    }
    return false;
  }

  void plan_running(Instance& in, int& left, bool decodes, bool prefills) {
    // Preemption removes requests from the back of `running`, never before index k.
    for (std::size_t k = 0; k < in.running.size(); ++k) {
      const int id = in.running[k];
      Req& r = reqs[static_cast<std::size_t>(id)];
      if (in_decode(r)) {
        if (!decodes || in.role == Role::prefill) continue;
        const int tokens = spec_k > 0 ? spec_k + 1 : 1;
        if (left < tokens) continue;
        if (!reserve(in, id, r.computed + tokens, true)) continue;
        in.plan.push_back({id, tokens, true});
        left -= tokens;
      } else {
        if (!prefills) continue;
        int chunk = r.target - r.computed;
        if (spec.inference.engine.chunked_prefill) chunk = std::min(chunk, left);
        if (chunk <= 0) continue;
        // Unchunked, a prompt over the budget left runs as the step's only prefill.
        if (chunk > left && (spec.inference.engine.chunked_prefill || has_prefill(in))) continue;
        // Prefill first (SGLang, vLLM V0): a prompt's chunk waits for free blocks rather than
        // retract running requests, which would be re-admitted first and retract it in turn (a
        // livelock); only decodes retract, as SGLang's retract_decode.
        const bool may_preempt = spec.policy == SchedulePolicy::decode_first;
        if (!reserve(in, id, r.computed + chunk, may_preempt)) continue;
        in.plan.push_back({id, chunk, false});
        left -= std::min(chunk, left);
      }
    }
  }

  bool lora_fits(const Instance& in, const Req& r) const {
    return r.lora < 0 || in.lora_running[static_cast<std::size_t>(r.lora)] > 0 ||
           in.lora_distinct < spec.lora.max_loras_per_batch;
  }

  /// Moves the first waiting request (within 64) whose adapter fits to the front.
  bool promote_lora_fit(Instance& in) {
    const std::size_t n = std::min<std::size_t>(in.waiting.size(), 64);
    for (std::size_t k = 1; k < n; ++k) {
      if (lora_fits(in, reqs[static_cast<std::size_t>(in.waiting[k])])) {
        const int id = in.waiting[k];
        in.waiting.erase(in.waiting.begin() + static_cast<std::ptrdiff_t>(k));
        in.waiting.push_front(id);
        return true;
      }
    }
    return false;
  }

  void plan_admissions(Instance& in, int& left) {
    const bool chunked = spec.inference.engine.chunked_prefill;
    // Async scheduling: a step that follows another straight away was planned as that one began;
    // requests that arrived since wait for the step after it (unless it would be empty: an idle
    // engine plans again as soon as work arrives).
    const double arrived_by =
        spec.inference.engine.async_scheduling && in.step_end == now ? in.step_start : now;
    while (!in.waiting.empty() && static_cast<int>(in.running.size()) < max_seqs && left > 0) {
      const int id = in.waiting.front();
      Req& r = reqs[static_cast<std::size_t>(id)];
      const int remaining = r.target - r.computed;
      if (r.scheduled < 0 && r.arrival > arrived_by && !in.plan.empty()) break;
      int tokens = remaining;
      if (remaining == 0) {
        tokens = spec_k > 0 ? spec_k + 1 : 1;  // KV arrived from a prefill instance: decode
        if (tokens > left) break;
      } else if (chunked) {
        tokens = std::min(remaining, left);
      } else if (remaining > left && has_prefill(in)) {
        // Without chunking a whole prompt must fit the budget left; one that does not runs as
        // the step's only prefill, with the running decodes (it used to need an empty step, so
        // under load prompts longer than the budget never joined a batch).
        break;
      }
      if (!lora_fits(in, r)) {
        // As vLLM: a request whose adapter would exceed max_loras_per_batch waits, and the next
        // request whose adapter fits goes first (a bounded look-ahead keeps steps cheap).
        if (!promote_lora_fit(in)) break;
        continue;
      }
      if (!reserve(in, id, admission_tokens(in, r, r.computed + tokens), false)) break;
      in.waiting.pop_front();
      in.running.push_back(id);
      if (r.lora >= 0) {
        if (in.lora_running[static_cast<std::size_t>(r.lora)]++ == 0) ++in.lora_distinct;
      }
      if (r.scheduled < 0) r.scheduled = now;
      in.plan.push_back({id, tokens, remaining == 0});
      left -= std::min(tokens, left);
    }
  }

  void plan_static(Instance& in) {
    if (!in.static_active) {
      const int size = spec.static_batch_size > 0 ? spec.static_batch_size : max_seqs;
      while (!in.waiting.empty() && static_cast<int>(in.running.size()) < size) {
        const int id = in.waiting.front();
        Req& r = reqs[static_cast<std::size_t>(id)];
        // Static engines reserve the whole sequence up front.
        if (!reserve(in, id, r.prompt + r.output, false)) break;
        in.waiting.pop_front();
        in.running.push_back(id);
        r.scheduled = now;
      }
      in.static_active = !in.running.empty();
    }
    int left = budget;
    bool any_prefill = false;
    for (int id : in.running) {
      Req& r = reqs[static_cast<std::size_t>(id)];
      if (r.computed < r.target) {
        const int chunk = std::min(r.target - r.computed, left);
        if (chunk <= 0) break;
        in.plan.push_back({id, chunk, false});
        left -= chunk;
        any_prefill = true;
      }
    }
    if (any_prefill) return;
    // Decode: every member of the batch computes, finished ones as padding.
    for (int id : in.running) in.plan.push_back({id, 1, true});
  }

  void schedule(int i) {
    Instance& in = inst[static_cast<std::size_t>(i)];
    if (in.busy) return;
    in.plan.clear();
    if (spec.batching == Batching::static_batch) {
      plan_static(in);
    } else {
      int left = budget;
      const bool admit = in.running.empty() || in.step_counter % spec.num_scheduler_steps == 0;
      const long long preempted_before = preemptions;
      if (spec.policy == SchedulePolicy::decode_first && in.role != Role::prefill) {
        plan_running(in, left, true, true);
        // As vLLM: no admissions in a step that had to preempt.
        if (admit && preemptions == preempted_before) plan_admissions(in, left);
      } else {
        // Prefill first: a step with prefill work holds no decodes (vLLM V0, SGLang).
        plan_running(in, left, false, true);
        if (admit) plan_admissions(in, left);
        bool has_prefill = false;
        for (const Work& w : in.plan) has_prefill = has_prefill || !w.decode;
        if (!has_prefill) plan_running(in, left, true, false);
      }
    }
    if (in.plan.empty()) return;
    ++in.step_counter;
    const double cost = price(in);
    in.busy = true;
    in.step_start = now;
    ++steps;
    step_time_sum += cost;
    batch_sum += static_cast<double>(in.plan.size());
    const double kv = in.total_blocks > 0 ? 1.0 - static_cast<double>(in.free_blocks) /
                                                      static_cast<double>(in.total_blocks)
                                          : 0;
    kv_sum += kv;
    kv_peak = std::max(kv_peak, kv);
    timeline.add(now, static_cast<double>(in.plan.size()), kv,
                 static_cast<double>(in.waiting.size()));
    push(now + cost, 0, i);
  }

  double price(Instance& in) {
    chunks.clear();
    StepShape shape;
    int lora_loads = 0;
    int adapters = 0;
    for (const Work& w : in.plan) {
      const Req& r = reqs[static_cast<std::size_t>(w.req)];
      if (w.decode) {
        ++shape.decode_sequences;
        shape.decode_context_tokens += r.computed;
      } else {
        chunks.push_back({w.tokens, r.computed});
      }
    }
    shape.prefills = chunks.data();
    shape.num_prefills = static_cast<int>(chunks.size());
    if (spec_k > 0) shape.tokens_per_decode = spec_k + 1;
    if (spec.lora.num_adapters > 0) {
      // Distinct adapters of the step's sequences; a non-resident one is loaded (LRU slots).
      ++in.lora_epoch;
      for (const Work& w : in.plan) {
        const int id = reqs[static_cast<std::size_t>(w.req)].lora;
        int& mark = in.lora_mark[static_cast<std::size_t>(id)];
        if (mark == in.lora_epoch) continue;
        mark = in.lora_epoch;
        ++adapters;
        auto it = std::find(in.lora_resident.begin(), in.lora_resident.end(), id);
        if (it != in.lora_resident.end()) {
          in.lora_resident.erase(it);
        } else {
          ++lora_loads;
          if (static_cast<int>(in.lora_resident.size()) >= spec.lora.max_loras_per_batch) {
            in.lora_resident.erase(in.lora_resident.begin());
          }
        }
        in.lora_resident.push_back(id);
      }
    }
    if (custom_cost) return custom_cost(shape);
    return coster->cost(shape, adapters, lora_loads);
  }

  int accepted_tokens() {
    if (spec_k == 0) return 1;
    int n = 1;
    while (n <= spec_k && accept_rng.uniform01() < spec.speculative.acceptance_rate) ++n;
    return n;
  }

  void finish(Instance& in, int id) {
    Req& r = reqs[static_cast<std::size_t>(id)];
    r.finish = now;
    ++finished;
    --in.outstanding;
    release();
  }

  void complete_step(int i) {
    Instance& in = inst[static_cast<std::size_t>(i)];
    in.busy = false;
    in.step_end = now;
    const bool is_static = spec.batching == Batching::static_batch;
    std::vector<int>& run = in.running;
    for (const Work& w : in.plan) {
      Req& r = reqs[static_cast<std::size_t>(w.req)];
      if (r.finish >= 0) {  // static padding
        r.computed += 1;
        continue;
      }
      int produced = 0;
      if (w.decode) {
        produced = accepted_tokens();
        r.computed += produced;
      } else {
        r.computed += w.tokens;
        if (r.computed >= r.target) produced = 1;  // the chunk that ends the prompt samples
      }
      if (produced == 0) continue;
      if (r.generated == 0) r.first_token = now;
      r.generated = std::min(r.output, r.generated + produced);
      if (r.generated >= r.output) {
        finish(in, w.req);
        if (!is_static) {
          free_request(in, r);
          run.erase(std::find(run.begin(), run.end(), w.req));
        }
      } else if (in.role == Role::prefill && r.generated == 1) {
        // The first token is out; the KV cache (and a hybrid's Mamba state) moves to a decode
        // instance.
        free_request(in, r);
        run.erase(std::find(run.begin(), run.end(), w.req));
        --in.outstanding;
        const double bytes = static_cast<double>(r.prompt) * setup.kv_bytes_per_token +
                             setup.state_bytes_per_request;
        push(now + spec.disaggregation.kv_link_latency_s +
                 bytes / spec.disaggregation.kv_link_bytes_per_s,
             1, w.req);
      }
    }
    if (is_static) {
      bool all_done = true;
      for (int id : run) all_done = all_done && reqs[static_cast<std::size_t>(id)].finish >= 0;
      if (all_done) {
        for (int id : run) free_request(in, reqs[static_cast<std::size_t>(id)]);
        run.clear();
        in.static_active = false;
      }
    }
    in.plan.clear();
    if (closed) {
      take_released();
      for (std::size_t k = 0; k < inst.size(); ++k) {
        if (static_cast<int>(k) != i) schedule(static_cast<int>(k));
      }
    }
    schedule(i);
  }

  void kv_arrived(int id) {
    Req& r = reqs[static_cast<std::size_t>(id)];
    const int i = route(Role::decode);
    r.instance = i;
    // The decode instance holds the prompt's KV: nothing left to prefill.
    r.computed = r.prompt;
    r.target = r.prompt;
    Instance& in = inst[static_cast<std::size_t>(i)];
    in.waiting.push_back(id);
    ++in.outstanding;
    schedule(i);
  }

  bool advance(long long max_events) {
    for (long long e = 0; e < max_events; ++e) {
      const double t_arrival = next_arrival < reqs.size() ? reqs[next_arrival].arrival : kInf;
      const double t_event = events.empty() ? kInf : events.top().t;
      if (t_arrival == kInf && t_event == kInf) return true;
      // Preemptions recompute prompts: the work cap holds at run time too (steps × batch).
      if (steps > kMaxSimSteps || batch_sum > 2 * kMaxSimOutputTokens) {
        throw NotModelledError("workload.num_requests", "the simulation exceeded " +
                                                            std::to_string(kMaxSimSteps) +
                                                            " steps; simulate fewer requests");
      }
      if (t_arrival <= t_event) {
        now = t_arrival;
        if (closed) {
          // Every request sent at this instant is queued before any step is planned.
          take_released();
          for (std::size_t k = 0; k < inst.size(); ++k) schedule(static_cast<int>(k));
          if (next_arrival == reqs.size()) waiting_at_last_arrival = total_waiting();
          continue;
        }
        arrive(static_cast<int>(next_arrival++));
        if (next_arrival == reqs.size()) waiting_at_last_arrival = total_waiting();
        continue;
      }
      const Event ev = events.top();
      events.pop();
      now = ev.t;
      if (ev.kind == 0) {
        complete_step(ev.target);
      } else {
        kv_arrived(ev.target);
      }
    }
    return next_arrival >= reqs.size() && events.empty();
  }

  ServingResult result() const;
};

ServingResult ServingSimulation::State::result() const {
  ServingResult res;
  res.simulated = true;
  res.fits = setup.fits;
  res.unfit_reason = setup.unfit_reason;
  res.tier = custom_cost ? 0 : coster->tier();
  res.replicas = setup.instances;
  res.warnings = setup.warnings;
  res.kv_capacity_tokens = setup.kv_capacity_tokens;
  res.state_bytes_per_request = setup.state_bytes_per_request;
  res.rejected = rejected;
  res.preemptions = preemptions;
  res.steps = steps;
  std::vector<double> ttft, tpot, e2e, queue;
  double first_arrival = kInf, last_finish = 0, in_tokens = 0, out_tokens = 0;
  int good = 0;
  for (const Req& r : reqs) {
    if (r.rejected || r.finish < 0) continue;
    ++res.completed;
    first_arrival = std::min(first_arrival, r.arrival);
    last_finish = std::max(last_finish, r.finish);
    in_tokens += r.prompt;
    out_tokens += r.output;
    const double t_ttft = r.first_token - r.arrival;
    const double t_e2e = r.finish - r.arrival;
    const double t_tpot = r.output > 1 ? (r.finish - r.first_token) / (r.output - 1) : 0;
    ttft.push_back(t_ttft);
    e2e.push_back(t_e2e);
    if (r.output > 1) tpot.push_back(t_tpot);
    queue.push_back(r.scheduled - r.arrival);
    const Slo& slo = spec.slo;
    if ((slo.ttft_s <= 0 || t_ttft <= slo.ttft_s) && (slo.tpot_s <= 0 || t_tpot <= slo.tpot_s) &&
        (slo.e2e_s <= 0 || t_e2e <= slo.e2e_s)) {
      ++good;
    }
  }
  if (res.completed > 0) {
    // Engine's per-request CPU time (tokenize, admit) delays the first token of each request.
    const double req_s = setup.inference.engine.request_overhead_s;
    for (double& x : ttft) x += req_s;
    for (double& x : e2e) x += req_s;
    res.ttft_s = summarize(ttft);
    res.tpot_s = summarize(tpot);
    res.e2e_s = summarize(e2e);
    res.queueing_s = summarize(queue);
    const double span = std::max(last_finish - first_arrival, 1e-9);
    res.simulated_s = span;
    res.requests_per_s = res.completed / span;
    res.input_tokens_per_s = in_tokens / span;
    res.output_tokens_per_s = out_tokens / span;
    if (spec.slo.any()) {
      res.goodput_requests_per_s = good / span;
      res.goodput_fraction = static_cast<double>(good) / res.completed;
    }
  }
  if (steps > 0) {
    res.mean_step_time_s = step_time_sum / static_cast<double>(steps);
    res.mean_batch_size = batch_sum / static_cast<double>(steps);
    res.kv_mean_use = kv_sum / static_cast<double>(steps);
    res.kv_peak_use = kv_peak;
  }
  res.timeline = timeline.points();
  while (res.timeline.size() > static_cast<std::size_t>(spec.timeline_points)) {
    std::vector<TimelinePoint> merged;
    for (std::size_t i = 0; i < res.timeline.size(); i += 2) {
      TimelinePoint p = res.timeline[i];
      if (i + 1 < res.timeline.size()) {
        const TimelinePoint& q = res.timeline[i + 1];
        p = {(p.t_s + q.t_s) / 2, (p.batch_size + q.batch_size) / 2, (p.kv_use + q.kv_use) / 2,
             (p.waiting + q.waiting) / 2};
      }
      merged.push_back(p);
    }
    res.timeline = std::move(merged);
  }
  // Overload: the admission queue at the last arrival still holds more than 5% of the requests
  // (at least 10): arrivals outpace service and the latencies grow with num_requests.
  const int queued = std::max(0, waiting_at_last_arrival);
  // A closed loop cannot be overloaded: at most `concurrency` requests are ever outstanding.
  // A setup that holds no whole request serves nothing: saturated at 0, as the analytic model.
  res.saturated =
      !setup.fits || (!closed && queued > std::max(10.0, 0.05 * static_cast<double>(reqs.size())));
  if (res.saturated && setup.fits) {
    res.warnings.push_back(
        "saturated: " + std::to_string(queued) +
        " requests were still waiting at the last arrival; arrivals outpace service, so these "
        "latencies grow with num_requests (they describe this finite run only)");
  }
  if (rejected > 0) {
    res.warnings.push_back(std::to_string(rejected) +
                           " requests need more KV blocks than the cache holds and were rejected");
  }
  if (spec.per_request) {
    res.requests.reserve(reqs.size());
    for (const Req& r : reqs) {
      // Times as the client sees them: the engine's per-request overhead delays the first token.
      const double req_s = r.finish >= 0 ? setup.inference.engine.request_overhead_s : 0;
      res.requests.push_back({r.arrival, r.scheduled, r.first_token + req_s, r.finish + req_s,
                              r.prompt, r.output, r.cached, r.preemptions, r.instance});
    }
  }
  return res;
}

ServingSimulation::ServingSimulation(const ServingSpec& spec) : s_(std::make_unique<State>()) {
  s_->init(spec);
}

ServingSimulation::ServingSimulation(const ServingSpec& spec, StepCostFn cost)
    : s_(std::make_unique<State>()) {
  s_->custom_cost = std::move(cost);
  s_->init(spec);
}

ServingSimulation::~ServingSimulation() = default;

bool ServingSimulation::advance(long long max_events) { return s_->advance(max_events); }

double ServingSimulation::progress() const {
  const double n = static_cast<double>(s_->reqs.size() - static_cast<std::size_t>(s_->rejected));
  return n > 0 ? s_->finished / n : 1.0;
}

ServingResult ServingSimulation::result() const {
  ServingResult r = s_->result();
  // A custom step cost (tests, what-ifs of a step) is the caller's, not the pricing's.
  if (!s_->custom_cost) detail::check_physical(s_->spec, r);
  return r;
}

ServingResult simulate_serving(const ServingSpec& spec) {
  ServingSimulation sim(spec);
  while (!sim.advance(1'000'000)) {
  }
  return sim.result();
}

ServingResult simulate_serving(const ServingSpec& spec, StepCostFn cost) {
  ServingSimulation sim(spec, std::move(cost));
  while (!sim.advance(1'000'000)) {
  }
  return sim.result();
}

}  // namespace flopcast
