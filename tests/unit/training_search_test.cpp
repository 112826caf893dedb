// SPDX-License-Identifier: MIT
// Training layout search (task "search", target "training"): the best layout equals the
// exhaustive answer, every listed layout reproduces as a task-"training" request, rejected
// layouts carry their reason, bad searches are errors naming the field.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "flopcast/io/api.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::failure_of;

json search_request() {
  return json{{"task", "search"},
              {"search", {{"target", "training"}, {"top", 5}}},
              {"model", "llama-2-7b"},
              {"hardware", "h100-sxm"},
              {"num_gpus", 8},
              {"max_tier", 0},
              {"workload", {{"seq_len", 4096}, {"global_batch_size", 64}}}};
}

TEST(LayoutSearch, BestLayoutIsTheExhaustiveMinimum) {
  // Exhaustive: every tp, pp, cp in 1, 2, 4, 8 with tp·pp·cp dividing 8, every number of
  // virtual stages up to 8 that splits Llama-2-7B's 32 layers evenly (pp 2 and 4: 1, 2, 4, 8;
  // pp 8: 1, 2, 4; pp 1: none), every ZeRO stage and recomputation, each priced as task
  // "training" with its micro-batch searched; the fastest that fits must be the search's first.
  const json r = io::run(search_request());
  double best = std::numeric_limits<double>::infinity();
  int fitting = 0, priced = 0;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4, 8}) {
      for (int cp : {1, 2, 4, 8}) {
        if (8 % (tp * pp * cp) != 0) continue;
        for (int vpp : {1, 2, 4, 8}) {
          if (vpp > 1 && (pp == 1 || 32 % (pp * vpp) != 0)) continue;
          for (int zero = 0; zero <= 3; ++zero) {
            for (const char* rc : {"none", "selective", "op", "full"}) {
              json q = search_request();
              q.erase("search");
              q["task"] = "training";
              q["parallelism"] = {{"tp", tp}, {"pp", pp},     {"vpp", vpp},
                                  {"cp", cp}, {"sp", tp > 1}, {"zero", zero}};
              q["workload"]["recompute"] = rc;
              const json t = io::run(q);
              ++priced;
              if (!t["memory_per_gpu"]["fits"].get<bool>()) continue;
              ++fitting;
              best = std::min(best, t["step_time_s"].get<double>());
            }
          }
        }
      }
    }
  }
  // (tp, pp, cp) triples dividing 8, by pp: pp 1 10, pp 2 6, pp 4 3, pp 8 1; with their virtual
  // stages 10·1 + 6·4 + 3·4 + 1·3 = 49 pipelines, × 4 stages × 4 recomputes = 784 priced. The
  // space: 4 tp × (1 + 4 + 4 + 3) (pp, vpp) × 4 cp × 16 = 3,072 layouts, the rest rejected for
  // divisibility.
  EXPECT_EQ(priced, 784);
  EXPECT_EQ(r["evaluated"], 4 * 12 * 4 * 16);
  EXPECT_EQ(r["fitting"], fitting);
  EXPECT_GE(r["micro_batches_priced"].get<long long>(), 784);
  ASSERT_EQ(r["candidates"].size(), 5u);
  EXPECT_DOUBLE_EQ(r["candidates"][0]["step_time_s"].get<double>(), best);
  // Fastest first, and each candidate is one task-"training" request away.
  double previous = 0;
  for (const json& c : r["candidates"]) {
    EXPECT_GE(c["step_time_s"].get<double>(), previous);
    previous = c["step_time_s"].get<double>();
    const json t = io::run(c["request"]);
    EXPECT_EQ(t["step_time_s"], c["step_time_s"]);
    EXPECT_EQ(t["micro_batch_size"], c["micro_batch_size"]);
    EXPECT_TRUE(t["memory_per_gpu"]["fits"].get<bool>());
  }
  // A 7B model fits on one H100 with room to spare: no layout beats plain data parallelism
  // without recomputation (no TP or CP traffic, no pipeline bubble, nothing run twice).
  const json& top = r["candidates"][0];
  EXPECT_EQ(top["parallelism"]["tp"], 1);
  EXPECT_EQ(top["parallelism"]["pp"], 1);
  EXPECT_EQ(top["parallelism"]["dp"], 8 / top["parallelism"]["cp"].get<int>());
  EXPECT_EQ(top["recompute"], "none");
}

