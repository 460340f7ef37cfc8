// The switches as evidence, short of SNMP itself: the credentials file and the topology's
// management keys (every mistake named with its line), which switches a run reads, and what the
// counters read before and after a test say about each cable.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/clock.hpp"
#include "common/lldp_neighbour.hpp"
#include "controller/report/reports.hpp"
#include "controller/switches/host_lldp.hpp"
#include "controller/switches/report_evidence.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_discovery.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/cabling_check.hpp"
#include "controller/verdict/switch_counters.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTopology = R"(devices:
  leaf1:
    management: {address: 10.0.0.11, snmp: fabric-ro}
    interfaces: {swp1: 172.16.0.0, swp9: ~}
  spine1:
    management:
      address: 10.0.0.21
      snmp: fabric-v3
    interfaces: {swp1: 172.16.0.1}
  host-a:
    interfaces: {ens1: 192.168.1.10}
links:
  - ends: leaf1:swp1 <-> spine1:swp1
    cable: C-1
  - host-a:ens1 <-> leaf1:swp9
)";

constexpr const char* kCredentials = R"(fabric-ro:
  version: 2c
  community: public-ro
fabric-v3:
  version: 3
  user: tusk
  auth_protocol: sha
  auth_passphrase: long-enough
  privacy_protocol: aes
  privacy_passphrase: also-long-enough
)";

TEST(SnmpCredentials, ReadsVersionsTwoAndThree) {
  const auto credentials = load_snmp_credentials_text(kCredentials, "creds.yaml");
  ASSERT_EQ(credentials.size(), 2u);
  EXPECT_EQ(credentials.at("fabric-ro").version, SnmpVersion::V2c);
  EXPECT_EQ(credentials.at("fabric-ro").community, "public-ro");
  const auto& v3 = credentials.at("fabric-v3");
  EXPECT_EQ(v3.version, SnmpVersion::V3);
  EXPECT_EQ(v3.user, "tusk");
  EXPECT_EQ(v3.auth_protocol, "sha");
  EXPECT_EQ(v3.privacy_protocol, "aes");
}

TEST(SnmpCredentials, EveryMistakeIsNamedWithItsLine) {
  try {
    load_snmp_credentials_text(R"(a:
  version: 2
  community: x
b:
  version: 2c
  user: tusk
c:
  version: 3
  user: tusk
  auth_protocol: sha1
  auth_passphrase: short
d:
  version: 3
  user: tusk
  auth_protocol: sha
  auth_passphrase: long-enough
  privacy_passphrase: long-enough
)",
                               "creds.yaml");
    FAIL() << "accepted";
  } catch (const SnmpCredentialsInvalid& invalid) {
    const std::string text = invalid.what();
    EXPECT_THAT(text, HasSubstr("creds.yaml:2:12: a.version"));
    EXPECT_THAT(text, HasSubstr("creds.yaml:5:3: b: missing required field 'community'"));
    EXPECT_THAT(text, HasSubstr("creds.yaml:6:9: b.user: belongs to version 3"));
    EXPECT_THAT(text, HasSubstr("creds.yaml:10:18: c.auth_protocol"));
    EXPECT_THAT(text, HasSubstr("creds.yaml:11:20: c.auth_passphrase: is 5 characters"));
    EXPECT_THAT(text, HasSubstr("creds.yaml:17:23: d.privacy_passphrase: needs privacy_protocol"));
  }
}

TEST(SwitchQueries, EverySwitchWithAManagementAddressIsReadForItsCabledPorts) {
  const auto topology = load_topology_text(kTopology, "fabric.yaml");
  const auto queries = switch_queries(topology, load_snmp_credentials_text(kCredentials, "creds.yaml"), "creds.yaml");
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[0].target.device, "leaf1");
  EXPECT_EQ(queries[0].target.address, "10.0.0.11");
  EXPECT_EQ(queries[0].target.credential.community, "public-ro");
  EXPECT_EQ(queries[0].ports, (std::vector<std::string>{"swp1", "swp9"}));
  EXPECT_TRUE(queries[0].lldp);
  EXPECT_EQ(queries[1].target.credential.user, "tusk");
  EXPECT_EQ(queries[1].ports, (std::vector<std::string>{"swp1"}));
}

TEST(SwitchQueries, CredentialsTheFileLacksAreNamedAtTheTopologysLine) {
  const auto topology = load_topology_text(kTopology, "fabric.yaml");
  try {
    switch_queries(topology, load_snmp_credentials_text("other:\n  version: 2c\n  community: x\n", "creds.yaml"),
                   "creds.yaml");
    FAIL() << "accepted";
  } catch (const TopologyFileInvalid& invalid) {
    const std::string text = invalid.what();
    EXPECT_THAT(text, HasSubstr("fabric.yaml:3:44: devices.leaf1.management.snmp: no credentials 'fabric-ro' in "
                                "creds.yaml (it has: other)"));
    EXPECT_THAT(text, HasSubstr("fabric.yaml:8:13: devices.spine1.management.snmp: no credentials 'fabric-v3'"));
  }
}

