// SPDX-License-Identifier: MIT
#include "flopcast/kernel.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"

namespace flopcast {
namespace {

double round_up(double x, double multiple) { return std::ceil(x / multiple) * multiple; }

double pow2_tile(double m, int lo, int hi) {
  double tile = lo;
  while (tile < m && tile < hi) tile *= 2;
  return tile;
}

FlopsPerSecond peak_or_throw(const HardwareSpec& hw, DType math) {
  auto peak = hw.peak(math);
  if (!peak) {
    throw NotModelledError("precision",
                           std::string("the hardware has no dense ") + std::string(to_string(math)) +
                               " peak (hardware.dense_peak_TFLOPS." + std::string(to_string(math)) +
                               " is missing)");
  }
  return *peak;
}

/// Fraction of the SMs busy in the last wave, averaged: tiles / (waves · SMs). Fewer tiles than
/// SMs are assumed spread by split-K / stream-K, so they do not count as a partial wave.
double wave_efficiency(double tiles, int num_sms) {
  if (tiles < num_sms) return 1.0;
  const double waves = std::ceil(tiles / num_sms);
  return tiles / (waves * num_sms);
}

OpCost roofline(std::string name, const HardwareSpec& hw, const KernelModel& km, Flops flops,
                FlopsPerSecond sustained, Bytes bytes, int kernels) {
  const Seconds compute = flops / sustained;
  const Seconds memory = bytes / (hw.hbm_bandwidth * km.hbm_efficiency);
  OpCost op;
  op.name = std::move(name);
  op.flops = flops;
  op.bytes = bytes;
  op.bound = compute > memory ? Bound::compute : Bound::memory;
  op.time = (compute > memory ? compute : memory) + Seconds(kernels * km.kernel_overhead_s);
  op.kernels = kernels;
  return op;
}

}  // namespace

std::string_view to_string(Bound b) noexcept {
  switch (b) {
    case Bound::compute:
      return "compute";
    case Bound::memory:
      return "memory";
    case Bound::communication:
      return "communication";
    case Bound::overhead:
      return "overhead";
  }
  return "?";
}

OpCost gemm_op(std::string name, const HardwareSpec& hw, const KernelModel& km, double m, double n,
               double k, const GemmTypes& types, double count) {
  const FlopsPerSecond peak = peak_or_throw(hw, types.math);
  const double tile_m = pow2_tile(m, km.min_tile_m, km.max_tile_m);
  const double padded_m = round_up(m, tile_m);
  const double padded_n = round_up(n, km.tile_n);
  const double tile_eff = (m * n) / (padded_m * padded_n);
  const double tiles = (padded_m / tile_m) * (padded_n / km.tile_n);
  const double eff = km.gemm_efficiency * tile_eff * wave_efficiency(tiles, hw.num_sms);
  const Flops flops(2 * m * n * k);
  const Bytes bytes(n * k * types.weight_bytes + m * k * types.input_bytes +
                    m * n * types.output_bytes);
  OpCost op = roofline(std::move(name), hw, km, flops * count, peak * eff, bytes * count, 1);
  return op;
}

double expected_distinct_experts(double experts, double topk, double tokens) {
  return experts * (1.0 - std::pow(1.0 - topk / experts, tokens));
}

OpCost moe_experts_op(const HardwareSpec& hw, const KernelModel& km, double tokens, double hidden,
                      double inter, int experts, int topk, bool gated, const GemmTypes& linear,
                      const GemmTypes& router) {
  const double touched = expected_distinct_experts(experts, topk, tokens);
  const double rows = tokens * topk / touched;
  const double up_width = gated ? 2 * inter : inter;
  OpCost moe = gemm_op("moe_experts", hw, km, tokens, experts, hidden, router);
  const OpCost up = gemm_op("moe_experts", hw, km, rows, up_width, hidden, linear, touched);
  const OpCost down = gemm_op("moe_experts", hw, km, rows, hidden, inter, linear, touched);
  for (const OpCost* part : {&up, &down}) {
    moe.flops += part->flops;
    moe.bytes += part->bytes;
    moe.time += part->time;
    moe.kernels += part->kernels;
  }
  moe.bound = up.time > down.time ? up.bound : down.bound;
  return moe;
}

OpCost attention_prefill_op(const HardwareSpec& hw, const KernelModel& km, double batch, double seq,
                            double heads, double kv_heads, double head_dim, DType math,
                            double act_bytes, double kv_bytes) {
  const FlopsPerSecond peak = peak_or_throw(hw, math);
  const double blocks_per_head = std::ceil(seq / km.attention_block);
  const double tile_eff = seq / (blocks_per_head * km.attention_block);
  const double tiles = blocks_per_head * heads * batch;
  const double eff = km.attention_efficiency * tile_eff * wave_efficiency(tiles, hw.num_sms) *
                     std::min(1.0, tiles / hw.num_sms);
  const Flops flops(batch * 2 * head_dim * heads * seq * (seq + 1));
  const Bytes bytes(batch * seq * head_dim * (2 * heads * act_bytes + 2 * kv_heads * kv_bytes));
  return roofline("attention", hw, km, flops, peak * eff, bytes, 1);
}

OpCost attention_decode_op(const HardwareSpec& hw, const KernelModel& km, double batch,
                           double context, double heads, double kv_heads, double head_dim,
                           DType math, double act_bytes, double kv_bytes) {
  const FlopsPerSecond peak = peak_or_throw(hw, math);
  const Flops flops(batch * 4 * context * head_dim * heads);
  const Bytes bytes(batch * head_dim * (2 * context * kv_heads * kv_bytes + 2 * heads * act_bytes));
  return roofline("attention", hw, km, flops, peak * km.attention_efficiency, bytes, 1);
}

OpCost memory_op(std::string name, const HardwareSpec& hw, const KernelModel& km, Flops flops,
                 Bytes bytes, int kernels) {
  // Elementwise math runs far below any peak; only its bytes matter.
  OpCost op;
  op.name = std::move(name);
  op.flops = flops;
  op.bytes = bytes;
  op.bound = Bound::memory;
  op.time = bytes / (hw.hbm_bandwidth * km.hbm_efficiency) +
            Seconds(kernels * km.kernel_overhead_s);
  op.kernels = kernels;
  return op;
}

}  // namespace flopcast
