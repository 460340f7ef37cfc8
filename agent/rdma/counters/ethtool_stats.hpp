// A netdev's driver statistics (what `ethtool -S <if>` prints), read straight from the kernel with the
// SIOCETHTOOL ioctl: ETHTOOL_GSSET_INFO (or, on kernels without it, ETHTOOL_GDRVINFO) for how many
// ETH_SS_STATS there are, ETHTOOL_GSTRINGS for their names, ETHTOOL_GSTATS for their values.
//
// The names are listed once, at construction: a driver fixes its list when the netdev comes up. A
// driver that changes the count later (a channel count change, a firmware reload) makes read() throw
// rather than pair values with the wrong names.
//
// The reader owns one AF_INET datagram socket, in the network namespace of the thread that made it.
// One thread at a time may use a reader.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tusk::rdma {

using EthtoolValues = std::map<std::string, std::uint64_t, std::less<>>;

// The most statistics a netdev may report. mlx5 with many channels reports a few thousand; anything
// past this is taken for a corrupt answer, not allocated.
inline constexpr std::uint32_t kMaxEthtoolStats = 65536;

// The socket the ioctls go through: move-only, closed once.
class EthtoolSocket {
 public:
  EthtoolSocket();  // throws std::runtime_error with errno when no socket can be had
  ~EthtoolSocket();
  EthtoolSocket(EthtoolSocket&& other) noexcept;
  EthtoolSocket& operator=(EthtoolSocket&& other) noexcept;
  EthtoolSocket(const EthtoolSocket&) = delete;
  EthtoolSocket& operator=(const EthtoolSocket&) = delete;

  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

class EthtoolStatsReader {
 public:
  // Lists the statistics' names. Throws std::runtime_error naming the interface, the ioctl and errno
  // text when the interface does not exist or the driver refuses (e.g. "ethtool ETHTOOL_GSSET_INFO on
  // 'nosuch0': No such device (errno 19)"), or when the driver reports more than kMaxEthtoolStats.
  // A netdev without statistics (the loopback) is not an error: it reads as an empty map.
  explicit EthtoolStatsReader(std::string interface);

  // Every statistic, by the driver's name. Throws std::runtime_error (interface, ioctl, errno) when the
  // ioctl fails or the driver's count changed since construction. Where a driver lists one name twice
  // (some do, per queue), the first value is kept.
  EthtoolValues read();

  const std::string& interface() const { return interface_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::uint32_t stats_count();  // the driver's current count of ETH_SS_STATS, bounded

  std::string interface_;
  EthtoolSocket socket_;
  std::vector<std::string> names_;
};

}  // namespace tusk::rdma