// Issue 14: the compute type as a dimension when asked. Llama-2-7B on 8 H100, one layout
// pinned (DP 8, ZeRO 1, no recomputation): bf16, fp8 and mxfp8 are priced; mxfp8 needs
// block-scaled tensor cores an H100 lacks and is rejected with that rule; fp8 runs the GEMMs on
// twice the peak and ranks first. Each row is one task-"training" request away.
TEST(LayoutSearch, ComputeTypeIsSearchedWhenAsked) {
  json q = search_request();
  q["search"]["tp"] = {1};
  q["search"]["pp"] = {1};
  q["search"]["cp"] = {1};
  q["search"]["zero"] = {1};
  q["search"]["recompute"] = {"none"};
  q["search"]["compute"] = {"bf16", "fp8", "mxfp8"};
  const json r = io::run(q);
  EXPECT_EQ(r["evaluated"], 3);
  ASSERT_EQ(r["candidates"].size(), 2u);
  EXPECT_EQ(r["candidates"][0]["compute"], "fp8");
  EXPECT_EQ(r["candidates"][1]["compute"], "bf16");
  EXPECT_LT(r["candidates"][0]["step_time_s"].get<double>(),
            r["candidates"][1]["step_time_s"].get<double>());
  for (const json& c : r["candidates"]) {
    EXPECT_EQ(c["request"]["precision"]["compute"], c["compute"]);
    EXPECT_EQ(io::run(c["request"])["step_time_s"], c["step_time_s"]);
  }
  bool rule = false;
  for (const json& x : r["rejected"])
    rule |= x["reason"].get<std::string>().find("block scales") != std::string::npos;
  EXPECT_TRUE(rule) << r["rejected"].dump();
  EXPECT_FALSE(r["request"].contains("precision") && r["request"]["precision"].contains("compute"));
  // Searched and set at once is refused, naming the request's key.
  q["precision"] = {{"compute", "bf16"}};
  EXPECT_EQ(failure_of(q).path, "precision.compute");
  // Without search.compute the request's own type is the only one.
  q.erase("precision");
  q["search"].erase("compute");
  const json own = io::run(q);
  EXPECT_EQ(own["evaluated"], 1);
  EXPECT_EQ(own["candidates"][0]["compute"], "bf16");
}

TEST(LayoutSearch, RejectedLayoutsSayWhy) {
  // Llama-3.1-70B on 8 H100 without sharding: 16 B per parameter of weights, gradients and AdamW
  // (70.6e9 · 16 = 1.13 TB) over tp·pp ≤ 8 is ≥ 141 GB per GPU: nothing fits.
  json q = search_request();
  q["model"] = "llama-3.1-70b";
  q["search"]["zero"] = {0};
  q["search"]["recompute"] = {"full"};
  q["search"]["cp"] = {1};
  q["search"]["tp"] = {1, 3};
  const json r = io::run(q);
  EXPECT_TRUE(r["candidates"].empty());
  EXPECT_EQ(r["fitting"], 0);
  // tp 1: pp 1, 2, 4, 8 with the virtual stages up to 8 that split 80 layers evenly (pp 1: 1;
  // pp 2, 40 layers: 1, 2, 4, 5, 8; pp 4, 20: 1, 2, 4, 5; pp 8, 10: 1, 2, 5), 13 layouts priced
  // and too big; tp 3 does not divide 8 (the same 13).
  ASSERT_EQ(r["rejected"].size(), 2u);
  EXPECT_EQ(r["rejected"][0]["reason"], "does not fit in memory at micro-batch 1");
  EXPECT_EQ(r["rejected"][0]["count"], 13);
  EXPECT_EQ(r["rejected"][1]["reason"], "num_gpus: tp·pp·cp must divide it");
  EXPECT_EQ(r["rejected"][1]["count"], 13);
  EXPECT_EQ(r["warnings"], json::array({"no layout fits in memory"}));
}

