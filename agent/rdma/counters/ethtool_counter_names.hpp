// The one table that turns Ethernet drivers' ethtool statistic names (`ethtool -S <netdev>`) into
// Tusk's canonical NIC counter names, as agent/rdma/counters/rdma_counter_names does for the RDMA sysfs
// counters: the pause frames, discards and FEC counters a switch qualification reads, whatever the
// driver calls them.
//
// Names that are judged one by one live in common/counter_names.hpp; a counter that the RDMA table
// already names (out_of_buffer, symbol_error) keeps that name.
//
// Pause frames, the scheme:
// - PFC, per priority N (0..7): rx_pause_frames_prioN, tx_pause_frames_prioN, and the time the port
//   was paused, rx_pause_duration_us_prioN, tx_pause_duration_us_prioN (microseconds, as mlx5 counts).
// - Link-level (802.3x) PAUSE frames: rx_link_pause_frames, tx_link_pause_frames.
// - rx_pause_frames / tx_pause_frames: the sum of the per-priority counts when the port lists any
//   (mlx5 lists them only for priorities with PFC on), else the link-level count. Never both, so a
//   frame counted by both groups is never counted twice.
// - pause_frames: rx_pause_frames + tx_pause_frames, what max_pause_frames judges.
// add_pause_totals() makes the three totals from a port's counters over the test.
//
// A name not in the table is kept under its raw driver name, has no kind, and is reported, never
// judged. A raw name that would read as a canonical one or as another stream's counter (bnxt's own
// rx_pause_frames, the netdev's tx_bytes, which would add to a run's live rate) is kept as
// "ethtool:<name>", so that it cannot be judged as something it may not be.
//
// Everything here is constant data or a function of its arguments; safe from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/rdma/counters/rdma_counter_names.hpp"
#include "common/counter_names.hpp"

namespace tusk::counters::ethtool {

using rdma::CounterKind;

// ---- canonical names ----------------------------------------------------------------------------
// '#' stands for the priority, 0..7, in per-priority names.
inline constexpr std::string_view kRxPauseFramesPrio = "rx_pause_frames_prio#";
inline constexpr std::string_view kTxPauseFramesPrio = "tx_pause_frames_prio#";
inline constexpr std::string_view kRxPauseDurationUsPrio = "rx_pause_duration_us_prio#";
inline constexpr std::string_view kTxPauseDurationUsPrio = "tx_pause_duration_us_prio#";
inline constexpr std::string_view kRxLinkPauseFrames = "rx_link_pause_frames";
inline constexpr std::string_view kTxLinkPauseFrames = "tx_link_pause_frames";
inline constexpr std::string_view kRxPauseFrames = "rx_pause_frames";  // totals: see above
inline constexpr std::string_view kTxPauseFrames = "tx_pause_frames";
using counters::kPauseFrames;         // judged one by one: common/counter_names.hpp
using counters::kRxDiscards;          // judged one by one: common/counter_names.hpp
using counters::kRxFecCorrectedBits;  // judged as pre_fec_ber: common/counter_names.hpp
using counters::kRxPhyBits;           // the denominator of pre_fec_ber
using counters::kSymbolError;         // judged one by one (max_symbol_errors)
using rdma::kOutOfBuffer;
inline constexpr std::string_view kRxCrcErrors = "rx_crc_errors";                     // frames dropped: bad FCS
inline constexpr std::string_view kRxSymbolErrorPackets = "rx_symbol_error_packets";  // dropped: coding errors

inline constexpr unsigned kPriorities = 8;

// ---- the table ----------------------------------------------------------------------------------

struct EthtoolCounter {
  std::string_view driver_name;  // as ETHTOOL_GSTRINGS gives it; '#' for a priority 0..7
  std::string_view canonical;    // '#' where driver_name has one
  CounterKind kind;
};

// Every entry, grouped by driver. A driver name appears once.
std::span<const EthtoolCounter> ethtool_counter_table();

struct MappedCounter {
  std::string canonical;  // with the priority in place of '#'
  CounterKind kind;
};

// The canonical name and kind of an ethtool statistic name; nullopt when unmapped. Linear search:
// meant for set-up (the names are listed once), not for a per-sample loop.
std::optional<MappedCounter> map_ethtool_counter(std::string_view driver_name);

// The kind of a canonical name this table (or add_pause_totals) makes; nullopt for raw names.
std::optional<CounterKind> ethtool_counter_kind(std::string_view canonical_name);

using Values = std::map<std::string, std::uint64_t, std::less<>>;

struct ReportedName {
  std::string driver_name;
  std::string name;  // canonical, raw, or "ethtool:<raw>"
};

// The name each of a driver's statistics is reported under, given its names in the driver's order
// (ETHTOOL_GSTRINGS): mapped names renamed, unmapped ones kept raw, or as "ethtool:<raw>" where the
// raw name is a canonical one. Where two statistics map to one canonical name (a driver with both
// rx_crc_errors and rx_crc_errors_phy) the first in the driver's order takes it and the other is
// kept as "ethtool:<raw>". A name the driver lists twice is listed once.
std::vector<ReportedName> reported_names(std::span<const std::string> driver_names);

// `raw` (driver name → value) under the names `names` gives; statistics missing from `raw` are left out.
Values reported_values(const std::vector<ReportedName>& names, const Values& raw);

// Adds rx_pause_frames, tx_pause_frames and pause_frames (see the scheme above) to a port's counter
// values, counts or deltas. Adds nothing for a direction with neither per-priority nor link-level
// counts; pause_frames is there when either direction is.
void add_pause_totals(Values& values);

}  // namespace tusk::counters::ethtool
