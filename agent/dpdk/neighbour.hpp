// A DPDK port's own IPv4 presence on a routed fabric, as hardware traffic generators have it: no
// kernel stack owns the port, so the agent itself answers ARP for its address (and ping, so a
// switch engineer can check the host from the leaf), and resolves the MAC of the next hop its
// ipv4_udp frames go to (the destination on the same subnet, else the gateway).
//
// Pure functions on caller-owned buffers (any thread; the answer path is a datapath call that
// never throws or allocates). Addresses are host byte order; frames big-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/dpdk/frame_format.hpp"
#include "agent/path/ipv4_address.hpp"

namespace tusk::dpdk {

inline constexpr std::uint16_t kArpEtherType = 0x0806;
inline constexpr std::size_t kArpFrameLength = 42;  // Ethernet 14 + ARP 28; sent padded to 60

// A port's address on the fabric: "192.168.101.11/24" with an optional gateway.
struct Ipv4Interface {
  std::uint32_t address = 0;
  std::uint8_t prefix_length = 0;  // 1..32
  std::uint32_t gateway = 0;       // 0: none (every peer on this subnet)
  MacAddress mac{};

  bool on_subnet(std::uint32_t other) const;
};

// "ADDRESS/PREFIX" or "ADDRESS/PREFIX,gw=GATEWAY". Throws std::invalid_argument naming the part
// that is wrong (a gateway off the subnet, a network or broadcast address as the host's, ...).
Ipv4Interface parse_ipv4_interface(const std::string& text);
std::string cidr_text(const Ipv4Interface& interface);  // "192.168.101.11/24"
std::string to_string(const Ipv4Interface& interface);  // "192.168.101.11/24 gw 192.168.101.1"

// Where a frame to `destination` goes first: the destination itself on our subnet, else the
// gateway. Throws std::invalid_argument when it is off the subnet and there is no gateway.
std::uint32_t next_hop(const Ipv4Interface& interface, std::uint32_t destination);

struct ArpPacket {
  std::uint16_t operation = 0;  // 1 request, 2 reply
  MacAddress sender_mac{};
  std::uint32_t sender_address = 0;
  MacAddress target_mac{};
  std::uint32_t target_address = 0;
};

// An untagged Ethernet ARP packet for IPv4, else nullopt.
std::optional<ArpPacket> parse_arp(const std::uint8_t* frame, std::size_t length);

// Writes a broadcast "who has `target`" from `interface` into `frame` (at least kMinFrameLength
// bytes); returns the frame's length, padded to the Ethernet minimum.
std::size_t write_arp_request(const Ipv4Interface& interface, std::uint32_t target, std::uint8_t* frame);

// A few byte compares: false for every frame answer_for_us would not answer but a damaged ARP or
// ping to our address, so a receive loop can skip the rest (and the reply buffer) for test frames.
bool may_ask_for_us(const Ipv4Interface& interface, const std::uint8_t* frame, std::size_t length);

// If `frame` asks for us (an ARP request for our address, or an ICMP echo request to it), writes
// the answer into `reply` (room for `length` bytes and at least kMinFrameLength) and returns its
// length; else returns 0.
std::size_t answer_for_us(const Ipv4Interface& interface, const std::uint8_t* frame, std::size_t length,
                          std::uint8_t* reply);

}  // namespace tusk::dpdk