TEST(LayoutSearch, PinnedVirtualStages) {
  // search.vpp [1, 3] on Llama-2-7B (32 layers), tp, cp, ZeRO and recomputation pinned, pp 1, 2
  // and 8 (dp 8, 4, 1): pp 1 runs without interleaving (1 layout); pp 2 and 8 each try vpp 1
  // and 3, and 3 splits neither 32/2 nor 32/8 layers evenly: 2 layouts rejected with the
  // training model's rule, 3 priced.
  json q = search_request();
  q["search"]["top"] = 10;
  q["search"]["tp"] = {1};
  q["search"]["pp"] = {1, 2, 8};
  q["search"]["vpp"] = {1, 3};
  q["search"]["cp"] = {1};
  q["search"]["zero"] = {1};
  q["search"]["recompute"] = {"none"};
  const json r = io::run(q);
  EXPECT_EQ(r["evaluated"], 5);
  ASSERT_EQ(r["rejected"].size(), 1u);
  EXPECT_EQ(r["rejected"][0]["reason"], "parallelism.pp: pp·vpp must divide model.num_layers");
  EXPECT_EQ(r["rejected"][0]["count"], 2);
  ASSERT_EQ(r["candidates"].size(), 3u);
  for (const json& c : r["candidates"]) {
    EXPECT_EQ(c["parallelism"]["vpp"], 1);
    EXPECT_EQ(c["request"]["parallelism"]["vpp"], 1);
  }
}

TEST(LayoutSearch, TensorParallelismUpToTwoNodes) {
  // 16 H100 in two 8-GPU nodes, pp, cp, ZeRO and recomputation pinned: tp 1, 2, 4, 8 and 16
  // (two nodes, its all-reduces over the NICs) are the 5 layouts priced, and TP16 is one request
  // away like every candidate. Beyond two nodes nothing is tried: 32 GPUs still stop at tp 16.
  json q = search_request();
  q["num_gpus"] = 16;
  q["workload"]["global_batch_size"] = 256;
  q["search"]["top"] = 10;
  q["search"]["pp"] = {1};
  q["search"]["cp"] = {1};
  q["search"]["zero"] = {1};
  q["search"]["recompute"] = {"none"};
  json r = io::run(q);
  EXPECT_EQ(r["evaluated"], 5);
  bool tp16 = false;
  for (const json& c : r["candidates"]) {
    if (c["request"]["parallelism"]["tp"] != 16) continue;
    tp16 = true;
    EXPECT_DOUBLE_EQ(io::run(c["request"])["step_time_s"].get<double>(),
                     c["step_time_s"].get<double>());
  }
  EXPECT_TRUE(tp16);
  q["num_gpus"] = 32;
  q["workload"]["global_batch_size"] = 512;
  EXPECT_EQ(io::run(q)["evaluated"], 5);
  // An L40S server has no scale-out network: TP16 is rejected with the training model's rule.
  q["hardware"] = "l40s";
  q["num_gpus"] = 16;
  r = io::run(q);
  EXPECT_EQ(r["evaluated"], 5);
  bool rule = false;
  for (const json& x : r["rejected"])
    rule |= x["reason"].get<std::string>().find("scale-out") != std::string::npos;
  EXPECT_TRUE(rule) << r["rejected"].dump();
}

