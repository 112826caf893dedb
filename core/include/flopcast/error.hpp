// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace flopcast {

/// Base of every error flopcast raises. Never thrown directly.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Invalid or unsupported input. `path()` is the dotted JSON path of the offending field
/// (e.g. `hardware.hbm_bandwidth_GBps`); `what()` is the full message in the form
/// `<path>: <rule> (got <value>)`.
class SpecError : public Error {
 public:
  SpecError(const std::string& path, const std::string& rule)
      : SpecError(Safe{safe_text(path, kMaxPathBytes), safe_text(rule, kMaxRuleBytes)}) {}
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// `text` fit to show in a terminal or beside a field: control characters and bidirectional
  /// overrides escaped as \u00XX / \u202E (a request cannot drive the terminal or reorder
  /// what the user reads), cut to `max_bytes` on a character boundary, "..." marking the cut.
  static std::string safe_text(const std::string& text, std::size_t max_bytes);
  static constexpr std::size_t kMaxPathBytes = 160;
  static constexpr std::size_t kMaxRuleBytes = 2000;

 private:
  struct Safe {
    std::string path, rule;
  };
  explicit SpecError(Safe s)
      : Error(s.path.empty() ? s.rule : s.path + ": " + s.rule), path_(std::move(s.path)) {}
  std::string path_;
};

/// Input that is valid but asks for something flopcast does not model (yet). Same message form.
class NotModelledError : public SpecError {
 public:
  using SpecError::SpecError;
};

/// Formats a number for an error message: integers without a decimal point, others with up to
/// 6 significant digits. Never prints NaN/Inf silently: they read as "NaN", "Infinity".
std::string format_number(double value);

/// The one helper that raises input errors: `path: rule (got value)`.
[[noreturn]] void fail(const std::string& path, const std::string& rule, double got);
[[noreturn]] void fail(const std::string& path, const std::string& rule, const std::string& got);

/// The range checks every validator uses: `path: must be between lo and hi (got value)` unless
/// lo <= value <= hi. check_real also rejects NaN and infinities; it compares in SI and prints
/// the bounds and the value divided by `unit`, the request key's unit (kMicro for `_us`).
void check_int(const std::string& path, long long value, long long lo, long long hi);
void check_real(const std::string& path, double value, double lo, double hi, double unit = 1);
/// `path: must divide <what> (<whole>) (got value)` unless value divides whole (value > 0).
void check_divides(const std::string& path, int value, long long whole, const std::string& what);

}  // namespace flopcast
