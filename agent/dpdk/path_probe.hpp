// Path-trace probes, paris-traceroute style: a UDP datagram with a flow's exact addresses and
// ports (so every ECMP hash puts it on the flow's path) and a small TTL, which the router where
// the TTL runs out answers with ICMP time-exceeded, quoting the probe. The quote tells us which
// probe it was (flow by the quoted ports and destination, TTL by the quoted IP identification)
// and whether the probe arrived damaged (its payload is a fixed pattern). A probe whose TTL
// outlives the path reaches the destination agent, which answers port-unreachable as a host's
// kernel would, so the tracer knows where the path ends.
//
// Layout of a probe's UDP payload (kProbePayloadLength bytes): u32 magic "TSKP", u8 TTL, then a
// fixed byte pattern. Its UDP destination port is the flow's, so a receiver sees a UDP datagram
// that is not a Tusk frame (wrong magic) and does not count it.
//
// Pure functions on caller-owned buffers; datapath calls that never throw or allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "agent/dpdk/frame_format.hpp"
#include "agent/dpdk/neighbour.hpp"
#include "common/wire_bounds.hpp"

namespace tusk::dpdk {

inline constexpr std::uint32_t kProbeMagic = 0x54534B50;  // "TSKP"
inline constexpr std::size_t kProbePayloadLength = 32;
// TTLs a tracer tries; paths in a datacenter fabric are 3 to 7 switches long.
inline constexpr std::uint8_t kMaxProbeTtl = wire::kMaxPathHops;
// The longest probe frame: Ethernet, 802.1Q tag, IPv4, UDP, payload.
inline constexpr std::size_t kMaxProbeFrameLength =
    kEthernetHeaderLength + kVlanTagLength + kIpv4HeaderLength + kUdpHeaderLength + kProbePayloadLength;

// The UDP payload of every probe sent with `ttl` (kProbePayloadLength bytes): for probes a socket
// sends, whose IP header the kernel writes.
void write_probe_payload(std::uint8_t ttl, std::uint8_t* payload);

// Writes the probe with `ttl` (1..kMaxProbeTtl) for the flow `spec` describes (its MACs, VLAN tag,
// addresses, ports, DSCP and ECN; spec.ip.ttl is not used) into `frame` (kMaxProbeFrameLength
// bytes at least); `sequence` goes in the IP identification beside the TTL. Returns the length.
std::size_t write_probe(const FrameSpec& spec, std::uint8_t ttl, std::uint16_t sequence, std::uint8_t* frame);

enum class ProbeAnswer : std::uint8_t {
  TimeExceeded,  // a router where the TTL ran out: a hop of the path
  Unreachable,   // a router with no route onward (a link down, a route withdrawn)
  Destination,   // the flow's destination: the probe crossed the whole path
};

struct ProbeReply {
  ProbeAnswer answer = ProbeAnswer::TimeExceeded;
  std::uint32_t responder = 0;  // the ICMP message's source address
  // The probe quoted: which flow and which TTL it was sent with.
  std::uint32_t dst_address = 0;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint8_t ttl = 0;
  std::uint16_t sequence = 0;
  // The quote holds the whole payload and it differs from what was sent: the probe was damaged
  // on its way out (a router quotes what it received). Quotes too short to tell are intact.
  bool damaged = false;
};

// An ICMP error to `us` quoting one of our probes (untagged or one 802.1Q tag), else nullopt.
std::optional<ProbeReply> parse_probe_reply(const Ipv4Interface& us, const std::uint8_t* frame, std::size_t length);

// A few byte compares: could `frame` be a probe to us (UDP to our address)? For a receive loop to
// skip probe_answer on test frames.
bool may_be_probe_for_us(const Ipv4Interface& us, const std::uint8_t* frame, std::size_t length);

// If `frame` is a probe addressed to us (untagged), writes the ICMP port-unreachable answer
// (quoting the probe) into `reply` (kMaxProbeFrameLength + 28 bytes at least) and returns its
// length; else 0.
inline constexpr std::size_t kProbeAnswerRoom = kMaxProbeFrameLength + 28;
std::size_t answer_probe(const Ipv4Interface& us, const std::uint8_t* frame, std::size_t length, std::uint8_t* reply);

}  // namespace tusk::dpdk
