// SPDX-License-Identifier: MIT
// The request-field registry (flopcast/io/fields.hpp), walked field by field: each is read by its
// task's reader, listed in schema(), carried by a link and documented in docs/schema.md. (That
// each has a CLI flag that reaches its path: tests/cli/link_every_flag.cmake and
// every_field_a_flag.cmake.)
#include "flopcast/io/fields.hpp"

#include <gtest/gtest.h>

#include <fstream>
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
      return 2;
    case io::FieldType::number:
      return 0.5;
    case io::FieldType::boolean:
      return false;
    case io::FieldType::spec:
      return f.path == "model" ? "llama-3.1-8b" : "h100-sxm";
    case io::FieldType::text:
      break;
  }
  if (f.path == "task") return "inference";
  const std::string c(f.choices);
  return io::schema().at(c.substr(0, c.find('.'))).at(c.substr(c.find('.') + 1)).at(0);
}

TEST(Fields, PathsAreUniqueAndEachFieldIsComplete) {
  std::set<std::string> paths;
  for (const io::RequestField& f : io::request_fields()) {
    EXPECT_TRUE(paths.insert(std::string(f.path)).second) << f.path << " twice";
    EXPECT_NE(f.tasks, 0u) << f.path;
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

// A key the reader does not know is an "unknown key"; a key it reads with a value of the wrong
// type fails at its own path with a rule about the value. So a field set to an object it cannot
// be (or a string where it is an object) proves the reader reads it.
TEST(Fields, EachFieldIsReadByItsTasksReader) {
  for (const io::RequestField& f : io::request_fields()) {
    for (const unsigned task : {io::kInferenceField, io::kServingField}) {
      if ((f.tasks & task) == 0) continue;
      json request = task == io::kInferenceField ? inference_base() : serving_base();
      request[pointer_of(f.path)] = json{{"not", "a value"}};
      try {
        (void)io::run(request);
        ADD_FAILURE() << f.path << ": an object as its value was accepted";
      } catch (const SpecError& e) {
        const std::string path = e.path(), what = e.what();
        EXPECT_TRUE(path == f.path || path.rfind(std::string(f.path) + ".", 0) == 0)
            << f.path << " (task bit " << task << "): " << what;
        if (f.type != io::FieldType::spec) {
          EXPECT_EQ(what.find("unknown key"), std::string::npos) << what;
        }
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