TEST(LayoutSearch, BadSearchesNameTheField) {
  json q = search_request();
  q["search"]["top"] = 0;
  EXPECT_EQ(failure_of(q).message, "search.top: must be between 1 and 100 (got 0)");
  q = search_request();
  q["search"]["tp"] = {2, 0};
  EXPECT_EQ(failure_of(q).message, "search.tp[1]: must be >= 1 (got 0)");
  q = search_request();
  q["search"]["recompute"] = {"partial"};
  EXPECT_EQ(failure_of(q).message,
            "search.recompute[0]: must be one of none, selective, op, full (got \"partial\")");
  q = search_request();
  q["search"]["target"] = "inference";
  EXPECT_EQ(failure_of(q).message,
            "search.target: must be \"training\", \"serving\" or \"hardware\" (got \"inference\")");
  q = search_request();
  q["workload"]["recompute"] = "full";
  EXPECT_EQ(failure_of(q).path, "workload.recompute");
  q = search_request();
  q["parallelism"] = {{"tp", 2}};
  EXPECT_EQ(failure_of(q).path, "parallelism");
  q = search_request();
  q.erase("search");
  EXPECT_EQ(failure_of(q).path, "search");
  // Work budget: 64 tp x 17 (pp, vpp) x 8 cp x 4 ZeRO x 4 recompute x 1 ep = 139,264 layouts,
  // refused up front. The 17: Llama-2-7B's 32 layers split evenly into pp·vpp chunks for pp 1
  // (vpp 1), 2 (1, 2, 4, 8), 4 (1, 2, 4, 8), 8 (1, 2, 4), 16 (1, 2), 32 (1); pp 64 and 128
  // leave layers uneven, vpp 1 only.
  q = search_request();
  json many = json::array();
  for (int i = 1; i <= 64; ++i) many.push_back(i);
  q["search"]["tp"] = many;
  q["search"]["pp"] = {1, 2, 4, 8, 16, 32, 64, 128};
  q["search"]["cp"] = {1, 2, 4, 8, 16, 32, 64, 128};
  const test::Failure budget = failure_of(q);
  EXPECT_EQ(budget.path, "search");
  EXPECT_EQ(budget.message,
            "search: would consider more than 20,000 layouts; pin dimensions with search.tp, "
            "search.pp, search.vpp, search.cp, search.ep, search.zero, search.recompute, "
            "search.compute or search.micro_batch_size (got 139264)");
  q = search_request();
  q["search"]["vpp"] = {1, 0};
  EXPECT_EQ(failure_of(q).message, "search.vpp[1]: must be >= 1 (got 0)");
}

TEST(LayoutSearch, StepEstimatesAreBudgetedAndTheMicroBatchCanBePinned) {
  // 5,120 layouts of dp 8 (tp 1 listed 64 times, pp 1 listed 20 times, ZeRO 0-3, recompute
  // none), a global batch of 8 x 720,720 sequences: each layout's micro-batch search may price
  // one estimate per divisor of 720,720 = 2^4·3^2·5·7·11·13, (4+1)(2+1)(1+1)^4 = 240 of them:
  // 5,120 x 240 = 1,228,800 > 1,000,000, refused before any is priced (issue 46: 4.5 M took
  // 17 s).
  json q = search_request();
  q["workload"]["seq_len"] = 8;
  q["workload"]["global_batch_size"] = 8 * 720720;
  q["search"]["tp"] = json(std::vector<int>(64, 1));
  q["search"]["pp"] = json(std::vector<int>(20, 1));
  q["search"]["cp"] = {1};
  q["search"]["recompute"] = {"none"};
  const test::Failure budget = failure_of(q);
  EXPECT_EQ(budget.path, "search");
  EXPECT_EQ(budget.message.substr(0, 67),
            "search: could price up to 1228800 step estimates, more than 1,000,0");
  // Pinned, each layout prices one: 5,120 estimates, every candidate at micro-batch 4.
  q["search"]["micro_batch_size"] = {4};
  const json r = io::run(q);
  EXPECT_EQ(r.at("micro_batches_priced"), 5120);
  for (const json& c : r.at("candidates")) EXPECT_EQ(c.at("micro_batch_size"), 4);
  // A pinned size that does not divide the batch per rank is that layout's named rejection.
  q["search"]["micro_batch_size"] = {7 * 64 + 1};
  q["search"]["tp"] = {1};
  q["search"]["pp"] = {1};
  const json none = io::run(q);
  EXPECT_TRUE(none.at("candidates").empty());
  ASSERT_FALSE(none.at("rejected").empty());
  EXPECT_NE(none.at("rejected")[0].dump().find("micro_batch_size"), std::string::npos)
      << none.at("rejected").dump();
}

}  // namespace
}  // namespace flopcast
