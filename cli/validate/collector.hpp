// SPDX-License-Identifier: MIT
#pragma once

/// Accumulates predictions against measurements per group and split, and the rows skipped with
/// their reasons, as the loaders stream the ground-truth files; then builds the report.

#include <array>
#include <cstddef>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopcast/collective_fit.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/kernel.hpp"
#include "flopcast/stats.hpp"

namespace flopcast::cli::validate {

using nlohmann::json;

/// One predicted collective row, as `flopcast fit --collectives` needs it: the link types of its
/// two fabrics (scale-out "" on one node) and the collective as it was priced.
struct CollectiveSample {
  std::string scaleup_link;
  std::string scaleout_link;
  Split split = Split::train;
  CollectiveMeasurement row;
};

/// What one row turned into: a prediction (in the unit of its measurement) or a skip reason.
struct Outcome {
  double predicted = std::numeric_limits<double>::quiet_NaN();
  int tier = 0;
  std::string skip;  ///< non-empty: the row is skipped for this reason
  /// For kernel rows: the op as priced (its calibration key and work), and the hardware preset,
  /// so that `flopcast fit` can refit the efficiency of (hardware, op class, math type).
  std::optional<OpCost> op;
  std::string hardware_id;
  /// For collective rows: the collective and its fabrics (what `fit --collectives` refits).
  std::optional<CollectiveSample> collective;
  /// For end-to-end rows: the engine profile the request named (what `fit --engines` refits),
  /// and the kind of figure (e2e_kind).
  std::string engine;
  std::string kind;
  /// Whether the row may fit its engine's overheads: not for mixture-of-experts models, whose
  /// fused-MoE kernel efficiency at small per-expert batches flopcast does not model yet; an
  /// engine constant fitted on them would absorb that error and carry it to dense models.
  bool fits_engine = true;
  /// For a mean or median TTFT of a serving row: whether the estimate puts it under light load
  /// (arrivals at a rate under 70 % of the analytic saturation rate), where the TTFT is the
  /// request's own path and prefill, so that a per-request constant shows in it (what `fit
  /// --request-overhead` reads).
  bool light_load_ttft = false;
  /// For end-to-end rows: the model has multi-head latent attention and routed experts (its
  /// inference and serving rows are banded apart, io::e2e_band_kind).
  bool mla_moe = false;
  /// For MLA + MoE rows: run on an engine release of early 2025 (early_mla_engine).
  bool early_engine = false;
  /// For end-to-end rows: the model has routed experts (its training rows are banded apart).
  bool moe = false;
  /// The estimate's nominal 80% band, when it has one (NaN otherwise).
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();

  static Outcome value(double v, int tier) {
    Outcome o;
    o.predicted = v;
    o.tier = tier;
    return o;
  }
  static Outcome skipped(std::string reason) {
    Outcome o;
    o.skip = std::move(reason);
    return o;
  }
};

/// One predicted kernel row, as `flopcast fit` needs it.
struct FitSample {
  std::string hardware_id;
  std::string key;  ///< "<op class>/<math type>"
  Split split = Split::train;
  double measured_s = 0;
  OpCost op;
};

/// One predicted end-to-end row, as `flopcast fit --engines` / `--training` and the
/// leave-one-source-out report need it. `engine` is the engine profile, or
/// "training:<profile>" for training rows.
struct EngineSample {
  std::string engine;
  Split split = Split::train;
  double measured = 0;
  double predicted = 0;
  std::string group;  ///< "e2e/<source>/<GPU>/<metric>"
  std::string kind;   ///< e2e_kind of the row
  std::string id;     ///< the row's identity ("id=...")
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
  bool fits_engine = true;       ///< Outcome::fits_engine
  bool light_load_ttft = false;  ///< Outcome::light_load_ttft
  bool mla_moe = false;          ///< Outcome::mla_moe
  bool early_engine = false;     ///< Outcome::early_engine
  bool moe = false;              ///< Outcome::moe
};

/// What an end-to-end figure is, for reporting error per kind: "training", "inference
/// throughput" (max- or fixed-batch throughput), "inference latency", "serving mean",
/// "serving p50", "serving tail" (p90, p99), "serving throughput".
std::string e2e_kind(std::string_view row_kind, std::string_view metric);

class Collector {
 public:
  /// Groups whose name contains one of `holdouts` put every row in the test split.
  explicit Collector(std::vector<std::string> holdouts) : holdouts_(std::move(holdouts)) {}

  /// The split of a row: by `source + " " + identity`, or test when its group is held out.
  [[nodiscard]] Split split(std::string_view group, std::string_view source,
                            std::string_view identity) const;

  /// One measurement row of `source` (a file name) at `line`. `identity` names the row without
  /// its source (GPU, dtype, shape); `max_row` of a group reads "<source>:<line> <identity>".
  void add(std::string_view source, const std::string& group, std::string_view identity,
           std::size_t line, double measured, const Outcome& outcome);
  /// A whole file that no loader reads (every row of it counted as skipped).
  void skip_file(std::string_view source, const std::string& reason, std::size_t rows);
  /// Rows that were predicted but deserve a note (counted per source and message).
  void warn(std::string_view source, const std::string& message);
  /// A file that was read: its path, detected format and number of rows.
  void file(const std::string& path, const std::string& format, std::size_t rows);

  /// {"groups":[...], "skipped":[...], "warnings":[...], "files":[...]}; `only` keeps one split.
  [[nodiscard]] json report(std::optional<Split> only) const;
  /// Test-split MAPE of every group that has modelled test rows.
  [[nodiscard]] std::map<std::string, double> test_mape() const;

  /// Also write every predicted row as CSV (group, split, row, measured, predicted, ape).
  void write_rows_to(std::ostream* out);

  /// Keep every predicted kernel, collective and end-to-end row (both splits) for fitting.
  void record_samples() { record_ = true; }
  [[nodiscard]] const std::vector<FitSample>& samples() const { return samples_; }
  [[nodiscard]] const std::vector<EngineSample>& engine_samples() const { return engine_samples_; }
  [[nodiscard]] const std::vector<CollectiveSample>& collective_samples() const {
    return collective_samples_;
  }
  /// Rows predicted so far (all files, both splits).
  [[nodiscard]] std::size_t predicted_rows() const { return predicted_rows_; }

 private:
  struct Bucket {
    std::vector<double> predicted, measured;
    std::size_t skipped = 0;
    double max_ape = -1;
    std::string max_row;
    int tier = 0;
    std::size_t banded = 0;   // rows with an 80% band
    std::size_t covered = 0;  // ... whose measurement lies inside it
  };
  struct Group {
    std::array<Bucket, 2> split;  // [train, test]
  };

  std::vector<std::string> holdouts_;
  std::map<std::string, Group, std::less<>> groups_;
  /// (source, reason) → rows skipped in [train, test, no split (a whole unreadable file)].
  std::map<std::pair<std::string, std::string>, std::array<std::size_t, 3>> skipped_;
  std::map<std::pair<std::string, std::string>, std::size_t> warnings_;
  std::vector<json> files_;
  bool record_ = false;
  std::ostream* rows_out_ = nullptr;
  std::vector<FitSample> samples_;
  std::vector<EngineSample> engine_samples_;
  std::vector<CollectiveSample> collective_samples_;
  std::size_t predicted_rows_ = 0;
};

using io::round6;

}  // namespace flopcast::cli::validate
