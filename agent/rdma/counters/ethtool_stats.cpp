#include "agent/rdma/counters/ethtool_stats.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace tusk::rdma {
namespace {

// The kernel writes as many entries as the driver has *now*, whatever size the caller's buffer is.
// The count is read just before each strings or stats call; this headroom keeps a driver that grew
// by a few entries in between from writing past the buffer (the result is then refused, not used).
constexpr std::uint32_t kHeadroomEntries = 64;

std::runtime_error ioctl_error(const std::string& interface, const char* ioctl_name, int error) {
  return std::runtime_error(
      fmt::format("ethtool {} on '{}': {} (errno {})", ioctl_name, interface, std::strerror(error), error));
}

// One SIOCETHTOOL call with `request` as the ethtool command block; the errno on failure, 0 on success.
int ethtool_ioctl(int fd, const std::string& interface, void* request) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, interface.data(), interface.size());  // size checked at construction
  ifr.ifr_data = static_cast<char*>(request);
  int rc;
  do {
    rc = ::ioctl(fd, SIOCETHTOOL, &ifr);
  } while (rc < 0 && errno == EINTR);
  return rc < 0 ? errno : 0;
}

std::uint32_t bounded_count(const std::string& interface, const char* ioctl_name, std::uint64_t count) {
  if (count > kMaxEthtoolStats) {
    throw std::runtime_error(fmt::format("ethtool {} on '{}': the driver reports {} statistics, more than the {} read",
                                         ioctl_name, interface, count, kMaxEthtoolStats));
  }
  return static_cast<std::uint32_t>(count);
}

// The ethtool command blocks end in a flexible array; they are built in a byte buffer of 8-byte
// words (the strictest alignment any of them needs) and read back with memcpy.
class CommandBuffer {
 public:
  explicit CommandBuffer(std::size_t bytes) : words_((bytes + 7) / 8 + 1, 0) {}
  void* data() { return words_.data(); }
  template <typename T>
  T header() const {
    T value;
    std::memcpy(&value, words_.data(), sizeof(T));
    return value;
  }
  template <typename T>
  void set_header(const T& value) {
    std::memcpy(words_.data(), &value, sizeof(T));
  }
  const unsigned char* bytes_at(std::size_t offset) const {
    return reinterpret_cast<const unsigned char*>(words_.data()) + offset;
  }

 private:
  std::vector<std::uint64_t> words_;
};

}  // namespace

EthtoolSocket::EthtoolSocket() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
  if (fd_ < 0) {
    const int error = errno;
    throw std::runtime_error(
        fmt::format("socket(AF_INET, SOCK_DGRAM) for ethtool ioctls: {} (errno {})", std::strerror(error), error));
  }
}

EthtoolSocket::~EthtoolSocket() {
  if (fd_ >= 0 && ::close(fd_) != 0) spdlog::warn("closing the ethtool socket: {}", std::strerror(errno));
}

