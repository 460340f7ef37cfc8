// What the DPDK engine's set-up, datapath and sampling files share; nothing outside them uses it.
#pragma once

#include <cstdint>

#include "agent/dpdk/frame_format.hpp"

namespace tusk::dpdk::detail {

// An RX stream's key: its sender (the source MAC of ethernet frames; the source IPv4 address of
// ipv4_udp ones, whose source MAC is the last router's) and the sender's stream id.
inline std::uint64_t stream_key(const MacAddress& mac, std::uint32_t address, std::uint16_t stream_id) {
  std::uint64_t sender = address;
  if (address == 0) {
    for (const std::uint8_t byte : mac) sender = (sender << 8) | byte;
  }
  return (sender << 16) | stream_id;
}

}  // namespace tusk::dpdk::detail
