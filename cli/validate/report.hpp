// SPDX-License-Identifier: MIT
#pragma once

/// Renderings of a validation report and the error-ceiling ratchet.

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace flopcast::cli::validate {

using nlohmann::json;

/// Aligned table: one line per group and split (percentages), then the skipped rows by source and
/// reason, then warnings.
std::string format_table(const json& report);
/// One CSV line per group and split (fractions, as in the JSON).
std::string format_csv(const json& report);

/// The ceilings file: {"schema_version":1,"note":...,"groups":{"<group>":{"test_mape":x}}} with
/// every group's test-split MAPE rounded up to 3 decimals.
json make_ceilings(const std::map<std::string, double>& test_mape);

/// Result of comparing this run's test-split MAPE with committed ceilings.
struct CeilingCheck {
  std::vector<std::string> violations;  ///< test MAPE > ceiling + 0.01 (one line each)
  std::vector<std::string> new_groups;  ///< groups of this run without a ceiling
  std::vector<std::string> missing;     ///< groups with a ceiling but no test rows in this run
  std::size_t within = 0;
};
/// Ceilings as written by make_ceilings (SpecError naming `file` when the document is not one).
CeilingCheck check_ceilings(const json& ceilings, const std::map<std::string, double>& test_mape,
                            const std::string& file);

/// Allowed worsening of a group's test MAPE over its ceiling: 1 percentage point.
inline constexpr double kCeilingSlack = 0.01;

}  // namespace flopcast::cli::validate
