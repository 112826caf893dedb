// SPDX-License-Identifier: MIT
#pragma once
// The files the CLI and the validator read and write: reading with errors that name the file,
// and the CSV cell they write.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace flopcast::cli {

using nlohmann::json;

/// Raised for unreadable files; mapped to the CLI's kFileError.
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads a file, or standard input for "-".
std::string read_text(const std::string& path);
/// Parses a JSON file; malformed JSON is a SpecError naming the file.
json read_json_file(const std::string& path);
/// One CSV cell: strings as they are, other values as JSON; quoted when they hold , " or newline.
std::string csv_field(const json& v);

}  // namespace flopcast::cli