TEST(Topology, ManagementMistakesAreNamed) {
  try {
    load_topology_text(
        "devices:\n  s1:\n    management: {address: 10.0.0, snmp: x, port: 1}\n  s2:\n"
        "    management: {address: 10.0.0.2}\n",
        "fabric.yaml");
    FAIL() << "accepted";
  } catch (const TopologyFileInvalid& invalid) {
    const std::string text = invalid.what();
    EXPECT_THAT(text, HasSubstr("fabric.yaml:3:27: devices.s1.management.address: '10.0.0' is not an IPv4 address"));
    EXPECT_THAT(text, HasSubstr("devices.s1.management.port: unknown key"));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("missing required field 'address'")));
    EXPECT_THAT(text, HasSubstr("fabric.yaml:5:17: devices.s2.management: missing required field 'snmp'"));
  }
}

SwitchReading reading(const std::string& device, const std::string& port, const SwitchPortCounters& counters) {
  SwitchReading r;
  r.device = device;
  r.ports[port] = counters;
  return r;
}

TEST(SwitchCounters, EachDirectionSaysWhatItsReceiverCountedLostAndWhatVanished) {
  const auto topology = load_topology_text(kTopology, "fabric.yaml");
  // leaf1 sent 10,000 frames to spine1, which counted 9,900 in, 20 errors and 30 discards: 50
  // vanished on the way (IF-MIB's counting); spine1 sent 500 back, all counted in.
  const SwitchPortCounters zero{};
  SwitchPortCounters leaf_after{0, 500, 0, 0, 0, 10000, 0, 0, true, true};
  SwitchPortCounters spine_after{0, 9900, 20, 30, 0, 500, 0, 0, true, true};
  const auto evidence =
      count_switch_links(topology, {reading("leaf1", "swp1", zero), reading("spine1", "swp1", zero)},
                         {reading("leaf1", "swp1", leaf_after), reading("spine1", "swp1", spine_after)});
  ASSERT_EQ(evidence.links.size(), 1u);  // the host's cable: leaf1's swp9 was not read
  const auto* up = evidence.direction("leaf1:swp1 -> spine1:swp1");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->sent, 10000u);
  EXPECT_EQ(up->received, 9900u);
  EXPECT_EQ(up->vanished(), 50u);
  EXPECT_EQ(up->lost(), 100u);
  const auto* down = evidence.direction("spine1:swp1 -> leaf1:swp1");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->lost(), 0u);
  EXPECT_EQ(evidence.links[0].name, "leaf1:swp1 <-> spine1:swp1, cable C-1");
}

TEST(SwitchCounters, EachIntervalKeepsOnlyItsLossyDirectionsAndTheTextSaysWhenLossBegan) {
  const auto topology = load_topology_text(kTopology, "fabric.yaml");
  const SwitchPortCounters zero{};
  // Clean for the first interval, though spine1 was read a moment before leaf1 and so counted 600
  // fewer in than leaf1 sent (mid-traffic, that is no loss); in the second spine1 discards 100.
  const SwitchPortCounters leaf_1{0, 500, 0, 0, 0, 10000, 0, 0, true, true};
  const SwitchPortCounters spine_1{0, 9400, 0, 0, 0, 500, 0, 0, true, true};
  const SwitchPortCounters leaf_2{0, 1000, 0, 0, 0, 20000, 0, 0, true, true};
  const SwitchPortCounters spine_2{0, 19900, 0, 100, 0, 1000, 0, 0, true, true};
  const std::vector<SwitchReading> r0{reading("leaf1", "swp1", zero), reading("spine1", "swp1", zero)};
  const std::vector<SwitchReading> r1{reading("leaf1", "swp1", leaf_1), reading("spine1", "swp1", spine_1)};
  const std::vector<SwitchReading> r2{reading("leaf1", "swp1", leaf_2), reading("spine1", "swp1", spine_2)};
  const std::int64_t t0 = 1'796'000'000'000'000'000, second = 1'000'000'000;
  const std::vector<SwitchInterval> intervals{
      count_switch_interval(topology, r0, t0, r1, t0 + 5 * second),
      count_switch_interval(topology, r1, t0 + 5 * second, r2, t0 + 10 * second)};
  EXPECT_TRUE(intervals[0].lossy.empty());
  ASSERT_EQ(intervals[1].lossy.size(), 1u);
  EXPECT_EQ(intervals[1].lossy[0].key, "leaf1:swp1 -> spine1:swp1");
  EXPECT_EQ(intervals[1].lossy[0].in_discards, 100u);
  EXPECT_EQ(intervals[1].lossy[0].lost(), 100u) << "the 600 it counted late are no loss either";
  EXPECT_EQ(intervals[1].from_ns, t0 + 5 * second);
  EXPECT_EQ(switch_intervals_text(intervals),
            "switch counters per interval: 2 intervals, loss counted in 1, first in the one ending " +
                utc_iso_time(t0 + 10 * second) + " on leaf1:swp1 -> spine1:swp1");
  EXPECT_EQ(switch_intervals_text({intervals[0]}), "switch counters per interval: 1 interval, no loss counted in any");
  EXPECT_EQ(switch_intervals_text({}), "");
}

