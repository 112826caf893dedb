// SPDX-License-Identifier: MIT
// Strict parsing of request documents: nlohmann's DOM builder driven through SAX events, with a
// nesting limit (its recursive destructor and serializer overflow the stack on deep documents:
// ~65,000 levels natively, ~4,800 in WebAssembly) and duplicate keys rejected (the DOM parser
// keeps the last silently).
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"

namespace flopcast::io {
namespace {

class StrictSax {
 public:
  explicit StrictSax(json& root) : dom_(root, true) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string& s) {
    return value() && dom_.number_float(v, s);
  }
  bool string(std::string& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) { return value() && open(false) && dom_.start_object(n); }
  bool key(std::string& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      throw SpecError(path_of(k), "duplicate key (a JSON object names each key once)");
    }
    f.key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return value() && open(true) && dom_.start_array(n); }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    return dom_.parse_error(position, token, e);  // throws: allow_exceptions
  }

 private:
  struct Frame {
    bool array = false;
    long long index = -1;  // of the current element of an array
    std::string key;       // current key of an object
    std::set<std::string> keys;
  };

  /// A value starts: the next element of an enclosing array.
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }

  bool open(bool array) {
    if (static_cast<int>(frames_.size()) >= kMaxJsonDepth) {
      throw SpecError(
          "", "malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    frames_.push_back(Frame{array, -1, {}, {}});
    return true;
  }

  /// Dotted path of `key` in the innermost object.
  std::string path_of(const std::string& key) const {
    std::string p;
    const auto name = [](const std::string& k) { return k.empty() ? std::string("\"\"") : k; };
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      p += f.array ? "[" + std::to_string(f.index) + "]" : (p.empty() ? "" : ".") + name(f.key);
    }
    return p + (p.empty() ? "" : ".") + name(key);
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json(std::string_view text, std::string_view where) {
  const std::string in = where.empty() ? std::string() : " in " + std::string(where);
  if (text.size() > kMaxRequestBytes) {
    throw SpecError("", "malformed JSON" + in + ": " + std::to_string(text.size()) +
                            " bytes, more than the " + std::to_string(kMaxRequestBytes) +
                            " a request may have");
  }
  // nlohmann's lexer reads a NUL byte as the end of the input: "{...}\0garbage" would pass.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw SpecError("", "malformed JSON" + in + ": NUL byte at offset " + std::to_string(nul));
  }
  json out;
  StrictSax sax(out);
  try {
    json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, true);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    throw SpecError("", "malformed JSON" + in + ": " + e.what());
  }  // a SpecError (depth, duplicate key) goes on as it is
  return out;
}

std::optional<double> parse_size(const std::string& text, std::string& why) {
  std::size_t end = 0;
  double v = 0;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    why = "must be a size such as 4096, 64MiB or 1GB (got \"" + text + "\")";
    return std::nullopt;
  }
  const std::string unit = text.substr(end);
  static const std::pair<const char*, double> kUnits[] = {{"", 1},
                                                          {"B", 1},
                                                          {"KB", 1e3},
                                                          {"MB", 1e6},
                                                          {"GB", 1e9},
                                                          {"TB", 1e12},
                                                          {"KiB", 1024.0},
                                                          {"MiB", 1048576.0},
                                                          {"GiB", 1073741824.0},
                                                          {"TiB", 1099511627776.0}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      const double bytes = v * scale;
      if (!std::isfinite(bytes) || bytes < 0 || bytes > 1e15) {
        why = "must be between 0 and 1e15 bytes (got \"" + text + "\")";
        return std::nullopt;
      }
      return bytes;
    }
  }
  why = "unknown size unit \"" + unit + "\"; use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB (got \"" +
        text + "\")";
  return std::nullopt;
}

}  // namespace flopcast::io
