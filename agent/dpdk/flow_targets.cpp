#include "agent/dpdk/flow_targets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "agent/engine.hpp"
#include "common/loopback_peer.hpp"

namespace tusk::dpdk {

bool parse_mac(const std::string& text, MacAddress& out) {
  unsigned bytes[6];
  char extra = 0;
  if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &bytes[0], &bytes[1], &bytes[2], &bytes[3], &bytes[4],
                  &bytes[5], &extra) != 6) {
    return false;
  }
  for (std::size_t i = 0; i < 6; ++i) out[i] = static_cast<std::uint8_t>(bytes[i]);
  return true;
}

std::string mac_text(const MacAddress& mac) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

std::optional<std::uint8_t> flow_dscp(const proto::DpdkTest& test, std::uint16_t src_port) {
  const std::uint32_t flows = std::max<std::uint32_t>(1, test.flows_per_peer());
  const std::uint32_t first_port = test.udp_source_port() > 0 ? test.udp_source_port() : kDefaultUdpPort;
  if (src_port < first_port || src_port >= first_port + flows) return std::nullopt;
  const auto& classes = test.dscp_classes();
  const std::uint32_t dscp =
      classes.empty() ? test.dscp() : classes[static_cast<int>((src_port - first_port) % classes.size())];
  return static_cast<std::uint8_t>(dscp & kMaxDscp);  // bounded at prepare(); masked for safety
}

std::vector<FlowTarget> flow_targets(const proto::Plan& plan, const Ipv4Interface& us, ResolveMac resolve) {
  const auto& test = plan.dpdk();
  const bool ipv4 = test.encapsulation() == "ipv4_udp";
  const std::uint32_t flows = std::max<std::uint32_t>(1, test.flows_per_peer());
  const std::uint32_t first_port = test.udp_source_port() > 0 ? test.udp_source_port() : kDefaultUdpPort;
  if (ipv4 && us.address == 0) {
    throw EngineError(
        "ipv4_udp frames need this port's IPv4 address: start the agent with --dpdk-address "
        "ADDRESS/PREFIX[,gw=GATEWAY]");
  }
  if (ipv4 && first_port + flows - 1 > 0xFFFF) {
    throw EngineError(fmt::format("{} flows from UDP source port {} pass 65535", flows, first_port));
  }
  // Each next hop is asked once, however many peers and flows sit behind it.
  std::map<std::uint32_t, MacAddress> next_hop_macs;
  std::vector<FlowTarget> targets;
  // `only`: the source ports to keep (a re-test of the flows through one link); empty: all.
  const auto add_flows = [&](const std::string& peer, const MacAddress& mac, std::uint32_t address,
                             const google::protobuf::RepeatedField<std::uint32_t>& only) {
    for (std::uint32_t flow = 0; flow < flows; ++flow) {
      const std::uint32_t port = ipv4 ? first_port + flow : 0;
      if (!only.empty() && std::find(only.begin(), only.end(), port) == only.end()) continue;
      if (targets.size() >= 0xFFFF) throw EngineError("more than 65535 flows on one port: stream ids would repeat");
      FlowTarget target{peer, mac, address, static_cast<std::uint16_t>(port),
                        static_cast<std::uint16_t>(targets.size() + 1)};
      if (ipv4) target.dscp = flow_dscp(test, target.src_port).value_or(0);
      targets.push_back(target);
    }
  };
  for (const auto& peer : plan.peers()) {
    for (const std::uint32_t port : peer.source_ports()) {
      if (!ipv4 || port < first_port || port >= first_port + flows) {
        throw EngineError(fmt::format("peer {}: source port {} is none of this test's flows ({}-{})", peer.agent_name(),
                                      port, first_port, first_port + flows - 1));
      }
    }
  }
  for (const auto& peer : plan.peers()) {
    MacAddress peer_mac;
    const bool has_mac = parse_mac(peer.address(), peer_mac);
    if (!ipv4) {
      if (!has_mac) peer_mac.fill(0xff);  // unknown: broadcast, and the receiver still counts it
      add_flows(peer.agent_name(), peer_mac, 0, peer.source_ports());
      continue;
    }
    const auto address = path::parse_ipv4(peer.ipv4());
    if (!address) {
      throw EngineError(fmt::format("peer {} has no IPv4 address on its DPDK port{}: start it with --dpdk-address",
                                    peer.agent_name(), peer.ipv4().empty() ? "" : fmt::format(" ('{}')", peer.ipv4())));
    }
    std::uint32_t hop;
    try {
      hop = next_hop(us, *address);
    } catch (const std::invalid_argument& e) {
      throw EngineError(fmt::format("peer {}: {}", peer.agent_name(), e.what()));
    }
    MacAddress mac;
    if (hop == *address && has_mac) {
      mac = peer_mac;  // on our subnet: the controller told us its MAC
    } else if (const auto known = next_hop_macs.find(hop); known != next_hop_macs.end()) {
      mac = known->second;
    } else {
      mac = next_hop_macs[hop] = resolve(hop);
    }
    add_flows(peer.agent_name(), mac, *address, peer.source_ports());
  }
  // No peers: a loopback test through the cable under test, unless the agent only receives (an
  // incast's sink) or takes part idle.
  if (plan.peers().empty() && plan.senders().empty() && !plan.idle()) {
    add_flows(std::string(tusk::wire::kLoopbackPeer), us.mac, us.address,
              google::protobuf::RepeatedField<std::uint32_t>());
  }
  return targets;
}

PeerNames peer_names(const proto::Plan& plan) {
  PeerNames names;
  for (const auto* endpoints : {&plan.peers(), &plan.senders()}) {
    for (const auto& peer : *endpoints) {
      MacAddress mac;
      if (parse_mac(peer.address(), mac)) names.by_mac.emplace(mac, peer.agent_name());
      if (const auto address = path::parse_ipv4(peer.ipv4())) names.by_address.emplace(*address, peer.agent_name());
      if (peer.clock_offset_ns() > kMaxPeerClockOffsetNs || peer.clock_offset_ns() < -kMaxPeerClockOffsetNs) {
        throw EngineError(
            fmt::format("peer {}: clock offset {} ns is beyond an hour", peer.agent_name(), peer.clock_offset_ns()));
      }
      names.clock_offset_ns[peer.agent_name()] = peer.clock_offset_ns();
    }
  }
  return names;
}

std::int64_t PeerNames::latency_correction_ns(const std::string& peer) const {
  const auto found = clock_offset_ns.find(peer);
  return found == clock_offset_ns.end() ? 0 : found->second;
}

}  // namespace tusk::dpdk
