// How much of a core checking received payloads takes, for the agent's own notices and for
// `plan --inventory` (issue 61): the same share and the same advice on both sides.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "common/rdma_limits.hpp"

namespace tusk {

// Checking that takes this share of its core or more is said.
inline constexpr double kCheckLoadSaid = 0.5;

// An inventory's check rates beyond this many message sizes are not read.
inline constexpr int kMaxCheckRates = 8;

// The share of `cores` cores that checking one payload in `check_every` of `bytes_per_s` takes,
// where one core checks a byte in `ns_per_byte`.
inline double check_share(double bytes_per_s, double ns_per_byte, std::uint32_t check_every, double cores = 1) {
  const double every = std::max<std::uint32_t>(1, check_every);
  return bytes_per_s / every * ns_per_byte / 1e9 / std::max(1.0, cores);
}

// The check_every that would take about a quarter of the core, where checking one payload in
// `every` takes `share` of it.
inline std::uint32_t advised_check_every(double share, std::uint32_t every) {
  const double now = std::max<std::uint32_t>(1, every);
  return static_cast<std::uint32_t>(std::min<double>(rdma_limits::kMaxCheckEvery, std::ceil(now * share / 0.25)));
}

// What a receiver may be asked to check each second, and whence that figure comes.
struct CheckDemand {
  double bytes_per_s = 0;  // 0: not known
  std::string whence;
};

// A receiver's port carries at most its line rate (`port_gbps`, 0 where not known); paced senders
// may ask less (`asked_bits_per_s` all together, 0 when unpaced, `asked_whence` saying whose):
// then what they ask.
inline CheckDemand check_demand(const std::string& port, double port_gbps, double asked_bits_per_s,
                                const std::string& asked_whence) {
  CheckDemand demand;
  if (port_gbps > 0) demand = {port_gbps * 1e9 / 8, fmt::format("{} at {:g} Gb/s", port, port_gbps)};
  if (const double asked = asked_bits_per_s / 8; asked > 0 && (demand.bytes_per_s == 0 || asked < demand.bytes_per_s)) {
    demand = {asked, asked_whence};
  }
  return demand;
}

// "3 senders at 25 Gb/s each": the whence of what `senders` ask at `bits_per_s_each`.
inline std::string senders_whence(int senders, double bits_per_s_each) {
  return fmt::format("{} sender{} at {:g} Gb/s each", senders, senders == 1 ? "" : "s", bits_per_s_each / 1e9);
}

}  // namespace tusk
