#include "common/units.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace tusk::units {
namespace {

using namespace std::chrono_literals;

// The message a parser throws for `text`, or "" if it did not throw.
template <typename Parse>
std::string error_of(Parse parse, std::string_view text) {
  try {
    parse(text);
  } catch (const UnitError& error) {
    return error.what();
  }
  return "";
}

// ---- parse_size

TEST(ParseSize, PlainNumbersAreBytes) {
  EXPECT_EQ(parse_size("1500"), 1500u);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("1500B"), 1500u);
  EXPECT_EQ(parse_size("1500b"), 1500u);
}

TEST(ParseSize, IecUnitsArePowersOf1024) {
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("1MiB"), 1048576u);
  EXPECT_EQ(parse_size("2GiB"), 2147483648u);
  EXPECT_EQ(parse_size("1TiB"), 1099511627776u);
  EXPECT_EQ(parse_size("4kib"), 4096u);
  EXPECT_EQ(parse_size("1mib"), 1048576u);
}

TEST(ParseSize, SiUnitsArePowersOf1000) {
  EXPECT_EQ(parse_size("1KB"), 1000u);
  EXPECT_EQ(parse_size("1kB"), 1000u);
  EXPECT_EQ(parse_size("1kb"), 1000u);
  EXPECT_EQ(parse_size("1MB"), 1000000u);
  EXPECT_EQ(parse_size("1mb"), 1000000u);
  EXPECT_EQ(parse_size("3GB"), 3000000000u);
  EXPECT_EQ(parse_size("1TB"), 1000000000000u);
}

TEST(ParseSize, FractionsThatComeOutWholeAreExact) {
  EXPECT_EQ(parse_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_size("1.1KB"), 1100u);  // 1.1 * 1000 is not exactly 1100 in double
  EXPECT_EQ(parse_size("0.5MiB"), 524288u);
  EXPECT_EQ(parse_size("1e3"), 1000u);
  EXPECT_EQ(parse_size("1.5e3B"), 1500u);
}

TEST(ParseSize, WhitespaceIsAllowedAroundAndBeforeTheUnit) {
  EXPECT_EQ(parse_size("4 KiB"), 4096u);
  EXPECT_EQ(parse_size("  64\t"), 64u);
}

