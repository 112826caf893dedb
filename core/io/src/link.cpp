// SPDX-License-Identifier: MIT
// Shareable links: a request flattened into `key=value` pairs of the URL fragment, one per field,
// so that a bad field can be reported and dropped while the rest of the setup is kept.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include "flopcast/error.hpp"
#include "flopcast/io/api.hpp"
#include "flopcast/io/fields.hpp"
#include "reader.hpp"

namespace flopcast::io {
namespace {

/// The fields an inference link carries: the registry's inference fields (flopcast/io/fields.hpp)
/// but `schema_version`, in its order.
const std::vector<const RequestField*>& link_fields() {
  static const std::vector<const RequestField*> fields = [] {
    std::vector<const RequestField*> out;
    for (const RequestField& f : request_fields()) {
      if ((f.tasks & kInferenceField) != 0 && f.path != "schema_version") out.push_back(&f);
    }
    return out;
  }();
  return fields;
}

constexpr const char* kLinkVersion = "1";

std::string percent_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

bool percent_decode(std::string_view s, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      return false;
    }
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return true;
}

json::json_pointer pointer(std::string_view key) {
  std::string p = "/" + std::string(key);
  std::replace(p.begin(), p.end(), '.', '/');
  return json::json_pointer(p);
}

const RequestField* find_field(std::string_view key) {
  for (const RequestField* f : link_fields()) {
    if (key == f->path) return f;
  }
  return nullptr;
}

std::vector<std::string> field_names() {
  std::vector<std::string> names;
  for (const RequestField* f : link_fields()) names.emplace_back(f->path);
  return names;
}

/// Converts one link value to its JSON type; SpecError (path = key) when it cannot.
json typed_value(const RequestField& f, const std::string& text) {
  const std::string key(f.path);
  switch (f.type) {
    case FieldType::text:
      return text;
    case FieldType::array:  // (serving only: an inference link carries no array)
    case FieldType::spec:
      if (!text.empty() && text.front() == '{') {
        try {
          return parse_json(text);
        } catch (const SpecError& e) {
          throw SpecError(
              key, std::string("must be a preset id or a JSON object (got ") + e.what() + ")");
        }
      }
      return text;
    case FieldType::boolean:
      // true / false as JSON; anything else goes on as text for the estimator to reject by name.
      if (text == "true" || text == "false") return text == "true";
      return text;
    case FieldType::integer:
    case FieldType::length:  // (serving only; an inference link carries no distribution)
    case FieldType::number: {
      json v;
      try {
        v = json::parse(text);
      } catch (const json::exception&) {
        v = text;
      }
      if (f.type != FieldType::number) return detail::as_int(v, key);
      return detail::as_number(v, key);
    }
  }
  return text;
}

/// Appends `&path=value` for every leaf of `j` under `prefix` (model and hardware objects whole),
/// the encoding of training, serving and collective requests (decode_link reads it back).
void append_leaves(const json& j, const std::string& prefix, std::string& out) {
  for (const auto& item : j.items()) {
    const std::string path = prefix.empty() ? item.key() : prefix + "." + item.key();
    if (path == "schema_version") continue;
    const json& v = item.value();
    if (v.is_object() && path != "model" && path != "hardware") {
      append_leaves(v, path, out);
    } else {
      out += "&" + percent_encode(path) + "=" +
             percent_encode(v.is_string() ? v.get<std::string>() : v.dump());
    }
  }
}

/// The deepest dotted path a request has (search.space.*, workload.arrival.*: three) with room;
/// a deeper key cannot be a request field, and placing one costs a level of nesting per dot.
constexpr std::size_t kMaxLinkDepth = 8;
/// Errors a decoded link lists one by one; the rest are counted in one last entry.
constexpr std::size_t kMaxLinkErrors = 20;

/// A dotted request path a task link may carry: lower-case words, then words of letters, digits
/// and underscores ("workload.arrival.rate_per_s"), at most kMaxLinkDepth of them; never a
/// segment that names a JavaScript object's internals (the page applies the request to plain
/// objects).
std::size_t depth_of(std::string_view key) {
  return static_cast<std::size_t>(std::count(key.begin(), key.end(), '.')) + 1;
}

bool leaf_key(std::string_view key) {
  if (depth_of(key) > kMaxLinkDepth) return false;
  for (std::size_t at = 0; at <= key.size();) {
    const std::size_t dot = std::min(key.find('.', at), key.size());
    const std::string_view segment = key.substr(at, dot - at);
    if (segment == "__proto__" || segment == "constructor" || segment == "prototype") return false;
    at = dot + 1;
  }
  bool first = true, start = true;
  for (const char c : key) {
    if (c == '.') {
      if (start) return false;
      start = true;
      first = false;
      continue;
    }
    const bool lower = (c >= 'a' && c <= 'z') || c == '_';
    const bool word = lower || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (first ? !lower : !word) return false;
    start = false;
  }
  return !key.empty() && !start;
}

/// A task-link value back to its JSON type: numbers, booleans, objects and arrays parse, the
/// rest stays text (the view's reader says what is wrong with it).
json leaf_value(const std::string& text) {
  const bool numeric =
      !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  const bool structured = text.size() >= 2 && ((text.front() == '{' && text.back() == '}') ||
                                               (text.front() == '[' && text.back() == ']'));
  if (numeric || structured || text == "true" || text == "false") {
    try {
      return parse_json(text);
    } catch (const SpecError&) {
      // keep the text
    }
  }
  return text;
}

/// Calls `take(key, value)` for each `key=value` pair of a fragment, percent-decoded; a malformed
/// pair and a link version other than this one go to `error(path, message)` instead.
template <typename Error, typename Take>
void for_each_pair(std::string_view fragment, const Error& error, const Take& take) {
  while (!fragment.empty()) {
    const std::size_t amp = fragment.find('&');
    const std::string_view pair = fragment.substr(0, amp);
    fragment = amp == std::string_view::npos ? std::string_view() : fragment.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    std::string key, value;
    if (!percent_decode(pair.substr(0, eq), key) ||
        (eq != std::string_view::npos && !percent_decode(pair.substr(eq + 1), value))) {
      error("", "link: malformed percent-encoding in \"" + std::string(pair) + "\"");
      continue;
    }
    if (key == "v") {
      if (value != kLinkVersion) error("v", "v: unsupported link version (got \"" + value + "\")");
      continue;
    }
    take(key, value);
  }
}

/// The `task` a fragment names ("" when none).
std::string link_task(std::string_view fragment) {
  std::string task;
  for_each_pair(
      fragment, [](const std::string&, const std::string&) {},
      [&](const std::string& key, const std::string& value) {
        if (key == "task") task = value;
      });
  return task;
}

}  // namespace

