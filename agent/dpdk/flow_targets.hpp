// Where a DPDK test's frames go: one flow per (peer, flow index), each with its own stream id and,
// for ipv4_udp frames, its own UDP source port (what ECMP hashes onto a path), the peer's IPv4
// address and the MAC of the next hop (the peer itself on our subnet, else our gateway, resolved
// once per next hop). Worked out at prepare(), off the datapath.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/dpdk/frame_format.hpp"
#include "agent/dpdk/neighbour.hpp"
#include "tusk.pb.h"

namespace tusk::dpdk {

struct FlowTarget {
  std::string peer;             // agent name, or wire::kLoopbackPeer for a loopback test
  MacAddress mac{};             // the frame's destination MAC (the next hop's)
  std::uint32_t address = 0;    // ipv4_udp: the peer's IPv4 address
  std::uint16_t src_port = 0;   // ipv4_udp: this flow's UDP source port
  std::uint16_t stream_id = 0;  // 1, 2, ... in order, unique on this port for the test
  std::uint8_t dscp = 0;        // ipv4_udp: this flow's traffic class (flow_dscp)
};

// The traffic class (DSCP) of the test's ipv4_udp flow with UDP source port `src_port`: flow k
// carries dscp_classes[k % n], or `dscp` when the test has no classes. The sender and the
// receiver both use this rule, so the receiver knows what each flow was sent with and counts a
// switch's rewrite. Nothing for a source port that is none of the test's flows.
std::optional<std::uint8_t> flow_dscp(const proto::DpdkTest& test, std::uint16_t src_port);

// The MAC of an IPv4 next hop on our port (ARP); throws EngineError when nobody answers.
using ResolveMac = std::function<MacAddress(std::uint32_t next_hop)>;

// Flows in the plan's peer order, flows_per_peer (at least 1) to each; a plan without peers is a
// loopback test, its flows to this port itself. Throws EngineError naming the peer and what is
// missing (no IPv4 address on either side, a peer off the subnet with no gateway, no MAC).
std::vector<FlowTarget> flow_targets(const proto::Plan& plan, const Ipv4Interface& us, ResolveMac resolve);

// The agent each source belongs to, for naming the streams that arrive: by source MAC (ethernet
// frames) and by source IPv4 address (ipv4_udp frames, whose source MAC behind a router is the
// last router's).
struct PeerNames {
  std::map<MacAddress, std::string> by_mac;
  std::map<std::uint32_t, std::string> by_address;
  // By agent name: its clock minus ours (PeerEndpoint.clock_offset_ns), within kMaxPeerClockOffsetNs.
  std::map<std::string, std::int64_t> clock_offset_ns;
  // What to add to (our RX time - a peer's TX stamp) for one-way latency; 0 for an unknown peer.
  std::int64_t latency_correction_ns(const std::string& peer) const;
};
// A clock offset beyond this is no estimate but a broken clock or a hostile controller: refused.
inline constexpr std::int64_t kMaxPeerClockOffsetNs = 3'600'000'000'000;  // an hour
// Throws EngineError for an offset out of bounds.
PeerNames peer_names(const proto::Plan& plan);

bool parse_mac(const std::string& text, MacAddress& out);
std::string mac_text(const MacAddress& mac);

}  // namespace tusk::dpdk
