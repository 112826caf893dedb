// SPDX-License-Identifier: MIT
// The request-field registry (flopcast/io/fields.hpp), walked field by field: each is read by its
// task's reader, listed in schema(), carried by a link and documented in docs/schema.md. (That
// each has a CLI flag that reaches its path: tests/cli/link_every_flag.cmake and
// every_field_a_flag.cmake.)
#include "flopcast/io/fields.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"

namespace flopcast {
namespace {

using io::json;

json::json_pointer pointer_of(std::string_view path) {
  std::string p = "/" + std::string(path);
  for (char& c : p) c = c == '.' ? '/' : c;
  return json::json_pointer(p);
}

json inference_base() {
  return json{{"task", "inference"},
              {"model", "llama-3.1-8b"},
              {"hardware", "h100-sxm"},
              {"workload", {{"prompt_tokens", 128}, {"output_tokens", 16}}}};
}

json serving_base() {
  return json{{"task", "serving"},
              {"model", "llama-3.1-8b"},
              {"hardware", "h100-sxm"},
              {"workload",
               {{"prompt_tokens", 128},
                {"output_tokens", 16},
                {"arrival", {{"kind", "poisson"}, {"rate_per_s", 1}}}}}};
}

/// A value of the field's type that its reader accepts as a type (the link test's sample).
json sample(const io::RequestField& f) {
  switch (f.type) {
    case io::FieldType::integer:
    case io::FieldType::length:
      return 2;
    case io::FieldType::number:
      return 0.5;
    case io::FieldType::boolean:
      return false;
    case io::FieldType::spec:
      return f.path == "model" ? "llama-3.1-8b" : "h100-sxm";
    case io::FieldType::array:
      return json::array();
    case io::FieldType::text:
      break;
  }
  if (f.path == "task") return "inference";
  const std::string c(f.choices);
  return io::schema().at(c.substr(0, c.find('.'))).at(c.substr(c.find('.') + 1)).at(0);
}

TEST(Fields, PathsAreUniqueAndEachFieldIsComplete) {
  // A path may have two entries (a serving request's `task` and `cost_per_gpu_hour_usd` say other
  // things than an inference request's), never two for one task.
  std::set<std::pair<std::string, unsigned>> paths;
  for (const io::RequestField& f : io::request_fields()) {
    for (const unsigned task : {io::kInferenceField, io::kServingField}) {
      if (f.tasks & task) {
        EXPECT_TRUE(paths.insert({std::string(f.path), task}).second) << f.path << " twice";
      }
    }
    EXPECT_NE(f.tasks, 0u) << f.path;
    if (f.style == io::FlagStyle::custom) continue;  // the command reads the flag itself
    if (f.type == io::FieldType::boolean) {
      EXPECT_NE(f.style, io::FlagStyle::value)
          << f.path << ": a boolean flag is on|off or a switch";
    } else {
      EXPECT_EQ(f.style, io::FlagStyle::value) << f.path;
    }
    if (!f.choices.empty()) {
      const std::string c(f.choices);
      const json schema = io::schema();
      const std::string group = c.substr(0, c.find('.')), key = c.substr(c.find('.') + 1);
      ASSERT_TRUE(schema.contains(group) && schema.at(group).contains(key)) << f.path;
      EXPECT_FALSE(schema.at(group).at(key).empty()) << f.path;
    }
  }
  // Every field has a flag but the four the CLI builds otherwise: the request's own head, and
  // model and hardware (a preset id, a file, a Hugging Face config, a what-if).
  std::set<std::string> unflagged;
  for (const io::RequestField& f : io::request_fields()) {
    if (f.flag.empty()) unflagged.insert(std::string(f.path));
  }
  EXPECT_EQ(unflagged, (std::set<std::string>{"schema_version", "task", "model", "hardware"}));
  // Two fields share one flag: --draft is "mtp" (the model's own layers) or a draft model.
  // Otherwise a flag is one path's (its inference and serving entries).
  std::map<std::string, std::set<std::string>> by_flag;
  for (const io::RequestField& f : io::request_fields()) {
    if (!f.flag.empty()) by_flag[std::string(f.flag)].insert(std::string(f.path));
  }
  for (const auto& [flag, fields] : by_flag) {
    if (flag == "--draft") {
      EXPECT_EQ(fields, (std::set<std::string>{"features.speculative.draft",
                                               "features.speculative.draft_model"}));
    } else {
      EXPECT_EQ(fields.size(), 1u) << flag;
    }
  }
}

TEST(Fields, SchemaListsEveryField) {
  const json fields = io::schema().at("fields");
  ASSERT_EQ(fields.size(), io::request_fields().size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const io::RequestField& f = io::request_fields()[i];
    EXPECT_EQ(fields[i].at("path"), std::string(f.path));
    EXPECT_EQ(fields[i].at("type"), std::string(io::to_string(f.type)));
    EXPECT_EQ(fields[i].value("flag", ""), std::string(f.flag)) << f.path;
  }
}

/// The keys a serving feature's object needs before its other keys are read.
json feature_base(std::string_view path) {
  if (path.rfind("features.prefix_caching.", 0) == 0) return {{"shared_prefix_tokens", 16}};
  if (path.rfind("features.speculative.", 0) == 0) {
    return {{"num_tokens", 2}, {"acceptance_rate", 0.8}};
  }
  if (path.rfind("features.disaggregated.", 0) == 0) {
    return {{"prefill_instances", 1}, {"decode_instances", 1}};
  }
  if (path.rfind("features.lora.", 0) == 0) return {{"num_adapters", 2}};
  return json::object();
}

// A key the reader does not know is an "unknown key"; a key it reads with a value of the wrong
// type fails at its own path (or inside it) with a rule about the value. No field takes an array
// of strings, so setting each to one proves its task's reader reads it.
TEST(Fields, EachFieldIsReadByItsTasksReader) {
  for (const io::RequestField& f : io::request_fields()) {
    for (const unsigned task : {io::kInferenceField, io::kServingField}) {
      if ((f.tasks & task) == 0) continue;
      json request = task == io::kInferenceField ? inference_base() : serving_base();
      const std::string field(f.path);
      if (field.rfind("features.", 0) == 0) {
        request[pointer_of(field).parent_pointer()] = feature_base(field);
      }
      request[pointer_of(field)] = json::array({"not a value"});
      try {
        (void)io::run(request);
        ADD_FAILURE() << field << ": an array as its value was accepted";
      } catch (const SpecError& e) {
        const std::string path = e.path(), what = e.what();
        const bool at_field =
            path.rfind(field, 0) == 0 &&
            (path.size() == field.size() || path[field.size()] == '.' || path[field.size()] == '[');
        EXPECT_TRUE(at_field) << field << " (task bit " << task << "): " << what;
        EXPECT_EQ(what.find("unknown key"), std::string::npos) << what;
      }
    }
  }
}

// The parallelism and precision keys are one read (read_replica) for both tasks.
TEST(Fields, InferenceAndServingShareTheReplicaKeys) {
  for (const char* section : {"parallelism", "precision"}) {
    EXPECT_EQ(io::field_keys(section, io::kInferenceField),
              io::field_keys(section, io::kServingField))
        << section;
  }
  // Hand derivation: the engine keys serving reads beyond inference's are the scheduler's.
  std::set<std::string> extra;
  const auto inference = io::field_keys("engine", io::kInferenceField);
  for (const std::string& k : io::field_keys("engine", io::kServingField)) {
    if (std::find(inference.begin(), inference.end(), k) == inference.end()) extra.insert(k);
  }
  EXPECT_EQ(extra,
            (std::set<std::string>{"max_num_seqs", "async_scheduling", "policy", "batching",
                                   "static_batch_size", "num_scheduler_steps", "capacity_policy"}));
}

TEST(Fields, EachInferenceFieldRoundTripsThroughALink) {
  for (const io::RequestField& f : io::request_fields()) {
    if ((f.tasks & io::kInferenceField) == 0 || f.path == "schema_version") continue;
    json request = json::object();
    request[pointer_of(f.path)] = sample(f);
    const std::string link = io::encode_link(request);
    EXPECT_NE(link.find("&" + std::string(f.path) + "="), std::string::npos) << link;
    const json decoded = io::decode_link(link);
    EXPECT_TRUE(decoded.at("errors").empty()) << f.path << ": " << decoded.dump();
    EXPECT_EQ(decoded.at("request"), request) << f.path;
  }
}

TEST(Fields, EachFieldIsDocumented) {
  std::ifstream in(FLOPCAST_DOCS_DIR "/schema.md");
  ASSERT_TRUE(in) << FLOPCAST_DOCS_DIR "/schema.md";
  std::stringstream text;
  text << in.rdbuf();
  for (const io::RequestField& f : io::request_fields()) {
    EXPECT_NE(text.str().find("| `" + std::string(f.path) + "` |"), std::string::npos)
        << f.path << ": no row in docs/schema.md (node scripts/schema_tables.mjs)";
  }
}

}  // namespace
}  // namespace flopcast
