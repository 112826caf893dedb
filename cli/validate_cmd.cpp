// SPDX-License-Identifier: MIT
// `flopcast validate PATH...`: predictions against the measured ground truth, per group and split.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <thread>

#include "commands.hpp"
#include "flopcast/error.hpp"
#include "flopcast/io/specs.hpp"
#include "validate/collector.hpp"
#include "validate/loaders.hpp"
#include "validate/loso.hpp"
#include "validate/report.hpp"

namespace flopcast::cli {

namespace fs = std::filesystem;

/// Folders are walked in sorted order, skipping any folder named raw/ (the ground truth keeps
/// byte-exact source copies there: parquet tables and vidur CSVs in their original columns).
std::vector<std::string> expand_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) throw FileError(p + ": no such file or directory");
    if (!fs::is_directory(st)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_directory() && it->path().filename() == "raw") {
        it.disable_recursion_pending();
        continue;
      }
      const std::string ext = it->path().extension().string();
      if (it->is_regular_file() && (ext == ".csv" || ext == ".jsonl")) {
        found.push_back(it->path().string());
      }
    }
    if (ec) throw FileError(p + ": cannot read directory: " + ec.message());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

namespace {

/// The ceilings check, for any map of group → error (fractions).
int check_against(const std::string& file, const std::map<std::string, double>& errors,
                  const char* what) {
  const json ceilings = read_json_file(file);
  const auto check = validate::check_ceilings(ceilings, errors, file);
  std::cerr << "validate: " << check.within << " " << what << " within their ceilings (" << file
            << "), " << check.violations.size() << " worse by more than 1 percentage point, "
            << check.new_groups.size() << " new, " << check.missing.size() << " not in this run\n";
  for (const std::string& s : check.new_groups) std::cerr << "  " << s << "\n";
  for (const std::string& s : check.missing) std::cerr << "  " << s << "\n";
  if (check.violations.empty()) return kOk;
  std::cerr << "flopcast: error: " << check.violations.size() << " " << what
            << " exceed their committed error ceiling (update the file only on purpose):\n";
  for (const std::string& s : check.violations) std::cerr << "  " << s << "\n";
  return kCeilingViolation;
}

/// The leave-one-source-out report of `--by-source`.
json loso_report(const ValidateOptions& o) {
  const json folds = o.engine_folds.empty() ? json(nullptr) : read_json_file(o.engine_folds);
  if (!folds.is_null() &&
      !(folds.is_object() && folds.contains("folds") && folds.at("folds").is_object())) {
    throw SpecError(o.engine_folds, "must hold an object \"folds\" (flopcast fit --engine-folds)");
  }
  return validate::leave_one_source_out(expand_paths(o.paths), folds);
}

int report_by_source(const ValidateOptions& o, const json& report) {
  if (o.format == "json") {
    std::cout << json{{"leave_one_source_out", report}}.dump(2) << "\n";
  } else {
    std::cout << "\n" << validate::format_loso_table(report);
  }
  const auto medians = validate::loso_medians(report);
  if (!o.write_loso.empty()) {
    std::ofstream out(o.write_loso, std::ios::binary);
    json doc = validate::make_ceilings(medians);
    doc["note"] =
        "Leave-one-source-out median APE per <kind>/<source> (flopcast validate --by-source); "
        "the key test_mape holds that median. Rewritten only on purpose.";
    out << doc.dump(2) << "\n";
    if (!out) throw FileError(o.write_loso + ": cannot write file");
  }
  if (!o.write_bands.empty()) {
    std::ofstream out(o.write_bands, std::ios::binary);
    const json doc{
        {"schema_version", 1},
        {"id", "e2e"},
        {"name", "80% bands of end-to-end estimates"},
        {"source",
         "flopcast validate ../shared/groundtruth/e2e --by-source --write-bands "
         "presets/bands/e2e.json"},
        {"notes",
         "Per kind of figure: the 10th and 90th percentile of the slowness ln(measured time / "
         "predicted time) of every end-to-end row predicted leave-one-source-out (each source "
         "with the end-to-end fits refitted without it), sources weighted alike; '@tier0': the "
         "same for max_tier 0. coverage_loso: the share of rows of each source inside the band "
         "built from the other sources (what a new source should expect)."},
        {"bands", report.at("bands")}};
    out << doc.dump(2) << "\n";
    if (!out) throw FileError(o.write_bands + ": cannot write file");
  }
  if (!o.check_loso.empty()) return check_against(o.check_loso, medians, "sources");
  return kOk;
}

}  // namespace

