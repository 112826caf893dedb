// SPDX-License-Identifier: MIT
#pragma once

/// Loaders of the ground-truth formats (../shared/groundtruth; each folder's README defines the
/// columns). The format of a file is detected from its header columns (or, for JSON lines, from
/// its first character), never from its name.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopcast/hardware.hpp"
#include "flopcast/kernel.hpp"
#include "validate/collector.hpp"

namespace flopcast::cli::validate {

/// The hardware preset id of a ground-truth GPU name ("H100-SXM-80G", "A100-80G-PCIe",
/// "GB200"), or nullopt when flopcast has none.
std::optional<std::string> hardware_preset_for(std::string_view gpu);
/// The architecture family of a hardware preset ("hopper", "ampere", ...), "" when unknown.
std::string architecture_of(const std::string& hardware_id);

/// Engine overheads to use instead of a profile's (what `flopcast fit --engines` searches over).
struct EngineOverheads {
  std::string engine;
  double step_overhead_us = 0;
  double request_overhead_us = 0;
  double kernel_fixed_us = -1;  ///< < 0: the kernels' own fixed cost
};

/// What every loader needs: where rows go, the kernel model, and the hardware presets (resolved
/// once per GPU name).
class Context {
 public:
  Context(Collector& collector, KernelModel km) : collector_(collector), km_(km) {}

  Collector& collector() { return collector_; }
  [[nodiscard]] const KernelModel& km() const { return km_; }
  /// The kernel model for a row measured in `framework` (the data's name: TRTLLM, VLLM, SGLang):
  /// priced with that framework's fits where they exist. Empty or unknown: the pooled fits.
  [[nodiscard]] KernelModel km_for(std::string_view framework) const;
  /// The preset of a ground-truth GPU name, or nullptr when there is none.
  const HardwareSpec* hardware(std::string_view gpu);

  /// End-to-end predictors pass their request's `engine` object through here: when it names the
  /// engine being refitted, the candidate overheads replace the profile's.
  void apply_engine_override(json& engine) const;
  void set_engine_override(std::optional<EngineOverheads> o) {
    engine_overrides_.clear();
    if (o) engine_overrides_.push_back(std::move(*o));
  }
  /// Several engines at once (leave-one-source-out prices every engine at Tier 0).
  void set_engine_overrides(std::vector<EngineOverheads> o) { engine_overrides_ = std::move(o); }

  /// Training predictors pass their request's `framework` object (and the GPU's hardware preset
  /// id) through here: keys of `overrides["<profile>"]` and `overrides["<profile>@<family>"]`
  /// (family: the GPU's architecture) replace the profile's constants; `overrides["*"]` and
  /// `overrides["*@<family>"]` apply to every profile (what `flopcast fit --training` searches
  /// over). A request without a profile gets the default of its layout, named by
  /// `overrides["default"]` when given.
  void apply_training_override(json& framework, const std::string& hardware_id) const;
  void set_training_override(json overrides) { training_override_ = std::move(overrides); }

  /// End-to-end rows predicted: those `filter(row, group)` accepts (leave-one-source-out folds
  /// predict the rows of one source, the request-overhead fit its candidate rows); empty (the
  /// default): every row.
  using RowFilter = std::function<bool(const json& row, const std::string& group)>;
  void set_row_filter(RowFilter filter) { row_filter_ = std::move(filter); }
  [[nodiscard]] bool wants(const json& row, const std::string& group) const {
    return !row_filter_ || row_filter_(row, group);
  }

  /// `validate --explain ID`: end-to-end predictors hand every request they run to
  /// `note_request`; those of the row whose `id` is ID are kept, in order.
  void set_explain_id(std::string id) { explain_id_ = std::move(id); }
  void note_request(const json& row, const json& request);
  [[nodiscard]] const std::vector<json>& explained() const { return explained_; }

 private:
  Collector& collector_;
  KernelModel km_;
  std::vector<EngineOverheads> engine_overrides_;
  json training_override_ = json::object();
  std::map<std::string, std::unique_ptr<HardwareSpec>, std::less<>> hardware_;
  std::string explain_id_;
  std::vector<json> explained_;
  RowFilter row_filter_;
};

/// Reads one file (any supported format) into the collector. FileError when it cannot be read;
/// SpecError "<file>:<line>: ..." when it is malformed. A file whose columns match no format is
/// recorded with all its rows skipped ("unrecognized file format").
void load_file(const std::string& path, Context& ctx);
/// load_file of a file's text, read already (the fuzz target's entry).
void load_text(const std::string& path, std::string text, Context& ctx);

}  // namespace flopcast::cli::validate
