#include "common/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "common/did_you_mean.hpp"
#include "common/printable.hpp"

namespace tusk {
namespace {

using std::chrono::milliseconds;
using namespace std::chrono_literals;

std::string_view describe(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.IsScalar()) return "a single value";
  return "nothing";
}

std::string join_words(const std::vector<std::string_view>& words, std::string_view separator) {
  return fmt::format("{}", fmt::join(words, separator));
}

}  // namespace

// ---- errors ------------------------------------------------------------------------------------

std::string YamlError::to_string() const {
  std::string text = pos.file;
  if (pos.line > 0) text += fmt::format(":{}:{}", pos.line, pos.column);
  text += ": ";
  if (!field_path.empty()) text += field_path + ": ";
  return text + message;
}

std::string join_errors(const std::vector<YamlError>& errors) {
  std::string text;
  for (const auto& error : errors) {
    if (!text.empty()) text += '\n';
    text += error.to_string();
  }
  return text;
}

YamlErrors::YamlErrors(std::string file) : file_(std::move(file)) {}

YamlPos YamlErrors::pos_of(const YAML::Node& node, const YamlPos& fallback) const {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0 || mark.column < 0) return fallback;
  return {file_, mark.line + 1, mark.column + 1};
}

void YamlErrors::add(const YamlPos& pos, std::string path, std::string message) {
  // A set of what was added, so a file with 80,000 mistakes costs n log n, not n squared.
  if (!seen_.emplace(pos.line, pos.column, path, message).second) return;
  errors_.push_back(YamlError{pos, std::move(path), std::move(message)});
}

std::vector<YamlError> YamlErrors::take_sorted() {
  std::stable_sort(errors_.begin(), errors_.end(), [](const auto& a, const auto& b) {
    return std::pair(a.pos.line, a.pos.column) < std::pair(b.pos.line, b.pos.column);
  });
  seen_.clear();
  return std::move(errors_);
}

std::optional<std::string> read_input_file(YamlErrors& errors, std::string_view what) {
  std::FILE* file = std::fopen(errors.file().c_str(), "rb");
  const auto cannot_read = [&](int error) {
    errors.add(YamlPos{errors.file(), 0, 0}, "", fmt::format("cannot read {}: {}", what, std::strerror(error)));
    return std::nullopt;
  };
  if (!file) return cannot_read(errno);
  std::string text;
  char buffer[65536];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, got);
  const int read_error = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (read_error != 0) return cannot_read(read_error);
  return text;
}

