// SPDX-License-Identifier: MIT
// Embind surface: JSON strings in, JSON strings out, no handles to delete. Every function
// returns {"ok":true,"result":...} or {"ok":false,"error":{code,path,message}} and never throws.
#include <emscripten/bind.h>

#include <string>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"

namespace {

using flopcast::io::enveloped;
using flopcast::io::json;

json parse(const std::string& text, const char* what) {
  return flopcast::io::parse_json(text, what);
}

std::string estimate(const std::string& request) { return flopcast::io::handle(request); }

std::string presets() {
  return enveloped([] { return flopcast::io::presets(); });
}

std::string schema() {
  return enveloped([] { return flopcast::io::schema(); });
}

std::string encode_link(const std::string& request) {
  return enveloped([&] { return json(flopcast::io::encode_link(parse(request, "request"))); });
}

std::string decode_link(const std::string& fragment) {
  return enveloped([&] { return flopcast::io::decode_link(fragment); });
}

/// `file_name`: the dropped file's name, the model's name when the config has no _name_or_path.
std::string model_from_hf_config(const std::string& config, const std::string& file_name) {
  return enveloped(
      [&] { return flopcast::io::model_from_hf_config(parse(config, "config.json"), file_name); });
}

std::string hardware_object(const std::string& hardware) {
  return enveloped([&] { return flopcast::io::hardware_object(parse(hardware, "hardware")); });
}

/// The bytes of a size such as "64MiB" (the page's message-size field), or the error.
std::string parse_size(const std::string& text) {
  return enveloped([&] {
    std::string why;
    const auto bytes = flopcast::io::parse_size(text, why);
    if (!bytes) throw flopcast::SpecError("", why);
    return json(*bytes);
  });
}

std::string version() { return flopcast::io::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(flopcast) {
  emscripten::function("estimate", &estimate);
  emscripten::function("presets", &presets);
  emscripten::function("schema", &schema);
  emscripten::function("encode_link", &encode_link);
  emscripten::function("decode_link", &decode_link);
  emscripten::function("model_from_hf_config", &model_from_hf_config);
  emscripten::function("hardware_object", &hardware_object);
  emscripten::function("parse_size", &parse_size);
  emscripten::function("version", &version);
}
