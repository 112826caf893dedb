// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>

namespace flopcast::io::detail {

struct EmbeddedPreset {
  const char* kind;  ///< models | hardware | scenarios
  const char* file;  ///< path relative to presets/
  const char* text;  ///< the file's JSON
};

extern const EmbeddedPreset kEmbeddedPresets[];
extern const std::size_t kEmbeddedPresetCount;

}  // namespace flopcast::io::detail