TEST(SwitchCounters, LinuxCountingDiscardsAsReceivedInventsNoLoss) {
  const auto topology = load_topology_text(kTopology, "fabric.yaml");
  const SwitchPortCounters zero{};
  SwitchPortCounters leaf_after{0, 0, 0, 0, 0, 1000, 0, 0, true, true};
  SwitchPortCounters spine_after{0, 1000, 0, 40, 0, 0, 0, 0, true, true};  // the 40 discarded are in the 1000
  const auto evidence =
      count_switch_links(topology, {reading("leaf1", "swp1", zero), reading("spine1", "swp1", zero)},
                         {reading("leaf1", "swp1", leaf_after), reading("spine1", "swp1", spine_after)});
  const auto* up = evidence.direction("leaf1:swp1 -> spine1:swp1");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->vanished(), 0u);
  EXPECT_EQ(up->lost(), 40u);
}

TEST(SwitchCounters, NarrowCountersWrapAndAResetIsSaidNotCounted) {
  const auto topology = load_topology_text(kTopology, "fabric.yaml");
  SwitchPortCounters narrow_before{0, 0, 0, 0, 0, 0xfffffff0u, 0, 0, false, true};
  SwitchPortCounters narrow_after{0, 0, 0, 0, 0, 0x10, 0, 0, false, true};
  SwitchPortCounters wide_before{0, 5000, 0, 0, 0, 0, 0, 0, true, true};
  SwitchPortCounters wide_after{0, 10, 0, 0, 0, 0, 0, 0, true, true};  // went back: a reset
  const auto evidence =
      count_switch_links(topology, {reading("leaf1", "swp1", narrow_before), reading("spine1", "swp1", wide_before)},
                         {reading("leaf1", "swp1", narrow_after), reading("spine1", "swp1", wide_after)});
  const auto* up = evidence.direction("leaf1:swp1 -> spine1:swp1");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->sent, 0x20u);
  EXPECT_FALSE(up->receiver_read);
  ASSERT_EQ(evidence.warnings.size(), 1u);
  EXPECT_THAT(evidence.warnings[0], HasSubstr("spine1:swp1: a counter went back"));
}

TEST(SwitchCounters, AnUnreadableSwitchIsSaidAndItsLinksKeepTheOtherEnd) {
  const auto topology = load_topology_text(kTopology, "fabric.yaml");
  SwitchReading unreachable;
  unreachable.device = "spine1";
  unreachable.error = "switch spine1 (10.0.0.21): no answer (timed out)";
  const SwitchPortCounters zero{};
  SwitchPortCounters leaf_after{0, 0, 0, 0, 0, 1000, 3, 4, true, true};
  const auto evidence = count_switch_links(topology, {reading("leaf1", "swp1", zero), unreachable},
                                           {reading("leaf1", "swp1", leaf_after), unreachable});
  EXPECT_EQ(evidence.unreadable, (std::vector<std::string>{unreachable.error}));
  const auto* up = evidence.direction("leaf1:swp1 -> spine1:swp1");
  ASSERT_NE(up, nullptr);
  EXPECT_TRUE(up->sender_read);
  EXPECT_FALSE(up->receiver_read);
  EXPECT_EQ(up->out_errors + up->out_discards, 7u);
  EXPECT_EQ(up->vanished(), 0u);
}

// Two leaves, two spines, a host on each leaf; every switch managed.
constexpr const char* kFabric = R"(devices:
  l1: {management: {address: 10.0.0.1, snmp: c}, interfaces: {s1: ~, s2: ~, h1: ~}}
  l2: {management: {address: 10.0.0.2, snmp: c}, interfaces: {s1: ~, s2: ~, h1: ~}}
  s1: {management: {address: 10.0.0.3, snmp: c}, interfaces: {l1: ~, l2: ~}}
  s2: {management: {address: 10.0.0.4, snmp: c}, interfaces: {l1: ~, l2: ~}}
  l1h1: {interfaces: {port: 192.168.1.11}}
  l2h1: {interfaces: {port: 192.168.2.11}}
links:
  - l1:s1 <-> s1:l1
  - l1:s2 <-> s2:l1
  - l2:s1 <-> s1:l2
  - l2:s2 <-> s2:l2
  - l1h1:port <-> l1:h1
  - l2h1:port <-> l2:h1
)";

