// SPDX-License-Identifier: MIT
#pragma once
/// The request-field registry: every key of an inference and of a serving request, said once: its
/// path, type, unit, the schema() list its values come from, its CLI flag, default, one-line help
/// and documentation. From it come the readers' lists of allowed keys, the link codec's fields,
/// schema()'s `fields`, the CLI's flags and the field tables of docs/schema.md
/// (scripts/schema_tables.mjs). Adding a request key is one entry here plus the estimator code that
/// reads it (docs/architecture.md).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace flopcast::io {

enum class FieldType {
  integer,  ///< a JSON integer within ±2147483647
  number,   ///< a finite JSON number
  boolean,  ///< true or false
  text,     ///< a string; with `choices`, one of that list's names
  spec,     ///< a preset id or an object (model, hardware), or another object as its doc says
  length,   ///< a request length: an integer or a distribution object (serving)
  array,    ///< a JSON array, as the field's doc says (a trace's rows)
};
std::string_view to_string(FieldType t) noexcept;

/// Tasks whose request reads a field (a bit each).
enum FieldTask : unsigned { kInferenceField = 1u, kServingField = 2u };

/// How the CLI takes a field.
enum class FlagStyle {
  value,   ///< `--flag VALUE`
  on_off,  ///< a boolean as `--flag on|off`
  toggle,  ///< a boolean switch: `--flag` sets true
  custom,  ///< the command reads `--flag` itself (a file, or a value that sets more than one key)
};

struct RequestField {
  std::string_view path;      ///< dotted path in the request, "engine.max_num_batched_tokens"
  FieldType type;             ///<
  unsigned tasks;             ///< FieldTask bits
  std::string_view unit;      ///< the value's unit ("tokens", "µs", "GB"), "" where it has none
  std::string_view choices;   ///< "precision.kv_cache": the schema() list of its names; "" none
  std::string_view flag;      ///< "--max-num-batched-tokens"; "" where the CLI sets it otherwise
  FlagStyle style;            ///<
  std::string_view fallback;  ///< what holds when the key is absent, as docs say it
  std::string_view help;      ///< one line: the flag's --help
  std::string_view doc;       ///< docs/schema.md's meaning
};

/// A view of the registry's fields (a constant table).
struct RequestFields {
  const RequestField* first;
  const RequestField* last;
  [[nodiscard]] const RequestField* begin() const noexcept { return first; }
  [[nodiscard]] const RequestField* end() const noexcept { return last; }
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(last - first); }
  const RequestField& operator[](std::size_t i) const noexcept { return first[i]; }
};

/// Every field, in the order links, flags and docs list them. In the WebAssembly build
/// `fallback`, `help` and `doc` are empty (the page does not show them; they would cost its first
/// load).
RequestFields request_fields() noexcept;
/// The keys directly under `section` ("" for the top level, "engine") that `task` (FieldTask)
/// reads, in registry order: a nested section appears once, by its name.
std::vector<std::string> field_keys(std::string_view section, unsigned task);

}  // namespace flopcast::io
