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
#include "agent/path/probe.hpp"

namespace tusk::dpdk {

// The longest probe frame: Ethernet, 802.1Q tag, IPv4, UDP, payload.
inline constexpr std::size_t kMaxProbeFrameLength =
    kEthernetHeaderLength + kVlanTagLength + kIpv4HeaderLength + kUdpHeaderLength + path::kProbePayloadLength;

// Writes the probe with `ttl` (1..kMaxProbeTtl) for the flow `spec` describes (its MACs, VLAN tag,
// addresses, ports, DSCP and ECN; spec.ip.ttl is not used) into `frame` (kMaxProbeFrameLength
// bytes at least); `sequence` goes in the IP identification beside the TTL. Returns the length.
std::size_t write_probe(const FrameSpec& spec, std::uint8_t ttl, std::uint16_t sequence, std::uint8_t* frame);

// An ICMP error to `us` quoting one of our probes (untagged or one 802.1Q tag), else nullopt.
std::optional<path::ProbeReply> parse_probe_reply(const Ipv4Interface& us, const std::uint8_t* frame,
                                                  std::size_t length);

// A few byte compares: could `frame` be a probe to us (UDP to our address)? For a receive loop to
// skip probe_answer on test frames.
bool may_be_probe_for_us(const Ipv4Interface& us, const std::uint8_t* frame, std::size_t length);

// If `frame` is a probe addressed to us (untagged), writes the ICMP port-unreachable answer
// (quoting the probe) into `reply` (kMaxProbeFrameLength + 28 bytes at least) and returns its
// length; else 0.
inline constexpr std::size_t kProbeAnswerRoom = kMaxProbeFrameLength + 28;
std::size_t answer_probe(const Ipv4Interface& us, const std::uint8_t* frame, std::size_t length, std::uint8_t* reply);

}  // namespace tusk::dpdk
