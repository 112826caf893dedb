// SPDX-License-Identifier: MIT
#include "files.hpp"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "flopcast/io/api.hpp"

namespace flopcast::cli {

std::string read_text(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw FileError(path + ": cannot read file");
  return text.str();
}

json read_json_file(const std::string& path) {
  return io::parse_json(read_text(path), path == "-" ? std::string("stdin") : path);
}

std::string csv_field(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace flopcast::cli
