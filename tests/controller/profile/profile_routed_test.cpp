// Profile keys for routed fabrics: IPv4/UDP framing and the flows that cover ECMP paths.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <vector>

#include "controller/engines/dpdk/dpdk_slice.hpp"
#include "controller/engines/ecmp_coverage.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/engines/rdma/rdma_slice.hpp"
#include "controller/plan/planner.hpp"
#include "controller/profile/profile_loader.hpp"
#include "tests/support/profile_text.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

using testing::load_profile_yaml;
using testing::profile_error;
using testing::profile_errors;
using testing::text_of;

// A profile whose one test has `keys` (each line indented as a test key) after its name, engine
// and duration: the keys start on line 7.
std::string with_keys(const std::string& keys) {
  return "\nname: fabric\nagents: {count: 4}\ntests:\n  - name: t\n    engine: dpdk\n    duration: 1s\n" + keys;
}

TEST(EcmpCoverage, FlowsSoEveryPathCarriesOneAtTheAskedProbability) {
  EXPECT_EQ(flows_for_coverage(1, 0.99), 1u);
  // 2 paths at 99%: 1 - 0.99^(1/2) = 0.005013; ln / ln(1/2) = 7.64.
  EXPECT_EQ(flows_for_coverage(2, 0.99), 8u);
  EXPECT_EQ(flows_for_coverage(4, 0.99), 21u);
  EXPECT_EQ(flows_for_coverage(8, 0.95), 38u);
  EXPECT_EQ(flows_for_coverage(2, 0.5), 2u);
  EXPECT_THROW(flows_for_coverage(0, 0.99), std::invalid_argument);
  EXPECT_THROW(flows_for_coverage(2, 1.0), std::invalid_argument);
}

TEST(EcmpCoverage, TheCountItGivesCoversEveryPathThatOftenWhenFlowsHashAtRandom) {
  // A check of the formula against chance itself: throw n flows onto m paths many times.
  std::uint64_t state = 88172645463325252ull;
  const auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (const auto& [paths, coverage] : std::vector<std::pair<std::uint32_t, double>>{{2, 0.99}, {4, 0.95}, {8, 0.9}}) {
    const std::uint32_t flows = flows_for_coverage(paths, coverage);
    int covered = 0;
    constexpr int kTrials = 20000;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<bool> hit(paths);
      for (std::uint32_t f = 0; f < flows; ++f) hit[next() % paths] = true;
      covered += std::all_of(hit.begin(), hit.end(), [](bool b) { return b; });
    }
    EXPECT_GE(covered, coverage * kTrials * 0.995) << paths << " paths, " << flows << " flows";
  }
}

