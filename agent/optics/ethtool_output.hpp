// Reading what the ethtool program printed, for the optics parsers (module_diagnostics, fec_stats):
// its lines, its numbers, its text fields and its JSON, bounded so that output from a broken or
// hostile source costs little and crashes nothing. Pure functions; any thread may call them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tusk {

// The most of ethtool's output read; past it, text is cut (and JSON, cut, no longer parses). A full
// CMIS module dump is about 12 KiB.
inline constexpr std::size_t kMaxEthtoolOutputBytes = 1024 * 1024;
// How deep the JSON reader keeps values: ethtool's documents nest 4 deep; deeper values are dropped.
inline constexpr std::size_t kMaxEthtoolJsonDepth = 16;
// How many values one key keeps where an object repeats it (see parse_ethtool_json).
inline constexpr std::size_t kMaxEthtoolJsonRepeats = 8;

// The output's lines (LF or CRLF), within its first kMaxEthtoolOutputBytes.
std::vector<std::string_view> ethtool_lines(std::string_view output);

// `text` as a field to keep: bounded_ascii (common/printable) to kMaxOpticsTextBytes, the bound the
// controller applies again to what an agent sends (common/optics_wire).
std::string bounded_text(std::string_view text);

// The decimal number `text` starts with (after blanks), if it is finite: "7.862 mA" is 7.862;
// "-inf dBm", "nan", "x" and "1e999" are none.
std::optional<double> leading_number(std::string_view text);

// `text` (after blanks) as an unsigned 64-bit count, if it is all digits and fits.
std::optional<std::uint64_t> whole_count(std::string_view text);

// A JSON number as a finite double, or a non-negative integral one as a count; none otherwise.
std::optional<double> json_number(const nlohmann::json& value);
std::optional<std::uint64_t> json_count(const nlohmann::json& value);

// Whether `text` starts with `prefix`, ignoring ASCII case.
bool starts_with_nocase(std::string_view text, std::string_view prefix);

// A line in which ethtool reports a failure ("netlink error: ...", "Cannot get ...: ...",
// "ethtool: bad command line argument(s)"), as bounded_text; none where no line is one.
std::optional<std::string> ethtool_error_line(std::string_view output);

// Whether an error line is the driver (or kernel) saying it cannot do this at all.
bool is_not_supported(std::string_view error_line);

// Whether the output is JSON: its first character past blanks opens an array or an object.
bool looks_like_json(std::string_view output);

// ethtool's JSON as a document. ethtool's own JSON may repeat a key within one object (`-m --json`
// prints "module_temperature" as the reading and again as its thresholds, and a second CMIS bank's
// lanes under the same names as the first's): a repeat is kept under "key#2", "key#3", ... up to
// kMaxEthtoolJsonRepeats values, where a plain parser keeps only the last. Values deeper than
// kMaxEthtoolJsonDepth are dropped. None, with `error` set, for what is not JSON (cut, garbage, a
// number past a double's range).
std::optional<nlohmann::json> parse_ethtool_json(std::string_view output, std::string& error);

// Every value an object holds under `key` and its repeats, in the order printed.
std::vector<const nlohmann::json*> json_repeats(const nlohmann::json& object, const std::string& key);

// ethtool prints one object per device, in an array: the first object, or the document when it is
// an object itself; none otherwise.
const nlohmann::json* json_device_object(const nlohmann::json& document);

// The device object of ethtool's JSON (parse_ethtool_json, then json_device_object), which both
// parsers start from; none, with `note` set to why as bounded_text, where there is none.
std::optional<nlohmann::json> parse_ethtool_device(std::string_view output, std::string& note);

}  // namespace tusk
