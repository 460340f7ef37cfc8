// What a DPDK port reads off the wire before anything else: the test-frame parser (both
// encapsulations, any UDP port or EtherType) and the port's answers to ARP and ping. The input's
// first byte picks the match; the rest is one frame, copied to a buffer of exactly its size so
// AddressSanitizer sees any read past it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "agent/dpdk/frame_format.hpp"
#include "agent/dpdk/neighbour.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tusk::dpdk;
  if (size == 0) return 0;
  const std::vector<std::uint8_t> frame(data + 1, data + size);
  FrameMatch match;
  match.encapsulation = (data[0] & 1) ? Encapsulation::Ipv4Udp : Encapsulation::Ethernet;
  match.udp_port = (data[0] & 2) ? 4791 : kDefaultUdpPort;
  ParsedFrame parsed;
  if (parse_headers(frame.data(), frame.size(), parsed, match) == ParseStatus::Ok) {
    // What Ok promises: the payload lies inside the frame.
    if (parsed.payload + parsed.payload_length > frame.data() + frame.size()) __builtin_trap();
    if (parsed.payload_length != parsed.header.payload_length) __builtin_trap();
  }

  Ipv4Interface us = parse_ipv4_interface("192.168.101.11/24,gw=192.168.101.1");
  us.mac = {0x02, 0x74, 0x6b, 0x01, 0x01, 0x10};
  // answer_for_us may write as many bytes as the frame has, and at least the Ethernet minimum.
  std::vector<std::uint8_t> reply(std::max(frame.size(), kMinFrameLength));
  const std::size_t length = answer_for_us(us, frame.data(), frame.size(), reply.data());
  if (length > reply.size()) __builtin_trap();
  if (length > 0 && std::memcmp(reply.data() + 6, us.mac.data(), 6) != 0) __builtin_trap();  // always from us
  (void)parse_arp(frame.data(), frame.size());
  return 0;
}