EthtoolSocket::EthtoolSocket(EthtoolSocket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

EthtoolSocket& EthtoolSocket::operator=(EthtoolSocket&& other) noexcept {
  if (this != &other) {
    EthtoolSocket gone(std::move(*this));
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

EthtoolStatsReader::EthtoolStatsReader(std::string interface) : interface_(std::move(interface)) {
  if (interface_.empty() || interface_.size() >= IFNAMSIZ || interface_.find('/') != std::string::npos) {
    throw std::runtime_error(
        fmt::format("'{}' is not a network interface name (1 to {} characters, no '/')", interface_, IFNAMSIZ - 1));
  }
  const std::uint32_t count = stats_count();
  if (count == 0) return;  // the loopback, a bridge: no driver statistics, nothing to read

  CommandBuffer buffer(sizeof(ethtool_gstrings) + std::size_t{count + kHeadroomEntries} * ETH_GSTRING_LEN);
  ethtool_gstrings request{};
  request.cmd = ETHTOOL_GSTRINGS;
  request.string_set = ETH_SS_STATS;
  request.len = count;
  buffer.set_header(request);
  if (const int error = ethtool_ioctl(socket_.fd(), interface_, buffer.data())) {
    throw ioctl_error(interface_, "ETHTOOL_GSTRINGS", error);
  }
  const auto answer = buffer.header<ethtool_gstrings>();
  if (answer.len != count) {
    throw std::runtime_error(
        fmt::format("ethtool ETHTOOL_GSTRINGS on '{}': {} names for {} statistics (the driver "
                    "changed its list meanwhile)",
                    interface_, answer.len, count));
  }
  names_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto* name = reinterpret_cast<const char*>(
        buffer.bytes_at(offsetof(ethtool_gstrings, data) + std::size_t{i} * ETH_GSTRING_LEN));
    // A name that fills all ETH_GSTRING_LEN bytes has no terminating NUL.
    names_.emplace_back(name, strnlen(name, ETH_GSTRING_LEN));
  }
}

std::uint32_t EthtoolStatsReader::stats_count() {
  CommandBuffer buffer(sizeof(ethtool_sset_info) + sizeof(std::uint32_t));
  ethtool_sset_info request{};
  request.cmd = ETHTOOL_GSSET_INFO;
  request.sset_mask = std::uint64_t{1} << ETH_SS_STATS;
  buffer.set_header(request);
  const int error = ethtool_ioctl(socket_.fd(), interface_, buffer.data());
  if (error == 0) {
    // The kernel clears the bits of the sets the driver does not have and writes one count per bit left.
    if ((buffer.header<ethtool_sset_info>().sset_mask & (std::uint64_t{1} << ETH_SS_STATS)) == 0) return 0;
    std::uint32_t count = 0;
    std::memcpy(&count, buffer.bytes_at(offsetof(ethtool_sset_info, data)), sizeof(count));
    return bounded_count(interface_, "ETHTOOL_GSSET_INFO", count);
  }
  if (error != EOPNOTSUPP) throw ioctl_error(interface_, "ETHTOOL_GSSET_INFO", error);
  // Kernels before 2.6.33 have no GSSET_INFO; their drvinfo carries the count.
  ethtool_drvinfo drvinfo{};
  drvinfo.cmd = ETHTOOL_GDRVINFO;
  if (const int drvinfo_error = ethtool_ioctl(socket_.fd(), interface_, &drvinfo)) {
    throw ioctl_error(interface_, "ETHTOOL_GDRVINFO", drvinfo_error);
  }
  return bounded_count(interface_, "ETHTOOL_GDRVINFO", drvinfo.n_stats);
}

EthtoolValues EthtoolStatsReader::read() {
  EthtoolValues values;
  if (names_.empty()) return values;
  const auto count = static_cast<std::uint32_t>(names_.size());
  // Asked again each time: GSTATS writes the driver's current count, which must still be ours.
  if (const std::uint32_t now = stats_count(); now != count) {
    throw std::runtime_error(
        fmt::format("ethtool statistics of '{}' changed from {} to {} since they were listed", interface_, count, now));
  }
  CommandBuffer buffer(sizeof(ethtool_stats) + std::size_t{count + kHeadroomEntries} * sizeof(std::uint64_t));
  ethtool_stats request{};
  request.cmd = ETHTOOL_GSTATS;
  request.n_stats = count;
  buffer.set_header(request);
  if (const int error = ethtool_ioctl(socket_.fd(), interface_, buffer.data())) {
    throw ioctl_error(interface_, "ETHTOOL_GSTATS", error);
  }
  if (const auto answer = buffer.header<ethtool_stats>(); answer.n_stats != count) {
    throw std::runtime_error(
        fmt::format("ethtool ETHTOOL_GSTATS on '{}': {} values for {} names", interface_, answer.n_stats, count));
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint64_t value = 0;
    std::memcpy(&value, buffer.bytes_at(offsetof(ethtool_stats, data) + std::size_t{i} * sizeof(value)), sizeof(value));
    values.emplace(names_[i], value);  // a repeated name keeps its first value
  }
  return values;
}

}  // namespace tusk::rdma