// What every switch's LLDP says when the cables are as the file has them: lldpd's port id is a MAC
// by default, with the interface name in the description, so one switch is told that way.
std::vector<SwitchReading> lldp_as_cabled() {
  std::vector<SwitchReading> out;
  const auto add = [&](const std::string& device, std::vector<SwitchLldpNeighbour> neighbours) {
    SwitchReading reading;
    reading.device = device;
    reading.lldp_read = true;
    reading.lldp = std::move(neighbours);
    out.push_back(std::move(reading));
  };
  add("l1", {{"s1", "s1", "l1", "", ""}, {"s2", "s2", "l1", "", ""}});
  add("l2", {{"s1", "s1", "l2", "", ""}, {"s2", "s2", "l2", "", ""}});
  add("s1", {{"l1", "l1", "02:74:6c:01:01:00", "s1", ""}, {"l2", "l2", "02:74:6c:02:01:00", "s1", ""}});
  add("s2", {{"l1", "l1", "s2", "", ""}, {"l2", "l2", "s2", "", ""}});
  return out;
}

TEST(CablingCheck, EveryCableWhereTheFileSaysIsMatchedAndListedWithBothEnds) {
  const auto topology = load_topology_text(kFabric, "fabric.yaml");
  const CablingCheck check = check_cabling(topology, lldp_as_cabled());
  EXPECT_TRUE(check.clean()) << check.text();
  EXPECT_EQ(check.ends_checked, 10u);  // 8 switch-to-switch ends, 2 leaf ports to hosts
  EXPECT_EQ(check.ends_matched, 8u);
  EXPECT_EQ(check.unverified.size(), 2u);  // the hosts send no LLDP
  ASSERT_EQ(check.seen.size(), 4u);
  EXPECT_EQ(check.seen[0].a, "l1:s1");
  EXPECT_EQ(check.seen[0].b, "s1:l1");
  EXPECT_TRUE(check.seen[0].in_file);
  EXPECT_THAT(check.text(), HasSubstr("8 of 10 ports checked by LLDP are where the topology file says"));
}

TEST(CablingCheck, ASwappedCableASilentNeighbourAndAnUnknownOneAreEachNamed) {
  const auto topology = load_topology_text(kFabric, "fabric.yaml");
  auto readings = lldp_as_cabled();
  // l1's uplinks swapped at the leaf: its s1 port reaches s2 and its s2 port s1.
  readings[0].lldp = {{"s1", "s2", "l1", "", ""}, {"s2", "s1", "l1", "", ""}};
  // s2 hears nothing on l2 and a stranger on a port the file has no cable for.
  readings[3].lldp = {{"l1", "l1", "s2", "", ""}, {"swp9", "rogue", "eth0", "", ""}};
  const CablingCheck check = check_cabling(topology, readings);
  ASSERT_EQ(check.findings.size(), 4u) << check.text();
  EXPECT_EQ(check.findings[0].kind, CablingFinding::Kind::Elsewhere);
  EXPECT_EQ(check.findings[0].text(), "l1:s1 should be cabled to s1:l1 but LLDP finds s2:l1 (LLDP-MIB of l1)");
  EXPECT_EQ(check.findings[1].text(), "l1:s2 should be cabled to s2:l1 but LLDP finds s1:l1 (LLDP-MIB of l1)");
  EXPECT_EQ(check.findings[2].kind, CablingFinding::Kind::NoNeighbour);
  EXPECT_EQ(check.findings[2].text(), "s2:l2 should be cabled to l2:s2 but has no LLDP neighbour (LLDP-MIB of s2)");
  EXPECT_EQ(check.findings[3].kind, CablingFinding::Kind::NotInFile);
  EXPECT_EQ(check.findings[3].text(),
            "s2:swp9 is cabled to rogue:eth0, which the topology file does not have (LLDP-MIB of s2)");
}

HostLldp host_heard(const std::string& agent, const std::string& address, const std::string& system,
                    const std::string& port) {
  HostLldp host;
  host.agent = agent;
  host.address = address;
  host.netdev = "ens1";
  host.neighbour = {"ens1", system, port, "", ""};
  return host;
}

