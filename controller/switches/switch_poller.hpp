// Reads many switches at once: a few threads, each with its own SNMP sessions, so a fabric of
// hundreds of switches is read in about (switches / threads) × one switch's time, and switches
// that never answer cost their deadline once, in parallel, never more.
#pragma once

#include <cstddef>
#include <vector>

#include "controller/switches/switch_reader.hpp"

namespace tusk {

inline constexpr std::size_t kSwitchReadThreads = 16;

// One reading per query, in the queries' order.
std::vector<SwitchReading> read_switches(const std::vector<SwitchQuery>& queries, const SwitchReadLimits& limits = {},
                                         std::size_t threads = kSwitchReadThreads);

}  // namespace tusk