namespace {

// The 1-based line and column of byte `offset` of `text`.
YamlPos position_of(const std::string& file, std::string_view text, std::size_t offset) {
  const std::string_view before = text.substr(0, offset);
  const std::size_t line_start = before.rfind('\n');
  const int line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
  const auto column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return {file, line, static_cast<int>(column)};
}

// Which bound the document, its aliases followed, is past: more than kMaxYamlValues values, or
// nested more than kMaxYamlDepth deep; nullopt within both. yaml-cpp shares an aliased node rather
// than copying it, so a few lines of aliases of aliases stand for billions of values that every
// reader after this would walk. Iterative, and it stops at the first value past either bound.
std::optional<std::string> past_yaml_bounds(const YAML::Node& root) {
  std::vector<std::pair<YAML::Node, std::size_t>> pending{{root, 1}};
  std::size_t values = 0;
  while (!pending.empty()) {
    auto [node, depth] = std::move(pending.back());
    pending.pop_back();
    if (++values > kMaxYamlValues) return fmt::format("holds more than {} values", kMaxYamlValues);
    if (depth > kMaxYamlDepth) return fmt::format("nests deeper than {}", kMaxYamlDepth);
    if (node.IsMap()) {
      for (const auto& entry : node) {
        pending.emplace_back(entry.first, depth + 1);
        pending.emplace_back(entry.second, depth + 1);
      }
    } else if (node.IsSequence()) {
      for (const auto& element : node) pending.emplace_back(element, depth + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<YAML::Node> parse_yaml(std::string_view text, YamlErrors& errors) {
  // YAML is UTF-8 (or UTF-16/32, which no one writes by hand): a Latin-1 comment is named here,
  // where it can be fixed, instead of breaking a report that quotes the file later.
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    errors.add(position_of(errors.file(), text, bad), "",
               fmt::format("byte 0x{:02x} is not UTF-8: save the file as UTF-8",
                           static_cast<unsigned>(static_cast<unsigned char>(text[bad]))));
    return std::nullopt;
  }
  // A control character other than tab and line ends is no text a person wrote: most likely a
  // binary file given as YAML. Named here, before the parser quotes it raw into its message.
  const auto control = std::find_if(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7f;
  });
  if (control != text.end()) {
    const auto at = static_cast<std::size_t>(control - text.begin());
    errors.add(position_of(errors.file(), text, at), "",
               fmt::format("control byte 0x{:02x}: this is not a text file (a binary given as YAML?)",
                           static_cast<unsigned>(static_cast<unsigned char>(*control))));
    return std::nullopt;
  }
  try {
    YAML::Node document = YAML::Load(std::string(text));
    if (const auto past = past_yaml_bounds(document)) {
      // Only a document with aliases (*name) can stand for more than its text shows.
      const bool aliased = text.find('*') != std::string_view::npos;
      errors.add({errors.file(), 0, 0}, "",
                 aliased ? fmt::format(
                               "the document {} once its aliases are followed: is an alias repeated on purpose?", *past)
                         : fmt::format("the document {}: more than Tusk reads from one file", *past));
      return std::nullopt;
    }
    return document;
  } catch (const YAML::Exception& error) {
    const bool has_mark = error.mark.line >= 0;
    errors.add({errors.file(), has_mark ? error.mark.line + 1 : 0, has_mark ? error.mark.column + 1 : 0}, "",
               fmt::format("YAML syntax error: {}", printable(error.msg)));
    return std::nullopt;
  }
}

// ---- values and mappings -----------------------------------------------------------------------

std::string join_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

bool has_key(const std::vector<YamlEntry>& entries, std::string_view key) {
  return std::any_of(entries.begin(), entries.end(), [key](const YamlEntry& entry) { return entry.key == key; });
}

YamlValue YamlReader::root(const YAML::Node& node) const {
  const YamlPos start{errors_.file(), 1, 1};
  return {node, "", "", errors_.pos_of(node, start), start};
}

YamlValue YamlReader::element(const YamlValue& list, const YAML::Node& node, std::size_t index) const {
  const std::string name = fmt::format("{}[{}]", list.name, index);
  const std::string path = fmt::format("{}[{}]", list.path, index);
  const YamlPos pos = errors_.pos_of(node, list.pos);
  return {node, path, name, pos, pos};
}

std::optional<std::vector<YamlEntry>> YamlReader::mapping(const YamlValue& value, std::string_view expected) {
  if (!value.node.IsMap()) {
    mismatch(value, expected);
    return std::nullopt;
  }
  std::vector<YamlEntry> entries;
  std::map<std::string, std::size_t, std::less<>> index_of;  // key -> entries index: duplicates in log n
  for (const auto& pair : value.node) {
    const YamlPos key_pos = errors_.pos_of(pair.first, value.pos);
    if (!pair.first.IsScalar()) {
      errors_.add(key_pos, value.path, fmt::format("expected a key name, got {}", describe(pair.first)));
      continue;
    }
    const std::string& key = pair.first.Scalar();
    const std::string path = join_path(value.path, key);
    if (const auto first = index_of.find(key); first != index_of.end()) {
      errors_.add(key_pos, path,
                  fmt::format("duplicate key (first set at line {})", entries[first->second].value.key_pos.line));
      continue;
    }
    index_of.emplace(key, entries.size());
    // An empty value (`rate:`) has no position of its own; yaml-cpp points at the next token.
    const YamlPos pos = pair.second.IsNull() ? key_pos : errors_.pos_of(pair.second, key_pos);
    entries.push_back({key, YamlValue{pair.second, path, key, pos, key_pos}});
  }
  return entries;
}

void YamlReader::unknown_key(const YamlEntry& entry, const std::vector<std::string_view>& valid_keys,
                             std::size_t max_listed) {
  std::string message = "unknown key";
  if (const auto suggestion = closest_match(entry.key, valid_keys)) {
    message += fmt::format(" (did you mean '{}'?)", *suggestion);
  } else if (valid_keys.size() <= max_listed) {
    message += fmt::format("; expected one of: {}", join_words(valid_keys, ", "));
  }
  errors_.add(entry.value.key_pos, entry.value.path, message);
}

void YamlReader::missing(const YamlValue& parent, std::string_view key) {
  errors_.add(parent.pos, parent.path, fmt::format("missing required field '{}'", key));
}

void YamlReader::fail(const YamlValue& value, std::string message) {
  errors_.add(value.pos, value.path, std::move(message));
}

void YamlReader::mismatch(const YamlValue& value, std::string_view expected) {
  fail(value, fmt::format("expected {}, got {}", expected, describe(value.node)));
}

// ---- single values -----------------------------------------------------------------------------

const std::string* YamlReader::scalar(const YamlValue& value, std::string_view expected) {
  if (value.node.IsScalar()) return &value.node.Scalar();
  mismatch(value, expected);
  return nullptr;
}

std::optional<std::string> YamlReader::string(const YamlValue& value) {
  const std::string* text = scalar(value, "a string");
  if (!text) return std::nullopt;
  return *text;
}

std::optional<std::string> YamlReader::non_empty_string(const YamlValue& value) {
  auto text = string(value);
  if (text && text->empty()) {
    fail(value, fmt::format("{} must not be empty", value.name));
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> YamlReader::choice(const YamlValue& value, const std::vector<std::string_view>& choices) {
  const std::string expected = fmt::format("one of {}", join_words(choices, ", "));
  const std::string* text = scalar(value, expected);
  if (!text) return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *text) != choices.end()) return *text;
  std::string message = fmt::format("'{}' is not {}", *text, expected);
  if (const auto suggestion = closest_match(*text, choices)) {
    message += fmt::format(" (did you mean '{}'?)", *suggestion);
  }
  fail(value, message);
  return std::nullopt;
}

std::optional<bool> YamlReader::boolean(const YamlValue& value) {
  const std::string* text = scalar(value, "true or false");
  if (!text) return std::nullopt;
  bool result = false;
  if (value.node.Tag() == "!") {
    fail(value, fmt::format("expected true or false, got the string '{}'", *text));
    return std::nullopt;
  }
  if (!YAML::convert<bool>::decode(value.node, result)) {
    fail(value, fmt::format("expected true or false, got '{}'", *text));
    return std::nullopt;
  }
  return result;
}

void YamlReader::below_minimum(const YamlValue& value, std::string_view min_text) {
  fail(value, fmt::format("{} {} is below the minimum {}", value.name, value.text(), min_text));
}

void YamlReader::above_maximum(const YamlValue& value, std::string_view max_text) {
  fail(value, fmt::format("{} {} is above the maximum {}", value.name, value.text(), max_text));
}

std::optional<std::int64_t> YamlReader::integer(const YamlValue& value, const Range<std::int64_t>& range) {
  const std::string* text = scalar(value, "an integer");
  if (!text) return std::nullopt;
  std::string_view digits = *text;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  } else if (!digits.empty() && digits.front() == '+') {
    digits.remove_prefix(1);
  }
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number, base);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    fail(value, fmt::format("expected an integer, got '{}'", *text));
    return std::nullopt;
  }
  if (!in_range(value, number, range)) return std::nullopt;
  return number;
}

