#include "common/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace tusk::units {
namespace {

// ---- scanning ----------------------------------------------------------------------------------

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Length of the unsigned decimal at the start of `text` (digits, optional fraction, optional
// exponent), or 0 if there is none. Written by hand rather than left to from_chars so that "inf",
// "nan", hex and signs never count as numbers, and so that "1e" followed by a unit letter keeps the
// letter for the unit.
std::size_t scan_number(std::string_view text) {
  std::size_t i = 0;
  std::size_t digits = 0;
  while (i < text.size() && is_digit(text[i])) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    if (j < text.size() && is_digit(text[j])) {
      while (j < text.size() && is_digit(text[j])) ++j;
      i = j;
    }
  }
  return i;
}

// A number and the unit written after it, both trimmed; `number` is empty if the text does not
// start with one.
struct NumberAndUnit {
  std::string_view number;
  std::string_view unit;
};

NumberAndUnit split_number(std::string_view text) {
  const std::size_t length = scan_number(text);
  return {text.substr(0, length), trim(text.substr(length))};
}

// `number` as accepted by scan_number. Out of double's range it is infinity or 0, which the callers
// reject or accept as they would any other value.
double to_double(std::string_view number) {
  double value = 0;
  const auto result = std::from_chars(number.data(), number.data() + number.size(), value);
  if (result.ec != std::errc::result_out_of_range) return value;
  const auto e = number.find_first_of("eE");
  const bool tiny = e != std::string_view::npos
                        ? number.substr(e + 1).starts_with('-')
                        : number.substr(0, number.find('.')).find_first_not_of('0') == std::string_view::npos;
  return tiny ? 0.0 : std::numeric_limits<double>::infinity();
}

// ---- exact whole numbers -----------------------------------------------------------------------

// Sizes, counts and durations are converted exactly from the decimal text, because going through
// double would make "1.1KB" come out as 1100.0000000000002 and be rejected as fractional.
enum class Whole { Ok, NotWhole, TooLarge };

struct WholeResult {
  Whole status = Whole::Ok;
  std::uint64_t value = 0;
};

bool multiply(std::uint64_t& value, std::uint64_t factor) {
  return !__builtin_mul_overflow(value, factor, &value);
}

// `number` (as accepted by scan_number) times `multiplier`, if that is a whole number.
WholeResult to_whole(std::string_view number, std::uint64_t multiplier) {
  std::string_view mantissa = number;
  long exponent = 0;
  if (const auto e = number.find_first_of("eE"); e != std::string_view::npos) {
    mantissa = number.substr(0, e);
    std::string_view exponent_text = number.substr(e + 1);
    if (!exponent_text.empty() && exponent_text.front() == '+') exponent_text.remove_prefix(1);
    int parsed = 0;
    const auto [end, error] =
        std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), parsed);
    // An exponent too large for int is far outside any uint64 either way; 10'000 keeps its sign.
    exponent = error == std::errc() ? parsed : (exponent_text.front() == '-' ? -10'000 : 10'000);
  }

  std::string digits;
  const auto dot = mantissa.find('.');
  digits.append(mantissa.substr(0, dot));
  if (dot != std::string_view::npos) {
    const std::string_view fraction = mantissa.substr(dot + 1);
    digits.append(fraction);
    exponent -= static_cast<long>(fraction.size());
  }
  const auto first = digits.find_first_not_of('0');
  if (first == std::string::npos) return {Whole::Ok, 0};
  digits.erase(0, first);
  while (digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }

  std::uint64_t value = 0;
  for (const char c : digits) {
    if (!multiply(value, 10) || __builtin_add_overflow(value, std::uint64_t(c - '0'), &value)) {
      return {Whole::TooLarge, 0};
    }
  }
  // value has no trailing zeros, so a negative exponent leaves a fraction unless the multiplier
  // supplies the missing factors of ten.
  if (exponent > 0) {
    if (exponent > 20) return {Whole::TooLarge, 0};
    for (long i = 0; i < exponent; ++i) {
      if (!multiply(value, 10)) return {Whole::TooLarge, 0};
    }
  }
  if (!multiply(value, multiplier)) return {Whole::TooLarge, 0};
  if (exponent < 0) {
    if (exponent < -20) return {Whole::NotWhole, 0};
    for (long i = 0; i < -exponent; ++i) {
      if (value % 10 != 0) return {Whole::NotWhole, 0};
      value /= 10;
    }
  }
  return {Whole::Ok, value};
}

