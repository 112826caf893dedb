// SPDX-License-Identifier: MIT
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flopcast::io::detail {

using nlohmann::json;

/// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& options);

std::string describe_value(const json& j);  ///< short rendering of a value for "(got ...)"

/// Strict reader of one JSON object: unknown keys are rejected up front (with a suggestion),
/// missing required keys and wrong types raise SpecError naming the full path.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path, std::initializer_list<const char*> allowed);

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::string child(const char* key) const;
  [[nodiscard]] const json* find(const char* key) const;
  [[nodiscard]] const json& require(const char* key) const;

  [[nodiscard]] int integer(const char* key) const;
  [[nodiscard]] int integer(const char* key, int fallback) const;
  [[nodiscard]] double number(const char* key) const;
  [[nodiscard]] double number(const char* key, double fallback) const;
  [[nodiscard]] std::string string(const char* key) const;
  [[nodiscard]] std::string string(const char* key, const std::string& fallback) const;
  [[nodiscard]] bool boolean(const char* key, bool fallback) const;

  /// A string that must be one of `choices`.
  template <typename E>
  E choice(const char* key, std::initializer_list<std::pair<const char*, E>> choices,
           E fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    return pick(key, *v, choices);
  }

 private:
  template <typename E>
  E pick(const char* key, const json& v, std::initializer_list<std::pair<const char*, E>> c) const {
    std::string names;
    for (const auto& [name, value] : c) {
      if (v.is_string() && v.get<std::string>() == name) return value;
      names += names.empty() ? "" : ", ";
      names += name;
    }
    throw_choice(key, v, names);
  }
  [[noreturn]] void throw_choice(const char* key, const json& v, const std::string& names) const;

  const json& j_;
  std::string path_;
};

/// Reads a JSON value as an int: integral, within int range. SpecError otherwise.
int as_int(const json& v, const std::string& path);
/// Reads a JSON value as a finite number.
double as_number(const json& v, const std::string& path);

}  // namespace flopcast::io::detail
