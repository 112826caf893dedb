// SPDX-License-Identifier: MIT
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {

Outcome predict_training_row(const nlohmann::json& /*row*/, Context& /*ctx*/,
                         std::string_view /*source*/) {
  return Outcome::skipped("training estimator not implemented yet");
}

}  // namespace flopcast::cli::validate