void setup_validate(CLI::App& app, ValidateOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "validate", "Compare predictions with measured kernel, collective and end-to-end timings");
  sub->add_option("paths", o.paths,
                  "Ground-truth files or folders (e.g. ../shared/groundtruth); folders are "
                  "searched for *.csv and *.jsonl, skipping raw/")
      ->required();
  sub->add_option("--format", o.format, "Output: table (default), json, csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--split", o.split, "Report train, test or all (default) rows")
      ->check(CLI::IsMember({"train", "test", "all"}));
  sub->add_option("--rows", o.rows_file,
                  "Also write every predicted row (group, split, row, measured, predicted, APE, "
                  "and the estimate's own 80% band: band_low, band_high, in_band) as CSV to this "
                  "file");
  sub->add_option("--max-tier", o.max_tier,
                  "2 (default): Tier-2 fits where the GPU has them; 0: Tier-0 physics only")
      ->check(CLI::IsMember({0, 2}));
  sub->add_option("--holdout", o.holdouts,
                  "Put every row of the groups whose name contains this in the test split "
                  "(repeatable)");
  sub->add_option(
      "--write-ceilings", o.write_ceilings,
      "Write each group's test-split MAPE, rounded up, as the committed error ceilings");
  sub->add_flag("--by-source", o.by_source,
                "Also report leave-one-source-out accuracy of the end-to-end rows: each source "
                "predicted with every end-to-end fit refitted without it, beside Tier 0");
  sub->add_option("--write-loso-ceilings", o.write_loso,
                  "With --by-source: write each (kind, source) leave-one-source-out median APE as "
                  "the committed ceilings");
  sub->add_option("--write-bands", o.write_bands,
                  "With --by-source: write the 80% bands of every end-to-end kind (10th and 90th "
                  "percentile of the leave-one-source-out residuals, sources weighted alike), "
                  "e.g. presets/bands/e2e.json");
  sub->add_option("--engine-folds", o.engine_folds,
                  "With --by-source: the engine overheads refitted without each source "
                  "(validation/engine_folds.json, from `flopcast fit --engine-folds`); without "
                  "it the committed engine fit stands in for the refits");
  sub->add_option("--check-loso-ceilings", o.check_loso,
                  "With --by-source: exit 5 when a (kind, source) median APE exceeds its ceiling "
                  "by more than 1 percentage point");
  sub->add_option("--explain", o.explain,
                  "Print the flopcast request(s) the end-to-end row with this id became (the "
                  "validator's mapping of the row schema, docs/validation.md) as JSON, and stop");
  sub->add_option("--check-ceilings", o.check_ceilings,
                  "Exit 5 when a group's test-split MAPE exceeds its ceiling by more than 1 "
                  "percentage point");
}