TEST(ParseSize, LargestSizeFitsAndOneMoreDoesNot) {
  EXPECT_EQ(parse_size("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(error_of(parse_size, "18446744073709551616"),
            "'18446744073709551616' is not a size: it is too large (at most 16 EiB)");
  EXPECT_EQ(error_of(parse_size, "20000000TiB"), "'20000000TiB' is not a size: it is too large (at most 16 EiB)");
}

TEST(ParseSize, RejectsWithAnExample) {
  const std::string expected =
      ": expected a number with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (e.g. 4KiB)";
  EXPECT_EQ(error_of(parse_size, "4KiX"), "'4KiX' is not a size" + expected);
  EXPECT_EQ(error_of(parse_size, ""), "'' is not a size" + expected);
  EXPECT_EQ(error_of(parse_size, "abc"), "'abc' is not a size" + expected);
  EXPECT_EQ(error_of(parse_size, "KiB"), "'KiB' is not a size" + expected);
  EXPECT_EQ(error_of(parse_size, "0x10"), "'0x10' is not a size" + expected);
  EXPECT_EQ(error_of(parse_size, "inf"), "'inf' is not a size" + expected);
  EXPECT_EQ(error_of(parse_size, "4 K iB"), "'4 K iB' is not a size" + expected);
  EXPECT_EQ(error_of(parse_size, "1.2.3"), "'1.2.3' is not a size" + expected);
}

TEST(ParseSize, RejectsNegativesAndFractionalBytes) {
  EXPECT_EQ(error_of(parse_size, "-4KiB"), "'-4KiB' is not a size: sizes cannot be negative (e.g. 4KiB)");
  EXPECT_EQ(error_of(parse_size, "1.3B"),
            "'1.3B' is not a size: it is not a whole number of bytes (e.g. 1.5KiB is 1536 bytes)");
  EXPECT_EQ(error_of(parse_size, "1.0001KiB"),
            "'1.0001KiB' is not a size: it is not a whole number of bytes (e.g. 1.5KiB is 1536 "
            "bytes)");
}

// ---- parse_bit_rate

TEST(ParseBitRate, AcceptsBpsAndBitPerSecondSpellings) {
  EXPECT_DOUBLE_EQ(parse_bit_rate("100Gbps"), 100e9);
  EXPECT_DOUBLE_EQ(parse_bit_rate("25Gbit/s"), 25e9);
  EXPECT_DOUBLE_EQ(parse_bit_rate("10Mbps"), 10e6);
  EXPECT_DOUBLE_EQ(parse_bit_rate("10 mbps"), 10e6);
  EXPECT_DOUBLE_EQ(parse_bit_rate("1.5Tbps"), 1.5e12);
  EXPECT_DOUBLE_EQ(parse_bit_rate("800bps"), 800);
  EXPECT_DOUBLE_EQ(parse_bit_rate("800 bit/s"), 800);
  EXPECT_DOUBLE_EQ(parse_bit_rate("1kbps"), 1e3);
  EXPECT_DOUBLE_EQ(parse_bit_rate("1Kbit/s"), 1e3);
  EXPECT_DOUBLE_EQ(parse_bit_rate("0bps"), 0);
}

TEST(ParseBitRate, NeedsABitsPerSecondUnit) {
  const std::string expected =
      ": expected a number with a unit bps, kbps, Mbps, Gbps, Tbps or bit/s, kbit/s, Mbit/s, "
      "Gbit/s, Tbit/s (e.g. 100Gbps)";
  EXPECT_EQ(error_of(parse_bit_rate, "100G"), "'100G' is not a bit rate" + expected);
  EXPECT_EQ(error_of(parse_bit_rate, "100"), "'100' is not a bit rate" + expected);
  EXPECT_EQ(error_of(parse_bit_rate, "Gbps"), "'Gbps' is not a bit rate" + expected);
  EXPECT_EQ(error_of(parse_bit_rate, "10Xbps"), "'10Xbps' is not a bit rate" + expected);
  EXPECT_EQ(error_of(parse_bit_rate, "1Mpps"), "'1Mpps' is not a bit rate" + expected);
}

TEST(ParseBitRate, RejectsBytesAndNegatives) {
  EXPECT_EQ(error_of(parse_bit_rate, "10GBps"),
            "'10GBps' is not a bit rate: rates are in bits per second, not bytes: use bps (e.g. "
            "100Gbps)");
  EXPECT_EQ(error_of(parse_bit_rate, "-1Gbps"), "'-1Gbps' is not a bit rate: rates cannot be negative (e.g. 100Gbps)");
  EXPECT_EQ(error_of(parse_bit_rate, "1e400Gbps"),
            "'1e400Gbps' is not a bit rate: it is too large (at most 100 Tbit/s)");
}

// Before: 1e30Gbps and 1e30pps validated, and `plan` printed a 28-digit Tbit/s.
TEST(ParseRate, RatesNoHostCanSendAreRefused) {
  EXPECT_DOUBLE_EQ(parse_bit_rate("100Tbps"), 1e14);
  EXPECT_EQ(error_of(parse_bit_rate, "1e30Gbps"), "'1e30Gbps' is not a bit rate: it is too large (at most 100 Tbit/s)");
  EXPECT_EQ(error_of(parse_bit_rate, "101Tbps"), "'101Tbps' is not a bit rate: it is too large (at most 100 Tbit/s)");
  EXPECT_DOUBLE_EQ(parse_packet_rate("200Gpps"), 2e11);
  EXPECT_EQ(error_of(parse_packet_rate, "1e30pps"),
            "'1e30pps' is not a packet rate: it is too large (at most 200 Gpps)");
  EXPECT_THROW(parse_rate("1e30Gbps"), std::invalid_argument);
}

// ---- parse_packet_rate

TEST(ParsePacketRate, AcceptsMetricPrefixes) {
  EXPECT_DOUBLE_EQ(parse_packet_rate("25Mpps"), 25e6);
  EXPECT_DOUBLE_EQ(parse_packet_rate("1kpps"), 1e3);
  EXPECT_DOUBLE_EQ(parse_packet_rate("1Kpps"), 1e3);
  EXPECT_DOUBLE_EQ(parse_packet_rate("500pps"), 500);
  EXPECT_DOUBLE_EQ(parse_packet_rate("1.5Gpps"), 1.5e9);
  EXPECT_DOUBLE_EQ(parse_packet_rate("20 kpps"), 20e3);
}

TEST(ParsePacketRate, RejectsOtherUnits) {
  const std::string expected = ": expected a number with a unit pps, kpps, Mpps, Gpps (e.g. 25Mpps)";
  EXPECT_EQ(error_of(parse_packet_rate, "25M"), "'25M' is not a packet rate" + expected);
  EXPECT_EQ(error_of(parse_packet_rate, "25Gbps"), "'25Gbps' is not a packet rate" + expected);
  EXPECT_EQ(error_of(parse_packet_rate, "25Xpps"), "'25Xpps' is not a packet rate" + expected);
  EXPECT_EQ(error_of(parse_packet_rate, "-5pps"),
            "'-5pps' is not a packet rate: rates cannot be negative (e.g. 25Mpps)");
}

// ---- parse_rate

TEST(ParseRate, TellsTheKindsApart) {
  const Rate bits = parse_rate("100Gbps");
  EXPECT_EQ(bits.kind, Rate::Kind::BitsPerSecond);
  EXPECT_DOUBLE_EQ(bits.value, 100e9);
  const Rate packets = parse_rate("1Mpps");
  EXPECT_EQ(packets.kind, Rate::Kind::PacketsPerSecond);
  EXPECT_DOUBLE_EQ(packets.value, 1e6);
  EXPECT_EQ(parse_rate("max").kind, Rate::Kind::Max);
  EXPECT_EQ(parse_rate(" MAX ").kind, Rate::Kind::Max);
  EXPECT_DOUBLE_EQ(parse_rate("max").value, 0);
}

TEST(ParseRate, RejectsWithTheKindThatWasMeant) {
  EXPECT_EQ(error_of(parse_rate, "100G"),
            "'100G' is not a rate: expected a bit rate (e.g. 100Gbps), a packet rate (e.g. "
            "25Mpps) or max");
  EXPECT_EQ(error_of(parse_rate, "maximum"),
            "'maximum' is not a rate: expected a bit rate (e.g. 100Gbps), a packet rate (e.g. "
            "25Mpps) or max");
  EXPECT_EQ(error_of(parse_rate, "-3"), "'-3' is not a rate: rates cannot be negative (e.g. 100Gbps)");
  EXPECT_EQ(error_of(parse_rate, "1Xpps"),
            "'1Xpps' is not a packet rate: expected a number with a unit pps, kpps, Mpps, Gpps "
            "(e.g. 25Mpps)");
  EXPECT_EQ(error_of(parse_rate, "1GBps"),
            "'1GBps' is not a bit rate: rates are in bits per second, not bytes: use bps (e.g. "
            "100Gbps)");
}

// ---- parse_duration

TEST(ParseDuration, AcceptsEveryUnit) {
  EXPECT_EQ(parse_duration("30s"), 30s);
  EXPECT_EQ(parse_duration("500ms"), 500ms);
  EXPECT_EQ(parse_duration("100us"), 100us);
  EXPECT_EQ(parse_duration("100\xC2\xB5s"), 100us);
  EXPECT_EQ(parse_duration("250ns"), 250ns);
  EXPECT_EQ(parse_duration("1m"), 1min);
  EXPECT_EQ(parse_duration("1min"), 1min);
  EXPECT_EQ(parse_duration("2h"), 2h);
  EXPECT_EQ(parse_duration("0s"), 0s);
}

TEST(ParseDuration, AcceptsFractionsAndChains) {
  EXPECT_EQ(parse_duration("1.5s"), 1500ms);
  EXPECT_EQ(parse_duration("0.1ms"), 100us);
  EXPECT_EQ(parse_duration("1h30m"), 90min);
  EXPECT_EQ(parse_duration("1m 30.5s"), 90500ms);
  EXPECT_EQ(parse_duration(" 30 s "), 30s);
}

TEST(ParseDuration, NeedsAUnit) {
  EXPECT_EQ(error_of(parse_duration, "30"),
            "'30' is not a duration: it needs a unit, e.g. 30s (units: ns, us, ms, s, m, h)");
  EXPECT_EQ(error_of(parse_duration, "1h30"),
            "'1h30' is not a duration: it needs a unit, e.g. 30s (units: ns, us, ms, s, m, h)");
}

TEST(ParseDuration, RejectsGarbageNegativesAndOverflow) {
  const std::string expected = ": expected a number with a unit ns, us, ms, s, m, h (e.g. 30s, 1.5s, 1h30m)";
  EXPECT_EQ(error_of(parse_duration, "30sec"), "'30sec' is not a duration" + expected);
  EXPECT_EQ(error_of(parse_duration, ""), "'' is not a duration" + expected);
  EXPECT_EQ(error_of(parse_duration, "s"), "'s' is not a duration" + expected);
  EXPECT_EQ(error_of(parse_duration, "1d"), "'1d' is not a duration" + expected);
  EXPECT_EQ(error_of(parse_duration, "-5s"), "'-5s' is not a duration: durations cannot be negative (e.g. 30s)");
  EXPECT_EQ(error_of(parse_duration, "0.5ns"),
            "'0.5ns' is not a duration: it is not a whole number of nanoseconds (e.g. 250ns)");
  EXPECT_EQ(error_of(parse_duration, "3000000h"),
            "'3000000h' is not a duration: it is too long (at most about 292 years)");
}

// ---- parse_ratio

TEST(ParseRatio, AcceptsFractionsAndPercentages) {
  EXPECT_DOUBLE_EQ(parse_ratio("1e-12"), 1e-12);
  EXPECT_DOUBLE_EQ(parse_ratio("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(parse_ratio("1%"), 0.01);
  EXPECT_DOUBLE_EQ(parse_ratio("2.5%"), 0.025);
  EXPECT_DOUBLE_EQ(parse_ratio("2.5 %"), 0.025);
  EXPECT_DOUBLE_EQ(parse_ratio("0"), 0);
  EXPECT_DOUBLE_EQ(parse_ratio("1"), 1);
  EXPECT_DOUBLE_EQ(parse_ratio("100%"), 1);
}

TEST(ParseRatio, RejectsOutsideZeroToOne) {
  const std::string range = ": it must be between 0 and 1 (0% to 100%)";
  EXPECT_EQ(error_of(parse_ratio, "1.5"), "'1.5' is not a ratio" + range);
  EXPECT_EQ(error_of(parse_ratio, "150%"), "'150%' is not a ratio" + range);
  EXPECT_EQ(error_of(parse_ratio, "-0.1"), "'-0.1' is not a ratio" + range);
}

TEST(ParseRatio, RejectsGarbage) {
  const std::string expected = ": expected a number from 0 to 1 or a percentage (e.g. 1e-12, 0.5, 2.5%)";
  EXPECT_EQ(error_of(parse_ratio, "half"), "'half' is not a ratio" + expected);
  EXPECT_EQ(error_of(parse_ratio, "5ppm"), "'5ppm' is not a ratio" + expected);
  EXPECT_EQ(error_of(parse_ratio, ""), "'' is not a ratio" + expected);
}

// ---- parse_number and parse_count

TEST(ParseNumber, AcceptsAnyFiniteNumber) {
  EXPECT_DOUBLE_EQ(parse_number("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(parse_number("-3"), -3);
  EXPECT_DOUBLE_EQ(parse_number("+2e3"), 2000);
  EXPECT_DOUBLE_EQ(parse_number(" 1e-6 "), 1e-6);
}

TEST(ParseNumber, RejectsUnitsAndInfinity) {
  const std::string expected = ": expected a number (e.g. 1.5, -3, 1e-6)";
  EXPECT_EQ(error_of(parse_number, "1.5s"), "'1.5s' is not a number" + expected);
  EXPECT_EQ(error_of(parse_number, "inf"), "'inf' is not a number" + expected);
  EXPECT_EQ(error_of(parse_number, "nan"), "'nan' is not a number" + expected);
  EXPECT_EQ(error_of(parse_number, "-"), "'-' is not a number" + expected);
  EXPECT_EQ(error_of(parse_number, "1e999"), "'1e999' is not a number: it is too large");
  EXPECT_DOUBLE_EQ(parse_number("1e-999"), 0);  // below double's range is 0, not an error
}

TEST(ParseCount, AcceptsWholeNumbersExponentsAndSuffixes) {
  EXPECT_EQ(parse_count("1000"), 1000u);
  EXPECT_EQ(parse_count("0"), 0u);
  EXPECT_EQ(parse_count("1e6"), 1000000u);
  EXPECT_EQ(parse_count("1k"), 1000u);
  EXPECT_EQ(parse_count("1K"), 1000u);
  EXPECT_EQ(parse_count("2.5M"), 2500000u);
  EXPECT_EQ(parse_count("1G"), 1000000000u);
  EXPECT_EQ(parse_count("1T"), 1000000000000u);
}

TEST(ParseCount, RejectsFractionsNegativesAndGarbage) {
  EXPECT_EQ(error_of(parse_count, "1.5"), "'1.5' is not a count: it is not a whole number (e.g. 1000)");
  EXPECT_EQ(error_of(parse_count, "-1"), "'-1' is not a count: counts cannot be negative (e.g. 1000)");
  EXPECT_EQ(error_of(parse_count, "1e30"), "'1e30' is not a count: it is too large (at most 18446744073709551615)");
  EXPECT_EQ(error_of(parse_count, "lots"),
            "'lots' is not a count: expected a whole number, optionally with an exponent or a k, "
            "M, G, T suffix (e.g. 1000, 1e6, 10M)");
  EXPECT_EQ(error_of(parse_count, "1m"),
            "'1m' is not a count: expected a whole number, optionally with an exponent or a k, M, "
            "G, T suffix (e.g. 1000, 1e6, 10M)");
}

// ---- formatters

TEST(FormatSize, WholeMultiplesHaveNoDecimals) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(1536), "1.50 KiB");
  EXPECT_EQ(format_size(1572864), "1.50 MiB");
  EXPECT_EQ(format_size(1048575), "1.00 MiB");
  EXPECT_EQ(format_size(2147483648), "2 GiB");
  EXPECT_EQ(format_size(std::numeric_limits<std::uint64_t>::max()), "16.00 EiB");
}

TEST(FormatBitRate, ThreeSignificantDigits) {
  EXPECT_EQ(format_bit_rate(100e9), "100 Gbit/s");
  EXPECT_EQ(format_bit_rate(1.234e6), "1.23 Mbit/s");
  EXPECT_EQ(format_bit_rate(25e9), "25.0 Gbit/s");
  EXPECT_EQ(format_bit_rate(800), "800 bit/s");
  EXPECT_EQ(format_bit_rate(0), "0 bit/s");
  EXPECT_EQ(format_bit_rate(999.7e6), "1.00 Gbit/s");
  EXPECT_EQ(format_bit_rate(99.96e6), "100 Mbit/s");
  EXPECT_EQ(format_bit_rate(2e15), "2000 Tbit/s");
}

TEST(FormatPacketRate, ThreeSignificantDigits) {
  EXPECT_EQ(format_packet_rate(25e6), "25.0 Mpps");
  EXPECT_EQ(format_packet_rate(20e3), "20.0 kpps");
  EXPECT_EQ(format_packet_rate(148.8e6), "149 Mpps");
  EXPECT_EQ(format_packet_rate(500), "500 pps");
  EXPECT_EQ(format_packet_rate(12.5), "12.5 pps");
}

TEST(FormatDuration, PicksAReadableUnit) {
  EXPECT_EQ(format_duration(0ns), "0 s");
  EXPECT_EQ(format_duration(250ns), "250 ns");
  EXPECT_EQ(format_duration(1500ns), "1.5 us");
  EXPECT_EQ(format_duration(500ms), "500 ms");
  EXPECT_EQ(format_duration(30s), "30 s");
  EXPECT_EQ(format_duration(1500ms), "1.5 s");
  EXPECT_EQ(format_duration(999999999ns), "999.999 ms");
  EXPECT_EQ(format_duration(90s), "1 m 30 s");
  EXPECT_EQ(format_duration(10min), "10 m 0 s");
  EXPECT_EQ(format_duration(2h), "2 h 0 m");
  EXPECT_EQ(format_duration(90min), "1 h 30 m");
  EXPECT_EQ(format_duration(-2s), "-2 s");
}

TEST(FormatCount, ThreeSignificantDigitsWithSuffix) {
  EXPECT_EQ(format_count(1.234e6), "1.23 M");
  EXPECT_EQ(format_count(512), "512");
  EXPECT_EQ(format_count(5), "5");
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(1.5), "1.50");
  EXPECT_EQ(format_count(15000), "15.0 k");
  EXPECT_EQ(format_count(-2000), "-2.00 k");
}

TEST(FormatRatio, ScientificNotation) {
  EXPECT_EQ(format_ratio(1e-12), "1.00e-12");
  EXPECT_EQ(format_ratio(0), "0");
  EXPECT_EQ(format_ratio(0.5), "5.00e-01");
  EXPECT_EQ(format_ratio(3.456e-9), "3.46e-09");
}

TEST(Units, ParsedValuesFormatBack) {
  EXPECT_EQ(format_size(parse_size("64KiB")), "64 KiB");
  EXPECT_EQ(format_bit_rate(parse_bit_rate("25Gbit/s")), "25.0 Gbit/s");
  EXPECT_EQ(format_duration(parse_duration("1h30m")), "1 h 30 m");
}

}  // namespace
}  // namespace tusk::units
