// Where a DPDK test's flows go: stream ids, UDP source ports, next hops and their MACs.
#include "agent/dpdk/flow_targets.hpp"

#include <gtest/gtest.h>

#include <map>

#include "agent/engine.hpp"

namespace tusk::dpdk {
namespace {

constexpr MacAddress kGatewayMac{0x02, 0x74, 0x6b, 0x01, 0x00, 0x01};

proto::Plan routed_plan(std::uint32_t flows) {
  proto::Plan plan;
  auto& test = *plan.mutable_dpdk();
  test.set_encapsulation("ipv4_udp");
  test.set_flows_per_peer(flows);
  test.set_udp_source_port(49152);
  const auto add = [&](const char* name, const char* mac, const char* ipv4) {
    auto& peer = *plan.add_peers();
    peer.set_agent_name(name);
    peer.set_address(mac);
    peer.set_ipv4(ipv4);
  };
  add("far-1", "02:74:6b:02:01:10", "192.168.102.10");  // behind the gateway
  add("near", "02:74:6b:01:02:10", "192.168.101.11");   // on our subnet
  add("far-2", "02:74:6b:02:02:10", "192.168.102.11");
  return plan;
}

Ipv4Interface us() {
  Ipv4Interface interface = parse_ipv4_interface("192.168.101.10/24,gw=192.168.101.1");
  interface.mac = {0x02, 0x74, 0x6b, 0x01, 0x01, 0x10};
  return interface;
}

TEST(FlowTargets, EachPeerGetsItsFlowsWithTheirOwnSourcePortsAndStreamIds) {
  std::map<std::uint32_t, int> asked;
  const auto targets = flow_targets(routed_plan(3), us(), [&](std::uint32_t hop) {
    ++asked[hop];
    return kGatewayMac;
  });
  ASSERT_EQ(targets.size(), 9u);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    EXPECT_EQ(targets[i].stream_id, i + 1);
    EXPECT_EQ(targets[i].src_port, 49152 + i % 3);
  }
  EXPECT_EQ(targets[0].peer, "far-1");
  EXPECT_EQ(targets[0].address, *path::parse_ipv4("192.168.102.10"));
  EXPECT_EQ(targets[0].mac, kGatewayMac);
  // On our subnet a frame goes straight to the peer, by the MAC the controller gave.
  EXPECT_EQ(targets[3].peer, "near");
  EXPECT_EQ(targets[3].mac, (MacAddress{0x02, 0x74, 0x6b, 0x01, 0x02, 0x10}));
  EXPECT_EQ(targets[6].mac, kGatewayMac);
  // The gateway is asked once for both peers behind it; the peer beside us not at all.
  EXPECT_EQ(asked, (std::map<std::uint32_t, int>{{*path::parse_ipv4("192.168.101.1"), 1}}));
}

TEST(FlowTargets, DscpClassesGoToTheFlowsInTurnAndTheReceiverKnowsEachFlowsClass) {
  proto::Plan plan = routed_plan(4);
  plan.mutable_dpdk()->set_dscp(26);
  plan.mutable_dpdk()->add_dscp_classes(26);
  plan.mutable_dpdk()->add_dscp_classes(46);
  const auto targets = flow_targets(plan, us(), [](std::uint32_t) { return kGatewayMac; });
  ASSERT_EQ(targets.size(), 12u);
  for (const auto& target : targets) {
    EXPECT_EQ(target.dscp, (target.src_port - 49152) % 2 == 0 ? 26 : 46) << target.peer << " " << target.src_port;
    // The receiver's rule, from the source port alone, gives the sender's class.
    EXPECT_EQ(flow_dscp(plan.dpdk(), target.src_port), target.dscp);
  }
  EXPECT_EQ(flow_dscp(plan.dpdk(), 49151), std::nullopt);  // none of the test's flows
  EXPECT_EQ(flow_dscp(plan.dpdk(), 49156), std::nullopt);
  // Without classes every flow carries the test's DSCP.
  plan.mutable_dpdk()->clear_dscp_classes();
  for (const auto& target : flow_targets(plan, us(), [](std::uint32_t) { return kGatewayMac; }))
    EXPECT_EQ(target.dscp, 26);
}

TEST(FlowTargets, EthernetFramesGoToEachPeersMacWithoutAddresses) {
  proto::Plan plan = routed_plan(2);
  plan.mutable_dpdk()->set_encapsulation("ethernet");
  const auto targets = flow_targets(plan, Ipv4Interface{}, [](std::uint32_t) -> MacAddress {
    ADD_FAILURE() << "ethernet frames resolve nothing";
    return {};
  });
  ASSERT_EQ(targets.size(), 6u);
  EXPECT_EQ(targets[0].mac, (MacAddress{0x02, 0x74, 0x6b, 0x02, 0x01, 0x10}));
  EXPECT_EQ(targets[1].stream_id, 2);
  EXPECT_EQ(targets[1].src_port, 0);
}

TEST(FlowTargets, ALoopbackTestSendsToItself) {
  proto::Plan plan;
  plan.mutable_dpdk()->set_encapsulation("ipv4_udp");
  plan.mutable_dpdk()->set_flows_per_peer(2);
  const auto targets = flow_targets(plan, us(), [](std::uint32_t) { return MacAddress{}; });
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].peer, "self");
  EXPECT_EQ(targets[0].mac, us().mac);
  EXPECT_EQ(targets[0].address, us().address);
}

