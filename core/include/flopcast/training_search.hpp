// SPDX-License-Identifier: MIT
#pragma once

/// Training layout search: every tensor, pipeline, context and expert parallel size, data-parallel
/// sharding and recomputation that the GPUs allow, each priced by estimate_training with its
/// fastest micro-batch that fits; the fastest layouts first, and why the others were rejected.

#include <map>
#include <string>
#include <vector>

#include "flopcast/training.hpp"

namespace flopcast {

/// The values each dimension may take; an empty list enumerates it: tp over the powers of two
/// up to the GPUs of two nodes, pp over the powers of two up to the layers, vpp (virtual stages
/// per pipeline stage, interleaved 1F1B) over every v with pp·v dividing the layers, cp over 1,
/// 2, 4, 8, ep over the powers of two dividing the experts (MoE only), sharding over ZeRO 0-3,
/// recompute over none, selective, op, full. dp is what the GPUs leave; a layout without a
/// pipeline (pp 1) is tried at vpp 1 only.
struct TrainingSearchSpace {
  std::vector<int> tp, pp, vpp, cp, ep;
  std::vector<Sharding> sharding;
  std::vector<Recompute> recompute;
  /// precision.compute types to try (bf16, fp8, mxfp8, fp4); empty: the request's own, since
  /// a precision changes the numerics of what is trained.
  std::vector<DType> compute;
  /// Micro-batch sizes to try; empty: each layout prices every size that fits and keeps the
  /// fastest.
  std::vector<int> micro_batch_size;
};

struct TrainingCandidate {
  TrainingSpec spec;  ///< the layout, with the micro-batch the estimate chose
  TrainingResult result;
};

struct TrainingSearchResult {
  /// The fastest layouts that fit, by step time (ties: enumeration order, so the result does not
  /// depend on anything but the request).
  std::vector<TrainingCandidate> best;
  int evaluated = 0;  ///< layouts considered (every combination of the space)
  int fitting = 0;    ///< of which fit in memory
  /// Step estimates priced: every micro-batch size tried for every layout that was priced.
  long long micro_batches_priced = 0;
  /// Layouts rejected, counted by reason: tp·pp·cp not dividing the GPUs, "does not fit in memory
  /// at micro-batch 1", or the rule the estimate's validation gave (path and rule, no value).
  std::map<std::string, int> rejected;
};

/// Layouts one search may consider (the product of the space's list sizes, with vpp's counted
/// per pipeline size).
inline constexpr double kMaxSearchLayouts = 20000;
/// Step estimates one search may price, counted before the work: one per layout whose micro-batch
/// is pinned, else one per divisor of its batch per data rank.
inline constexpr double kMaxSearchMicroBatches = 1'000'000;

/// Searches the layouts of `base` (model, hardware, GPUs, workload, precision and framework kept;
/// its parallelism, sharding, recompute and micro-batch replaced) and returns the `top` fastest.
/// Throws SpecError for a bad `top` (1-100), a space value below 1, or a space of more than
/// kMaxSearchLayouts layouts or kMaxSearchMicroBatches step estimates (blaming `search`).
TrainingSearchResult search_training(const TrainingSpec& base, const TrainingSearchSpace& space,
                                     int top);

}  // namespace flopcast
