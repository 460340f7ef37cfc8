#include "agent/dpdk/port.hpp"

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <dirent.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "agent/engine.hpp"

namespace tusk::dpdk {

void MempoolDeleter::operator()(rte_mempool* pool) const {
  rte_mempool_free(pool);
}

namespace {

void check(int rc, const std::string& port, const char* call) {
  if (rc < 0) throw EngineError(fmt::format("DPDK port {}: {} failed: {}", port, call, rte_strerror(-rc)));
}

}  // namespace

Port::Port(const std::string& name, const PortOptions& options, const std::string& kernel_interface)
    : name_(name), queues_(std::max<std::uint16_t>(1, options.queues)), kernel_interface_(kernel_interface) {
  check(rte_eth_dev_get_port_by_name(name.c_str(), &id_), name, "rte_eth_dev_get_port_by_name");
  const int socket = rte_eth_dev_socket_id(id_);
  rte_eth_dev_info info{};
  check(rte_eth_dev_info_get(id_, &info), name, "rte_eth_dev_info_get");
  if (queues_ > info.max_rx_queues || queues_ > info.max_tx_queues) {
    throw EngineError(
        fmt::format("DPDK port {}: {} queues asked (--dpdk-queues), and its driver {} offers {} RX and {} "
                    "TX queues",
                    name, queues_, info.driver_name ? info.driver_name : "?", info.max_rx_queues, info.max_tx_queues));
  }
  // Every queue's descriptors hold mbufs, and each thread's mempool cache more: a pool sized for
  // one queue pair would run dry with several.
  const unsigned mbufs = std::max<unsigned>(
      options.mbufs, queues_ * (unsigned{options.rx_descriptors} + options.tx_descriptors + 2 * 256) + 4096);
  mempool_.reset(rte_pktmbuf_pool_create(fmt::format("tusk_{}", id_).c_str(), mbufs, 256, 0,
                                         static_cast<std::uint16_t>(options.mbuf_data_room + RTE_PKTMBUF_HEADROOM),
                                         socket < 0 ? SOCKET_ID_ANY : socket));
  if (!mempool_) {
    throw EngineError(fmt::format("DPDK port {}: rte_pktmbuf_pool_create({} mbufs) failed: {}", name, mbufs,
                                  rte_strerror(rte_errno)));
  }
  rte_eth_conf config{};
  // RSS on addresses and UDP ports puts each flow (its own UDP source port) on one queue. A driver
  // that cannot hash (net_af_packet: the kernel's fanout hash spreads its queues) is left alone.
  if (queues_ > 1) {
    const std::uint64_t hash = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
    if (hash != 0) {
      config.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
      config.rx_adv_conf.rss_conf.rss_hf = hash;
    }
  }
  check(rte_eth_dev_configure(id_, queues_, queues_, &config), name, "rte_eth_dev_configure");
  if (options.mtu != 0) {
    if (const int rc = rte_eth_dev_set_mtu(id_, static_cast<std::uint16_t>(options.mtu)); rc < 0) {
      throw EngineError(fmt::format("DPDK port {}: rte_eth_dev_set_mtu({}) for jumbo frames failed: {}", name,
                                    options.mtu, rte_strerror(-rc)));
    }
  }
  std::uint16_t rx = options.rx_descriptors, tx = options.tx_descriptors;
  check(rte_eth_dev_adjust_nb_rx_tx_desc(id_, &rx, &tx), name, "rte_eth_dev_adjust_nb_rx_tx_desc");
  for (std::uint16_t queue = 0; queue < queues_; ++queue) {
    check(rte_eth_rx_queue_setup(id_, queue, rx, socket < 0 ? SOCKET_ID_ANY : socket, nullptr, mempool_.get()), name,
          fmt::format("rte_eth_rx_queue_setup(queue {})", queue).c_str());
    check(rte_eth_tx_queue_setup(id_, queue, tx, socket < 0 ? SOCKET_ID_ANY : socket, nullptr), name,
          fmt::format("rte_eth_tx_queue_setup(queue {})", queue).c_str());
  }
  check(rte_eth_dev_start(id_), name, "rte_eth_dev_start");
  started_ = true;
  if (options.promiscuous) check(rte_eth_promiscuous_enable(id_), name, "rte_eth_promiscuous_enable");
}

Port::~Port() {
  if (started_) {
    if (int rc = rte_eth_dev_stop(id_); rc < 0) spdlog::warn("DPDK port {}: stop failed: {}", name_, rte_strerror(-rc));
  }
  if (int rc = rte_eth_dev_close(id_); rc < 0) spdlog::warn("DPDK port {}: close failed: {}", name_, rte_strerror(-rc));
}

std::uint32_t Port::mbuf_room() const {
  return rte_pktmbuf_data_room_size(mempool_.get()) - RTE_PKTMBUF_HEADROOM;
}

std::optional<std::uint32_t> Port::kernel_mtu() const {
  if (kernel_interface_.empty()) return std::nullopt;
  std::ifstream file("/sys/class/net/" + kernel_interface_ + "/mtu");
  std::uint32_t mtu = 0;
  if (!(file >> mtu)) return std::nullopt;
  return mtu;
}

std::array<std::uint8_t, 6> Port::mac() const {
  rte_ether_addr address{};
  std::array<std::uint8_t, 6> out{};
  if (rte_eth_macaddr_get(id_, &address) == 0) std::copy(address.addr_bytes, address.addr_bytes + 6, out.begin());
  return out;
}

LinkState Port::link() const {
  rte_eth_link link{};
  LinkState state;
  if (rte_eth_link_get_nowait(id_, &link) == 0) {
    state.up = link.link_status == RTE_ETH_LINK_UP;
    state.speed_mbps = link.link_speed;
  }
  // DPDK 22.11's af_packet PMD calls its link up once started, whatever the cable does (later
  // versions read the interface's IFF_RUNNING); the kernel's carrier is the link. An interface
  // that is down has no carrier to read: that is down too.
  if (!kernel_interface_.empty()) {
    std::ifstream carrier("/sys/class/net/" + kernel_interface_ + "/carrier");
    int value = 0;
    state.up = static_cast<bool>(carrier >> value) && value == 1;
  }
  return state;
}

std::map<std::string, std::uint64_t> Port::xstats() const {
  std::map<std::string, std::uint64_t> out;
  const int count = rte_eth_xstats_get_names(id_, nullptr, 0);
  if (count <= 0) return out;
  std::vector<rte_eth_xstat_name> names(static_cast<std::size_t>(count));
  std::vector<rte_eth_xstat> values(static_cast<std::size_t>(count));
  if (rte_eth_xstats_get_names(id_, names.data(), count) != count ||
      rte_eth_xstats_get(id_, values.data(), count) != count) {
    return out;
  }
  for (const auto& value : values) out[names[value.id].name] = value.value;
  return out;
}

namespace {

// The af_packet driver keeps its sockets to itself; find this process's packet sockets bound to
// `ifindex` through /proc/self/fd and read (and so reset) their kernel drop counters.
std::uint64_t read_packet_socket_drops(unsigned ifindex) {
  std::uint64_t drops = 0;
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return 0;
  while (dirent* entry = readdir(fds)) {
    const int fd = std::atoi(entry->d_name);
    if (fd <= 2 || fd == dirfd(fds)) continue;
    sockaddr_ll address{};
    socklen_t length = sizeof(address);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 || address.sll_family != AF_PACKET ||
        static_cast<unsigned>(address.sll_ifindex) != ifindex) {
      continue;
    }
    tpacket_stats statistics{};
    socklen_t size = sizeof(statistics);
    if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &statistics, &size) == 0) drops += statistics.tp_drops;
  }
  closedir(fds);
  return drops;
}

}  // namespace

std::uint64_t Port::host_drops() {
  rte_eth_stats stats{};
  std::uint64_t drops = 0;
  if (rte_eth_stats_get(id_, &stats) == 0) drops = stats.imissed + stats.rx_nombuf;
  if (!kernel_interface_.empty()) {
    if (const unsigned ifindex = if_nametoindex(kernel_interface_.c_str()); ifindex != 0) {
      socket_drops_seen_ += read_packet_socket_drops(ifindex);
    }
  }
  return drops + socket_drops_seen_;
}

}  // namespace tusk::dpdk
