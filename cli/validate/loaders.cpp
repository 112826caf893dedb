// SPDX-License-Identifier: MIT
// One loader per ground-truth format; each row becomes a Tier-0 prediction through the core op
// functions (never a re-implementation of the roofline) or a skip with its reason.
#include "validate/loaders.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "files.hpp"
#include "flopcast/collective.hpp"
#include "flopcast/dtype.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/specs.hpp"
#include "validate/csv.hpp"
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {
namespace {

using Fields = std::vector<std::string_view>;

std::string file_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string str(std::string_view s) { return std::string(s); }

/// Columns of one format, looked up once per file.
class Columns {
 public:
  explicit Columns(const CsvFile& f) : file_(f) {}
  std::size_t operator[](std::string_view name) { return file_.require(name); }
  /// A column that may be absent (npos).
  std::size_t optional(std::string_view name) const { return file_.column(name); }

 private:
  const CsvFile& file_;
};

/// "name=value ..." of the identity columns of a row (GPU, dtype, shape): hashed for the split and
/// shown as the worst row of a group.
class Identity {
 public:
  Identity(const CsvFile& f, std::initializer_list<std::string_view> names) {
    for (std::string_view n : names) {
      const std::size_t i = f.column(n);
      if (i != std::string::npos) cols_.emplace_back(str(n), i);
    }
  }
  std::string operator()(const Fields& row) const {
    std::string s;
    s.reserve(96);
    for (const auto& [name, i] : cols_) {
      if (!s.empty()) s += ' ';
      s.append(name).append("=").append(row[i]);
    }
    return s;
  }

 private:
  std::vector<std::pair<std::string, std::size_t>> cols_;
};

/// Sanity flag first, then the hardware preset, then the prediction; SpecError and
/// NotModelledError from the core (e.g. fp8 math on a GPU without an fp8 peak) become skips.
template <class Predict>
Outcome predict_row(Context& ctx, std::string_view sanity, std::string_view gpu,
                    Predict&& predict) {
  if (!sanity.empty() && sanity != "ok") return Outcome::skipped("sanity_flag=" + str(sanity));
  const HardwareSpec* hw = ctx.hardware(gpu);
  if (hw == nullptr) return Outcome::skipped("no hardware preset for " + str(gpu));
  try {
    Outcome o = predict(*hw);
    if (o.op) o.hardware_id = *hardware_preset_for(gpu);
    return o;
  } catch (const SpecError& e) {
    return Outcome::skipped(e.what());
  }
}

/// A count column as an int, or nullopt when the cell is empty, fractional or out of range.
std::optional<int> count_of(double v) {
  if (!(v >= 0 && v <= 1e9) || v != std::floor(v)) return std::nullopt;
  return static_cast<int>(v);
}

/// Shape values that must all be present and >= 1 (empty cells parse as NaN).
bool all_positive(std::initializer_list<double> values) {
  for (double v : values) {
    if (!(v >= 1 && std::isfinite(v))) return false;
  }
  return true;
}

Outcome micros(const OpCost& op) {
  Outcome o = Outcome::value(op.time.value * 1e6, op.tier);
  o.low = o.predicted * std::exp(op.log_residual_p10);
  o.high = o.predicted * std::exp(op.log_residual_p90);
  if (op.num_parts > 0 && op.bound != Bound::communication) o.op = op;
  return o;
}

/// Operand types of a linear layer by the data's dtype name; nullopt: not modelled.
std::optional<GemmTypes> linear_types(std::string_view dtype) {
  if (dtype == "bf16") return GemmTypes{DType::bf16, 2, 2, 2};
  if (dtype == "fp16") return GemmTypes{DType::fp16, 2, 2, 2};
  if (dtype == "fp8") return GemmTypes{DType::fp8, 1, 1, 2};
  // DeepSeek-style 1x128 / 128x128 block scales (< 0.02 % of the weight bytes are ignored), but
  // block-scaled kernels are their own family: calibrated apart from per-tensor fp8.
  if (dtype == "fp8_block") return GemmTypes{DType::fp8, 1, 1, 2, KernelVariant::block_scaled};
  // NVFP4 W4A4 (Blackwell FP4 tensor cores): e2m1 weights and activations with one fp8 scale per
  // 16 elements, as flopcast's fp4 linears (the kernels quantize their bf16 input themselves).
  const double nvfp4 = stored_bytes_per_element(DType::fp4);
  if (dtype == "nvfp4") return GemmTypes{DType::fp4, nvfp4, nvfp4, 2};
  // MXFP4 experts (gpt-oss): e2m1 weights with one e8m0 scale per 32, multiplied in bf16 after
  // dequantization (W4A16) or against MXFP8 activations on FP8 tensor cores (W4A8, Blackwell).
  const double mxfp4 = stored_bytes_per_element(DType::mxfp4);
  if (dtype == "w4a16_mxfp4") {
    return GemmTypes{DType::bf16, mxfp4, 2, 2, KernelVariant::weight_mxfp4};
  }
  if (dtype == "w4a8_mxfp4_mxfp8") {
    return GemmTypes{DType::fp8, mxfp4, stored_bytes_per_element(DType::mxfp8), 2,
                     KernelVariant::weight_mxfp4};
  }
  // Weight-only: int weights dequantized to bf16 math; int4 carries one fp16 scale per 128.
  if (dtype == "int8_wo") return GemmTypes{DType::bf16, 1, 2, 2};
  if (dtype == "int4_wo")
    return GemmTypes{DType::bf16, stored_bytes_per_element(DType::int4), 2, 2};
  return std::nullopt;  // sq (SmoothQuant), ...
}

std::string dtype_not_modelled(std::string_view dtype) {
  return "dtype " + str(dtype) + " not modelled";
}

std::optional<double> kv_bytes_of(std::string_view kv) {
  if (kv == "bf16" || kv == "fp16") return 2.0;
  if (kv == "fp8" || kv == "int8") return 1.0;
  return std::nullopt;
}

/// Attention math type and activation bytes by the data's dtype.
std::optional<std::pair<DType, double>> attention_math(std::string_view dtype) {
  if (dtype == "bf16") return std::pair{DType::bf16, 2.0};
  if (dtype == "fp16") return std::pair{DType::fp16, 2.0};
  if (dtype == "fp8") return std::pair{DType::fp8, 1.0};
  return std::nullopt;
}

// ---- Formats ----

/// aiconfigurator aic_gemm.csv and vidur vidur_linear_ops.csv: C[m×n] = A[m×k]·W[k×n].
std::size_t load_gemm(const CsvFile& f, Context& ctx, const std::string& prefix) {
  Columns c(f);
  const std::size_t gpu = c["gpu"], dtype = c["dtype"], op = c["op"], m = c["m"], n = c["n"],
                    k = c["k"], meas = c["measured_time_us"];
  const std::size_t sanity = c.optional("sanity_flag");
  const std::size_t framework = c.optional("framework");
  auto framework_of = [&](const Fields& r) {
    return framework == std::string::npos ? std::string_view() : r[framework];
  };
  const Identity identity(f, {"gpu", "dtype", "model", "tp", "layer_op", "m", "n", "k"});
  const std::string source = file_name(f.path());
  return f.for_each_row([&](const Fields& r, std::size_t line) {
    const std::string group = prefix + "/" + str(r[gpu]) + "/" + str(r[op]) + "/" + str(r[dtype]);
    const double measured = parse_number(r[meas], f, line, "measured_time_us");
    const double mm = parse_number(r[m], f, line, "m"), nn = parse_number(r[n], f, line, "n"),
                 kk = parse_number(r[k], f, line, "k");
    const Outcome o = predict_row(
        ctx, sanity == std::string::npos ? "" : r[sanity], r[gpu],
        [&](const HardwareSpec& hw) -> Outcome {
          if (r[op] != "gemm") return Outcome::skipped("op " + str(r[op]) + " not modelled");
          const auto types = linear_types(r[dtype]);
          if (!types) return Outcome::skipped(dtype_not_modelled(r[dtype]));
          if (!(mm >= 1 && nn >= 1 && kk >= 1)) return Outcome::skipped("missing or zero m, n, k");
          return micros(gemm_op("gemm", hw, ctx.km_for(framework_of(r)), mm, nn, kk, *types));
        });
    ctx.collector().add(source, group, identity(r), line, measured, o);
  });
}

/// aiconfigurator aic_attn_prefill.csv: causal context attention, no cached prefix.
std::size_t load_attn_prefill(const CsvFile& f, Context& ctx) {
  Columns c(f);
  const std::size_t gpu = c["gpu"], dtype = c["dtype"], kv_dtype = c["kv_dtype"],
                    batch = c["batch"], seq = c["seq_len"], past = c["past_kv_len"],
                    heads = c["num_heads"], kv_heads = c["num_kv_heads"], head_dim = c["head_dim"],
                    causal = c["causal"], meas = c["measured_time_us"];
  const std::size_t sanity = c.optional("sanity_flag");
  const std::size_t framework = c.optional("framework");
  auto framework_of = [&](const Fields& r) {
    return framework == std::string::npos ? std::string_view() : r[framework];
  };
  const Identity identity(f, {"gpu", "dtype", "kv_dtype", "batch", "seq_len", "past_kv_len",
                              "num_heads", "num_kv_heads", "head_dim", "causal"});
  const std::string source = file_name(f.path());
  return f.for_each_row([&](const Fields& r, std::size_t line) {
    std::string dt = str(r[dtype]);
    if (r[kv_dtype] != r[dtype]) dt += "-kv" + str(r[kv_dtype]);
    const std::string group = "aic/" + str(r[gpu]) + "/attn_prefill/" + dt;
    const double measured = parse_number(r[meas], f, line, "measured_time_us");
    const Outcome o =
        predict_row(ctx, sanity == std::string::npos ? "" : r[sanity], r[gpu],
                    [&](const HardwareSpec& hw) -> Outcome {
                      if (parse_number(r[causal], f, line, "causal") != 1 ||
                          parse_number(r[past], f, line, "past_kv_len") != 0) {
                        return Outcome::skipped("prefix/non-causal attention not modelled");
                      }
                      const auto math = attention_math(r[dtype]);
                      if (!math) return Outcome::skipped(dtype_not_modelled(r[dtype]));
                      const auto kv = kv_bytes_of(r[kv_dtype]);
                      if (!kv) return Outcome::skipped("kv_" + dtype_not_modelled(r[kv_dtype]));
                      const double b = parse_number(r[batch], f, line, "batch"),
                                   s = parse_number(r[seq], f, line, "seq_len"),
                                   h = parse_number(r[heads], f, line, "num_heads"),
                                   g = parse_number(r[kv_heads], f, line, "num_kv_heads"),
                                   d = parse_number(r[head_dim], f, line, "head_dim");
                      if (!all_positive({b, s, h, g, d}))
                        return Outcome::skipped("missing shape value");
                      return micros(attention_prefill_op(
                          hw, ctx.km_for(framework_of(r)), b, s, AttentionDims::standard(h, g, d),
                          AttentionTypes{math->first, math->second, *kv}));
                    });
    ctx.collector().add(source, group, identity(r), line, measured, o);
  });
}

/// aiconfigurator aic_attn_decode.csv: one query token per sequence over kv_len cached tokens.
std::size_t load_attn_decode(const CsvFile& f, Context& ctx) {
  Columns c(f);
  const std::size_t gpu = c["gpu"], dtype = c["dtype"], kv_dtype = c["kv_dtype"],
                    batch = c["batch"], q_len = c["q_len"], kv_len = c["kv_len"],
                    heads = c["num_heads"], kv_heads = c["num_kv_heads"], head_dim = c["head_dim"],
                    meas = c["measured_time_us"];
  const std::size_t sanity = c.optional("sanity_flag");
  const std::size_t framework = c.optional("framework");
  auto framework_of = [&](const Fields& r) {
    return framework == std::string::npos ? std::string_view() : r[framework];
  };
  const Identity identity(f, {"gpu", "dtype", "kv_dtype", "batch", "q_len", "kv_len", "num_heads",
                              "num_kv_heads", "head_dim"});
  const std::string source = file_name(f.path());
  return f.for_each_row([&](const Fields& r, std::size_t line) {
    std::string dt = str(r[dtype]);
    if (r[kv_dtype] != r[dtype]) dt += "-kv" + str(r[kv_dtype]);
    const std::string group = "aic/" + str(r[gpu]) + "/attn_decode/" + dt;
    const double measured = parse_number(r[meas], f, line, "measured_time_us");
    const Outcome o = predict_row(
        ctx, sanity == std::string::npos ? "" : r[sanity], r[gpu],
        [&](const HardwareSpec& hw) -> Outcome {
          if (parse_number(r[q_len], f, line, "q_len") != 1) {
            return Outcome::skipped("decode with q_len > 1 not modelled");
          }
          const auto math = attention_math(r[dtype]);
          if (!math) return Outcome::skipped(dtype_not_modelled(r[dtype]));
          const auto kv = kv_bytes_of(r[kv_dtype]);
          if (!kv) return Outcome::skipped("kv_" + dtype_not_modelled(r[kv_dtype]));
          const double b = parse_number(r[batch], f, line, "batch"),
                       s = parse_number(r[kv_len], f, line, "kv_len"),
                       h = parse_number(r[heads], f, line, "num_heads"),
                       g = parse_number(r[kv_heads], f, line, "num_kv_heads"),
                       d = parse_number(r[head_dim], f, line, "head_dim");
          if (!all_positive({b, s, h, g, d})) return Outcome::skipped("missing shape value");
          // TensorRT-LLM decodes grouped-query attention with its XQA kernel, up to 32 query
          // heads per KV head, and the rest with its masked-MHA kernel, one thread block per
          // query head: on the H100 and H200 about 10-14 ns per (sequence, head) where XQA takes
          // 37-60 ns per (sequence, KV head), so 64 heads on 1 KV head run 15x slower per KV
          // head than 32 on 1. Multi-head rows have their own fit (the `-mha` family), except
          // over an 8-bit KV cache, which keys the `-kv8` family (fitted on XQA): those rows
          // and the ones past 32 heads per KV head are not fitted.
          if (framework_of(r) == "TRTLLM" && (h > 32 * g || (h == g && *kv <= 1))) {
            return Outcome::skipped("TensorRT-LLM masked-MHA decode (not XQA)");
          }
          // aiconfigurator measured TensorRT-LLM's paged attention, whose KV pages
          // hold 64 tokens (tokens_per_block's default).
          KernelModel km = ctx.km_for(framework_of(r));
          km.kv_page_tokens = 64;
          return micros(attention_decode_op(hw, km, b, s, AttentionDims::standard(h, g, d),
                                            AttentionTypes{math->first, math->second, *kv}));
        });
    ctx.collector().add(source, group, identity(r), line, measured, o);
  });
}

/// aiconfigurator aic_moe.csv: one rank's fused MoE experts (no all-to-all).
std::size_t load_moe(const CsvFile& f, Context& ctx) {
  Columns c(f);
  const std::size_t gpu = c["gpu"], dtype = c["dtype"], tokens = c["num_tokens"],
                    hidden = c["hidden_size"], inter = c["inter_size"], topk = c["topk"],
                    experts = c["num_experts"], moe_tp = c["moe_tp"], moe_ep = c["moe_ep"],
                    distribution = c["distribution"], gated = c["gated"],
                    meas = c["measured_time_us"];
  const std::size_t sanity = c.optional("sanity_flag");
  const std::size_t framework = c.optional("framework");
  auto framework_of = [&](const Fields& r) {
    return framework == std::string::npos ? std::string_view() : r[framework];
  };
  const Identity identity(f, {"gpu", "dtype", "num_tokens", "hidden_size", "inter_size", "topk",
                              "num_experts", "moe_tp", "moe_ep", "distribution", "gated"});
  const std::string source = file_name(f.path());
  const GemmTypes router{DType::bf16, 2, 2, 2};
  return f.for_each_row([&](const Fields& r, std::size_t line) {
    // "power_law_1.01" → "power_law": the routing imbalance shows up as its own group.
    std::string_view dist = r[distribution];
    if (dist.rfind("power_law", 0) == 0) dist = "power_law";
    const std::string group = "aic/" + str(r[gpu]) + "/moe/" + str(r[dtype]) + "/" + str(dist);
    const double measured = parse_number(r[meas], f, line, "measured_time_us");
    const Outcome o = predict_row(
        ctx, sanity == std::string::npos ? "" : r[sanity], r[gpu],
        [&](const HardwareSpec& hw) -> Outcome {
          const auto types = linear_types(r[dtype]);
          if (!types) return Outcome::skipped(dtype_not_modelled(r[dtype]));
          const double tp = parse_number(r[moe_tp], f, line, "moe_tp");
          const auto n_experts = count_of(parse_number(r[experts], f, line, "num_experts"));
          const auto k = count_of(parse_number(r[topk], f, line, "topk"));
          const auto ep = count_of(parse_number(r[moe_ep], f, line, "moe_ep"));
          if (!n_experts || !k || !(tp >= 1) || !ep) {
            return Outcome::skipped("missing num_experts, topk, moe_tp or moe_ep");
          }
          if (*n_experts % *ep != 0) return Outcome::skipped("moe_ep does not divide num_experts");
          // num_tokens are the EP group's tokens: this rank holds num_experts / moe_ep whole
          // experts (each sliced moe_tp ways) and computes the tokens routed to them.
          return micros(moe_experts_op(
              hw, ctx.km_for(framework_of(r)), parse_number(r[tokens], f, line, "num_tokens"),
              parse_number(r[hidden], f, line, "hidden_size"),
              parse_number(r[inter], f, line, "inter_size") / tp, *n_experts, *k,
              parse_number(r[gated], f, line, "gated") == 1, *types, router, *ep));
        });
    ctx.collector().add(source, group, identity(r), line, measured, o);
  });
}

/// vidur vidur_elementwise_ops.csv: bandwidth-bound ops at fp16, 2 bytes per element in and out.
std::size_t load_elementwise(const CsvFile& f, Context& ctx) {
  Columns c(f);
  const std::size_t gpu = c["gpu"], dtype = c["dtype"], op = c["op"], in = c["elems_in"],
                    out = c["elems_out"], meas = c["measured_time_us"];
  const std::size_t sanity = c.optional("sanity_flag");
  const Identity identity(
      f, {"gpu", "dtype", "model", "tp", "op", "num_tokens", "elems_in", "elems_out"});
  const std::string source = file_name(f.path());
  return f.for_each_row([&](const Fields& r, std::size_t line) {
    const std::string group = "vidur/" + str(r[gpu]) + "/" + str(r[op]) + "/" + str(r[dtype]);
    const double measured = parse_number(r[meas], f, line, "measured_time_us");
    const Outcome o = predict_row(
        ctx, sanity == std::string::npos ? "" : r[sanity], r[gpu],
        [&](const HardwareSpec& hw) -> Outcome {
          if (r[dtype] != "fp16" && r[dtype] != "bf16") {
            return Outcome::skipped(dtype_not_modelled(r[dtype]));
          }
          const double elems =
              parse_number(r[in], f, line, "elems_in") + parse_number(r[out], f, line, "elems_out");
          if (!(elems >= 0 && std::isfinite(elems))) return Outcome::skipped("missing shape value");
          return micros(memory_op(str(r[op]), hw, ctx.km(), Flops(0), Bytes(elems * 2), 1));
        });
    ctx.collector().add(source, group, identity(r), line, measured, o);
  });
}

/// The collective op of a data file's op name, or nullopt.
std::optional<CollectiveKind> collective_kind(std::string_view op) {
  if (op == "allreduce") return CollectiveKind::all_reduce;
  if (op == "allgather") return CollectiveKind::all_gather;
  if (op == "reducescatter") return CollectiveKind::reduce_scatter;
  if (op == "alltoall") return CollectiveKind::all_to_all;
  if (op == "sendrecv") return CollectiveKind::send_recv;
  return std::nullopt;
}

/// The scale-out network of a measured multi-node system, or a reason it is not modelled. The
/// hardware preset's network (DGX H100: 8 x 400 Gb/s NDR) stands for vidur's H100 DGX.
std::string collective_network(std::string_view setup, HardwareSpec& hw) {
  if (setup.rfind("gcp_a3-megagpu-8g", 0) == 0) {
    // a3-megagpu-8g: 8 x 200 Gb/s GPUDirect-TCPXO NICs per VM (Google Cloud A3 Mega docs).
    hw.scaleout_link = "tcpxo";
    hw.scaleout_nics_per_node = 8;
    hw.scaleout_nic_bandwidth = BytesPerSecond(200e9 / 8);
    return "";
  }
  if (setup == "h100_dgx") return "";
  return "inter-node network of " + str(setup) + " undocumented";
}

/// aic_collectives.csv, vidur_collectives.csv and the nccl-tests log through estimate_collective
/// (NCCL's automatic algorithm). Groups are split by size class: `/large` (>= 1 MB, the accuracy
/// target) and `/small` (latency-dominated). Custom all-reduce kernels are their own groups.
std::size_t load_collectives(const CsvFile& f, Context& ctx, std::string_view fixed_prefix) {
  Columns c(f);
  const std::size_t gpu = c["gpu"], op = c["op"], impl = c["implementation"],
                    ranks = c["num_ranks"], bytes = c["message_bytes"],
                    meas = c["measured_time_us"];
  const std::size_t nodes = c.optional("num_nodes"), per_node = c.optional("ranks_per_node"),
                    setup = c.optional("system_setup"), repo = c.optional("source_repo"),
                    sanity = c.optional("sanity_flag");
  const Identity identity(f, {"gpu", "system_setup", "implementation", "dtype", "op", "num_ranks",
                              "ranks_per_node", "num_nodes", "message_bytes"});
  const std::string source = file_name(f.path());
  return f.for_each_row([&](const Fields& r, std::size_t line) {
    std::string_view prefix = fixed_prefix;
    if (prefix.empty()) {
      const std::string_view rp = repo == std::string::npos ? "" : r[repo];
      prefix = rp.find("vidur") != std::string_view::npos            ? "vidur"
               : rp.find("aiconfigurator") != std::string_view::npos ? "aic"
                                                                     : "collectives";
    }
    const double size = parse_number(r[bytes], f, line, "message_bytes");
    const double n_nodes =
        nodes == std::string::npos ? 1 : parse_number(r[nodes], f, line, "num_nodes");
    const std::string group = str(prefix) + "/" + str(r[gpu]) + "/" + str(r[op]) + "/" +
                              str(r[impl]) + (n_nodes > 1 ? "/multinode" : "") +
                              (size >= 1e6 ? "/large" : "/small");
    const double measured = parse_number(r[meas], f, line, "measured_time_us");
    const Outcome o = predict_row(
        ctx, sanity == std::string::npos ? "" : r[sanity], r[gpu],
        [&](const HardwareSpec& preset) -> Outcome {
          const auto kind = collective_kind(r[op]);
          if (!kind) return Outcome::skipped("op " + str(r[op]) + " not modelled");
          const auto n = count_of(parse_number(r[ranks], f, line, "num_ranks"));
          if (!n || *n < 1) return Outcome::skipped("missing num_ranks");
          if (r[impl] != "nccl") {
            // vLLM's custom all-reduce as its engine runs it (inside a CUDA graph; SGLang's is
            // the same kernel), in the range where vLLM takes it: what the inference estimate
            // prices its tensor-parallel all-reduces with (all_reduce_op).
            const std::string_view im = r[impl];
            const bool graph =
                im == "custom_allreduce:vllm_graph" || im == "custom_allreduce:sglang_graph";
            KernelModel km = ctx.km();
            km.custom_all_reduce_max_bytes =
                io::engine_profile("vllm", "engine").custom_all_reduce_max_bytes;
            if (!graph || n_nodes > 1 || !uses_custom_all_reduce(preset, km, Bytes(size), *n)) {
              return Outcome::skipped(
                  "custom all-reduce outside vLLM's own use (eager launch, "
                  "TensorRT-LLM's kernel, or a size or topology where vLLM "
                  "falls back to NCCL)");
            }
            return Outcome::value(
                estimate_custom_all_reduce(Bytes(size), *n, cluster_of(preset), km).time.value *
                    1e6,
                0);
          }
          const std::string_view sys = setup == std::string::npos ? "" : r[setup];
          if (sys.find("pairwise") != std::string_view::npos) {
            return Outcome::skipped("NVLink bridges between GPU pairs: topology not modelled");
          }
          HardwareSpec hw = preset;
          if (n_nodes > 1) {
            const std::string why = collective_network(sys, hw);
            if (!why.empty()) return Outcome::skipped(why);
            hw.scaleout_fabric = FabricModel{};
            io::attach_collective_fits(hw);
          }
          if (hw.scaleup_link.rfind("pcie", 0) == 0 && n_nodes == 1 && *n > 2) {
            return Outcome::skipped(
                "more than 2 GPUs over PCIe through the CPU root complex: contention not modelled");
          }
          ClusterSpec cluster = cluster_of(hw);  // per-GPU NIC share of the full node
          // The measured placement: ranks_per_node GPUs of each node.
          const double m = per_node == std::string::npos
                               ? std::min<double>(*n, hw.gpus_per_node)
                               : parse_number(r[per_node], f, line, "ranks_per_node");
          if (!(m >= 1 && m <= hw.gpus_per_node)) return Outcome::skipped("bad ranks_per_node");
          cluster.gpus_per_node = static_cast<int>(m);
          const CollectiveEstimate e =
              estimate_collective(*kind, Bytes(size), *n, cluster, ctx.km());
          const bool fitted = ctx.km().use_calibration && hw.scaleup_fabric.fitted &&
                              (n_nodes <= 1 || hw.scaleout_fabric.fitted);
          Outcome row = Outcome::value(e.time.value * 1e6, fitted ? 2 : 0);
          row.collective = CollectiveSample{
              hw.scaleup_link, n_nodes > 1 ? hw.scaleout_link : "", Split::train,
              CollectiveMeasurement{*kind, Bytes(size), *n, cluster, Seconds(measured * 1e-6)}};
          return row;
        });
    ctx.collector().add(source, group, identity(r), line, measured, o);
  });
}

// ---- End-to-end rows (docs/validation.md) ----

/// A published table's name for one of the schema's metrics, and the factor that takes the
/// schema metric's value to the row's unit.
struct MetricAlias {
  std::string metric;
  double scale = 1;
};

/// The names published tables use (docs/validation.md): `_median` is the schema's `_p50` (a
/// static batch's only value for inference rows); SGLang's `bench_one_batch` prints a batch's
/// `total_latency_s` (the end-to-end latency, in seconds) and its median decode step
/// (`decode_latency_ms_median`, the batch's TPOT); `e2e_latency_ms` is `bench_serving`'s mean
/// end-to-end latency, the first it prints.
MetricAlias canonical_metric(const std::string& kind, const std::string& metric) {
  if (metric == "total_latency_s") return {"e2e_ms", 1e-3};
  if (metric == "decode_latency_ms_median") return {"tpot_ms", 1};
  if (metric == "e2e_latency_ms") return {"e2e_ms_mean", 1};
  if (ends_with(metric, "_median")) {
    const std::string base = metric.substr(0, metric.size() - 7);
    return {kind == "serving" ? base + "_p50" : base, 1};
  }
  return {metric, 1};
}

Outcome predict_e2e(const json& given, Context& ctx, std::string_view source) {
  const std::string kind = json_string(given, "kind");
  const MetricAlias alias = canonical_metric(kind, json_string(given, "metric"));
  json row = given;
  row["metric"] = alias.metric;
  Outcome o;
  if (kind == "training") {
    o = predict_training_row(row, ctx, source);
  } else if (kind == "serving") {
    o = predict_serving_row(row, ctx, source);
  } else if (kind == "inference") {
    o = predict_inference_row(row, ctx, source);
  } else {
    return Outcome::skipped("kind \"" + kind + "\" not one of training, inference, serving");
  }
  o.predicted *= alias.scale;
  o.low *= alias.scale;
  o.high *= alias.scale;
  o.kind = e2e_kind(kind, alias.metric);
  if (o.engine.empty()) o.engine = "none";
  // Engine overheads are CPU-side costs fitted on top of measured kernels, so only rows whose
  // kernels are measured train them: not MoE rows (fused-MoE efficiency at few tokens per expert
  // is not modelled) and not rows on GPUs without Tier-2 kernel fits (MI300X under ROCm builds:
  // their shortfall is in the kernels, and would leak into every NVIDIA estimate of the engine).
  const auto model = row_model(row, 1);
  if (const auto* m = std::get_if<json>(&model); m && m->value("num_experts", 0) > 0) {
    o.fits_engine = false;
    o.moe = true;
    o.mla_moe = m->value("kv_lora_rank", 0) > 0;
    o.early_engine = o.mla_moe && early_mla_engine(row.value("workload", json::object()));
  }
  const auto hw = row_hardware(row);
  if (const auto* h = std::get_if<RowHardware>(&hw); !h || !io::calibration_for(h->id)) {
    o.fits_engine = false;
  }
  return o;
}

void load_e2e(const std::string& path, const std::string& text, Context& ctx) {
  const std::string source = file_name(path);
  std::size_t line = 0, rows = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view s(text.data() + pos, end - pos);
    pos = end + 1;
    ++line;
    if (s.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    json row;
    try {
      row = json::parse(s);
    } catch (const json::exception& e) {
      throw SpecError("", path + ":" + std::to_string(line) + ": malformed JSON: " + e.what());
    }
    if (!row.is_object()) {
      throw SpecError("", path + ":" + std::to_string(line) + ": expected a JSON object per line");
    }
    ++rows;
    const std::string group = "e2e/" + json_string(row, "group") + "/" + json_string(row, "gpu") +
                              "/" + json_string(row, "metric");
    if (!ctx.wants(row, group)) continue;
    const Outcome o = predict_e2e(row, ctx, source);
    ctx.collector().add(source, group, "id=" + json_string(row, "id"), line,
                        json_number(row, "value"), o);
  }
  ctx.collector().file(path, "e2e jsonl", rows);
}

}  // namespace

void map_runtime(const json& row, json& engine) {
  const json wl = row.value("workload", json::object());
  const std::string launch = json_string(wl, "launch") + " " + json_string(wl, "engine");
  if (contains(launch, "--disable-cuda-graph") || contains(launch, "--enforce-eager")) {
    engine["cuda_graphs"] = false;
  }
  if (engine.value("name", "") == "trtllm") {
    const std::string e = lower_case(json_string(wl, "engine"));
    const auto release = engine_release(wl, "tensorrt-llm");
    const bool before_1_0 = release && (*release)[0] < 1;
    if (!contains(e, "pytorch") && (before_1_0 || contains(e, "trtllm-build"))) {
      engine["host_us_per_sequence"] = 0;
    }
  }
}

const HardwareSpec* Context::hardware(std::string_view gpu) {
  auto it = hardware_.find(gpu);
  if (it == hardware_.end()) {
    std::unique_ptr<HardwareSpec> hw;
    if (const auto id = hardware_preset_for(gpu)) {
      hw = std::make_unique<HardwareSpec>(io::resolve_hardware(json(*id), "hardware"));
    }
    it = hardware_.emplace(std::string(gpu), std::move(hw)).first;
  }
  return it->second.get();
}

void Context::note_request(const json& row, const json& request) {
  if (!explain_id_.empty() && json_string(row, "id") == explain_id_) explained_.push_back(request);
}

KernelModel Context::km_for(std::string_view framework) const {
  KernelModel km = km_;
  if (framework == "TRTLLM") km.framework = Framework::trtllm;
  if (framework == "VLLM") km.framework = Framework::vllm;
  if (framework == "SGLang") km.framework = Framework::sglang;
  return km;
}

void Context::apply_engine_override(json& engine) const {
  for (const EngineOverheads& o : engine_overrides_) {
    if (engine.value("name", "") != o.engine) continue;
    engine["step_overhead_us"] = o.step_overhead_us;
    engine["request_overhead_us"] = o.request_overhead_us;
    if (o.kernel_fixed_us >= 0) {
      engine["kernel_fixed_us"] = o.kernel_fixed_us;
    } else {
      engine.erase("kernel_fixed_us");
    }
  }
}

std::string architecture_of(const std::string& hardware_id) {
  const json& hw = io::preset("hardware", hardware_id, "hardware").at("hardware");
  return hw.value("architecture", std::string());
}

void Context::apply_training_override(json& framework, const std::string& hardware_id) const {
  if (training_override_.empty()) return;
  std::string profile = framework.value("profile", std::string());
  if (profile.empty()) {
    profile = training_override_.value("default", std::string());
    if (!profile.empty()) framework["profile"] = profile;
  }
  const std::string family = architecture_of(hardware_id);
  for (const std::string& key :
       {std::string("*"), "*@" + family, profile, profile + "@" + family}) {
    if (key.empty() || key.back() == '@') continue;
    const auto it = training_override_.find(key);
    if (it == training_override_.end() || !it->is_object()) continue;
    for (const auto& [k, value] : it->items()) framework[k] = value;
  }
}

void load_file(const std::string& path, Context& ctx) { load_text(path, read_text(path), ctx); }

void load_text(const std::string& path, std::string text, Context& ctx) {
  // JSON lines are recognised by their first character; everything else must be a CSV.
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    load_e2e(path, text, ctx);
    return;
  }
  const CsvFile f(path, std::move(text));
  std::string format;
  if (f.has({"message_bytes", "num_ranks", "op", "implementation", "measured_time_us"})) {
    format = f.has({"inplace_time_us"}) ? "nccl-tests log" : "collectives";
  } else if (f.has({"m", "n", "k", "op", "dtype", "gpu", "measured_time_us"})) {
    format = f.has({"layer_op"}) ? "vidur linear" : "aic gemm";
  } else if (f.has({"seq_len", "past_kv_len", "causal", "num_heads", "num_kv_heads", "head_dim",
                    "batch"})) {
    format = "aic attn_prefill";
  } else if (f.has({"q_len", "kv_len", "num_heads", "num_kv_heads", "head_dim", "batch"})) {
    format = "aic attn_decode";
  } else if (f.has({"num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp",
                    "moe_ep", "distribution", "gated"})) {
    format = "aic moe";
  } else if (f.has({"elems_in", "elems_out", "op", "gpu", "measured_time_us"})) {
    format = "vidur elementwise";
  }
  std::size_t rows = 0;
  if (format == "nccl-tests log") {
    rows = load_collectives(f, ctx, "nccl-tests");
  } else if (format == "collectives") {
    rows = load_collectives(f, ctx, "");
  } else if (format == "vidur linear") {
    rows = load_gemm(f, ctx, "vidur");
  } else if (format == "aic gemm") {
    rows = load_gemm(f, ctx, "aic");
  } else if (format == "aic attn_prefill") {
    rows = load_attn_prefill(f, ctx);
  } else if (format == "aic attn_decode") {
    rows = load_attn_decode(f, ctx);
  } else if (format == "aic moe") {
    rows = load_moe(f, ctx);
  } else if (format == "vidur elementwise") {
    rows = load_elementwise(f, ctx);
  } else {
    format = "unrecognized";
    rows = f.count_rows();
    ctx.collector().skip_file(file_name(path), "unrecognized file format", rows);
  }
  ctx.collector().file(path, format, rows);
}

}  // namespace flopcast::cli::validate