// ---- unit tables -------------------------------------------------------------------------------

template <typename Factor>
struct Unit {
  std::string_view name;
  Factor factor;
};

template <typename Factor, std::size_t N>
std::optional<Factor> find_unit(const std::array<Unit<Factor>, N>& units, std::string_view name) {
  for (const auto& unit : units) {
    if (unit.name == name) return unit.factor;
  }
  return std::nullopt;
}

constexpr std::uint64_t kKi = 1024;
constexpr std::array<Unit<std::uint64_t>, 20> kSizeUnits{{
    {"", 1},
    {"B", 1},
    {"KB", 1'000},
    {"MB", 1'000'000},
    {"GB", 1'000'000'000},
    {"TB", 1'000'000'000'000},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"b", 1},
    {"kb", 1'000},
    {"mb", 1'000'000},
    {"gb", 1'000'000'000},
    {"tb", 1'000'000'000'000},
    {"kib", kKi},
    {"mib", kKi* kKi},
    {"gib", kKi* kKi* kKi},
    {"tib", kKi* kKi* kKi* kKi},
    {"kB", 1'000},  // the SI spelling
}};

// Metric prefixes for rates; K and k both mean kilo because people write both.
constexpr std::array<Unit<double>, 9> kRatePrefixes{{
    {"", 1},
    {"k", 1e3},
    {"K", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"m", 1e6},  // "mbps" is never millibits
    {"g", 1e9},
    {"t", 1e12},
}};

constexpr std::array<Unit<std::uint64_t>, 8> kDurationUnits{{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // µs
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"min", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

constexpr std::array<Unit<std::uint64_t>, 6> kCountSuffixes{{
    {"", 1},
    {"k", 1'000},
    {"K", 1'000},
    {"M", 1'000'000},
    {"G", 1'000'000'000},
    {"T", 1'000'000'000'000},
}};

// ---- errors ------------------------------------------------------------------------------------

[[noreturn]] void fail(std::string_view text, std::string_view what, std::string_view reason) {
  throw UnitError(fmt::format("'{}' is not {}: {}", text, what, reason));
}

constexpr std::string_view kSizeExpected =
    "expected a number with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (e.g. 4KiB)";
constexpr std::string_view kBitRateExpected =
    "expected a number with a unit bps, kbps, Mbps, Gbps, Tbps or bit/s, kbit/s, Mbit/s, Gbit/s, "
    "Tbit/s (e.g. 100Gbps)";
constexpr std::string_view kPacketRateExpected = "expected a number with a unit pps, kpps, Mpps, Gpps (e.g. 25Mpps)";
constexpr std::string_view kRateExpected = "expected a bit rate (e.g. 100Gbps), a packet rate (e.g. 25Mpps) or max";
constexpr std::string_view kDurationExpected =
    "expected a number with a unit ns, us, ms, s, m, h (e.g. 30s, 1.5s, 1h30m)";
constexpr std::string_view kRatioExpected = "expected a number from 0 to 1 or a percentage (e.g. 1e-12, 0.5, 2.5%)";
constexpr std::string_view kNumberExpected = "expected a number (e.g. 1.5, -3, 1e-6)";
constexpr std::string_view kCountExpected =
    "expected a whole number, optionally with an exponent or a k, M, G, T suffix (e.g. 1000, 1e6, "
    "10M)";

bool starts_negative(std::string_view text) {
  return !text.empty() && text.front() == '-';
}

// ---- rates -------------------------------------------------------------------------------------

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Strips one of `suffixes` from `unit` and returns the prefix's factor, if the rest is a known
// metric prefix.
std::optional<double> rate_factor(std::string_view unit, std::initializer_list<std::string_view> suffixes) {
  for (const auto suffix : suffixes) {
    if (ends_with(unit, suffix)) {
      return find_unit(kRatePrefixes, unit.substr(0, unit.size() - suffix.size()));
    }
  }
  return std::nullopt;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool looks_like_bit_rate(std::string_view unit) {
  return ends_with(unit, "bps") || ends_with(unit, "bit/s");
}
bool looks_like_bytes_per_second(std::string_view unit) {
  return ends_with(unit, "Bps") || ends_with(unit, "B/s");
}

// ---- formatting --------------------------------------------------------------------------------

double round_to(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

// Three significant digits for a value below 1000: "1.23", "25.0", "100".
std::string three_significant(double value) {
  if (round_to(value, 2) < 10) return fmt::format("{:.2f}", value);
  if (round_to(value, 1) < 100) return fmt::format("{:.1f}", value);
  return fmt::format("{:.0f}", value);
}

// Scales `value` by powers of 1000 into units[i] and prints three significant digits; whole values
// in the base unit print as whole numbers ("512", not "512.00" or "5.00").
template <std::size_t N>
std::string format_metric(double value, const std::array<std::string_view, N>& units) {
  auto with_unit = [](std::string number, std::string_view unit) {
    return unit.empty() ? number : fmt::format("{} {}", number, unit);
  };
  if (!std::isfinite(value)) return with_unit(fmt::format("{}", value), units[0]);
  // fmt, not "-" + string: GCC 12's -Wrestrict misreads the inlined insert at -O3.
  if (value < 0) return fmt::format("-{}", format_metric(-value, units));
  std::size_t i = 0;
  double scaled = value;
  while (i + 1 < N && scaled >= 1000) {
    scaled /= 1000;
    ++i;
  }
  // 999.7 would print as "1000": say "1.00 k" instead.
  if (i + 1 < N && std::round(scaled) >= 1000) {
    scaled /= 1000;
    ++i;
  }
  if (i == 0 && scaled == std::floor(scaled)) {
    return with_unit(fmt::format("{:.0f}", scaled), units[0]);
  }
  return with_unit(three_significant(scaled), units[i]);
}

// `count` units of `unit_ns` with up to three decimals, truncated so it never rounds up into the
// next unit: 1'500'000'000 ns in seconds is "1.5".
std::string decimal_in(std::uint64_t count, std::uint64_t unit_ns) {
  const std::uint64_t whole = count / unit_ns;
  const std::uint64_t thousandths = (count % unit_ns) * 1000 / unit_ns;
  if (thousandths == 0) return fmt::format("{}", whole);
  std::string text = fmt::format("{}.{:03}", whole, thousandths);
  while (text.back() == '0') text.pop_back();
  return text;
}

}  // namespace

// ---- parsers -----------------------------------------------------------------------------------

std::uint64_t parse_size(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (starts_negative(trimmed)) fail(text, "a size", "sizes cannot be negative (e.g. 4KiB)");
  const auto [number, unit] = split_number(trimmed);
  const auto factor = find_unit(kSizeUnits, unit);
  if (number.empty() || !factor) fail(text, "a size", kSizeExpected);
  const auto result = to_whole(number, *factor);
  if (result.status == Whole::NotWhole) {
    fail(text, "a size", "it is not a whole number of bytes (e.g. 1.5KiB is 1536 bytes)");
  }
  if (result.status == Whole::TooLarge) fail(text, "a size", "it is too large (at most 16 EiB)");
  return result.value;
}

double parse_bit_rate(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (starts_negative(trimmed)) fail(text, "a bit rate", "rates cannot be negative (e.g. 100Gbps)");
  const auto [number, unit] = split_number(trimmed);
  if (!number.empty() && looks_like_bytes_per_second(unit)) {
    fail(text, "a bit rate", "rates are in bits per second, not bytes: use bps (e.g. 100Gbps)");
  }
  const auto factor = rate_factor(unit, {"bps", "bit/s"});
  if (number.empty() || !factor) fail(text, "a bit rate", kBitRateExpected);
  const double value = to_double(number) * *factor;
  if (!std::isfinite(value) || value > kMostBitRate) {
    fail(text, "a bit rate", fmt::format("it is too large (at most {})", format_bit_rate(kMostBitRate)));
  }
  return value;
}

double parse_packet_rate(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (starts_negative(trimmed)) {
    fail(text, "a packet rate", "rates cannot be negative (e.g. 25Mpps)");
  }
  const auto [number, unit] = split_number(trimmed);
  const auto factor = rate_factor(unit, {"pps"});
  if (number.empty() || !factor) fail(text, "a packet rate", kPacketRateExpected);
  const double value = to_double(number) * *factor;
  if (!std::isfinite(value) || value > kMostPacketRate) {
    fail(text, "a packet rate", fmt::format("it is too large (at most {})", format_packet_rate(kMostPacketRate)));
  }
  return value;
}

Rate parse_rate(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (equals_ignoring_case(trimmed, "max")) return {Rate::Kind::Max, 0};
  const auto unit = split_number(trimmed).unit;
  if (ends_with(unit, "pps")) return {Rate::Kind::PacketsPerSecond, parse_packet_rate(text)};
  if (looks_like_bit_rate(unit) || looks_like_bytes_per_second(unit)) {
    return {Rate::Kind::BitsPerSecond, parse_bit_rate(text)};
  }
  if (starts_negative(trimmed)) fail(text, "a rate", "rates cannot be negative (e.g. 100Gbps)");
  fail(text, "a rate", kRateExpected);
}

std::chrono::nanoseconds parse_duration(std::string_view text) {
  std::string_view rest = trim(text);
  if (starts_negative(rest)) fail(text, "a duration", "durations cannot be negative (e.g. 30s)");
  if (rest.empty()) fail(text, "a duration", kDurationExpected);
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t total = 0;
  while (!rest.empty()) {
    const std::size_t number_length = scan_number(rest);
    if (number_length == 0) fail(text, "a duration", kDurationExpected);
    const std::string_view number = rest.substr(0, number_length);
    rest = trim(rest.substr(number_length));
    // The unit runs up to the next number, so "1h30m" splits into "1h" and "30m".
    std::size_t unit_length = 0;
    while (unit_length < rest.size() && !is_digit(rest[unit_length]) && rest[unit_length] != '.' &&
           !is_space(rest[unit_length])) {
      ++unit_length;
    }
    const std::string_view unit = rest.substr(0, unit_length);
    rest = trim(rest.substr(unit_length));
    if (unit.empty()) {
      fail(text, "a duration", "it needs a unit, e.g. 30s (units: ns, us, ms, s, m, h)");
    }
    const auto factor = find_unit(kDurationUnits, unit);
    if (!factor) fail(text, "a duration", kDurationExpected);
    const auto part = to_whole(number, *factor);
    if (part.status == Whole::NotWhole) {
      fail(text, "a duration", "it is not a whole number of nanoseconds (e.g. 250ns)");
    }
    if (part.status == Whole::TooLarge || __builtin_add_overflow(total, part.value, &total) || total > kMax) {
      fail(text, "a duration", "it is too long (at most about 292 years)");
    }
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(total));
}

double parse_ratio(std::string_view text) {
  const std::string_view trimmed = trim(text);
  const bool negative = starts_negative(trimmed);
  const auto [number, unit] = split_number(negative ? trimmed.substr(1) : trimmed);
  if (number.empty() || !(unit.empty() || unit == "%")) fail(text, "a ratio", kRatioExpected);
  const double value = to_double(number) / (unit == "%" ? 100.0 : 1.0);
  if (negative || !(value <= 1.0)) {
    fail(text, "a ratio", "it must be between 0 and 1 (0% to 100%)");
  }
  return value;
}

double parse_number(std::string_view text) {
  std::string_view trimmed = trim(text);
  double sign = 1;
  if (!trimmed.empty() && (trimmed.front() == '-' || trimmed.front() == '+')) {
    sign = trimmed.front() == '-' ? -1 : 1;
    trimmed.remove_prefix(1);
  }
  const auto [number, unit] = split_number(trimmed);
  if (number.empty() || !unit.empty()) fail(text, "a number", kNumberExpected);
  const double value = sign * to_double(number);
  if (!std::isfinite(value)) fail(text, "a number", "it is too large");
  return value;
}

std::uint64_t parse_count(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (starts_negative(trimmed)) fail(text, "a count", "counts cannot be negative (e.g. 1000)");
  const auto [number, unit] = split_number(trimmed);
  const auto factor = find_unit(kCountSuffixes, unit);
  if (number.empty() || !factor) fail(text, "a count", kCountExpected);
  const auto result = to_whole(number, *factor);
  if (result.status == Whole::NotWhole) fail(text, "a count", "it is not a whole number (e.g. 1000)");
  if (result.status == Whole::TooLarge) {
    fail(text, "a count", "it is too large (at most 18446744073709551615)");
  }
  return result.value;
}

// ---- formatters --------------------------------------------------------------------------------

std::string format_size(std::uint64_t bytes) {
  static constexpr std::array<std::string_view, 7> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t i = 0;
  std::uint64_t unit = 1;
  while (i + 1 < kUnits.size() && bytes / unit >= 1024) {
    unit *= 1024;
    ++i;
  }
  if (bytes % unit == 0) return fmt::format("{} {}", bytes / unit, kUnits[i]);
  double scaled = static_cast<double>(bytes) / static_cast<double>(unit);
  // 1048575 bytes would print as "1024.00 KiB": say "1.00 MiB" instead.
  if (i + 1 < kUnits.size() && round_to(scaled, 2) >= 1024) {
    scaled /= 1024;
    ++i;
  }
  return fmt::format("{:.2f} {}", scaled, kUnits[i]);
}

std::string format_bit_rate(double bits_per_second) {
  static constexpr std::array<std::string_view, 5> kUnits{"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
  return format_metric(bits_per_second, kUnits);
}

std::string format_packet_rate(double packets_per_second) {
  static constexpr std::array<std::string_view, 4> kUnits{"pps", "kpps", "Mpps", "Gpps"};
  return format_metric(packets_per_second, kUnits);
}

std::string format_count(double count) {
  static constexpr std::array<std::string_view, 6> kUnits{"", "k", "M", "G", "T", "P"};
  return format_metric(count, kUnits);
}

std::string format_duration(std::chrono::nanoseconds duration) {
  const std::int64_t ns = duration.count();
  if (ns < 0) {
    // -INT64_MIN overflows; one nanosecond off at -292 years does not matter in a report.
    const std::int64_t magnitude =
        ns == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max() : -ns;
    return fmt::format("-{}", format_duration(std::chrono::nanoseconds(magnitude)));
  }
  const auto count = static_cast<std::uint64_t>(ns);
  constexpr std::uint64_t kUs = 1'000, kMs = 1'000'000, kS = 1'000'000'000;
  constexpr std::uint64_t kMin = 60 * kS, kHour = 60 * kMin;
  if (count == 0) return "0 s";
  if (count < kUs) return fmt::format("{} ns", count);
  if (count < kMs) return decimal_in(count, kUs) + " us";
  if (count < kS) return decimal_in(count, kMs) + " ms";
  if (count < kMin) return decimal_in(count, kS) + " s";
  if (count < kHour) return fmt::format("{} m {} s", count / kMin, count % kMin / kS);
  return fmt::format("{} h {} m", count / kHour, count % kHour / kMin);
}

std::string format_ratio(double ratio) {
  if (ratio == 0) return "0";
  return fmt::format("{:.2e}", ratio);
}

std::string format_percent(double share) {
  return fmt::format("{:.3g} %", 100 * share);
}

}  // namespace tusk::units
