// The routed host the DPDK frame tests speak as (192.168.101.11 behind leaf l1 at .1, as the
// fabric lab numbers it), and reading a built frame's fields back as the wire carries them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "agent/dpdk/neighbour.hpp"

namespace tusk::testing {

inline constexpr dpdk::MacAddress kOurMac{0x02, 0x74, 0x6b, 0x01, 0x01, 0x10};
inline constexpr dpdk::MacAddress kLeafMac{0x02, 0x74, 0x6b, 0x01, 0x00, 0x01};

inline std::uint32_t ip(const char* text) {
  return *path::parse_ipv4(text);
}

inline dpdk::Ipv4Interface ours() {
  dpdk::Ipv4Interface interface = dpdk::parse_ipv4_interface("192.168.101.11/24,gw=192.168.101.1");
  interface.mac = kOurMac;
  return interface;
}

// Network byte order, as in every header.
inline std::uint16_t be16(const std::vector<std::uint8_t>& frame, std::size_t at) {
  return static_cast<std::uint16_t>(frame.at(at) << 8 | frame.at(at + 1));
}

}  // namespace tusk::testing
