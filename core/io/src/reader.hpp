// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flopcast/names.hpp"

namespace flopcast::io::detail {

using nlohmann::json;

/// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& options);

std::string describe_value(const json& j);  ///< short rendering of a value for "(got ...)"

[[noreturn]] void throw_choice(const json& v, const std::string& path, const std::string& names);

/// One of the names in `choices` (Named<E> values: an enum's table, flopcast/names.hpp, or a short
/// list of other values) at `path`, or a SpecError listing them.
template <typename Choices>
auto choice_of(const json& v, const std::string& path, const Choices& choices)
    -> decltype(std::begin(choices)->value) {
  std::string names;
  for (const auto& [name, value] : choices) {
    if (v.is_string() && v.get<std::string>() == name) return value;
    names += names.empty() ? "" : ", ";
    names += name;
  }
  throw_choice(v, path, names);
}

/// Strict reader of one JSON object: unknown keys are rejected up front (with a suggestion),
/// missing required keys and wrong types raise SpecError naming the full path.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path, std::initializer_list<const char*> allowed);
  /// The same with the allowed keys from the request-field registry (field_keys).
  ObjectReader(const json& j, std::string path, const std::vector<std::string>& allowed);

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

  /// A string that must be one of the names in `choices` (an enum's name table, flopcast/names.hpp,
  /// or a subset built from it).
  template <typename E, std::size_t N>
  E choice(const char* key, const std::array<Named<E>, N>& choices, E fallback) const {
    const json* v = find(key);
    return v ? choice_of(*v, child(key), choices) : fallback;
  }
  /// The same for a key whose choices are not an enum's (`{{"bf16", 2.0}, {"fp32", 4.0}}`).
  template <typename T>
  T choice(const char* key, std::initializer_list<Named<T>> choices, T fallback) const {
    const json* v = find(key);
    return v ? choice_of(*v, child(key), choices) : fallback;
  }

 private:
  const json& j_;
  std::string path_;
};

/// Reads a JSON value as an int: integral, within int range. SpecError otherwise.
int as_int(const json& v, const std::string& path);
/// Reads a JSON value as a finite number.
double as_number(const json& v, const std::string& path);

}  // namespace flopcast::io::detail