int run_validate(const ValidateOptions& o) {
  try {
    // `--by-source` computes its report beside the plain one (they share no state but the
    // simulation cache): its Tier-0 pass alone takes as long as the plain report.
    std::future<json> by_source;
    if (o.by_source && o.explain.empty()) {
      by_source = std::async(std::launch::async, [&o] { return loso_report(o); });
    }
    validate::Collector collector(o.holdouts);
    std::ofstream rows_file;
    if (!o.rows_file.empty()) {
      rows_file.open(o.rows_file);
      if (!rows_file) throw FileError(o.rows_file + ": cannot write file");
      collector.write_rows_to(&rows_file);
    }
    KernelModel km;
    km.use_calibration = o.max_tier == 2;
    km.tier0_residuals = io::tier0_residuals();  // bands where Tier 0 prices an op
    validate::Context ctx(collector, km);
    ctx.set_explain_id(o.explain);
    const std::vector<std::string> files = expand_paths(o.paths);
    // Most of the pass is simulating serving runs: a second thread prices the same rows from the
    // other end of the file list, so that the pass below finds those simulations done (or waits
    // for the one under way) instead of running them itself. It records nothing; the report is
    // this pass's alone. (`--by-source` keeps the other cores busy already.)
    std::future<void> warm;
    if (!o.by_source && o.explain.empty() && std::thread::hardware_concurrency() > 1) {
      warm = std::async(std::launch::async, [&files, km] {
        try {
          validate::Collector none({});
          validate::Context other(none, km);
          for (auto f = files.rbegin(); f != files.rend(); ++f) validate::load_file(*f, other);
        } catch (...) {
          // The pass below meets the same error and reports it.
        }
      });
    }
    for (const std::string& file : files) validate::load_file(file, ctx);
    if (!o.explain.empty()) {
      if (ctx.explained().empty()) {
        throw SpecError("", "validate --explain: no end-to-end row with id \"" + o.explain +
                                "\" became a request (absent, or skipped: run without --explain "
                                "for the reasons)");
      }
      std::cout << json{{"id", o.explain}, {"requests", ctx.explained()}}.dump(2) << "\n";
      return kOk;
    }

    std::optional<Split> only;
    if (o.split == "train") only = Split::train;
    if (o.split == "test") only = Split::test;
    const json report = collector.report(only);
    if (o.format == "json") {
      std::cout << report.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else if (o.format == "csv") {
      std::cout << validate::format_csv(report);
    } else {
      std::cout << validate::format_table(report);
    }

    if (collector.predicted_rows() == 0) {
      throw SpecError("", "validate: no row of " + std::to_string(o.paths.size()) +
                              " path(s) could be predicted (the skipped rows and their reasons "
                              "are listed above)");
    }
    int status = kOk;
    if (o.by_source) status = report_by_source(o, by_source.get());
    const auto test_mape = collector.test_mape();
    if (!o.write_ceilings.empty()) {
      std::ofstream out(o.write_ceilings, std::ios::binary);
      out << validate::make_ceilings(test_mape).dump(2) << "\n";
      if (!out) throw FileError(o.write_ceilings + ": cannot write file");
      std::cerr << "validate: wrote " << test_mape.size() << " group ceilings to "
                << o.write_ceilings << "\n";
    }
    if (!o.check_ceilings.empty()) {
      const json ceilings = read_json_file(o.check_ceilings);
      const auto check = validate::check_ceilings(ceilings, test_mape, o.check_ceilings);
      std::cerr << "validate: " << check.within << " groups within their ceilings ("
                << o.check_ceilings << "), " << check.violations.size() << " worse by more than "
                << "1 percentage point, " << check.new_groups.size() << " new, "
                << check.missing.size() << " not in this run\n";
      for (const std::string& s : check.new_groups) std::cerr << "  " << s << "\n";
      for (const std::string& s : check.missing) std::cerr << "  " << s << "\n";
      if (!check.violations.empty()) {
        std::cerr << "flopcast: error: " << check.violations.size()
                  << " group(s) exceed their committed error ceiling (update the file only on "
                     "purpose, with --write-ceilings):\n";
        for (const std::string& s : check.violations) std::cerr << "  " << s << "\n";
        return kCeilingViolation;
      }
    }
    return status;
  } catch (...) {
    return report_error(o.format);
  }
}

}  // namespace flopcast::cli
