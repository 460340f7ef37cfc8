// Numbers as people type them in profiles and on the command line ("4KiB", "100Gbps", "30s"),
// and the same quantities formatted back for reports.
//
// Every parser accepts surrounding whitespace and whitespace between the number and its unit, and
// throws UnitError with a message that names what was expected and gives an example, so callers
// can show the message to the user unchanged.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tusk::units {

class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Bytes. Units B, KB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024), also in
// lower case ("kib"); no unit means bytes. Fractions are allowed when the result is a whole number
// of bytes: "1.5KiB" is 1536, "1.3B" is an error.
std::uint64_t parse_size(std::string_view text);

// The most a rate may be: 100 Tbit/s is more than any host sends (eight 800G ports are 6.4), and
// 200 Gpps more than 100 Tbit/s of the least Ethernet frames (149 Gpps with preamble and gap). A
// rate above them is a typo ("1e30Gbps"), refused rather than printed as a 28-digit Tbit/s.
inline constexpr double kMostBitRate = 1e14;
inline constexpr double kMostPacketRate = 2e11;

// Bits per second. Units bps, kbps, Mbps, Gbps, Tbps or bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s; the
// unit is required so that "100G" is never guessed at. "Bps" (bytes) is rejected. At most kMostBitRate.
double parse_bit_rate(std::string_view text);

// Packets per second. Units pps, kpps, Mpps, Gpps. At most kMostPacketRate.
double parse_packet_rate(std::string_view text);

struct Rate {
  enum class Kind { BitsPerSecond, PacketsPerSecond, Max };
  Kind kind = Kind::Max;
  double value = 0;  // bits or packets per second; 0 for Max
};

// A bit rate, a packet rate, or "max" (line rate).
Rate parse_rate(std::string_view text);

// Units ns, us, ms, s, m (or min), h; components may be chained: "1h30m", "1m 30.5s". The unit is
// required. The result must be a whole number of nanoseconds.
std::chrono::nanoseconds parse_duration(std::string_view text);

// A number in [0, 1], or a percentage: "1e-12", "0.5", "2.5%".
double parse_ratio(std::string_view text);

// Any finite number, sign allowed.
double parse_number(std::string_view text);

// A non-negative whole number; exponents ("1e6") and the suffixes k, M, G, T (powers of 1000) are
// allowed when the result is whole.
std::uint64_t parse_count(std::string_view text);

// "512 B", "4 KiB", "1.50 MiB": whole multiples print without decimals.
std::string format_size(std::uint64_t bytes);
// "100 Gbit/s", "1.23 Mbit/s": three significant digits.
std::string format_bit_rate(double bits_per_second);
// "25.0 Mpps": three significant digits.
std::string format_packet_rate(double packets_per_second);
// "250 ns", "500 ms", "1.5 s", "1 m 30 s", "2 h 0 m".
std::string format_duration(std::chrono::nanoseconds duration);
// "1.23 M", "512": three significant digits with a k, M, G, T suffix.
std::string format_count(double count);
// "1.00e-12", or "0".
std::string format_ratio(double ratio);
// A share in [0, 1] as a percentage of three digits: 0.0123 -> "1.23 %".
std::string format_percent(double share);

}  // namespace tusk::units
