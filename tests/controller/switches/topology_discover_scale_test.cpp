// What a hostile report may cost `topology discover --report`: its agents shape both the cables
// (their ports' LLDP neighbours) and the traced hops, so each case is one they could make
// super-linear (its time then in the comment). Each runs in a fraction of a second now; the unit
// label's ctest timeout fails it should the cost turn quadratic again.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "controller/switches/report_evidence.hpp"
#include "controller/switches/topology_discovery.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {
namespace {

// The k-th address of a /8 numbered from its first octet: `numbered(11, 1)` is 11.0.0.1.
std::string numbered(std::uint32_t octet, std::uint32_t k) {
  return fmt::format("{}.{}.{}.{}", octet, k >> 16, (k >> 8) & 0xff, k & 0xff);
}

// Three agents a, b and q cabled in a triangle, and a chain of one-hop flows, each from the hop
// before's address to q: a hop between a and q is on b (the one device cabled to both), one between
// b and q on a, so each hop is placed only once the hop before is.
std::string chained_report(std::uint32_t hops) {
  std::string report = R"({"agents": [
    {"name": "a", "dpdk_ports": [
      {"netdev": "p1", "ipv4": "10.0.0.1/24", "lldp_neighbour": {"system_name": "b", "port_id": "q1"}},
      {"netdev": "p2", "ipv4": "10.0.0.2/24", "lldp_neighbour": {"system_name": "q", "port_id": "r1"}}]},
    {"name": "b", "dpdk_ports": [
      {"netdev": "q1", "ipv4": "10.0.1.1/24", "lldp_neighbour": {"system_name": "a", "port_id": "p1"}},
      {"netdev": "q2", "ipv4": "10.0.1.2/24", "lldp_neighbour": {"system_name": "q", "port_id": "r2"}}]},
    {"name": "q", "dpdk_ports": [
      {"netdev": "r1", "ipv4": "10.0.2.1/24", "lldp_neighbour": {"system_name": "a", "port_id": "p2"}},
      {"netdev": "r2", "ipv4": "10.0.2.2/24", "lldp_neighbour": {"system_name": "b", "port_id": "q2"}}]}
  ], "tests": [{"localisation": {"flows": [)";
  // Last hop first, so that no order of reading the flows follows the chain.
  for (std::uint32_t k = hops; k >= 1; --k) {
    report +=
        fmt::format(R"({}{{"flow": "{}:1 > 10.0.2.1:4791 udp", "path": [{{"ttl": 1, "address": "{}"}}]}})",
                    k == hops ? "" : ",\n", k == 1 ? std::string("10.0.0.1") : numbered(11, k - 1), numbered(11, k));
  }
  return report + "]}}]}";
}

// Before: each hop placed took a round over every flow, and each address placed a scan of its
// port's addresses: 20,000 chained hops took 46 s.
TEST(TopologyDiscover, AChainOf20000HopsIsPlacedInOnePass) {
  constexpr std::uint32_t kHops = 20'000;
  const ReportEvidence evidence = report_evidence_text(chained_report(kHops), "report.json");
  ASSERT_EQ(evidence.hosts.size(), 6u);
  ASSERT_EQ(evidence.paths.size(), kHops);
  const DiscoveredTopology found = discover_topology({{}, {}, evidence.hosts, evidence.paths});
  EXPECT_EQ(found.host_ports, 6u);
  EXPECT_EQ(found.links, 3u);
  EXPECT_EQ(found.traced_addresses, kHops);
  EXPECT_THAT(found.notes, ::testing::IsEmpty());
  const auto topology = load_topology_text(found.yaml, "discovered.yaml");
  std::size_t misplaced = 0;
  for (std::uint32_t k = 1; k <= kHops; ++k) {
    const auto place = topology.find(numbered(11, k));
    const std::string want = k % 2 == 1 ? "b:q1" : "a:p1";
    if (!place || place->device + ":" + place->interface != want) ++misplaced;
  }
  EXPECT_EQ(misplaced, 0u);
  // Each port lists its hops in the order they were placed, the chain's.
  EXPECT_NE(found.yaml.find(fmt::format("q1: [10.0.1.1, {}, {}, ", numbered(11, 1), numbered(11, 3))),
            std::string::npos);
}

// Agents h0..hN-1 each claim a cable to the hub q, and h0 one to t too; flows from q to t, each
// through its own unread hop (12.x.y.z): each is on h0, the one device cabled to both.
std::string hub_report(std::uint32_t spokes, std::uint32_t flows) {
  std::string report = R"({"agents": [
    {"name": "q", "dpdk_ports": [{"netdev": "p0", "ipv4": "10.0.0.9/24",
      "lldp_neighbour": {"system_name": "h0", "port_id": "e0"}}]},
    {"name": "t", "dpdk_ports": [{"netdev": "e0", "ipv4": "10.0.1.9/24",
      "lldp_neighbour": {"system_name": "h0", "port_id": "e1"}}]})";
  for (std::uint32_t k = 0; k < spokes; ++k) {
    report += fmt::format(R"(,
    {{"name": "h{0}", "dpdk_ports": [{{"netdev": "e0", "lldp_neighbour": {{"system_name": "q", "port_id": "p{0}"}}}}]}})",
                          k);
  }
  report += R"(], "tests": [{"localisation": {"flows": [)";
  for (std::uint32_t j = 0; j < flows; ++j) {
    report += fmt::format(R"({}{{"flow": "10.0.0.9:1 > 10.0.1.9:4791 udp", "path": [{{"ttl": 1, "address": "{}"}}]}})",
                          j == 0 ? "" : ",\n", numbered(12, j));
  }
  return report + "]}}]}";
}

// Before: each hop after the hub walked every device cabled to it: 4,000 spokes and 30,000 flows
// took 11 s.
TEST(TopologyDiscover, AHubEveryAgentClaimsACableToIsWalkedOncePerPairOfDevicesFromTheirFewerCables) {
  constexpr std::uint32_t kSpokes = 4'000, kFlows = 30'000;
  const ReportEvidence evidence = report_evidence_text(hub_report(kSpokes, kFlows), "report.json");
  ASSERT_EQ(evidence.paths.size(), kFlows);
  const DiscoveredTopology found = discover_topology({{}, {}, evidence.hosts, evidence.paths});
  EXPECT_EQ(found.links, kSpokes + 1);
  EXPECT_EQ(found.traced_addresses, kFlows);
  EXPECT_THAT(found.notes, ::testing::IsEmpty());
  // All on h0's port facing q, in one list (4,000 devices are slow to load back: read as text).
  const auto list = found.yaml.find("  h0:\n    interfaces:\n      e0: [12.0.0.0, 12.0.0.1, ");
  ASSERT_NE(list, std::string::npos) << found.yaml.substr(0, 2000);
  const auto open = found.yaml.find('[', list), close = found.yaml.find(']', list);
  std::set<std::string> listed;
  for (std::size_t at = open + 1; at < close;) {
    const std::size_t end = std::min(found.yaml.find(", ", at), close);
    listed.insert(found.yaml.substr(at, end - at));
    at = end + 2;
  }
  std::size_t misplaced = 0;
  for (std::uint32_t j = 0; j < kFlows; ++j) misplaced += listed.contains(numbered(12, j)) ? 0 : 1;
  EXPECT_EQ(misplaced, 0u);
  EXPECT_EQ(listed.size(), kFlows);
}

}  // namespace
}  // namespace tusk
