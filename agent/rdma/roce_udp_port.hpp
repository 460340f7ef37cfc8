// The UDP source port a RoCEv2 QP's packets carry, which is what ECMP hashes onto a path: Linux
// works it out from the flow label in the QP's address vector, or, when that is 0, from the two
// QP numbers (rdma_get_udp_sport in include/rdma/ib_verbs.h, used by mlx5 and, since 5.18, rxe).
// Both ends of a connection get the same port: the QP-number product is symmetric, and the
// passive side takes the active side's flow label from its connect request.
#pragma once

#include <cstdint>

namespace tusk::rdma {

inline constexpr std::uint32_t kFlowLabelMask = 0xFFFFF;
inline constexpr std::uint16_t kRoceUdpPort = 4791;
inline constexpr std::uint16_t kRoceSourcePortMin = 0xC000;

constexpr std::uint32_t flow_label_of_qps(std::uint32_t local_qpn, std::uint32_t remote_qpn) {
  std::uint64_t v = std::uint64_t{local_qpn} * remote_qpn;
  v ^= v >> 20;
  v ^= v >> 40;
  return static_cast<std::uint32_t>(v & kFlowLabelMask);
}

constexpr std::uint16_t udp_source_port_of_flow_label(std::uint32_t flow_label) {
  std::uint32_t low = flow_label & 0x03FFF;
  low ^= (flow_label & 0xFC000) >> 14;
  return static_cast<std::uint16_t>(low | kRoceSourcePortMin);
}

constexpr std::uint16_t roce_udp_source_port(std::uint32_t flow_label, std::uint32_t local_qpn,
                                             std::uint32_t remote_qpn) {
  return udp_source_port_of_flow_label(flow_label != 0 ? flow_label : flow_label_of_qps(local_qpn, remote_qpn));
}

}  // namespace tusk::rdma