TEST(CablingCheck, HostsThatHeardTheirLeafVerifyTheirCablesAndSwappedOnesAreNamed) {
  const auto topology = load_topology_text(kFabric, "fabric.yaml");
  const CablingCheck as_cabled =
      check_cabling(topology, lldp_as_cabled(),
                    {host_heard("a", "192.168.1.11", "l1", "h1"), host_heard("b", "192.168.2.11", "l2", "h1")});
  EXPECT_TRUE(as_cabled.clean()) << as_cabled.text();
  EXPECT_EQ(as_cabled.ends_checked, 12u);
  EXPECT_EQ(as_cabled.ends_matched, 10u);
  EXPECT_TRUE(as_cabled.unverified.empty());
  EXPECT_EQ(as_cabled.seen.size(), 6u);  // the four switch links and the two host cables, both ends each

  const CablingCheck swapped = check_cabling(
      topology, {}, {host_heard("a", "192.168.1.11", "l2", "h1"), host_heard("b", "192.168.2.11", "l1", "h1")});
  ASSERT_EQ(swapped.findings.size(), 2u) << swapped.text();
  EXPECT_EQ(swapped.findings[0].text(),
            "l1h1:port should be cabled to l1:h1 but LLDP finds l2:h1 (LLDP at agent a, port ens1)");
  EXPECT_EQ(swapped.findings[1].text(),
            "l2h1:port should be cabled to l2:h1 but LLDP finds l1:h1 (LLDP at agent b, port ens1)");
}

TEST(TopologyDiscovery, WritesEveryCableTheSwitchesLldpShowsAsAFileThatLoads) {
  // A seed of the switches alone, with one port address to keep.
  const auto seed = load_topology_text(R"(devices:
  l1: {management: {address: 10.0.0.1, snmp: c}, interfaces: {s1: 172.16.1.0}}
  l2: {management: {address: 10.0.0.2, snmp: c}}
  s1: {management: {address: 10.0.0.3, snmp: c}}
  s2: {management: {address: 10.0.0.4, snmp: c}}
)",
                                       "seed.yaml");
  auto readings = lldp_as_cabled();
  readings[3].lldp.push_back({"swp9", "rogue", "eth0", "", ""});  // a neighbour nobody manages
  readings[1].lldp.pop_back();                                    // l2 does not see s2: seen from one end
  const DiscoveredTopology found = discover_topology({seed, readings, {}, {}});
  EXPECT_EQ(found.switches_read, 4u);
  EXPECT_EQ(found.links, 5u);
  const auto topology = load_topology_text(found.yaml, "discovered.yaml");
  std::set<std::string> links;
  for (const auto& link : topology.links()) links.insert(link.a.text() + " <-> " + link.b.text());
  EXPECT_EQ(links, (std::set<std::string>{"l1:s1 <-> s1:l1", "l1:s2 <-> s2:l1", "l2:s1 <-> s1:l2", "l2:s2 <-> s2:l2",
                                          "rogue:eth0 <-> s2:swp9"}));
  EXPECT_EQ(topology.find("172.16.1.0")->device, "l1");  // the seed's address kept
  ASSERT_TRUE(topology.devices()[0].management);
  EXPECT_EQ(topology.devices()[0].management->address, "10.0.0.1");
  EXPECT_EQ(topology.devices().back().name, "rogue");
  EXPECT_THAT(found.notes, ::testing::Contains("l2:s2 <-> s2:l2: seen from one end only"));
}

TEST(TopologyDiscovery, HostsLldpFromARunsReportAddsTheHostCablesPlacedByTheSeedOrNamedByTheAgent) {
  // The seed places one host's address; the other host is new, named by its agent and netdev.
  const auto seed = load_topology_text(R"(devices:
  l1: {management: {address: 10.0.0.1, snmp: c}}
  l2: {management: {address: 10.0.0.2, snmp: c}}
  s1: {management: {address: 10.0.0.3, snmp: c}}
  s2: {management: {address: 10.0.0.4, snmp: c}}
  l1h1: {interfaces: {port: 192.168.1.11}}
)",
                                       "seed.yaml");
  const std::vector<HostLldp> hosts = report_evidence_text(R"({"agents": [
    {"name": "a", "dpdk_ports": [{"name": "0000:3b:00.0", "netdev": "ens1", "ipv4": "192.168.1.11/24",
      "lldp_neighbour": {"system_name": "l1", "port_id": "h1", "port_description": "", "chassis_id": ""}}]},
    {"name": "b", "dpdk_ports": [{"name": "0000:3b:00.0", "netdev": "", "ipv4": "192.168.2.11/24",
      "lldp_neighbour": {"system_name": "l2", "port_id": "02:74:6c:02:01:03", "port_description": "h1"}},
      {"name": "0000:3b:00.1", "ipv4": "192.168.3.11/24", "lldp_neighbour": null}]},
    {"name": "c", "dpdk_ports": [{"name": "x", "ipv4": "192.168.4.11/24",
      "lldp_neighbour": {"system_name": "", "port_id": ""}}]}
  ]})",
                                                           "report.json")
                                          .hosts;
  ASSERT_EQ(hosts.size(), 3u);                 // b's second port heard no one
  EXPECT_EQ(hosts[1].netdev, "0000:3b:00.0");  // no netdev: the DPDK port's name
  EXPECT_EQ(hosts[1].address, "192.168.2.11");

  const DiscoveredTopology found = discover_topology({seed, lldp_as_cabled(), hosts, {}});
  EXPECT_EQ(found.host_ports, 2u);
  EXPECT_THAT(found.notes,
              ::testing::Contains(::testing::HasSubstr("agent c port x: a neighbour without a usable name")));
  const auto topology = load_topology_text(found.yaml, "discovered.yaml");
  std::set<std::string> links;
  for (const auto& link : topology.links()) links.insert(link.a.text() + " <-> " + link.b.text());
  EXPECT_TRUE(links.contains("l1:h1 <-> l1h1:port")) << found.yaml;
  // A PCI name's colons would read as device:interface: they become dashes.
  EXPECT_TRUE(links.contains("b:0000-3b-00.0 <-> l2:h1")) << found.yaml;
  EXPECT_EQ(links.size(), 6u) << found.yaml;
  EXPECT_EQ(topology.find("192.168.1.11")->device, "l1h1");
  ASSERT_TRUE(topology.find("192.168.2.11"));
  EXPECT_EQ(topology.find("192.168.2.11")->device, "b");
  EXPECT_EQ(topology.find("192.168.2.11")->interface, "0000-3b-00.0");
}

