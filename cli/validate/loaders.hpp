// SPDX-License-Identifier: MIT
#pragma once

/// Loaders of the ground-truth formats (../shared/groundtruth; each folder's README defines the
/// columns). The format of a file is detected from its header columns (or, for JSON lines, from
/// its first character), never from its name.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "flopcast/hardware.hpp"
#include "flopcast/kernel.hpp"
#include "validate/collector.hpp"

namespace flopcast::cli::validate {

/// The hardware preset id of a ground-truth GPU name, or nullopt when flopcast has none.
std::optional<std::string> hardware_preset_for(std::string_view gpu);

/// What every loader needs: where rows go, the kernel model, and the hardware presets (resolved
/// once per GPU name).
class Context {
 public:
  Context(Collector& collector, KernelModel km) : collector_(collector), km_(km) {}

  Collector& collector() { return collector_; }
  [[nodiscard]] const KernelModel& km() const { return km_; }
  /// The preset of a ground-truth GPU name, or nullptr when there is none.
  const HardwareSpec* hardware(std::string_view gpu);

 private:
  Collector& collector_;
  KernelModel km_;
  std::map<std::string, std::unique_ptr<HardwareSpec>, std::less<>> hardware_;
};

/// Reads one file (any supported format) into the collector. FileError when it cannot be read;
/// SpecError "<file>:<line>: ..." when it is malformed. A file whose columns match no format is
/// recorded with all its rows skipped ("unrecognized file format").
void load_file(const std::string& path, Context& ctx);

}  // namespace flopcast::cli::validate
