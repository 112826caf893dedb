// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "flopcast/hardware.hpp"
#include "flopcast/model.hpp"

namespace flopcast::io::detail {

using nlohmann::json;

/// Strict readers: every key checked, units converted once to SI.
ModelSpec read_model(const json& j, const std::string& path);
HardwareSpec read_hardware(const json& j, const std::string& path);
/// Resolves a preset id (string) or reads an object; `kind` is "models" or "hardware".
ModelSpec resolve_model(const json& j, const std::string& path);
HardwareSpec resolve_hardware(const json& j, const std::string& path);

json model_to_json(const ModelSpec& m);
json hardware_to_json(const HardwareSpec& h);

json run_inference(const json& request);

}  // namespace flopcast::io::detail
