// One DPDK Ethernet port with its packet mempool: configured with N RX and N TX queues (RSS over
// IP addresses and UDP ports where the driver hashes; net_af_packet spreads by its fanout hash),
// started on construction, stopped and closed on destruction (after the mempool's users are
// done: the port is destroyed before its mempool, which it owns and declares first).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

struct rte_mempool;

namespace tusk::dpdk {

// Frames handed to or taken from a port at a time: DPDK's usual burst, small enough to stay in cache.
inline constexpr std::uint16_t kBurst = 32;

struct MempoolDeleter {
  void operator()(rte_mempool* pool) const;
};
using Mempool = std::unique_ptr<rte_mempool, MempoolDeleter>;

struct PortOptions {
  std::uint16_t rx_descriptors = 1024;
  std::uint16_t tx_descriptors = 1024;
  unsigned mbufs = 8191;
  bool promiscuous = true;              // a BERT port receives test frames whatever their destination MAC
  std::uint32_t mbuf_data_room = 2048;  // bytes per mbuf after the headroom (frame_room.hpp)
  // 0 leaves the driver's MTU; otherwise set (jumbo frames on a NIC). net_af_packet ports take the
  // kernel interface's MTU instead: see kernel_mtu().
  std::uint32_t mtu = 0;
  std::uint16_t queues = 1;  // RX queues, and as many TX queues
};

struct LinkState {
  bool up = false;
  std::uint32_t speed_mbps = 0;
};

class Port {
 public:
  // `name` is the device name DPDK knows (a vdev name such as "net_af_packet0", or a PCI address).
  // Throws EngineError naming the port and the failing call.
  // `kernel_interface`: for net_af_packet ports, the interface it opened (iface=), so the kernel's
  // socket drops can be read; empty for other drivers.
  Port(const std::string& name, const PortOptions& options, const std::string& kernel_interface = "");
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  std::uint16_t id() const { return id_; }
  const std::string& name() const { return name_; }
  rte_mempool* mempool() const { return mempool_.get(); }
  std::uint16_t queues() const { return queues_; }
  // The largest frame (without FCS) one mbuf holds.
  std::uint32_t mbuf_room() const;
  // net_af_packet ports: the MTU of the kernel interface under the driver, which decides what the
  // kernel sends and takes; nullopt for other drivers or when it cannot be read.
  std::optional<std::uint32_t> kernel_mtu() const;
  const std::string& kernel_interface() const { return kernel_interface_; }
  std::array<std::uint8_t, 6> mac() const;
  // The driver's link state; for net_af_packet, the kernel interface's carrier.
  LinkState link() const;
  // Every extended statistic the driver exposes (CRC errors, missed, FEC ... where it has them).
  std::map<std::string, std::uint64_t> xstats() const;
  // Frames the host dropped before the application saw them: the driver's imissed and rx_nombuf,
  // plus, for net_af_packet ports (whose driver reports neither), the kernel's drops on this
  // process's packet sockets bound to the port's interface. Cumulative since the port opened.
  std::uint64_t host_drops();

 private:
  std::string name_;
  std::uint16_t id_ = 0;
  Mempool mempool_;
  std::uint16_t queues_ = 1;
  bool started_ = false;
  std::string kernel_interface_;         // af_packet ports: the interface under the driver
  std::uint64_t socket_drops_seen_ = 0;  // PACKET_STATISTICS resets on read: keep the sum
};

}  // namespace tusk::dpdk
