// JSON documents as text, both ways, whatever a file or a peer put in them.
// Writing: a string that is not UTF-8 (from a peer, a file, a directory name) has each bad byte
// written as U+FFFD, where nlohmann's default writer would throw (type_error.316) and lose the
// whole document.
// Reading: a document nested deeper than kMaxJsonDepth is refused before it is parsed, since
// everything that walks a parsed document (dump, the report readers) recurses once per level and
// a file of 200,000 '[' would overflow the stack.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <istream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tusk {

inline constexpr std::size_t kMaxJsonDepth = 256;

class JsonTooDeep : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename Json>
std::string json_text(const Json& value, int indent = 2) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// `object`'s member `name` in a document read from a file or a peer: null where `object` is not an
// object or has no such member, so a reader walks any document without a check at every step.
template <typename Json>
const Json& member_or_null(const Json& object, const char* name) {
  static const Json none;
  if (!object.is_object()) return none;
  const auto it = object.find(name);
  return it == object.end() ? none : *it;
}

// `object`'s member `name` when it is a string, else "": a reader's one way to take a text from a
// document it did not write.
template <typename Json>
std::string string_member(const Json& object, const char* name) {
  const Json& value = member_or_null(object, name);
  return value.is_string() ? value.template get<std::string>() : std::string();
}

// How deep `text`'s arrays and objects nest, counting no bracket inside a string.
inline std::size_t json_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// Parses the whole of `in`; throws JsonTooDeep past kMaxJsonDepth, and nlohmann's parse_error on
// what is not JSON.
template <typename Json>
Json parse_json(const std::string& text) {
  if (const std::size_t depth = json_depth(text); depth > kMaxJsonDepth) {
    throw JsonTooDeep(fmt::format("nested {} deep, more than the {} any Tusk report needs", depth, kMaxJsonDepth));
  }
  return Json::parse(text);
}

template <typename Json>
Json parse_json(std::istream& in) {
  return parse_json<Json>(std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
}

}  // namespace tusk