TEST(TopologyDiscovery, AReportThatIsNotOneIsAnErrorNamingTheFile) {
  EXPECT_THROW(
      {
        try {
          report_evidence_text("{\"tests\": []}", "r.json");
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "r.json: no agents[] (not a Tusk report.json?)");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(report_evidence_text("{", "r.json"), std::runtime_error);
  EXPECT_THROW(report_evidence("/nonexistent/report.json"), std::runtime_error);
  // Texts are a peer's: bounded and printable however the file holds them.
  const auto hosts =
      report_evidence_text(fmt::format(R"({{"agents": [{{"name": "a", "dpdk_ports": [{{"netdev": "e\u0007", "ipv4": 5,
                  "lldp_neighbour": {{"system_name": "{}", "port_id": 7}}}}]}}]}})",
                                       std::string(5000, 'x')),
                           "r.json")
          .hosts;
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].netdev, "e\\x07");
  EXPECT_LE(hosts[0].neighbour.system_name.size(), kMaxLldpTextBytes);
  EXPECT_TRUE(hosts[0].address.empty());
  EXPECT_TRUE(hosts[0].neighbour.port_id.empty());
}

TEST(CablingCheck, AnUnreadableSwitchIsSaidAndNotCountedAsMiswired) {
  const auto topology = load_topology_text(kFabric, "fabric.yaml");
  auto readings = lldp_as_cabled();
  readings[2].error = "switch s1 (10.0.0.3): no answer (timed out)";
  readings[2].lldp.clear();
  const CablingCheck check = check_cabling(topology, readings);
  EXPECT_TRUE(check.clean()) << check.text();
  EXPECT_EQ(check.unreadable, (std::vector<std::string>{readings[2].error}));
  EXPECT_EQ(check.ends_checked, 8u);
}

// The same host ports whether the controller reads them from an agent's inventory before a run or
// `topology discover --report` reads them back from the run's report.json: DPDK ports and RoCE
// ports alike, each with an address to place it and a neighbour, texts bounded either way.
TEST(HostLldp, AnInventorysPortsAreTheSameReadLiveOrFromTheReport) {
  proto::Inventory inventory;
  auto* dpdk = inventory.add_dpdk_ports();
  dpdk->set_name("0000:3b:00.0");
  dpdk->set_ipv4("192.168.1.11/24");
  dpdk->mutable_lldp()->set_system_name("leaf1");
  dpdk->mutable_lldp()->set_port_id("swp1");
  dpdk->mutable_lldp()->set_source("frames");
  auto* unplaced = inventory.add_dpdk_ports();  // no address: nothing places it
  unplaced->set_name("0000:3b:00.1");
  unplaced->mutable_lldp()->set_system_name("leaf1");
  auto* device = inventory.add_rdma_devices();
  device->set_name("mlx5_0");
  auto* roce = device->add_ports();
  roce->set_port_num(1);
  roce->set_netdev("ens2f0np0");
  roce->set_roce_ipv4("10.1.4.11");
  roce->mutable_lldp()->set_system_name(std::string(300, 'x') + "\x01");
  roce->mutable_lldp()->set_port_id("b8:ce:f6:00:00:31");
  roce->mutable_lldp()->set_port_description("Ethernet31");
  roce->mutable_lldp()->set_source("lldpd");
  auto* unheard = device->add_ports();  // lldpd heard no one on it
  unheard->set_port_num(2);
  unheard->set_netdev("ens2f1np1");
  unheard->set_roce_ipv4("10.1.5.11");

  const std::vector<HostLldp> live = hosts_lldp_of("gpu07", inventory);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].netdev, "0000:3b:00.0");
  EXPECT_EQ(live[0].address, "192.168.1.11");
  EXPECT_TRUE(live[0].from_frames);
  EXPECT_EQ(live[1].agent, "gpu07");
  EXPECT_EQ(live[1].netdev, "ens2f0np0");
  EXPECT_EQ(live[1].neighbour.local_port, "ens2f0np0");
  EXPECT_EQ(live[1].address, "10.1.4.11");
  EXPECT_FALSE(live[1].from_frames);
  EXPECT_EQ(live[1].neighbour.port_description, "Ethernet31");
  EXPECT_LE(live[1].neighbour.system_name.size(), kMaxLldpTextBytes);

  RunOutcome outcome;
  AgentView agent;
  agent.name = "gpu07";
  agent.inventory = inventory;
  outcome.agents.push_back(agent);
  // Discovery also names a port without an address by its agent; the cabling check cannot place it.
  auto read_back = report_evidence_text(report_json(outcome).dump(), "report.json").hosts;
  std::erase_if(read_back, [](const HostLldp& host) { return host.address.empty(); });
  ASSERT_EQ(read_back.size(), live.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(read_back[i].agent, live[i].agent);
    EXPECT_EQ(read_back[i].address, live[i].address);
    EXPECT_EQ(read_back[i].netdev, live[i].netdev);
    EXPECT_EQ(read_back[i].from_frames, live[i].from_frames);
    EXPECT_EQ(read_back[i].neighbour.system_name, live[i].neighbour.system_name);
    EXPECT_EQ(read_back[i].neighbour.port_id, live[i].neighbour.port_id);
    EXPECT_EQ(read_back[i].neighbour.port_description, live[i].neighbour.port_description);
  }
}