TEST(FlowTargets, WhatIsMissingIsNamed) {
  const auto resolve = [](std::uint32_t) { return kGatewayMac; };
  try {
    flow_targets(routed_plan(1), Ipv4Interface{}, resolve);
    FAIL() << "no address of our own";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("--dpdk-address"), std::string::npos) << e.what();
  }
  proto::Plan plan = routed_plan(1);
  plan.mutable_peers(1)->set_ipv4("");
  try {
    flow_targets(plan, us(), resolve);
    FAIL() << "a peer without an address";
  } catch (const EngineError& e) {
    EXPECT_EQ(std::string(e.what()), "peer near has no IPv4 address on its DPDK port: start it with --dpdk-address");
  }
  Ipv4Interface no_gateway = parse_ipv4_interface("192.168.101.10/24");
  try {
    flow_targets(routed_plan(1), no_gateway, resolve);
    FAIL() << "a peer off the subnet without a gateway";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("peer far-1: 192.168.102.10 is not on this port's subnet"), std::string::npos)
        << e.what();
  }
  plan = routed_plan(1);
  plan.mutable_dpdk()->set_udp_source_port(65535);
  plan.mutable_dpdk()->set_flows_per_peer(2);
  EXPECT_THROW(flow_targets(plan, us(), resolve), EngineError);
}

TEST(FlowTargets, ArrivingStreamsAreNamedByMacAndByAddress) {
  proto::Plan plan = routed_plan(1);
  auto& sender = *plan.add_senders();
  sender.set_agent_name("sender");
  sender.set_ipv4("192.168.103.10");
  const PeerNames names = peer_names(plan);
  EXPECT_EQ(names.by_address.at(*path::parse_ipv4("192.168.103.10")), "sender");
  EXPECT_EQ(names.by_address.at(*path::parse_ipv4("192.168.101.11")), "near");
  EXPECT_EQ(names.by_mac.at(MacAddress{0x02, 0x74, 0x6b, 0x02, 0x02, 0x10}), "far-2");
  MacAddress mac;
  EXPECT_FALSE(parse_mac("02:74:6b:02:02:10:ff", mac));
  EXPECT_FALSE(parse_mac("02:74:6b:02:02", mac));
  EXPECT_TRUE(parse_mac("02:74:6B:02:02:1f", mac));
  EXPECT_EQ(mac_text(mac), "02:74:6b:02:02:1f");
}

TEST(FlowTargets, AReTestSendsOnlyTheSelectedSourcePorts) {
  proto::Plan plan = routed_plan(4);
  plan.mutable_peers(0)->add_source_ports(49153);
  plan.mutable_peers(0)->add_source_ports(49155);
  plan.mutable_peers()->DeleteSubrange(1, 2);
  const auto targets = flow_targets(plan, us(), [](std::uint32_t) { return kGatewayMac; });
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].src_port, 49153);
  EXPECT_EQ(targets[1].src_port, 49155);
  EXPECT_EQ(targets[1].stream_id, 2) << "stream ids stay unique and dense";
  plan.mutable_peers(0)->add_source_ports(50000);
  EXPECT_THROW(flow_targets(plan, us(), [](std::uint32_t) { return kGatewayMac; }), EngineError)
      << "a port that is none of the test's flows";
}

TEST(FlowTargets, AReceiverOnlyOrIdleAgentSendsNothingNotALoopback) {
  proto::Plan plan;
  plan.mutable_dpdk()->set_encapsulation("ipv4_udp");
  plan.add_senders()->set_agent_name("far-1");
  EXPECT_TRUE(flow_targets(plan, us(), [](std::uint32_t) { return MacAddress{}; }).empty()) << "an incast's sink";
  plan.clear_senders();
  plan.set_idle(true);
  EXPECT_TRUE(flow_targets(plan, us(), [](std::uint32_t) { return MacAddress{}; }).empty());
}

TEST(FlowTargets, ASendersClockOffsetCorrectsLatencyAndAnAbsurdOneIsRefused) {
  proto::Plan plan = routed_plan(1);
  auto& sender = *plan.add_senders();
  sender.set_agent_name("sender");
  sender.set_ipv4("192.168.103.10");
  sender.set_clock_offset_ns(-2'500'000);  // its clock 2.5 ms behind ours
  const PeerNames names = peer_names(plan);
  EXPECT_EQ(names.latency_correction_ns("sender"), -2'500'000);
  EXPECT_EQ(names.latency_correction_ns("near"), 0);
  EXPECT_EQ(names.latency_correction_ns("nobody"), 0);
  sender.set_clock_offset_ns(kMaxPeerClockOffsetNs + 1);
  EXPECT_THROW(peer_names(plan), EngineError);
}

}  // namespace
}  // namespace tusk::dpdk
