// SPDX-License-Identifier: MIT
// Shareable links: encode/decode round trips, and every kind of bad link keeps the good fields.
#include <gtest/gtest.h>

#include <string>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "test_util.hpp"

namespace flopcast {
namespace {

using io::json;
using test::base_request;

/// The complete link of a request whose one field `key=value` is appended (or replaced).
std::string link_with(const std::string& key, const std::string& value) {
  return "v=1&task=inference&model=llama-2-7b&hardware=a100-sxm-80g&workload.prompt_tokens=128&"
         "workload.output_tokens=128&" +
         key + "=" + value;
}

bool has_error(const json& decoded, const std::string& path, const std::string& substring) {
  for (const json& e : decoded.at("errors")) {
    if (e.at("path") == path &&
        e.at("message").get<std::string>().find(substring) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void expect_core_kept(const json& request) {
  EXPECT_EQ(request.value("model", json()), "llama-2-7b") << request.dump();
  EXPECT_EQ(request.value("hardware", json()), "a100-sxm-80g") << request.dump();
  EXPECT_EQ(request.value("task", json()), "inference") << request.dump();
  ASSERT_TRUE(request.contains("workload")) << request.dump();
  EXPECT_EQ(request["workload"].value("prompt_tokens", 0), 128) << request.dump();
  EXPECT_EQ(request["workload"].value("output_tokens", 0), 128) << request.dump();
}

TEST(Link, BaseRequestRoundTrips) {
  const json r = base_request();
  const std::string link = io::encode_link(r);
  EXPECT_EQ(link.rfind("v=1&", 0), 0u) << link;
  EXPECT_NE(link.find("model=llama-2-7b"), std::string::npos) << link;
  EXPECT_NE(link.find("parallelism.tp=1"), std::string::npos) << link;
  const json decoded = io::decode_link(link);
  EXPECT_TRUE(decoded.at("errors").empty()) << decoded.dump();
  EXPECT_EQ(decoded.at("request"), r);
}

TEST(Link, RoundTripGivesTheSameEstimate) {
  json r = base_request();
  r["parallelism"]["tp"] = 2;
  r["num_gpus"] = 4;
  r["hardware"] = "h100-sxm";
  r["precision"] = {{"weights", "fp8"}, {"kv_cache", "fp8"}, {"activations", "bf16"}};
  r["engine"] = {{"gpu_memory_utilization", 0.85},
                 {"kv_block_tokens", 32},
                 {"step_overhead_us", 12.5},
                 {"framework_reserve_GB", 2}};
  const json decoded = io::decode_link(io::encode_link(r));
  ASSERT_TRUE(decoded.at("errors").empty()) << decoded.dump();
  EXPECT_EQ(decoded.at("request"), r);
  EXPECT_EQ(io::run(decoded.at("request")), io::run(r));
}

// Every key of an inference request has a link field: the resolved request (every default
// filled in, every engine key the reader takes: name, chunked_prefill, kernel_fixed_us, ...)
// encodes and decodes to itself, and gives the same estimate. `flopcast link --engine vllm`
// failed with "engine.name: unknown key".
TEST(Link, EveryKeyOfAResolvedInferenceRequestRoundTrips) {
  json r = base_request();
  r["hardware"] = "h100-sxm";
  r["engine"] = {{"name", "vllm"}, {"chunked_prefill", false}, {"kernel_fixed_us", 3}};
  const json resolved = io::run(r).at("request");
  ASSERT_TRUE(resolved.at("engine").contains("kernel_fixed_us")) << resolved.dump();
  const json decoded = io::decode_link(io::encode_link(resolved));
  ASSERT_TRUE(decoded.at("errors").empty()) << decoded.dump();
  json expected = resolved;
  expected.erase("schema_version");  // the link's own "v=1" versions it
  EXPECT_EQ(decoded.at("request"), expected);
  EXPECT_EQ(io::run(decoded.at("request")), io::run(r));
}

TEST(Link, DataParallelAttentionAndExpertParallelismRoundTrip) {
  json r = base_request();
  r["parallelism"]["tp"] = 2;
  r["parallelism"]["dp_attention"] = true;
  r["num_gpus"] = 2;
  r["model"] = "mixtral-8x7b";
  r["parallelism"]["ep"] = 2;  // and expert parallelism, an integer field
  const std::string link = io::encode_link(r);
  EXPECT_NE(link.find("parallelism.dp_attention=true"), std::string::npos) << link;
  const json decoded = io::decode_link(link);
  ASSERT_TRUE(decoded.at("errors").empty()) << decoded.dump();
  EXPECT_EQ(decoded.at("request"), r);
  EXPECT_EQ(io::run(decoded.at("request")), io::run(r));
}

TEST(Link, DataParallelAttentionThatIsNotABooleanIsDroppedAndReported) {
  const json d = io::decode_link(link_with("parallelism.dp_attention", "yes"));
  EXPECT_TRUE(has_error(d, "parallelism.dp_attention", "must be true or false (got \"yes\")"))
      << d.dump();
  expect_core_kept(d.at("request"));
  EXPECT_FALSE(d.at("request").contains(json::json_pointer("/parallelism/dp_attention")));
}

TEST(Link, CustomModelObjectRoundTrips) {
  json r = base_request();
  r["model"] = {{"name", "tiny & co: 50% \"quoted\" #1"},
                {"num_layers", 2},
                {"hidden_size", 256},
                {"num_heads", 4},
                {"num_kv_heads", 2},
                {"intermediate_size", 512},
                {"vocab_size", 1000},
                {"max_context_tokens", 2048},
                {"qkv_bias", true}};
  const std::string link = io::encode_link(r);
  EXPECT_EQ(link.find('#'), std::string::npos) << link;
  EXPECT_EQ(link.find(' '), std::string::npos) << link;
  EXPECT_EQ(link.find('"'), std::string::npos) << link;
  const json decoded = io::decode_link(link);
  EXPECT_TRUE(decoded.at("errors").empty()) << decoded.dump();
  EXPECT_EQ(decoded.at("request"), r);
}

TEST(Link, CustomHardwareObjectRoundTrips) {
  json r = base_request();
  r["hardware"] = io::preset("hardware", "h100-sxm", "hardware").at("hardware");
  const json decoded = io::decode_link(io::encode_link(r));
  EXPECT_TRUE(decoded.at("errors").empty()) << decoded.dump();
  EXPECT_EQ(decoded.at("request"), r);
}

TEST(Link, EncodeRejectsUnknownKeys) {
  json r = base_request();
  r["workload"]["batch_sise"] = 2;
  EXPECT_THROW((void)io::encode_link(r), SpecError);
  r = base_request();
  r["foo"] = 1;
  EXPECT_THROW((void)io::encode_link(r), SpecError);
  EXPECT_THROW((void)io::encode_link(json::array()), SpecError);
}

TEST(Link, TpNotDividingHeadsIsDroppedAndReported) {
  const json d = io::decode_link(link_with("parallelism.tp", "3"));
  EXPECT_TRUE(has_error(d, "parallelism.tp", "must divide model.num_heads (32) (got 3)"))
      << d.dump();
  const json& r = d.at("request");
  expect_core_kept(r);
  EXPECT_FALSE(r.contains(json::json_pointer("/parallelism/tp"))) << r.dump();
  // What is left runs.
  EXPECT_NO_THROW((void)io::run(r));
}

TEST(Link, NegativeBatchSizeIsDroppedAndReported) {
  const json d = io::decode_link(link_with("workload.batch_size", "-1"));
  EXPECT_TRUE(has_error(d, "workload.batch_size", "(got -1)")) << d.dump();
  expect_core_kept(d.at("request"));
  EXPECT_FALSE(d.at("request").at("workload").contains("batch_size"));
  EXPECT_EQ(d.at("errors").size(), 1u) << d.dump();
}

TEST(Link, NonNumericBatchSize) {
  const json d = io::decode_link(link_with("workload.batch_size", "abc"));
  EXPECT_TRUE(has_error(d, "workload.batch_size", "must be an integer (got \"abc\")")) << d.dump();
  expect_core_kept(d.at("request"));
  EXPECT_FALSE(d.at("request").at("workload").contains("batch_size"));
}

TEST(Link, FractionalIntegerField) {
  const json d = io::decode_link(link_with("num_gpus", "1.5"));
  EXPECT_TRUE(has_error(d, "num_gpus", "must be an integer")) << d.dump();
  expect_core_kept(d.at("request"));
}

TEST(Link, UnknownField) {
  const json d = io::decode_link(link_with("foo", "1"));
  ASSERT_EQ(d.at("errors").size(), 1u) << d.dump();
  EXPECT_EQ(d["errors"][0]["path"], "foo");
  EXPECT_NE(d["errors"][0]["message"].get<std::string>().find("unknown link field"),
            std::string::npos);
  expect_core_kept(d.at("request"));
  EXPECT_FALSE(d.at("request").contains("foo"));
}

TEST(Link, MisspelledFieldSuggestsNearest) {
  const json d = io::decode_link(link_with("workload.batch_sise", "2"));
  EXPECT_TRUE(has_error(d, "workload.batch_sise", "did you mean \"workload.batch_size\"?"))
      << d.dump();
  expect_core_kept(d.at("request"));
}

TEST(Link, MalformedPercentEncoding) {
  for (const char* bad : {"llama%2-7b", "llama%ZZ", "llama-2-7b%", "llama-2-7b%4"}) {
    const json d = io::decode_link(std::string("v=1&hardware=a100-sxm-80g&model=") + bad);
    ASSERT_EQ(d.at("errors").size(), 1u) << bad << " " << d.dump();
    EXPECT_NE(d["errors"][0]["message"].get<std::string>().find("malformed percent-encoding"),
              std::string::npos)
        << d.dump();
    EXPECT_EQ(d.at("request"), json({{"hardware", "a100-sxm-80g"}})) << bad;
  }
}

TEST(Link, PercentEncodedValuesDecode) {
  const json d = io::decode_link("v=1&model=llama%2D2%2d7b");
  EXPECT_TRUE(d.at("errors").empty()) << d.dump();
  EXPECT_EQ(d.at("request").at("model"), "llama-2-7b");
}

TEST(Link, UnknownPresetKeepsTheRest) {
  std::string link = link_with("workload.batch_size", "2");
  link.replace(link.find("model=llama-2-7b"), 16, "model=llama-2-7");
  const json d = io::decode_link(link);
  EXPECT_TRUE(has_error(d, "model", "did you mean \"llama-2-7b\"?")) << d.dump();
  const json& r = d.at("request");
  EXPECT_FALSE(r.contains("model"));
  EXPECT_EQ(r.value("hardware", json()), "a100-sxm-80g");
  EXPECT_EQ(r.at("workload").value("batch_size", 0), 2);
  EXPECT_EQ(r.at("workload").value("prompt_tokens", 0), 128);
}

TEST(Link, MalformedModelObject) {
  std::string link = link_with("workload.batch_size", "2");
  link.replace(link.find("hardware=a100-sxm-80g"), 21, "hardware=%7B%22a%22");
  const json d = io::decode_link(link);
  EXPECT_TRUE(has_error(d, "hardware", "malformed JSON")) << d.dump();
  EXPECT_FALSE(d.at("request").contains("hardware"));
  EXPECT_EQ(d.at("request").value("model", json()), "llama-2-7b");
}

TEST(Link, DuplicateKeysKeepTheFirst) {
  const json d = io::decode_link("v=1&model=llama-2-7b&model=mistral-7b");
  EXPECT_TRUE(has_error(d, "model", "more than once")) << d.dump();
  EXPECT_EQ(d.at("request").at("model"), "llama-2-7b");
}

TEST(Link, LeadingHashIsIgnored) {
  const std::string link = io::encode_link(base_request());
  const json with_hash = io::decode_link("#" + link);
  EXPECT_TRUE(with_hash.at("errors").empty()) << with_hash.dump();
  EXPECT_EQ(with_hash, io::decode_link(link));
}

TEST(Link, EmptyFragment) {
  for (const char* empty : {"", "#", "&&", "#v=1"}) {
    const json d = io::decode_link(empty);
    EXPECT_EQ(d.at("request"), json::object()) << empty;
    EXPECT_TRUE(d.at("errors").empty()) << empty << " " << d.dump();
  }
}

TEST(Link, UnsupportedVersion) {
  const json d = io::decode_link("v=2&model=llama-2-7b");
  EXPECT_TRUE(has_error(d, "v", "unsupported link version (got \"2\")")) << d.dump();
  EXPECT_EQ(d.at("request").at("model"), "llama-2-7b");
}

TEST(Link, KeyWithoutValue) {
  const json d = io::decode_link(link_with("workload.batch_size", "") + "&num_gpus");
  EXPECT_TRUE(has_error(d, "workload.batch_size", "must be an integer")) << d.dump();
  EXPECT_TRUE(has_error(d, "num_gpus", "must be an integer")) << d.dump();
  expect_core_kept(d.at("request"));
}

TEST(Link, IncompleteLinkIsNotJudged) {
  // Without a workload the estimator is not asked: only field-level errors are reported.
  const json d = io::decode_link("v=1&model=llama-2-7b&parallelism.tp=3");
  EXPECT_TRUE(d.at("errors").empty()) << d.dump();
  EXPECT_EQ(d.at("request").at("parallelism").at("tp"), 3);
}

TEST(Link, SeveralBadFieldsAreAllReported) {
  std::string link = link_with("workload.batch_size", "0");
  link += "&parallelism.tp=3&engine.gpu_memory_utilization=2";
  const json d = io::decode_link(link);
  EXPECT_TRUE(has_error(d, "workload.batch_size", "(got 0)")) << d.dump();
  EXPECT_TRUE(has_error(d, "parallelism.tp", "(got 3)")) << d.dump();
  EXPECT_TRUE(has_error(d, "engine.gpu_memory_utilization", "(got 2)")) << d.dump();
  expect_core_kept(d.at("request"));
  EXPECT_NO_THROW((void)io::run(d.at("request")));
}

TEST(Link, InvalidUtf8ValueIsAFieldError) {
  // Percent-decoding can yield any bytes; a bad value is reported on its field, never thrown
  // (found by the fuzzer: describing the value for the message used a strict json::dump()).
  for (const char* value : {"a%D7", "a\xd7\xd7", "%FF"}) {
    json d;
    ASSERT_NO_THROW(d = io::decode_link(link_with("workload.batch_size", value))) << value;
    EXPECT_TRUE(has_error(d, "workload.batch_size", "must be an integer"))
        << d.dump(-1, ' ', false, json::error_handler_t::replace);
    expect_core_kept(d.at("request"));
  }
  json d;
  ASSERT_NO_THROW(d = io::decode_link("v=1&engine.gpu_memory_utilization=%C3%28"));
  EXPECT_TRUE(has_error(d, "engine.gpu_memory_utilization", "must be a finite number"));
}

TEST(Link, GarbageNeverThrows) {
  for (const char* garbage : {"%", "=", "==&&==", "v", "model", "&model=%7B", "a=b=c", "model=%00",
                              "workload=5", "workload.prompt_tokens=1e400",
                              "model=%7B%7D&hardware=a100-sxm-80g&workload.prompt_tokens=1&"
                              "workload.output_tokens=1"}) {
    json d;
    EXPECT_NO_THROW(d = io::decode_link(garbage)) << garbage;
    EXPECT_TRUE(d.at("request").is_object()) << garbage;
    EXPECT_TRUE(d.at("errors").is_array()) << garbage;
  }
}

TEST(Link, DeepKeysAreRefusedBeforeTheyNest) {
  // 40,000 levels of "a." once recursed through nested objects until the stack overflowed; a
  // key of more than 8 segments (a request's deepest path has 3) is no request field.
  std::string deep = "v=1&task=training&";
  for (int i = 0; i < 40000; ++i) deep += "a.";
  deep += "a=1";
  json d;
  ASSERT_NO_THROW(d = io::decode_link(deep));
  EXPECT_EQ(d.at("request"), (json{{"task", "training"}}));
  ASSERT_EQ(d.at("errors").size(), 1u);
  EXPECT_EQ(d.at("errors")[0].at("message"),
            "link: a key 40001 levels deep is no request field (they are at most 8)");
  // Eight segments still place (and are left to the task's reader to judge); nine do not.
  EXPECT_TRUE(io::decode_link("v=1&task=training&a.b.c.d.e.f.g.h=1").at("errors").empty());
  EXPECT_EQ(io::decode_link("v=1&task=training&a.b.c.d.e.f.g.h.i=1").at("errors").size(), 1u);
}

TEST(Link, ManyBadKeysAreListedOnceAndCounted) {
  // 20,000 unknown keys: the first 20 errors, then one line counting the other 19,980.
  for (const char* task : {"", "task=serving&"}) {
    std::string link = std::string("v=1&") + task;
    for (int i = 0; i < 20000; ++i) link += "Bad" + std::to_string(i) + "=1&";
    const json d = io::decode_link(link);
    ASSERT_EQ(d.at("errors").size(), 21u) << task;
    EXPECT_EQ(d.at("errors")[20].at("message"),
              "link: 19980 more errors like the ones above, not listed")
        << task;
  }
}

TEST(Link, OtherTasksCarryEveryLeafByItsPath) {
  // The encoding of the page's serving view: dotted paths of the leaves,
  // strings as they are, other values as JSON, model and hardware objects whole; percent-encoded.
  const json serving = {{"task", "serving"},
                        {"model", "llama-3-8b"},
                        {"hardware", {{"name", "x y"}}},
                        {"workload", {{"arrival", {{"kind", "poisson"}, {"rate_per_s", 2.5}}}}},
                        {"features", {{"prefix_caching", true}}}};
  EXPECT_EQ(io::encode_link(serving),
            "v=1&features.prefix_caching=true&hardware=%7B%22name%22%3A%22x%20y%22%7D"
            "&model=llama-3-8b&task=serving&workload.arrival.kind=poisson"
            "&workload.arrival.rate_per_s=2.5");
  // And back: the same request, every value by its type.
  const json back = io::decode_link(io::encode_link(serving));
  EXPECT_EQ(back.at("request"), serving);
  EXPECT_TRUE(back.at("errors").empty());
}

TEST(Link, OtherTasksDecodeLeafByLeafAndSayWhatTheyDrop) {
  // A training link as the page shares it, with a bad key, a repeated key, a clash and a wrong
  // version: each is reported and left out; the text that is no JSON stays text.
  const json d = io::decode_link(
      "#v=2&task=training&model=llama-3-8b&num_gpus=16&parallelism.fsdp=full_shard"
      "&parallelism.tp=2&parallelism.tp=4&workload.recompute=op&Bad.key=1"
      "&workload=3&precision.compute=bf16&hardware=%7B%22name%22&__proto__.x=1");
  const json want = {{"task", "training"},
                     {"model", "llama-3-8b"},
                     {"num_gpus", 16},
                     {"parallelism", {{"fsdp", "full_shard"}, {"tp", 2}}},
                     {"workload", {{"recompute", "op"}}},
                     {"precision", {{"compute", "bf16"}}},
                     {"hardware", "{\"name\""}};
  EXPECT_EQ(d.at("request"), want);
  std::vector<std::string> messages;
  for (const json& e : d.at("errors")) messages.push_back(e.at("message"));
  EXPECT_EQ(messages,
            (std::vector<std::string>{"v: unsupported link version (got \"2\")",
                                      "parallelism.tp: appears more than once in the link",
                                      "Bad.key: not a request field",
                                      "workload: conflicts with another field of the link",
                                      "__proto__.x: not a request field"}));
}

}  // namespace
}  // namespace flopcast