// A leaf-spine whose leaves are read (their ports' addresses and prefixes from IP-MIB) and whose
// spines are not: the traced hops place each spine's address at its port facing the hop before,
// by the leaf port's subnet; where no subnet says, by the one device cabled to both neighbours.
TEST(TopologyDiscovery, TracedHopsPlaceTheAddressesOfSwitchesNobodyReadAtThePortTheProbeCameIn) {
  const auto seed = load_topology_text(R"(devices:
  l1: {management: {address: 10.0.0.1, snmp: c}}
  l2: {management: {address: 10.0.0.2, snmp: c}}
  l1h1: {interfaces: {port: 192.168.1.11}}
  l2h1: {interfaces: {port: 192.168.2.11}}
)",
                                       "seed.yaml");
  std::vector<SwitchReading> readings(2);
  const auto leaf = [](SwitchReading& reading, const std::string& name, int n) {
    reading.device = name;
    reading.lldp_read = true;
    reading.lldp = {{"s1", "s1", name, "", ""}, {"s2", "s2", name, "", ""}, {"s3", "s3", name, "", ""}};
    reading.port_addresses = {{"s1", {fmt::format("172.16.{}.0", n)}},
                              {"s2", {fmt::format("172.16.{}.0", 10 + n)}},
                              {"s3", {fmt::format("172.16.{}.0", 20 + n)}},
                              {"h1", {fmt::format("192.168.{}.1", n)}},
                              {"lo", {fmt::format("10.1.0.{}", n)}}};
    for (const auto& [port, addresses] : reading.port_addresses) {
      reading.prefix_lengths[addresses.front()] = port == "h1" ? 24 : port == "lo" ? 32 : 31;
    }
    reading.prefix_lengths.erase(fmt::format("172.16.{}.0", 20 + n));  // s3's: no mask given
  };
  leaf(readings[0], "l1", 1);
  leaf(readings[1], "l2", 2);
  HostLldp a, b;
  a.agent = "a", a.address = "192.168.1.11", a.netdev = "ens1";
  a.neighbour = {"ens1", "l1", "h1", "", ""};
  b.agent = "b", b.address = "192.168.2.11", b.netdev = "ens1";
  b.neighbour = {"ens1", "l2", "h1", "", ""};
  std::vector<TracedPath> paths = {
      {"192.168.1.11", "192.168.2.11", {"192.168.1.1", "172.16.1.1", "172.16.2.0", "192.168.2.11"}},    // via s1
      {"192.168.1.11", "192.168.2.11", {"192.168.1.1", "172.16.11.1", "172.16.12.0", "192.168.2.11"}},  // via s2
      {"192.168.2.11", "192.168.1.11", {"192.168.2.1", "172.16.12.1", "", "192.168.1.11"}},  // TTL 3 unanswered
      // Via s3, whose leaf ports give no mask, and answering from its loopback: s1, s2 and s3 are
      // all cabled to both leaves, so nothing tells which.
      {"192.168.1.11", "192.168.2.11", {"192.168.1.1", "10.2.0.3", "172.16.22.0", "192.168.2.11"}},
  };
  const DiscoveredTopology found = discover_topology({seed, readings, {a, b}, paths});
  const auto topology = load_topology_text(found.yaml, "discovered.yaml");
  const auto at = [&](const std::string& address) {
    const auto place = topology.find(address);
    return place ? place->device + ":" + place->interface : std::string("nowhere");
  };
  EXPECT_EQ(at("172.16.1.0"), "l1:s1") << "IP-MIB's";
  EXPECT_EQ(at("10.1.0.1"), "l1:lo") << "a loopback is a port's address too";
  EXPECT_EQ(at("172.16.1.1"), "s1:l1") << found.yaml;
  EXPECT_EQ(at("172.16.11.1"), "s2:l1");
  EXPECT_EQ(at("172.16.12.1"), "s2:l2") << "the reverse path's probe came in from l2";
  EXPECT_EQ(at("10.2.0.3"), "nowhere");
  EXPECT_EQ(found.traced_addresses, 3u);
  EXPECT_THAT(found.notes, ::testing::Contains(HasSubstr("1 traced hop address placed on no device")));

  // Where one device alone is cabled to both sides, the hop is on it even without a subnet: here
  // only s3 joins l1 to a leaf l3 that s3 alone reaches.
  readings[0].prefix_lengths.clear();
  SwitchReading l3;
  l3.device = "l3";
  l3.lldp_read = true;
  l3.lldp = {{"s3", "s3", "l3", "", ""}};
  l3.port_addresses = {{"s3", {"172.16.23.0"}}};
  readings.push_back(l3);
  paths = {{"192.168.1.11", "172.16.23.0", {"192.168.1.1", "10.2.0.3", "172.16.23.0"}}};
  const DiscoveredTopology by_neighbours = discover_topology({seed, readings, {a, b}, paths});
  EXPECT_EQ(load_topology_text(by_neighbours.yaml, "d.yaml").find("10.2.0.3")->interface, "l1") << by_neighbours.yaml;

  // Two paths putting one address on two devices place it on neither.
  paths = {{"192.168.1.11", "172.16.23.0", {"192.168.1.1", "10.2.0.3", "172.16.23.0"}},
           {"192.168.2.11", "192.168.1.11", {"192.168.2.1", "10.2.0.3", "192.168.1.1", "192.168.1.11"}}};
  // l1 reaches s1 and s3, l2 s1 alone: the first path puts 10.2.0.3 on s3, the second on s1.
  readings[0].lldp = {{"s1", "s1", "l1", "", ""}, {"s3", "s3", "l1", "", ""}};
  readings[1].lldp = {{"s1", "s1", "l2", "", ""}};
  const DiscoveredTopology conflict = discover_topology({seed, readings, {a, b}, paths});
  EXPECT_FALSE(load_topology_text(conflict.yaml, "d.yaml").find("10.2.0.3")) << conflict.yaml;
  EXPECT_THAT(conflict.notes, ::testing::Contains(HasSubstr("traced hop 10.2.0.3 is on different devices")));
}

