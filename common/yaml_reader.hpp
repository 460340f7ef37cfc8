// Position-aware reading of hand-written YAML files: values are read one at a time as the type a
// schema expects (string, choice, boolean, integer, size, duration, ratio, rate, list, mapping),
// and each problem is recorded with its file:line:column and field path instead of thrown, so that
// a caller can report every mistake in a file at once. Nothing here knows about a particular
// schema.
//
// Ownership: YamlErrors owns the file name and the errors it collects. A YamlReader borrows its
// YamlErrors, which must outlive the reader. A YamlValue owns its path and positions and holds its
// YAML::Node by handle (which keeps the parsed document alive), so values stay valid after the
// reader that made them is gone.
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/source_pos.hpp"
#include "common/units.hpp"

namespace tusk {

using YamlPos = SourcePos;

// One problem found in a file.
struct YamlError {
  YamlPos pos;             // line 0: no position (e.g. the file could not be read)
  std::string field_path;  // e.g. "tests[0].rate"; empty for file-level errors
  std::string message;

  // "rack.yaml:12:5: tests[0].mesage_size: unknown key (did you mean 'message_size'?)"
  std::string to_string() const;
};

// The errors' to_string(), one a line, without a final newline.
std::string join_errors(const std::vector<YamlError>& errors);

// Collects the errors of one file.
class YamlErrors {
 public:
  explicit YamlErrors(std::string file);

  const std::string& file() const { return file_; }

  // 1-based position of `node`, or `fallback` when yaml-cpp has none for it.
  YamlPos pos_of(const YAML::Node& node, const YamlPos& fallback) const;

  // An error that is already recorded (same line, column, path and message) is not added again:
  // a value read more than once, such as a default that several entries inherit, is reported once.
  void add(const YamlPos& pos, std::string path, std::string message);

  bool empty() const { return errors_.empty(); }

  // The errors in file order, which is the order an engineer fixes them in; leaves this empty.
  std::vector<YamlError> take_sorted();

 private:
  std::string file_;
  std::vector<YamlError> errors_;
  std::set<std::tuple<int, int, std::string, std::string>> seen_;  // (line, column, path, message)
};

// The whole of the file `errors` is for, or nothing, with "cannot read <what>: <reason>" added to
// `errors` (at no position: the file itself).
std::optional<std::string> read_input_file(YamlErrors& errors, std::string_view what);

// Values one document may expand to, its aliases followed, and how deep it may nest: far past any
// profile, topology or model, far short of what would stall a reader.
inline constexpr std::size_t kMaxYamlValues = 1'000'000;
inline constexpr std::size_t kMaxYamlDepth = 64;

// Parses `text` as one YAML document. A byte that is not UTF-8, a syntax error, or a document past
// kMaxYamlValues or kMaxYamlDepth is added to `errors` (with its position where there is one) and
// gives nothing.
std::optional<YAML::Node> parse_yaml(std::string_view text, YamlErrors& errors);

// One value to read (a mapping's value or a list's element) and where to report problems with it.
struct YamlValue {
  YAML::Node node;
  std::string path;  // "tests[0].rate"
  std::string name;  // the last part of the path, for messages: "rate", "frame_sizes[1]"
  YamlPos pos;       // of the value
  YamlPos key_pos;   // of its key; the value's own position for a list element or the root

  // The value as written when it is a single value, else empty.
  std::string text() const { return node.IsScalar() ? node.Scalar() : std::string(); }
};

// One key of a mapping and its value.
struct YamlEntry {
  std::string key;
  YamlValue value;
};

// "parent.key", or "key" when `parent` is empty (the root).
std::string join_path(std::string_view parent, std::string_view key);

bool has_key(const std::vector<YamlEntry>& entries, std::string_view key);

// Reads values of every kind a schema uses, adding each problem to the YamlErrors and returning
// nothing for a value that cannot be used. Messages name the value (YamlValue::name) and quote it
// as written.
class YamlReader {
 public:
  explicit YamlReader(YamlErrors& errors) : errors_(errors) {}

  YamlErrors& errors() { return errors_; }

  // The document itself: empty path and name, at 1:1 when yaml-cpp has no position for it.
  YamlValue root(const YAML::Node& node) const;

  // Element `index` of `list`, as "list[index]".
  YamlValue element(const YamlValue& list, const YAML::Node& node, std::size_t index) const;

  // The entries of a mapping in file order, or nothing (reported as "expected <expected>, got ...")
  // when `value` is not a mapping. Keys that are not plain names and repeated keys are reported and
  // left out (yaml-cpp keeps both copies of a repeated key).
  std::optional<std::vector<YamlEntry>> mapping(const YamlValue& value, std::string_view expected);

  // Reports `entry` as an unknown key, suggesting the nearest of `valid_keys` or, when none is
  // near and the list is short, listing them all.
  // Lists the valid keys when there are at most `max_listed` (longer lists would bury the message).
  void unknown_key(const YamlEntry& entry, const std::vector<std::string_view>& valid_keys,
                   std::size_t max_listed = 12);

