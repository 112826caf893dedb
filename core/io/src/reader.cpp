// SPDX-License-Identifier: MIT
#include "reader.hpp"

#include <algorithm>
#include <cmath>

#include "flopcast/error.hpp"

namespace flopcast::io::detail {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& options) {
  // A truncated id ("h100" for "h100-sxm") is the likeliest slip: prefer the shortest option
  // that starts with the word. No word this long is a slip of a short one (and the edit distance
  // is quadratic in it).
  std::optional<std::string> best;
  if (word.size() > 128) return best;
  if (!word.empty()) {
    for (const auto& option : options) {
      if (option.size() > word.size() && option.compare(0, word.size(), word) == 0 &&
          (!best || option.size() < best->size())) {
        best = option;
      }
    }
    if (best) return best;
    // A slip after a long enough common stem ("h100x", "h100-sx", "llama-3.1-8bx"): the option
    // sharing the longest prefix, if it covers two thirds of the word (at least 3 characters);
    // the edit distance alone would take "a10" for "h100x".
    std::size_t best_common = std::max<std::size_t>(3, (2 * word.size() + 2) / 3) - 1;
    for (const auto& option : options) {
      const auto mismatch = std::mismatch(word.begin(), word.end(), option.begin(), option.end());
      const auto common = static_cast<std::size_t>(mismatch.first - word.begin());
      if (common > best_common || (best && common == best_common && option.size() < best->size())) {
        best_common = common;
        best = option;
      }
    }
    if (best) return best;
  }
  std::size_t best_distance = std::max<std::size_t>(3, word.size() / 3) + 1;
  for (const auto& option : options) {
    const std::size_t d = edit_distance(word, option);
    if (d < best_distance) {
      best_distance = d;
      best = option;
    }
  }
  return best;
}

std::string describe_value(const json& j) {
  // ASCII only: control characters and anything that could reorder the text come out escaped.
  std::string text = j.dump(-1, ' ', true, json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

ObjectReader::ObjectReader(const json& j, std::string path,
                           std::initializer_list<const char*> allowed)
    : ObjectReader(j, std::move(path), std::vector<std::string>(allowed.begin(), allowed.end())) {}

ObjectReader::ObjectReader(const json& j, std::string path, const std::vector<std::string>& names)
    : j_(j), path_(std::move(path)) {
  if (!j.is_object()) {
    throw SpecError(path_, "must be an object (got " + describe_value(j) + ")");
  }
  for (const auto& item : j.items()) {
    if (std::find(names.begin(), names.end(), item.key()) != names.end()) continue;
    std::string rule = "unknown key";
    if (auto guess = nearest(item.key(), names)) rule += " (did you mean \"" + *guess + "\"?)";
    throw SpecError(child(item.key().c_str()), rule);
  }
}

std::string ObjectReader::child(const char* key) const {
  const std::string k = *key != '\0' ? std::string(key) : std::string("\"\"");  // the empty key
  return path_.empty() ? k : path_ + "." + k;
}

const json* ObjectReader::find(const char* key) const {
  auto it = j_.find(key);
  return it == j_.end() ? nullptr : &*it;
}

const json& ObjectReader::require(const char* key) const {
  const json* v = find(key);
  if (!v) throw SpecError(child(key), "required key is missing");
  return *v;
}

int as_int(const json& v, const std::string& path) {
  constexpr double kLimit = 2147483647.0;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    const bool out_of_range = v.is_number_unsigned()
                                  ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(kLimit)
                                  : (v.get<std::int64_t>() > static_cast<std::int64_t>(kLimit) ||
                                     v.get<std::int64_t>() < -static_cast<std::int64_t>(kLimit));
    if (out_of_range) {
      throw SpecError(path, "must be an integer between -2147483647 and 2147483647 (got " +
                                describe_value(v) + ")");
    }
    return static_cast<int>(v.get<std::int64_t>());
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= kLimit) {
      return static_cast<int>(d);
    }
  }
  throw SpecError(path, "must be an integer (got " + describe_value(v) + ")");
}

double as_number(const json& v, const std::string& path) {
  if (v.is_number()) {
    const double d = v.get<double>();
    if (std::isfinite(d)) return d;
  }
  throw SpecError(path, "must be a finite number (got " + describe_value(v) + ")");
}

int ObjectReader::integer(const char* key) const { return as_int(require(key), child(key)); }

int ObjectReader::integer(const char* key, int fallback) const {
  const json* v = find(key);
  return v ? as_int(*v, child(key)) : fallback;
}

double ObjectReader::number(const char* key) const { return as_number(require(key), child(key)); }

double ObjectReader::number(const char* key, double fallback) const {
  const json* v = find(key);
  return v ? as_number(*v, child(key)) : fallback;
}

std::string ObjectReader::string(const char* key) const {
  const json& v = require(key);
  if (!v.is_string()) {
    throw SpecError(child(key), "must be a string (got " + describe_value(v) + ")");
  }
  return v.get<std::string>();
}

std::string ObjectReader::string(const char* key, const std::string& fallback) const {
  return find(key) ? string(key) : fallback;
}

bool ObjectReader::boolean(const char* key, bool fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) {
    throw SpecError(child(key), "must be true or false (got " + describe_value(*v) + ")");
  }
  return v->get<bool>();
}

void throw_choice(const json& v, const std::string& path, const std::string& names) {
  throw SpecError(path, "must be one of " + names + " (got " + describe_value(v) + ")");
}

}  // namespace flopcast::io::detail
