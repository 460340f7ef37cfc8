#include "agent/optics/ethtool_output.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <utility>

#include "common/optics_reading.hpp"
#include "common/printable.hpp"

namespace tusk {
namespace {

using nlohmann::json;

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view within_output_bound(std::string_view output) {
  return output.substr(0, std::min(output.size(), kMaxEthtoolOutputBytes));
}

// nlohmann's SAX events built into a document the way parse_ethtool_json describes: repeated keys
// kept apart, deep values dropped. Containers open on the stack are never elements of a container
// that grows while they are open, so the pointers to them stay valid.
class RepeatKeepingBuilder {
 public:
  explicit RepeatKeepingBuilder(json& root) : root_(root) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool value) { return put(json(value)); }
  bool number_integer(json::number_integer_t value) { return put(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return put(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t& /*text*/) { return put(json(value)); }
  bool string(json::string_t& value) { return put(json(std::move(value))); }
  bool binary(json::binary_t& /*value*/) { return put(json(nullptr)); }
  bool start_object(std::size_t /*elements*/) { return open(json::object()); }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*elements*/) { return open(json::array()); }
  bool end_array() { return close(); }
  bool key(json::string_t& name) {
    key_ = std::move(name);
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const json::exception& error) {
    error_ = error.what();
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  // Where the next value goes: nullptr to drop it (too deep, or a key repeated too often).
  json* place(json value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json* parent = open_.back();
    if (parent == nullptr) return nullptr;
    if (parent->is_array()) {
      parent->push_back(std::move(value));
      return &parent->back();
    }
    std::string name = key_;
    for (std::size_t repeat = 2; parent->contains(name); ++repeat) {
      if (repeat > kMaxEthtoolJsonRepeats) return nullptr;
      name = key_ + "#" + std::to_string(repeat);
    }
    json& slot = (*parent)[name];
    slot = std::move(value);
    return &slot;
  }

  bool put(json value) {
    if (open_.size() <= kMaxEthtoolJsonDepth) place(std::move(value));
    return true;
  }

  bool open(json container) {
    json* slot = nullptr;
    if (open_.size() < kMaxEthtoolJsonDepth) slot = place(std::move(container));
    open_.push_back(slot);
    return true;
  }

  bool close() {
    if (!open_.empty()) open_.pop_back();
    return true;
  }

  json& root_;
  std::vector<json*> open_;
  std::string key_;
  std::string error_;
};

}  // namespace

std::vector<std::string_view> ethtool_lines(std::string_view output) {
  std::vector<std::string_view> lines;
  std::string_view rest = within_output_bound(output);
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return lines;
}

std::string bounded_text(std::string_view text) {
  return bounded_ascii(text, kMaxOpticsTextBytes);
}

std::optional<double> leading_number(std::string_view text) {
  text = trim_blanks(text);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> whole_count(std::string_view text) {
  text = trim_blanks(text);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> json_number(const json& value) {
  if (!value.is_number()) return std::nullopt;
  const double number = value.get<double>();
  if (!std::isfinite(number)) return std::nullopt;
  return number;
}

std::optional<std::uint64_t> json_count(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) {
    const auto signed_value = value.get<std::int64_t>();
    if (signed_value < 0) return std::nullopt;
    return static_cast<std::uint64_t>(signed_value);
  }
  if (value.is_number_float()) {
    // 2^64 itself does not fit; every double below it that is whole does.
    const double number = value.get<double>();
    if (!(number >= 0 && number < 18446744073709551616.0) || std::floor(number) != number) return std::nullopt;
    return static_cast<std::uint64_t>(number);
  }
  return std::nullopt;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(text[i]) != lower(prefix[i])) return false;
  }
  return true;
}

std::optional<std::string> ethtool_error_line(std::string_view output) {
  for (std::string_view line : ethtool_lines(output)) {
    line = trim_blanks(line);
    if (starts_with_nocase(line, "netlink error:") || starts_with_nocase(line, "Cannot ") ||
        starts_with_nocase(line, "ethtool: ") || starts_with_nocase(line, "No data available") ||
        starts_with_nocase(line, "Operation not supported")) {
      return bounded_text(line);
    }
  }
  return std::nullopt;
}

bool is_not_supported(std::string_view error_line) {
  return error_line.find("Operation not supported") != std::string_view::npos ||
         error_line.find("Not supported") != std::string_view::npos;
}

bool looks_like_json(std::string_view output) {
  output = trim_blanks(output);
  return !output.empty() && (output.front() == '[' || output.front() == '{');
}

std::optional<json> parse_ethtool_json(std::string_view output, std::string& error) {
  output = within_output_bound(output);
  json document;
  RepeatKeepingBuilder builder(document);
  if (!json::sax_parse(output.begin(), output.end(), &builder)) {
    error = builder.error().empty() ? "not JSON" : builder.error();
    return std::nullopt;
  }
  return document;
}

std::vector<const json*> json_repeats(const json& object, const std::string& key) {
  std::vector<const json*> values;
  if (!object.is_object()) return values;
  for (std::size_t repeat = 1; repeat <= kMaxEthtoolJsonRepeats; ++repeat) {
    const auto it = object.find(repeat == 1 ? key : key + "#" + std::to_string(repeat));
    if (it == object.end()) break;
    values.push_back(&*it);
  }
  return values;
}

const json* json_device_object(const json& document) {
  if (document.is_object()) return &document;
  if (document.is_array() && !document.empty() && document.front().is_object()) return &document.front();
  return nullptr;
}

std::optional<json> parse_ethtool_device(std::string_view output, std::string& note) {
  std::string error;
  std::optional<json> document = parse_ethtool_json(output, error);
  if (!document) {
    note = bounded_text("ethtool's JSON: " + error);
    return std::nullopt;
  }
  const json* device = json_device_object(*document);
  if (device == nullptr) {
    note = bounded_text("no device object in ethtool's JSON");
    return std::nullopt;
  }
  if (device == &*document) return document;
  return std::move(document->front());
}

}  // namespace tusk