  // Reports that the mapping `parent` lacks `key`.
  void missing(const YamlValue& parent, std::string_view key);

  // Reports `message` at `value`.
  void fail(const YamlValue& value, std::string message);

  // Reports "expected <expected>, got a list" (or a mapping, a single value, nothing).
  void mismatch(const YamlValue& value, std::string_view expected);

  // The text of a single value, or nothing (reported as a mismatch with `expected`). The pointer
  // points into `value.node`.
  const std::string* scalar(const YamlValue& value, std::string_view expected);

  std::optional<std::string> string(const YamlValue& value);
  std::optional<std::string> non_empty_string(const YamlValue& value);

  // One of `choices`, exactly as written there; a near miss gets a suggestion.
  std::optional<std::string> choice(const YamlValue& value, const std::vector<std::string_view>& choices);

  // Only YAML's own booleans: a quoted "true" or a 1 is a mistake worth pointing out.
  std::optional<bool> boolean(const YamlValue& value);

  // Inclusive bounds, and how messages show them: written from the numbers themselves (a number as
  // it is, a duration in its largest whole unit of h, s and ms), or, where a unit reads better
  // than the number ("1GiB", "2^63"), as given.
  template <typename T>
  struct Range {
    T min;
    T max;
    std::string_view min_text = {};
    std::string_view max_text = {};
  };

  template <typename T>
  static std::string bound_text(T bound, std::string_view given) {
    if (!given.empty()) return std::string(given);
    if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
      const auto ms = bound.count();
      if (ms != 0 && ms % 3'600'000 == 0) return fmt::format("{}h", ms / 3'600'000);
      if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
      return fmt::format("{}ms", ms);
    } else {
      return fmt::format("{}", bound);
    }
  }

  // Whether `number` (read from `value`) is within `range`; reports it when it is not.
  template <typename T>
  bool in_range(const YamlValue& value, T number, const Range<T>& range) {
    if (number < range.min) {
      below_minimum(value, bound_text(range.min, range.min_text));
      return false;
    }
    if (number > range.max) {
      above_maximum(value, bound_text(range.max, range.max_text));
      return false;
    }
    return true;
  }

  // A plain decimal number that may have a sign, a fraction and an exponent ("-7.5", "70", "1e-5"),
  // finite, within `range`; no units (the key's name says which).
  std::optional<double> decimal(const YamlValue& value, const Range<double>& range);

  // Decimal, or hexadecimal with 0x; no fractions, exponents or units.
  std::optional<std::int64_t> integer(const YamlValue& value, const Range<std::int64_t>& range);

  // An integer; `range` must lie within what a uint32 holds.
  std::optional<std::uint32_t> uint32(const YamlValue& value, const Range<std::int64_t>& range);

  // Parses with one of the units:: parsers; their messages already say what was expected.
  template <typename Parse>
  auto with_units(const YamlValue& value, std::string_view expected, Parse parse)
      -> std::optional<decltype(parse(std::string_view()))> {
    const std::string* text = scalar(value, expected);
    if (!text) return std::nullopt;
    try {
      return parse(*text);
    } catch (const units::UnitError& error) {
      fail(value, error.what());
      return std::nullopt;
    }
  }

  // Bytes: "4KiB", "1500".
  std::optional<std::uint64_t> size(const YamlValue& value, const Range<std::uint64_t>& range);

  // A duration that must be a whole number of milliseconds: "30s", "100ms".
  std::optional<std::chrono::milliseconds> duration(const YamlValue& value,
                                                    const Range<std::chrono::milliseconds>& range);

  // "1e-12", "0.1%".
  std::optional<double> ratio(const YamlValue& value);

  // "100Gbps", "1Mpps" or "max".
  std::optional<units::Rate> rate(const YamlValue& value);

  // A list whose elements `read` parses (each as element(value, ...)); nothing if any element is
  // bad, after every element has been read and reported.
  template <typename Read>
  auto list(const YamlValue& value, Read read)
      -> std::optional<std::vector<typename decltype(read(value))::value_type>> {
    if (!value.node.IsSequence()) {
      mismatch(value, "a list");
      return std::nullopt;
    }
    std::vector<typename decltype(read(value))::value_type> result;
    bool all_good = true;
    for (std::size_t i = 0; i < value.node.size(); ++i) {
      const auto item = read(element(value, value.node[i], i));
      if (item) {
        result.push_back(*item);
      } else {
        all_good = false;
      }
    }
    if (!all_good) return std::nullopt;
    return result;
  }

 private:
  void below_minimum(const YamlValue& value, std::string_view min_text);
  void above_maximum(const YamlValue& value, std::string_view max_text);

  YamlErrors& errors_;
};

}  // namespace tusk
