// SPDX-License-Identifier: MIT
#pragma once

/// A small reader for the ground-truth CSVs: a header row, then rows with exactly as many
/// comma-separated fields, no quoting (the data's README guarantees both). Fields are string_views
/// into the file's text, so reading a row allocates nothing.

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace flopcast::cli::validate {

class CsvFile {
 public:
  /// Reads the whole file (FileError when it cannot be opened) and its header row (SpecError
  /// naming the file when it has none).
  explicit CsvFile(const std::string& path);
  /// The same over text already read from `path`.
  CsvFile(std::string path, std::string text);

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const std::vector<std::string>& header() const noexcept { return header_; }
  /// Index of a column, or npos.
  [[nodiscard]] std::size_t column(std::string_view name) const noexcept;
  [[nodiscard]] bool has(std::initializer_list<std::string_view> names) const noexcept;
  /// Index of a column that must exist (SpecError naming the file otherwise).
  [[nodiscard]] std::size_t require(std::string_view name) const;

  /// Calls f(fields, line) for every non-empty data row; `line` is 1-based in the file. A row
  /// with another number of fields than the header is a SpecError "<file>:<line>: ...".
  /// Returns the number of rows.
  template <class F>
  std::size_t for_each_row(F&& f) const {
    std::size_t rows = 0;
    std::vector<std::string_view> fields;
    fields.reserve(header_.size());
    std::size_t pos = body_start_;
    std::size_t line = header_line_;
    while (pos < text_.size()) {
      std::size_t end = text_.find('\n', pos);
      if (end == std::string::npos) end = text_.size();
      ++line;
      std::string_view row(text_.data() + pos, end - pos);
      pos = end + 1;
      if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
      if (row.empty()) continue;
      split(row, fields, line);
      f(fields, line);
      ++rows;
    }
    return rows;
  }

  /// Number of non-empty data rows.
  [[nodiscard]] std::size_t count_rows() const;

 private:
  void split(std::string_view row, std::vector<std::string_view>& fields, std::size_t line) const;

  std::string path_;
  std::string text_;
  std::vector<std::string> header_;
  std::size_t body_start_ = 0;
  std::size_t header_line_ = 1;
};

/// Parses a decimal number (std::from_chars): NaN for an empty cell, SpecError
/// "<file>:<line>: column <col>: not a number (got <text>)" for anything else that is not one.
double parse_number(std::string_view text, const CsvFile& file, std::size_t line,
                    std::string_view column);

}  // namespace flopcast::cli::validate
