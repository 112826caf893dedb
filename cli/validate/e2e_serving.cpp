// SPDX-License-Identifier: MIT
#include "validate/e2e.hpp"

namespace flopcast::cli::validate {

Outcome predict_serving_row(const nlohmann::json& /*row*/, Context& /*ctx*/,
                         std::string_view /*source*/) {
  return Outcome::skipped("serving estimator not implemented yet");
}

}  // namespace flopcast::cli::validate