TEST(TopologyDiscovery, AReportsTracedPathsAreReadBoundedAndEachHopByItsTtl) {
  const ReportEvidence evidence = report_evidence_text(R"({"agents": [], "tests": [{"localisation": {"flows": [
    {"flow": "192.168.1.11:49152 > 192.168.2.11:4791 udp",
     "path": [{"ttl": 3, "address": "192.168.2.11"}, {"ttl": 1, "address": "192.168.1.1"}, {"ttl": 2, "address": ""}]},
    {"flow": "192.168.1.11:49153 > 192.168.2.11:4791 udp", "path": [{"ttl": 1, "address": ""}]},
    {"flow": "not a flow", "path": [{"ttl": 1, "address": "192.168.1.1"}]},
    {"flow": "192.168.1.11:1 > 192.168.2.11:2 udp", "path": [{"ttl": 1, "address": "1.2.3"}, {"ttl": 2, "address": "10.0.0.1"}]}
  ]}}, {"localisation": null}]})",
                                                       "r.json");
  ASSERT_EQ(evidence.paths.size(), 2u);  // one answered no TTL, one names no hosts
  EXPECT_EQ(evidence.paths[0].source, "192.168.1.11");
  EXPECT_EQ(evidence.paths[0].destination, "192.168.2.11");
  EXPECT_EQ(evidence.paths[0].hops, (std::vector<std::string>{"192.168.1.1", "", "192.168.2.11"}));
  EXPECT_EQ(evidence.paths[1].hops, (std::vector<std::string>{"", "10.0.0.1"}));
  EXPECT_THROW(report_evidence_text(R"({"agents": [], "tests": [{"localisation": {"flows": [
    {"flow": "192.168.1.11:1 > 192.168.2.11:2 udp", "path": [{"ttl": 4000000000, "address": "10.0.0.1"}]}]}}]})",
                                    "r.json"),
               std::runtime_error);
}

}  // namespace
}  // namespace tusk