std::optional<double> YamlReader::decimal(const YamlValue& value, const Range<double>& range) {
  const std::string* text = scalar(value, "a number");
  if (!text) return std::nullopt;
  std::string_view digits = *text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || !std::isfinite(number)) {
    fail(value, fmt::format("expected a number like -7.5, got '{}'", *text));
    return std::nullopt;
  }
  if (!in_range(value, number, range)) return std::nullopt;
  return number;
}

std::optional<std::uint32_t> YamlReader::uint32(const YamlValue& value, const Range<std::int64_t>& range) {
  const auto number = integer(value, range);
  if (!number) return std::nullopt;
  return static_cast<std::uint32_t>(*number);
}

// ---- values with units -------------------------------------------------------------------------

std::optional<std::uint64_t> YamlReader::size(const YamlValue& value, const Range<std::uint64_t>& range) {
  const auto bytes = with_units(value, "a size like 4KiB", units::parse_size);
  if (!bytes) return std::nullopt;
  // A bound of a mebibyte or more said as a size ("64 MiB", not 67108864); a frame's 9216 as it is.
  const auto text = [](std::uint64_t bound, std::string_view given) {
    return !given.empty() || bound < (std::uint64_t{1} << 20) ? bound_text(bound, given) : units::format_size(bound);
  };
  const std::string min_text = text(range.min, range.min_text), max_text = text(range.max, range.max_text);
  if (!in_range(value, *bytes, Range<std::uint64_t>{range.min, range.max, min_text, max_text})) return std::nullopt;
  return bytes;
}

std::optional<milliseconds> YamlReader::duration(const YamlValue& value, const Range<milliseconds>& range) {
  const auto ns = with_units(value, "a duration like 30s", units::parse_duration);
  if (!ns) return std::nullopt;
  if (*ns % 1ms != 0ns) {
    fail(value, fmt::format("{} {} is not a whole number of milliseconds", value.name, value.text()));
    return std::nullopt;
  }
  const auto ms = std::chrono::duration_cast<milliseconds>(*ns);
  if (!in_range(value, ms, range)) return std::nullopt;
  return ms;
}

std::optional<double> YamlReader::ratio(const YamlValue& value) {
  return with_units(value, "a ratio like 1e-12 or 0.1%", units::parse_ratio);
}

std::optional<units::Rate> YamlReader::rate(const YamlValue& value) {
  return with_units(value, "a rate like 100Gbps, 1Mpps or max", units::parse_rate);
}

}  // namespace tusk
