// The Ethernet side of an RDMA port's NIC counters: the ethtool statistics of the netdev a RoCE port
// sends through, under canonical names (agent/rdma/counters/ethtool_counter_names.hpp), for the port's "nic"
// stream beside its sysfs counters (agent/rdma/counters/port_counters.hpp).
//
// Which netdev: sysfs says, under <root>/class/infiniband/<dev>/ports/<port>/gid_attrs/ndevs/<i>
// (the netdev of each GID entry), else <root>/class/infiniband/<dev>/device/net/. An InfiniBand port
// has no Ethernet counters; its IPoIB netdev is not read.
//
// A NetdevCounterReader is used by one thread at a time (the engine's sampling thread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/rdma/counters/ethtool_counter_names.hpp"
#include "agent/rdma/counters/ethtool_stats.hpp"
#include "agent/rdma/counters/port_counters.hpp"

namespace tusk::rdma {

struct PortNetdev {
  std::string name;      // empty when none was found
  std::string why_none;  // then: what was looked at, for a note
};

// The netdev of RDMA port `port` of `device`. Never throws: a missing or unreadable entry is a
// `why_none`.
PortNetdev find_port_netdev(const std::string& device, std::uint32_t port,
                            const std::filesystem::path& sysfs_root = "/sys");

class NetdevCounterReader {
 public:
  // Lists the netdev's statistics. Throws std::runtime_error (interface, ioctl, errno) as
  // EthtoolStatsReader does.
  explicit NetdevCounterReader(std::string netdev);

  // The statistics under their reported names (ethtool_counter_names.hpp), pause totals not yet
  // added (netdev_counter_delta adds them). Never throws: a failed read gives an empty snapshot, and
  // a note the first time it fails.
  rdma::PortCounterSnapshot read();

  // A note not handed out yet (the first failed read), once.
  std::optional<std::string> take_note();

  const std::string& netdev() const { return stats_.interface(); }

 private:
  EthtoolStatsReader stats_;
  std::vector<counters::ethtool::ReportedName> names_;
  std::optional<std::string> note_;
  bool failed_before_ = false;
};

// The port's ethtool counters over the test: counter_delta of the two snapshots, with the pause totals
// (rx_pause_frames, tx_pause_frames, pause_frames) made from the deltas.
rdma::PortCounterDelta netdev_counter_delta(const rdma::PortCounterSnapshot& earlier,
                                            const rdma::PortCounterSnapshot& later);

// Adds the netdev's counter values to a "nic" stream's; a name the stream already has (its sysfs
// counters come first: the RDMA side's out_of_buffer, the IB port's symbol_error) is kept as
// "ethtool:<name>".
void merge_netdev_counters(const rdma::CounterValues& netdev_values, rdma::CounterValues& stream_values);

// The reader for RDMA port `port` of `device`, or nullptr and `why` (a sentence naming the port)
// when it has no netdev or its statistics cannot be listed. Never throws.
std::unique_ptr<NetdevCounterReader> open_port_netdev_counters(const std::string& device, std::uint32_t port,
                                                               std::string& why,
                                                               const std::filesystem::path& sysfs_root = "/sys");

}  // namespace tusk::rdma
