// SPDX-License-Identifier: MIT
// One CLI flag per request field of the registry (flopcast/io/fields.hpp), and one builder that
// puts the given ones into a request.
#include <iostream>

#include "commands.hpp"
#include "flopcast/io/api.hpp"

namespace flopcast::cli {

namespace {

/// The values a field takes, from the core's own lists (io::schema()), as help says them.
std::string choices_text(std::string_view choices) {
  static const json schema = io::schema();  // built once per process, not once per flag
  const auto dot = choices.find('.');
  const std::string group(choices.substr(0, dot)), key(choices.substr(dot + 1));
  std::string out;
  for (const json& v : schema.at(group).at(key)) {
    out += (out.empty() ? "" : ", ") + v.get<std::string>();
  }
  return out;
}

}  // namespace

void RequestFlags::add(CLI::App& app, unsigned task) {
  for (const io::RequestField& f : io::request_fields()) {
    // A custom flag is the command's own (it reads a file, or sets more than one key).
    if ((f.tasks & task) == 0 || f.flag.empty() || f.style == io::FlagStyle::custom) continue;
    Slot& slot = slots_.emplace_back();
    slot.field = &f;
    std::string help(f.help);
    if (!f.choices.empty()) help += ": " + choices_text(f.choices);
    const std::string flag(f.flag);
    switch (f.style) {
      case io::FlagStyle::toggle:
        app.add_flag(flag, slot.on, help);
        break;
      case io::FlagStyle::on_off:
        app.add_option(flag, slot.text, help)->check(CLI::IsMember({"on", "off"}));
        break;
      case io::FlagStyle::custom:
        break;
      case io::FlagStyle::value:
        // A serving length is an integer on the command line (a distribution needs --request).
        if (f.type == io::FieldType::integer || f.type == io::FieldType::length) {
          app.add_option(flag, slot.integer, help);
        } else if (f.type == io::FieldType::number) {
          app.add_option(flag, slot.number, help);
        } else {
          app.add_option(flag, slot.text, help);
        }
        break;
    }
  }
}

bool RequestFlags::given(std::string_view path) const {
  for (const Slot& s : slots_) {
    if (s.field->path == path) return s.integer || s.number || s.text || s.on;
  }
  return false;
}

void RequestFlags::put(json& r) const {
  for (const Slot& s : slots_) {
    std::string pointer = "/" + std::string(s.field->path);
    for (char& c : pointer) c = c == '.' ? '/' : c;
    const json::json_pointer at(pointer);
    if (s.integer) r[at] = *s.integer;
    if (s.number) r[at] = *s.number;
    if (s.on) r[at] = true;
    if (s.text) {
      if (s.field->style == io::FlagStyle::on_off) {
        r[at] = *s.text == "on";
      } else {
        r[at] = *s.text;
      }
    }
  }
}

}  // namespace flopcast::cli