std::string encode_link(const json& request) {
  if (!request.is_object()) throw SpecError("", "a request must be a JSON object");
  // Training, serving and collective links carry every leaf of the request by its dotted path,
  // `task` included; the page decodes them in the task's view, whose reader checks the keys.
  const auto task = request.find("task");
  if (task != request.end() && task->is_string() && *task != "inference") {
    std::string out = std::string("v=") + kLinkVersion;
    append_leaves(request, "", out);
    return out;
  }
  // Reject keys a link cannot carry: the same strictness as the request reader.
  for (const auto& item : request.items()) {
    if (item.key() == "schema_version") continue;
    if (item.value().is_object() && item.key() != "model" && item.key() != "hardware") {
      for (const auto& sub : item.value().items()) {
        const std::string key = item.key() + "." + sub.key();
        if (!find_field(key)) throw SpecError(key, "unknown key");
      }
    } else if (!find_field(item.key())) {
      throw SpecError(item.key(), "unknown key");
    }
  }
  std::string out = std::string("v=") + kLinkVersion;
  for (const RequestField* f : link_fields()) {
    const auto ptr = pointer(f->path);
    if (!request.contains(ptr)) continue;
    const json& v = request.at(ptr);
    out += "&" + std::string(f->path) + "=" +
           percent_encode(v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

json decode_link(std::string_view fragment) {
  if (!fragment.empty() && fragment.front() == '#') fragment.remove_prefix(1);
  json request = json::object();
  json errors = json::array();
  std::unordered_set<std::string> seen;
  std::size_t unlisted = 0;  // errors past kMaxLinkErrors
  auto error = [&](const std::string& path, const std::string& message) {
    if (errors.size() >= kMaxLinkErrors) {
      ++unlisted;
      return;
    }
    errors.push_back({{"path", SpecError::safe_text(path, SpecError::kMaxPathBytes)},
                      {"message", SpecError::safe_text(message, SpecError::kMaxRuleBytes)}});
  };
  const auto result = [&] {
    if (unlisted > 0) {
      errors.push_back({{"path", ""},
                        {"message", "link: " + std::to_string(unlisted) +
                                        " more errors like the ones above, not listed"}});
    }
    return json{{"request", request}, {"errors", errors}};
  };
  if (fragment.size() > kMaxRequestBytes) {
    error("", "link: " + std::to_string(fragment.size()) + " characters, more than the " +
                  std::to_string(kMaxRequestBytes) + " a link may have");
    return json{{"request", request}, {"errors", errors}};
  }
  // Training, serving and collective links: every leaf by its dotted path (encode_link), read
  // back by type; the task's view checks the keys when it runs the request.
  if (const std::string task = link_task(fragment); !task.empty() && task != "inference") {
    for_each_pair(fragment, error, [&](const std::string& key, const std::string& value) {
      if (depth_of(key) > kMaxLinkDepth) {
        return error(key, "link: a key " + std::to_string(depth_of(key)) +
                              " levels deep is no request field (they are at most " +
                              std::to_string(kMaxLinkDepth) + ")");
      }
      if (!leaf_key(key)) return error(key, key + ": not a request field");
      if (!seen.insert(key).second) {
        return error(key, key + ": appears more than once in the link");
      }
      const json::json_pointer ptr = pointer(key.c_str());
      // A leaf under a path already holding a value (or the reverse) cannot be placed.
      bool clash = request.contains(ptr) && request.at(ptr).is_object();
      for (json::json_pointer up = ptr.parent_pointer(); !up.empty(); up = up.parent_pointer()) {
        if (request.contains(up) && !request.at(up).is_object()) clash = true;
      }
      if (clash) return error(key, key + ": conflicts with another field of the link");
      const bool spec = key == "model" || key == "hardware";
      request[ptr] =
          spec && (value.empty() || value.front() != '{') ? json(value) : leaf_value(value);
    });
    return result();
  }
  for_each_pair(fragment, error, [&](const std::string& key, const std::string& value) {
    const RequestField* f = find_field(key);
    if (!f) {
      if (errors.size() >= kMaxLinkErrors) return error(key, "");  // counted, not spelled out
      std::string rule = key + ": unknown link field";
      if (auto guess = detail::nearest(key, field_names()))
        rule += " (did you mean \"" + *guess + "\"?)";
      return error(key, rule);
    }
    if (!seen.insert(key).second) {
      return error(key, key + ": appears more than once in the link");
    }
    try {
      request[pointer(f->path)] = typed_value(*f, value);
    } catch (const SpecError& e) {
      error(e.path(), e.what());
    } catch (const json::exception&) {
      error(key, key + ": cannot be read as JSON text");
    }
  });
  // Let the estimator judge the values: each field it rejects is reported and dropped, until the
  // request runs or fails on something the link did not set (a missing field, say).
  for (std::size_t round = 0; round < link_fields().size(); ++round) {
    if (!request.contains("model") || !request.contains("hardware") ||
        !request.contains(pointer("workload.prompt_tokens")) ||
        !request.contains(pointer("workload.output_tokens"))) {
      break;
    }
    try {
      json probe = request;
      if (!probe.contains("task")) probe["task"] = "inference";
      (void)run(probe);
      break;
    } catch (const SpecError& e) {
      const std::string& path = e.path();
      const RequestField* owner = nullptr;
      for (const RequestField* f : link_fields()) {
        const std::string k(f->path);
        if (path == k || path.rfind(k + ".", 0) == 0) owner = f;
      }
      if (!owner || !request.contains(pointer(owner->path))) break;
      error(path, e.what());
      const auto ptr = pointer(owner->path);
      request[ptr.parent_pointer()].erase(ptr.back());
    } catch (const std::exception&) {
      break;
    }
  }
  return result();
}

}  // namespace flopcast::io
