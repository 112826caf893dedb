// SPDX-License-Identifier: MIT
#include "validate/csv.hpp"

#include <charconv>
#include <limits>

#include "files.hpp"
#include "flopcast/error.hpp"

namespace flopcast::cli::validate {

CsvFile::CsvFile(const std::string& path) : CsvFile(path, read_text(path)) {}

CsvFile::CsvFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  std::size_t pos = 0;
  while (pos < text_.size()) {
    std::size_t end = text_.find('\n', pos);
    if (end == std::string::npos) end = text_.size();
    std::string_view row(text_.data() + pos, end - pos);
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    pos = end + 1;
    if (row.empty()) {
      ++header_line_;
      continue;
    }
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = row.find(',', start);
      header_.emplace_back(
          row.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    body_start_ = pos;
    return;
  }
  throw SpecError("", path_ + ": no header row (empty file)");
}

std::size_t CsvFile::column(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::string::npos;
}

bool CsvFile::has(std::initializer_list<std::string_view> names) const noexcept {
  for (std::string_view n : names) {
    if (column(n) == std::string::npos) return false;
  }
  return true;
}

std::size_t CsvFile::require(std::string_view name) const {
  const std::size_t i = column(name);
  if (i == std::string::npos) {
    throw SpecError("", path_ + ": missing column \"" + std::string(name) + "\"");
  }
  return i;
}

std::size_t CsvFile::count_rows() const {
  return for_each_row([](const std::vector<std::string_view>&, std::size_t) {});
}

void CsvFile::split(std::string_view row, std::vector<std::string_view>& fields,
                    std::size_t line) const {
  fields.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = row.find(',', start);
    if (comma == std::string_view::npos) {
      fields.push_back(row.substr(start));
      break;
    }
    fields.push_back(row.substr(start, comma - start));
    start = comma + 1;
  }
  if (fields.size() != header_.size()) {
    throw SpecError("", path_ + ":" + std::to_string(line) + ": expected " +
                            std::to_string(header_.size()) + " fields as in the header (got " +
                            std::to_string(fields.size()) + ")");
  }
}

double parse_number(std::string_view text, const CsvFile& file, std::size_t line,
                    std::string_view column) {
  if (text.empty()) return std::numeric_limits<double>::quiet_NaN();
  double value = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  if (*first == '+') ++first;  // from_chars does not take a leading '+'
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last) {
    throw SpecError("", file.path() + ":" + std::to_string(line) + ": column " +
                            std::string(column) + ": not a number (got " + std::string(text) + ")");
  }
  return value;
}

}  // namespace flopcast::cli::validate
