// Rates, and the one conversion between bytes, packets and bits per second: what a sender offers
// when it cycles a list of sizes (frames, messages) at a packet or a bit rate (the controller's
// checks and plans, the agent that holds a plan to its safety cap and paces by it), and the
// throughput of bytes counted over a time.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tusk {

// The sizes one stream cycles through, as two numbers: the mean turns a bit rate into a packet
// rate, the largest bounds a burst.
struct SizeMix {
  double mean_bytes = 0;
  std::uint64_t largest_bytes = 0;
  std::uint64_t smallest_bytes = 0;
};

// One size, every packet.
constexpr SizeMix single_size_mix(std::uint64_t bytes) {
  return {static_cast<double>(bytes), bytes, bytes};
}

// `sizes` (any range of byte counts) empty means {single}: a size list replaces the single size.
template <typename Sizes>
SizeMix size_mix(std::uint64_t single, const Sizes& sizes) {
  if (sizes.empty()) return single_size_mix(single);
  double total = 0;
  std::uint64_t largest = 0;
  std::uint64_t smallest = UINT64_MAX;
  for (const auto size : sizes) {
    total += static_cast<double>(size);
    largest = std::max<std::uint64_t>(largest, size);
    smallest = std::min<std::uint64_t>(smallest, size);
  }
  return {total / static_cast<double>(sizes.size()), largest, smallest};
}

// Bits per second of `per_second` units of `bytes` each.
constexpr double bit_rate_of(double per_second, double bytes) {
  return per_second * bytes * 8;
}

// Bits per second of `bytes` moved in `seconds`; 0 when no time passed.
constexpr double throughput_bps(double bytes, double seconds) {
  return seconds > 0 ? bit_rate_of(1 / seconds, bytes) : 0;
}

struct OfferedRate {
  double pps = 0;  // what the sender paces by; 0: as fast as it can
  double bps = 0;  // its mean bit rate over the mix
  // What a safety cap holds it to: a packet rate at the largest size the stream sends (a list of
  // small frames cannot hide a large one), a bit rate as given.
  double capped_bps = 0;
};

// A stream asked for `rate_pps` or `rate_bps` (the other 0; both 0 means as fast as it can).
inline OfferedRate offered_rate(double rate_pps, double rate_bps, const SizeMix& mix) {
  OfferedRate offered;
  if (rate_pps > 0) {
    offered.pps = rate_pps;
    offered.bps = bit_rate_of(rate_pps, mix.mean_bytes);
    offered.capped_bps = bit_rate_of(rate_pps, static_cast<double>(mix.largest_bytes));
  } else if (rate_bps > 0) {
    offered.pps = mix.mean_bytes > 0 ? rate_bps / bit_rate_of(1, mix.mean_bytes) : 0;
    offered.bps = rate_bps;
    offered.capped_bps = rate_bps;
  }
  return offered;
}

}  // namespace tusk
