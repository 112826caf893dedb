// SPDX-License-Identifier: MIT
// One name table per enum: each enum's header declares its table (`kRecomputeNames`, …), its
// `to_string` reads the table and the JSON layer parses with the same table, so every name is
// written once. A parser that accepts fewer values (a key that allows a subset) builds its list
// from the table's names.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace flopcast {

template <typename E>
struct Named {
  std::string_view name;
  E value;
};

/// The name of `value` in `table` ("?" for a value the table lacks).
template <typename E, std::size_t N>
constexpr std::string_view name_in(const std::array<Named<E>, N>& table, E value) noexcept {
  for (const Named<E>& n : table) {
    if (n.value == value) return n.name;
  }
  return "?";
}

}  // namespace flopcast