TEST(ProfileRouted, Ipv4UdpKeysReachThePlan) {
  const Profile profile = load_profile_yaml(with_keys(R"(    encapsulation: ipv4_udp
    dscp: 26
    ecn: 1
    ttl: 16
    udp_port: 5000
    udp_source_port: 40000
    flows_per_peer: 4
)"));
  const auto& d = dpdk::params(profile.tests.at(0));
  EXPECT_EQ(d.encapsulation(), "ipv4_udp");
  EXPECT_EQ(d.dscp(), 26u);
  EXPECT_EQ(d.ecn(), 1u);
  EXPECT_EQ(d.ttl(), 16u);
  EXPECT_EQ(d.udp_port(), 5000u);
  EXPECT_EQ(d.udp_source_port(), 40000u);
  EXPECT_EQ(d.flows_per_peer(), 4u);
}

TEST(ProfileRouted, DefaultsAreOneEthernetFlow) {
  const proto::DpdkTest d = dpdk::params(load_profile_yaml(with_keys("")).tests.at(0));
  EXPECT_EQ(d.encapsulation(), "ethernet");
  EXPECT_EQ(d.flows_per_peer(), 1u);
  EXPECT_EQ(d.ttl(), 64u);
  EXPECT_EQ(d.udp_port(), 0x88B5u);
}

TEST(ProfileRouted, DeclaredPathsBecomeTheFlowCount) {
  auto d = dpdk::params(load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    ecmp_paths: 2\n")).tests.at(0));
  EXPECT_EQ(d.flows_per_peer(), 8u);  // 99% by default
  d = dpdk::params(
      load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    ecmp_paths: 4\n    coverage: 95%\n")).tests.at(0));
  EXPECT_EQ(d.flows_per_peer(), flows_for_coverage(4, 0.95));
  EXPECT_DOUBLE_EQ(d.coverage(), 0.95);
  EXPECT_EQ(d.ecmp_paths(), 4u);
}

TEST(ProfileRouted, TheFlowsAndPathsShowInThePlanLine) {
  proto::Plan plan;
  auto& d = *plan.mutable_dpdk();
  d = dpdk::params(
      load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    ecmp_paths: 2\n    dscp: 10\n")).tests.at(0));
  const std::string line = find_engine("dpdk")->plan_line(plan);
  EXPECT_NE(line.find("ipv4_udp dscp 10 ecn 0 ttl 64 | 8 flows/peer, udp 49152-49159->34997 (covers 2 paths at 99%)"),
            std::string::npos)
      << line;
}

TEST(ProfileRouted, Ipv4FieldsWithoutIpv4FramesAreAnError) {
  EXPECT_EQ(profile_error(with_keys("    dscp: 10\n")),
            "bad.yaml:7:11: tests[0].dscp: dscp is an IPv4/UDP field: set encapsulation: ipv4_udp");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    ethertype: 0x88b6\n")),
            "bad.yaml:8:16: tests[0].ethertype: ipv4_udp frames carry EtherType 0x0800: leave ethertype out, or use "
            "encapsulation: ethernet");
}

TEST(ProfileRouted, BadRoutedValuesNameTheirLine) {
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    dscp: 64\n")),
            "bad.yaml:8:11: tests[0].dscp: dscp 64 is above the maximum 63");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    ttl: 0\n")),
            "bad.yaml:8:10: tests[0].ttl: ttl 0 is below the minimum 1");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: vxlan\n")).substr(0, 39),
            "bad.yaml:7:20: tests[0].encapsulation: ");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    coverage: 90%\n")),
            "bad.yaml:8:15: tests[0].coverage: coverage is the chance that every ECMP path carries a flow: declare "
            "ecmp_paths too");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    ecmp_paths: 32\n")),
            "bad.yaml:8:17: tests[0].ecmp_paths: 32 paths at 99% coverage need 255 flows per peer, above the 128 a "
            "receiver tracks; lower coverage or give flows_per_peer");
  EXPECT_EQ(
      profile_error(with_keys("    encapsulation: ipv4_udp\n    udp_source_port: 65530\n    flows_per_peer: 8\n")),
      "bad.yaml:8:22: tests[0].udp_source_port: 8 flows from source port 65530 would pass 65535");
}

TEST(ProfileRouted, SeveralDscpClassesShareTheFlowsEvenly) {
  auto d = dpdk::params(
      load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    dscp: [26, 46, 0]\n    flows_per_peer: 6\n"))
          .tests.at(0));
  EXPECT_EQ(d.dscp(), 26u);
  EXPECT_EQ(std::vector<std::uint32_t>(d.dscp_classes().begin(), d.dscp_classes().end()),
            (std::vector<std::uint32_t>{26, 46, 0}));
  EXPECT_EQ(d.flows_per_peer(), 6u);
  // Flows worked out from the paths are rounded up to a multiple of the classes.
  d = dpdk::params(
      load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    ecmp_paths: 2\n    dscp: [10, 20, 30]\n"))
          .tests.at(0));
  EXPECT_EQ(d.flows_per_peer(), 9u);  // 8 for the paths, then 3 per class
  // One class is the plain field.
  d = dpdk::params(load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    dscp: [34]\n")).tests.at(0));
  EXPECT_EQ(d.dscp(), 34u);
  EXPECT_EQ(d.dscp_classes_size(), 0);
  proto::Plan plan;
  *plan.mutable_dpdk() = dpdk::params(
      load_profile_yaml(
          with_keys("    encapsulation: ipv4_udp\n    dscp: [26, 46]\n    flows_per_peer: 4\n    ecn: ect0\n"))
          .tests.at(0));
  const std::string line = find_engine("dpdk")->plan_line(plan);
  EXPECT_NE(line.find("ipv4_udp dscp classes 26,46 ecn 2 ttl 64 | 4 flows/peer"), std::string::npos) << line;
}

TEST(ProfileRouted, EcnTakesRfc3168NamesOrNumbers) {
  for (const auto& [text, codepoint] : std::vector<std::pair<std::string, std::uint32_t>>{
           {"not_ect", 0}, {"ect1", 1}, {"ect0", 2}, {"ce", 3}, {"2", 2}}) {
    EXPECT_EQ(
        dpdk::params(load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    ecn: " + text + "\n")).tests.at(0))
            .ecn(),
        codepoint)
        << text;
  }
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    ecn: ect\n")).substr(0, 37),
            "bad.yaml:8:10: tests[0].ecn: 'ect' is");
}

TEST(ProfileRouted, DscpClassesAndTosThresholdsAreChecked) {
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    dscp: [26, 26]\n")),
            "bad.yaml:8:11: tests[0].dscp: dscp: class 26 is listed twice");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    dscp: [26, 64]\n")),
            "bad.yaml:8:16: tests[0].dscp[1]: dscp[1] 64 is above the maximum 63");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    dscp: [26, 46]\n    flows_per_peer: 3\n")),
            "bad.yaml:9:21: tests[0].flows_per_peer: 3 flows per peer cannot carry 2 DSCP classes evenly: give a "
            "multiple of 2");
  EXPECT_EQ(profile_error(with_keys("    thresholds:\n      min_ce_marked: 1\n")),
            "bad.yaml:8:7: tests[0].min_ce_marked: min_ce_marked reads the IPv4 header's ECN field: set "
            "encapsulation: ipv4_udp");
  const Profile judged =
      load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    thresholds:\n      max_ce_marked: 10\n"
                                  "      min_ce_marked: 1\n      max_dscp_rewrites: 0\n"));
  ASSERT_EQ(judged.tests.at(0).thresholds.size() >= 3, true);
}

