#include "agent/rdma/counters/qp_counters.hpp"

#include <fmt/format.h>
#include <linux/netlink.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include "agent/rdma/counters/rdma_counter_names.hpp"
#include "agent/rdma/counters/rdma_netlink.hpp"

namespace tusk::rdma {

std::string qp_counter_refusal(const std::string& device, int error) {
  switch (error) {
    case ENOMEM:
    case EOPNOTSUPP:
      return fmt::format(
          "{} keeps no counters per QP (its driver cannot bind one: {}); its transport counters are "
          "per port only",
          device, std::strerror(error));
    case EPERM:
    case EACCES:
      return fmt::format(
          "binding {}'s QPs to counters of their own needs CAP_NET_ADMIN; its transport counters are "
          "per port only",
          device);
    default:
      return fmt::format(
          "{}'s QPs could not be bound to counters of their own ({}); its transport counters are per "
          "port only",
          device, std::strerror(error));
  }
}

std::optional<std::string> software_device_refusal(const std::string& device, std::uint32_t vendor_id) {
  // The vendor ids rdma_rxe and siw report (their drivers' RXE_VENDOR_ID and SIW_VENDOR_ID).
  constexpr std::uint32_t kSoftRoce = 0xFFFFFF;
  constexpr std::uint32_t kSoftIwarp = 0x626d74;
  if (vendor_id != kSoftRoce && vendor_id != kSoftIwarp) return std::nullopt;
  return fmt::format(
      "{} is a software RDMA device ({}), which keeps no counters per QP; its transport counters are "
      "per port only",
      device, vendor_id == kSoftRoce ? "Soft-RoCE" : "siw");
}

QpCounterReader::QpCounterReader(std::string device, std::uint32_t port) : device_(std::move(device)), port_(port) {
  try {
    netlink_ = std::make_unique<nl::RdmaNetlink>();
  } catch (const std::exception& e) {
    why_not_ = fmt::format("{}: {}; its transport counters are per port only", device_, e.what());
    return;
  }
  std::array<std::byte, nl::kRequestBytes> request{};
  const int error = netlink_->transact(nl::put_device_dump(request, netlink_->next_seq()), [&](const nlmsghdr& m) {
    if (auto index = nl::device_index_in(m, device_)) device_index_ = index;
  });
  if (error != 0 || !device_index_) {
    why_not_ = fmt::format("{} is not found over RDMA netlink{}; its transport counters are per port only", device_,
                           error != 0 ? fmt::format(" ({})", std::strerror(error)) : "");
  }
}

QpCounterReader::~QpCounterReader() = default;

bool QpCounterReader::bind(std::uint32_t qpn) {
  if (!why_not_.empty()) return false;
  if (!bound_.insert(qpn).second) return true;
  std::array<std::byte, nl::kRequestBytes> request{};
  const int error =
      netlink_->transact(nl::put_qp_bind(request, netlink_->next_seq(), *device_index_, port_, qpn), [](auto&) {});
  // EINVAL and EBUSY: the QP has a counter already (auto mode): the dump shows it, if its own.
  if (error == 0 || error == EINVAL || error == EBUSY) return true;
  why_not_ = qp_counter_refusal(device_, error);
  return false;
}

void QpCounterReader::read() {
  if (!why_not_.empty() || bound_.empty()) return;
  std::vector<nl::QpCounter> counters;
  bool malformed = false;
  std::array<std::byte, nl::kRequestBytes> request{};
  const int error =
      netlink_->transact(nl::put_qp_counters_dump(request, netlink_->next_seq(), *device_index_, port_),
                         [&](const nlmsghdr& m) { malformed = !nl::parse_qp_counters(m, counters) || malformed; });
  if (error != 0 || malformed) return;  // the last values stand; the next second reads again
  for (const auto& counter : counters) {
    // A counter shared by several QPs (auto mode by type) is no QP's own.
    if (counter.qpns.size() != 1 || !bound_.contains(counter.qpns.front())) continue;
    CounterValues values;
    for (const auto& [name, value] : counter.values) {
      const auto canonical = counters::rdma::canonical_rdma_counter(name);
      values[std::string(canonical ? *canonical : std::string_view(name))] = value;
    }
    values_[counter.qpns.front()] = std::move(values);
  }
}

std::optional<std::string> QpCounterReader::take_refusal() {
  if (why_not_.empty() || refusal_taken_) return std::nullopt;
  refusal_taken_ = true;
  return why_not_;
}

std::uint64_t transport_retransmits(const CounterValues& values) {
  std::uint64_t retransmits = 0;
  for (auto name :
       {counters::rdma::kLocalAckTimeoutErr, counters::rdma::kPacketSeqErr, counters::rdma::kRoceAdpRetrans}) {
    if (const auto it = values.find(name); it != values.end()) retransmits += it->second;
  }
  return retransmits;
}

std::optional<CounterValues> QpCounterReader::values(std::uint32_t qpn) const {
  const auto found = values_.find(qpn);
  if (found == values_.end()) return std::nullopt;
  return found->second;
}

}  // namespace tusk::rdma
