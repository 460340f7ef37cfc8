#include "agent/rdma/counters/ethtool_counter_names.hpp"

#include <array>
#include <set>

namespace tusk::counters::ethtool {
namespace {

using enum CounterKind;

// Sources:
// - mlx5: the kernel's Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst
//   (physical port and priority port counters) and drivers/net/ethernet/mellanox/mlx5/core/en_stats.c,
//   where rx_pause_ctrl_phy is IEEE 802.3 aPAUSEMACCtrlFramesReceived and rx_discards_phy is RFC 2863
//   ifInDiscards. The per-priority pause counters are listed only for priorities with PFC on.
// - rx_crc_errors: the name e1000e, igb and ixgbe give the frames they dropped for a bad FCS.
// One entry a line reads as a table.
// clang-format off
constexpr std::array kTable = {
    // ---- mlx5, priority port counters (PFC).
    EthtoolCounter{"rx_prio#_pause", kRxPauseFramesPrio, kCongestion},
    EthtoolCounter{"tx_prio#_pause", kTxPauseFramesPrio, kCongestion},
    EthtoolCounter{"rx_prio#_pause_duration", kRxPauseDurationUsPrio, kCongestion},  // microseconds
    EthtoolCounter{"tx_prio#_pause_duration", kTxPauseDurationUsPrio, kCongestion},  // microseconds
    // ---- mlx5, physical port counters.
    EthtoolCounter{"rx_pause_ctrl_phy", kRxLinkPauseFrames, kCongestion},
    EthtoolCounter{"tx_pause_ctrl_phy", kTxLinkPauseFrames, kCongestion},
    EthtoolCounter{"rx_discards_phy", kRxDiscards, kError},           // no buffer in the port: the NIC was congested
    EthtoolCounter{"rx_out_of_buffer", kOutOfBuffer, kError},         // no receive WQE posted (the netdev's queues)
    EthtoolCounter{"rx_corrected_bits_phy", kRxFecCorrectedBits, kError},  // FEC corrected them: the link is noisy
    EthtoolCounter{"rx_bits_phy", kRxPhyBits, kTraffic},
    EthtoolCounter{"rx_pcs_symbol_err_phy", kSymbolError, kError},    // symbol errors FEC did not correct
    EthtoolCounter{"rx_crc_errors_phy", kRxCrcErrors, kError},
    EthtoolCounter{"rx_symbol_err_phy", kRxSymbolErrorPackets, kError},
    // ---- other drivers.
    EthtoolCounter{"rx_crc_errors", kRxCrcErrors, kError},
};
// clang-format on

// Totals add_pause_totals makes; not driver names, but canonical ones with a kind.
constexpr std::array kTotals = {
    EthtoolCounter{"", kRxPauseFrames, kCongestion},
    EthtoolCounter{"", kTxPauseFrames, kCongestion},
    EthtoolCounter{"", kPauseFrames, kCongestion},
};

// Whether `name` is `pattern` with '#' standing for one priority digit; that digit, or -1. A pattern
// without '#' matches only itself (priority 0 is then meaningless and not returned).
int match(std::string_view pattern, std::string_view name, bool& matched) {
  matched = false;
  const auto hash = pattern.find('#');
  if (hash == std::string_view::npos) {
    matched = pattern == name;
    return -1;
  }
  if (name.size() != pattern.size()) return -1;
  if (name.substr(0, hash) != pattern.substr(0, hash) || name.substr(hash + 1) != pattern.substr(hash + 1)) return -1;
  const char digit = name[hash];
  if (digit < '0' || digit >= static_cast<char>('0' + kPriorities)) return -1;
  matched = true;
  return digit - '0';
}

std::string with_priority(std::string_view pattern, int priority) {
  std::string out(pattern);
  if (const auto hash = out.find('#'); hash != std::string::npos) out[hash] = static_cast<char>('0' + priority);
  return out;
}

// The names other streams count under (common/counter_names.hpp) that a driver might also use: a
// raw "tx_bytes" of the netdev's own would otherwise add to the run's live rate and "lost_frames"
// to its errors.
constexpr std::array kStreamNames = {
    kTxBytes,         kRxBytes,           kTxFrames,         kRxFrames,       kBitErrors,      kBitsCompared,
    kErroredFrames,   kLostFrames,        kGapLostFrames,    kTailLostFrames, kLinkFlaps,      kCompletionErrors,
    kIntegrityErrors, kRetransmits,       kHostDrops,        kStalls,         kDuplicates,     kReordered,
    kErrorBursts,     kTrafficGaps,       kBadHeaders,       kStepsDone,      kStepTimeMeanNs, kStepTimeMaxNs,
    kAgentsLost,      kLatencyP99Ns,      kLatencyMinNs,     kLatencyP50Ns,   kLatencyP999Ns,  kLatencyMaxNs,
    kLatencyMeanNs,   kNegativeLatencies, kVlanTaggedFrames, kVlanMismatches, kPcpChanges,     kCeMarked,
    kDscpRewrites,
};

bool is_canonical(std::string_view name) {
  if (ethtool_counter_kind(name)) return true;
  for (const auto stream_name : kStreamNames) {
    if (stream_name == name) return true;
  }
  return rdma::canonical_rdma_counter(name).has_value() || rdma::rdma_counter_kind(name).has_value();
}

// The sum of the values of `pattern`'s priorities present in `values`, or nullopt when none is.
std::optional<std::uint64_t> per_priority_sum(const Values& values, std::string_view pattern) {
  std::optional<std::uint64_t> sum;
  for (unsigned priority = 0; priority < kPriorities; ++priority) {
    if (auto it = values.find(with_priority(pattern, static_cast<int>(priority))); it != values.end()) {
      sum = sum.value_or(0) + it->second;
    }
  }
  return sum;
}

std::optional<std::uint64_t> value_of(const Values& values, std::string_view name) {
  if (auto it = values.find(name); it != values.end()) return it->second;
  return std::nullopt;
}

}  // namespace

std::span<const EthtoolCounter> ethtool_counter_table() {
  return kTable;
}

std::optional<MappedCounter> map_ethtool_counter(std::string_view driver_name) {
  for (const auto& entry : kTable) {
    bool matched = false;
    const int priority = match(entry.driver_name, driver_name, matched);
    if (matched) return MappedCounter{with_priority(entry.canonical, priority), entry.kind};
  }
  return std::nullopt;
}

std::optional<CounterKind> ethtool_counter_kind(std::string_view canonical_name) {
  for (const std::span<const EthtoolCounter> table :
       {std::span<const EthtoolCounter>(kTable), std::span<const EthtoolCounter>(kTotals)}) {
    for (const auto& entry : table) {
      bool matched = false;
      match(entry.canonical, canonical_name, matched);
      if (matched) return entry.kind;
    }
  }
  return std::nullopt;
}

std::vector<ReportedName> reported_names(std::span<const std::string> driver_names) {
  std::vector<ReportedName> out;
  std::set<std::string, std::less<>> seen_driver;
  std::set<std::string, std::less<>> taken;
  for (const auto& driver_name : driver_names) {
    if (!seen_driver.insert(driver_name).second) continue;
    std::string name;
    if (auto mapped = map_ethtool_counter(driver_name)) {
      name = std::move(mapped->canonical);
    } else {
      name = is_canonical(driver_name) ? "ethtool:" + driver_name : driver_name;
    }
    if (taken.contains(name)) name = "ethtool:" + driver_name;
    if (!taken.insert(name).second) continue;  // "ethtool:<raw>" already taken: the raw name was listed once
    out.push_back({driver_name, std::move(name)});
  }
  return out;
}

Values reported_values(const std::vector<ReportedName>& names, const Values& raw) {
  Values out;
  for (const auto& entry : names) {
    if (auto it = raw.find(entry.driver_name); it != raw.end()) out.emplace(entry.name, it->second);
  }
  return out;
}

void add_pause_totals(Values& values) {
  std::optional<std::uint64_t> both;
  for (const auto& [per_priority, link, total] : {std::array{kRxPauseFramesPrio, kRxLinkPauseFrames, kRxPauseFrames},
                                                  std::array{kTxPauseFramesPrio, kTxLinkPauseFrames, kTxPauseFrames}}) {
    auto sum = per_priority_sum(values, per_priority);
    if (!sum) sum = value_of(values, link);
    if (!sum) continue;
    values.insert_or_assign(std::string(total), *sum);
    both = both.value_or(0) + *sum;
  }
  if (both) values.insert_or_assign(std::string(kPauseFrames), *both);
}

}  // namespace tusk::counters::ethtool