TEST(ProfileRouted, FramesTooSmallForTheIpv4HeadersAreAnError) {
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    frame_size: 64\n")),
            "bad.yaml:8:17: tests[0].frame_size: 64 B frames cannot hold ipv4_udp headers: the least is 76 B");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    frame_sizes: imix\n")),
            "bad.yaml:8:18: tests[0].frame_sizes: 64 B frames cannot hold ipv4_udp headers: the least is 76 B");
  EXPECT_EQ(profile_error(with_keys("    encapsulation: ipv4_udp\n    vlan: 10\n    frame_size: 78\n")),
            "bad.yaml:9:17: tests[0].frame_size: 78 B frames cannot hold ipv4_udp headers: the least is 80 B with a "
            "VLAN tag");
  EXPECT_NO_THROW(load_profile_yaml(with_keys("    encapsulation: ipv4_udp\n    frame_size: 76\n")));
  EXPECT_NO_THROW(load_profile_yaml(with_keys("    frame_size: 64\n")));
}

TEST(ProfileRouted, FlowsAndPathsCannotBothBeSet) {
  EXPECT_EQ(profile_error(with_keys("    flows_per_peer: 2\n    ecmp_paths: 2\n")),
            "bad.yaml:8:17: tests[0].ecmp_paths: flows_per_peer and ecmp_paths cannot both be set: ecmp_paths works "
            "out the flows per peer");
}

TEST(ProfileRouted, RdmaQpsCoverTheDeclaredPathsToo) {
  const std::string rdma =
      "\nname: fabric\nagents: {count: 4}\ntests:\n  - name: t\n    engine: rdma\n    duration: 1s\n";
  auto r = rdma::params(load_profile_yaml(rdma + "    ecmp_paths: 4\n").tests.at(0));
  EXPECT_EQ(r.qps_per_peer(), 21u);
  r = rdma::params(load_profile_yaml(rdma + "    ecmp_paths: 2\n    coverage: 90%\n").tests.at(0));
  EXPECT_EQ(r.qps_per_peer(), flows_for_coverage(2, 0.9));
  EXPECT_EQ(profile_error(rdma + "    qps_per_peer: 2\n    ecmp_paths: 2\n"),
            "bad.yaml:8:17: tests[0].ecmp_paths: qps_per_peer and ecmp_paths cannot both be set: ecmp_paths works "
            "out the QPs per peer");
  EXPECT_EQ(profile_error(rdma + "    coverage: 90%\n"),
            "bad.yaml:7:15: tests[0].coverage: coverage is the chance that every ECMP path carries a flow: declare "
            "ecmp_paths too");
}

TEST(ProfileRouted, ThePeerGetsTheIpv4AddressOfItsFirstPort) {
  proto::Inventory from, to;
  auto& port = *to.add_dpdk_ports();
  port.set_mac("02:74:6b:01:01:10");
  port.set_ipv4("192.168.101.10/24");
  proto::PeerEndpoint peer;
  describe_peer("dpdk", from, to, peer);
  EXPECT_EQ(peer.address(), "02:74:6b:01:01:10");
  EXPECT_EQ(peer.ipv4(), "192.168.101.10");
  proto::PeerEndpoint rdma_peer;
  describe_peer("rdma", from, to, rdma_peer);
  EXPECT_EQ(rdma_peer.ipv4(), "");
}

}  // namespace
}  // namespace tusk
