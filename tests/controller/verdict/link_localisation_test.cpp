// Localisation on a modelled leaf-spine fabric, addressed as the fabric lab is: every flow's path
// follows the spine its source port hashes to, and a fault on one directed link makes the flows
// through it fail and the probes that cross it go unanswered or arrive damaged. Every link of the
// fabric, in both directions, is tried in turn: the top suspect must be that link and no clean
// link a suspect. Hosts' own faults are named as such.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/counter_names.hpp"
#include "controller/method/method_result.hpp"
#include "controller/method/schedule_ledger.hpp"
#include "controller/method/schedule_ledger_flows.hpp"
#include "controller/method/step_fold.hpp"
#include "controller/outcome/stream_windows.hpp"
#include "controller/plan/shift_schedule.hpp"
#include "controller/report/localisation_json.hpp"
#include "controller/report/report_text.hpp"
#include "controller/run/test_judgement.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/flow_table.hpp"
#include "controller/verdict/link_coverage.hpp"
#include "controller/verdict/link_localisation.hpp"
#include "controller/verdict/path_faults.hpp"
#include "tests/support/leaf_spine_model.hpp"
#include "tests/support/named_sample.hpp"
#include "tests/support/series_scratch.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;

using Fabric = testing::LeafSpineShape;
using testing::gateway;
using testing::host_address;
using testing::lab_topology;
using testing::spine_end;

// One fault on a directed link, by its key in the topology's names (e.g. "l1:s2 -> s2:l1").
struct Fault {
  std::string link;
  double loss = 0;    // share of frames and probes lost crossing it
  double damage = 0;  // share of probes arriving damaged
  std::string metric = "loss_ratio";
  // A flap of cable l<leaf>-s<spine> (link empty): for a share of the test the spine has no route to
  // the leaf's hosts, so flows from other leaves through it die there (probes to the spine too: a
  // router drops what it cannot route before it looks at the TTL), while the leaf's own flows move
  // to another spine.
  int flap_leaf = 0, flap_spine = 0;
  double flap_share = 0.08;
  // A router (by the address it answers from) that answers only a share of the probes that reach
  // it (link empty): an ICMP rate limit or a busy control plane, not a fault on any link.
  std::string quiet_router{};
  double answered_share = 1;
  // Destinations that answer no probe (an RDMA NIC drops what it cannot parse; link empty): each
  // trace ends at the far leaf, the last hop that answers.
  bool silent_destinations = false;
};

using Endpoint = testing::ModelHost;

// The streams a run on the fabric reports: per ordered host pair, `flows` flows, each hashed to a
// spine by its source port; tx streams carry the path trace.
// With `frames`, each receiver's stream counts what it got of them, lost and damaged, as a DPDK
// stream does; without, flows are judged pass or fail only, as an RDMA QP's are.
std::vector<StreamVerdict> run_fabric(const Fabric& fabric, const std::vector<Fault>& faults,
                                      const std::function<bool(const Endpoint&)>& host_drops = nullptr,
                                      std::uint64_t frames = 0) {
  const std::vector<Endpoint> endpoints = testing::model_hosts(fabric);
  std::vector<StreamVerdict> streams;
  for (const auto& src : endpoints) {
    for (const auto& dst : endpoints) {
      if (src.agent == dst.agent) continue;
      for (int k = 0; k < fabric.flows; ++k) {
        const int port = 49152 + k;
        const testing::ModelPath path = testing::model_path(fabric, src, dst, port);
        const int spine = path.spine;
        const std::vector<std::string>& links = path.links;
        const std::vector<std::string>& answers = path.answers;

        proto::StreamCounters tx;
        tx.set_kind("tx");
        tx.set_peer(dst.agent);
        tx.set_stream_id(fmt::format("tx:{}/{}", dst.agent, k + 1));
        tx.set_sender_stream_id(k + 1);
        auto& flow = *tx.mutable_flow();
        flow.set_src_address(host_address(src.leaf, src.host));
        flow.set_dst_address(host_address(dst.leaf, dst.host));
        flow.set_src_port(port);
        flow.set_dst_port(0x88B5);
        flow.set_protocol("udp");
        double reach = 1, intact = 1;
        std::string failed_on;
        double moved_at_2 = 0;  // share of TTL 2 probes another spine answered
        for (const auto& fault : faults) {
          if (fault.flap_leaf == 0 || src.leaf == dst.leaf || spine != fault.flap_spine) continue;
          if (dst.leaf == fault.flap_leaf) {
            reach *= 1 - fault.flap_share;  // from TTL 2 on: dropped at the spine
            failed_on = "link_flaps";
          } else if (src.leaf == fault.flap_leaf) {
            moved_at_2 = fault.flap_share;
          }
        }
        const bool silent =
            std::any_of(faults.begin(), faults.end(), [](const Fault& f) { return f.silent_destinations; });
        for (std::size_t ttl = 1; ttl <= links.size(); ++ttl) {
          if (silent && ttl == links.size()) {
            auto& unanswered = *tx.add_path();
            unanswered.set_ttl(static_cast<std::uint32_t>(ttl));
            unanswered.set_probes(400);
            break;
          }
          for (const auto& fault : faults) {
            if (fault.link == links[ttl - 1]) {
              reach *= 1 - fault.loss;
              intact *= 1 - fault.damage;
              failed_on = fault.metric;
            }
          }
          auto& hop = *tx.add_path();
          hop.set_ttl(static_cast<std::uint32_t>(ttl));
          hop.set_address(answers[ttl - 1]);
          hop.set_probes(400);
          double answered = 1;
          for (const auto& fault : faults) {
            if (!fault.quiet_router.empty() && fault.quiet_router == answers[ttl - 1]) answered *= fault.answered_share;
          }
          hop.set_answers(static_cast<std::uint64_t>(
              std::llround(400 * (ttl == 1 ? 1 : reach) * (ttl == 2 ? 1 - moved_at_2 : 1) * answered)));
          if (ttl == 2 && moved_at_2 > 0) {
            hop.set_other_address(spine_end(src.leaf, spine % fabric.spines + 1));
            hop.set_other_answers(400 - hop.answers());
          }
          hop.set_damaged(static_cast<std::uint64_t>(std::llround(static_cast<double>(hop.answers()) * (1 - intact))));
          hop.set_destination(ttl == links.size());
        }
        StreamVerdict sent;
        sent.agent = src.agent;
        sent.stream = tx;
        streams.push_back(sent);

        StreamVerdict rx;
        rx.agent = dst.agent;
        rx.stream.set_kind("rx");
        rx.stream.set_peer(src.agent);
        rx.stream.set_sender_stream_id(k + 1);
        *rx.stream.mutable_flow() = flow;
        if (frames > 0) {
          const auto lost = static_cast<std::uint64_t>(std::llround(static_cast<double>(frames) * (1 - reach)));
          const auto damaged =
              static_cast<std::uint64_t>(std::llround(static_cast<double>(frames - lost) * (1 - intact)));
          (*rx.stream.mutable_counters())["rx_frames"] = frames - lost;
          (*rx.stream.mutable_counters())["lost_frames"] = lost;
          (*rx.stream.mutable_counters())["errored_frames"] = damaged;
        }
        ThresholdCheck check;
        check.threshold.metric = failed_on.empty() ? "loss_ratio" : failed_on;
        check.passed = failed_on.empty();
        if (host_drops && host_drops(dst)) {
          check.threshold.metric = "loss_ratio";
          check.passed = false;
          check.caveat = "loss_ratio not judged: the receiving host dropped frames itself";
          check.not_the_link = ThresholdCheck::NotTheLink::HostDrops;
        }
        rx.checks.push_back(check);
        streams.push_back(rx);
      }
    }
  }
  return streams;
}

std::vector<std::string> inter_switch_links(const Fabric& fabric) {
  std::vector<std::string> links;
  for (int i = 1; i <= fabric.leaves; ++i) {
    for (int j = 1; j <= fabric.spines; ++j) {
      links.push_back(fmt::format("l{0}:s{1} -> s{1}:l{0}", i, j));
      links.push_back(fmt::format("s{1}:l{0} -> l{0}:s{1}", i, j));
    }
  }
  return links;
}

// The fabric's streams with each receiver's median one-way latency: a base with a scatter of
// +-600 ns, plus `added_ns` on the flows through each link of `delayed`; no flow fails.
std::vector<StreamVerdict> with_delays(const Fabric& fabric, const std::vector<std::string>& delayed, double added_ns) {
  std::vector<Fault> faults;
  for (const auto& link : delayed) faults.push_back({link, 0.01, 0, "loss_ratio"});
  std::vector<std::vector<StreamVerdict>> marked;  // which flows cross each link: those a fault there fails
  for (const auto& fault : faults) marked.push_back(run_fabric(fabric, {fault}, nullptr, 100'000));
  auto streams = run_fabric(fabric, {}, nullptr, 100'000);
  int k = 0;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (streams[i].stream.kind() != "rx") continue;
    double latency = 12'000 + 300.0 * ((k++ * 7) % 5 - 2);
    for (const auto& one : marked) latency += one[i].checks.at(0).passed ? 0 : added_ns;
    (*streams[i].stream.mutable_gauges())[std::string(counters::kLatencyP50Ns)] = latency;
  }
  return streams;
}

class EveryLink : public ::testing::TestWithParam<Fabric> {};

TEST_P(EveryLink, LossOnAnyLinkInEitherDirectionNamesThatLink) {
  const Fabric fabric = GetParam();
  const FabricTopology topology = lab_topology(fabric);
  for (const auto& link : inter_switch_links(fabric)) {
    const auto result = localise(run_fabric(fabric, {{link, 0.02, 0, "loss_ratio"}}), &topology);
    ASSERT_NE(result.top(), nullptr) << link << ": " << result.conclusion;
    EXPECT_EQ(result.top()->key, link) << result.conclusion;
    EXPECT_EQ(result.suspects.size(), 1u) << link << ": no clean link is a suspect; " << result.conclusion;
    EXPECT_TRUE(result.hosts.empty()) << link;
    EXPECT_THAT(result.top()->name, HasSubstr("cable C-"));
  }
}

TEST_P(EveryLink, DamageOnAnyLinkNamesThatLink) {
  const Fabric fabric = GetParam();
  const FabricTopology topology = lab_topology(fabric);
  for (const auto& link : inter_switch_links(fabric)) {
    const auto result = localise(run_fabric(fabric, {{link, 0, 0.01, "ber"}}), &topology);
    ASSERT_NE(result.top(), nullptr) << link << ": " << result.conclusion;
    EXPECT_EQ(result.top()->key, link) << result.conclusion;
    EXPECT_EQ(result.suspects.size(), 1u) << result.conclusion;
    EXPECT_THAT(result.top()->next_steps.front(), HasSubstr("FEC"));
  }
}

TEST_P(EveryLink, DelayOnAnyLinkInEitherDirectionNamesThatLinkWithTheDelay) {
  const Fabric fabric = GetParam();
  const FabricTopology topology = lab_topology(fabric);
  for (const auto& link : inter_switch_links(fabric)) {
    const auto result = localise(with_delays(fabric, {link}, 50'000), &topology);
    ASSERT_EQ(result.delays.size(), 1u) << link << ": " << result.conclusion;
    EXPECT_TRUE(result.delays[0].key == link || std::find(result.delays[0].tied.begin(), result.delays[0].tied.end(),
                                                          link) != result.delays[0].tied.end())
        << link << ": " << result.conclusion;
    EXPECT_NEAR(result.delays[0].added_ns, 50'000, 1'000) << link;
    EXPECT_TRUE(result.suspects.empty()) << link << ": " << result.conclusion;
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, EveryLink,
                         ::testing::Values(Fabric{2, 2, 2, 8}, Fabric{3, 2, 2, 8}, Fabric{2, 4, 2, 16},
                                           Fabric{4, 3, 1, 12}),
                         [](const ::testing::TestParamInfo<Fabric>& shape) {
                           const Fabric& f = shape.param;
                           return fmt::format("Leaves{}Spines{}Hosts{}Flows{}", f.leaves, f.spines, f.hosts, f.flows);
                         });

TEST_P(EveryLink, AFlapOfAnyCableNamesThatCable) {
  const Fabric fabric = GetParam();
  const FabricTopology topology = lab_topology(fabric);
  for (int leaf = 1; leaf <= fabric.leaves; ++leaf) {
    for (int spine = 1; spine <= fabric.spines; ++spine) {
      Fault flap;
      flap.flap_leaf = leaf;
      flap.flap_spine = spine;
      const auto result = localise(run_fabric(fabric, {flap}), &topology);
      const std::string down = fmt::format("s{1}:l{0} -> l{0}:s{1}", leaf, spine);
      ASSERT_NE(result.top(), nullptr) << down << ": " << result.conclusion;
      EXPECT_EQ(result.top()->key, down) << result.conclusion;
      EXPECT_EQ(result.suspects.size(), 1u) << result.conclusion;
      EXPECT_THAT(result.top()->evidence, HasSubstr("another path")) << result.conclusion;
    }
  }
}

// RDMA QPs through a lossy link retransmit and slow down; no threshold fails them, but they are
// far slower than their siblings between the same hosts.
TEST(Localisation, FlowsFarSlowerThanTheirSiblingsFailAndNameTheLink) {
  const Fabric fabric{2, 2, 1, 11};
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.03, 0, "loss_ratio"}});
  int k = 0;
  for (auto& s : streams) {
    if (s.stream.kind() != "rx") continue;
    const bool slow = !s.checks[0].passed;
    s.checks[0].passed = true;
    s.metrics["throughput_bps"] = slow ? 1.7e6 + 0.1e6 * (k % 4) : 4.6e6 + 0.4e6 * (k % 10);
    ++k;
  }
  const auto result = localise(streams, &topology);
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, "l1:s1 -> s1:l1");
  EXPECT_THAT(result.top()->faults, ::testing::Contains("throughput_below_siblings"));
  // Siblings that merely differ (4.6 to 8.2 Mbit/s) are not slow.
  auto clean = run_fabric(fabric, {});
  k = 0;
  for (auto& s : clean) {
    if (s.stream.kind() == "rx") s.metrics["throughput_bps"] = 4.6e6 + 0.4e6 * (k++ % 10);
  }
  EXPECT_EQ(localise(clean, &topology).conclusion, "");
}

TEST(Localisation, TwoFaultsAreBothNamed) {
  const Fabric fabric{3, 2, 2, 8};
  const FabricTopology topology = lab_topology(fabric);
  const auto result = localise(
      run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.02, 0, "loss_ratio"}, {"s2:l3 -> l3:s2", 0, 0.01, "ber"}}), &topology);
  ASSERT_EQ(result.suspects.size(), 2u) << result.conclusion;
  std::vector<std::string> keys{result.suspects[0].key, result.suspects[1].key};
  EXPECT_THAT(keys, ::testing::UnorderedElementsAre("l1:s1 -> s1:l1", "s2:l3 -> l3:s2"));
}

// What a localisation named: its suspects of medium or high confidence (with the links tied to
// them) and, for each host it blamed, both directions of the host's cable.
std::set<std::string> named_links(const Localisation& found, const Fabric& fabric) {
  std::set<std::string> named;
  for (const auto& suspect : found.suspects) {
    if (suspect.confidence == Confidence::Low) continue;
    named.insert(suspect.key);
    named.insert(suspect.tied.begin(), suspect.tied.end());
  }
  for (const auto& host : found.hosts) {
    for (const auto& link : testing::host_cable(fabric, host.agent)) named.insert(link);
  }
  return named;
}

std::vector<std::string> suspect_lines(const Localisation& found) {
  std::vector<std::string> lines;
  for (const auto& s : found.suspects)
    lines.push_back(
        fmt::format("{} {} {} {}: {}", s.key, to_string(s.kind), s.rate, to_string(s.confidence), s.evidence));
  return lines;
}

// Several faults at once, of different kinds, on links whose flows share hosts (a leaf's uplink
// and another spine's downlink: the flows between the two leaves' hosts cross one or both, and
// every host's cable carries flows of both): every fault named, no healthy link.
class SeveralFaults : public ::testing::TestWithParam<Fabric> {};

TEST_P(SeveralFaults, TwoAndThreeFaultsOfDifferentKindsAreAllNamedAndNoHealthyLink) {
  const Fabric fabric = GetParam();
  const FabricTopology topology = lab_topology(fabric);
  const int spines = fabric.spines, leaves = fabric.all_leaves();
  std::vector<std::vector<Fault>> sets;
  for (int a = 1; a <= spines; ++a) {
    const int b = a % spines + 1;  // another spine, where there is one
    sets.push_back({{testing::uplink(1, a), 0.02, 0, "loss_ratio"}, {testing::downlink(2, b), 0, 0.01, "ber"}});
    sets.push_back({{testing::uplink(1, a), 0.02, 0, "loss_ratio"},
                    {testing::downlink(2, b), 0, 0.01, "ber"},
                    {testing::leaf_to_host(leaves, 1), 0.005, 0, "loss_ratio"}});
    const int last_pods_spine = (fabric.pod_of_leaf(leaves) - 1) * spines + a;
    sets.push_back({{testing::downlink(leaves, last_pods_spine), 0.003, 0, "loss_ratio"},
                    {testing::uplink(2, b), 0, 0.002, "ber"},
                    {testing::host_to_leaf(1, 1), 0, 0.004, "ber"}});
  }
  if (fabric.cores > 0) {
    sets.push_back({{testing::spine_to_core(1, 1), 0.01, 0, "loss_ratio"},
                    {testing::core_to_spine(fabric.all_spines(), fabric.cores), 0, 0.01, "ber"},
                    {testing::uplink(1, 1), 0.002, 0, "loss_ratio"}});
  }
  for (const auto& faults : sets) {
    std::set<std::string> broken;
    std::string what;
    for (const auto& fault : faults) {
      broken.insert(fault.link);
      what += fmt::format("[{} loss {} damage {}] ", fault.link, fault.loss, fault.damage);
    }
    const auto found = localise(run_fabric(fabric, faults, nullptr, 100'000), &topology);
    const std::set<std::string> named = named_links(found, fabric);
    for (const auto& link : broken) {
      EXPECT_TRUE(named.contains(link)) << what << "\n"
                                        << link << " not named: " << found.conclusion << "\n"
                                        << ::testing::PrintToString(suspect_lines(found));
    }
    for (const auto& suspect : found.suspects) {
      if (suspect.confidence == Confidence::Low) continue;
      std::set<std::string> links{suspect.key};
      links.insert(suspect.tied.begin(), suspect.tied.end());
      EXPECT_TRUE(std::any_of(links.begin(), links.end(), [&](const auto& l) { return broken.contains(l); }))
          << what << "\n"
          << suspect.key << " is healthy: " << found.conclusion;
      EXPECT_GT(suspect.rate_high, suspect.rate_low) << suspect.key;
      EXPECT_LE(suspect.rate_low, suspect.rate) << suspect.key;
      EXPECT_GE(suspect.rate_high, suspect.rate) << suspect.key;
    }
    for (const auto& host : found.hosts) {
      const auto cable = testing::host_cable(fabric, host.agent);
      EXPECT_TRUE(std::any_of(cable.begin(), cable.end(), [&](const auto& l) { return broken.contains(l); }))
          << what << "\nhost " << host.agent << " blamed: " << found.conclusion;
    }
  }
}

TEST_P(SeveralFaults, TwoLinksThatAddDelayAreBothNamedAndNoOther) {
  const Fabric fabric = GetParam();
  const FabricTopology topology = lab_topology(fabric);
  for (int a = 1; a <= fabric.spines; ++a) {
    const int b = a % fabric.spines + 1;
    // Not leaf 1's uplink to a with leaf 2's downlink from b: on two leaves every flow from 1 to 2
    // would cross one of them, and a delay all siblings share is the pair's, not a link's.
    const std::vector<std::string> delayed{testing::uplink(1, a), testing::uplink(2, b)};
    const auto found = localise(with_delays(fabric, delayed, 40'000), &topology);
    std::set<std::string> named;
    for (const auto& delay : found.delays) {
      named.insert(delay.key);
      named.insert(delay.tied.begin(), delay.tied.end());
      EXPECT_NEAR(delay.added_ns, 40'000, 2'000) << delay.key << ": " << found.conclusion;
    }
    EXPECT_EQ(found.delays.size(), 2u) << found.conclusion;
    for (const auto& link : delayed) EXPECT_TRUE(named.contains(link)) << link << ": " << found.conclusion;
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, SeveralFaults,
                         ::testing::Values(Fabric{2, 2, 2, 8}, Fabric{3, 2, 2, 8}, Fabric{2, 4, 2, 16},
                                           Fabric{4, 3, 1, 12}, Fabric{3, 3, 1, 9}, Fabric{2, 2, 2, 8, 2, 2},
                                           Fabric{3, 2, 1, 8, 3, 4}),
                         [](const ::testing::TestParamInfo<Fabric>& shape) {
                           const Fabric& f = shape.param;
                           return fmt::format("Pods{}Cores{}Leaves{}Spines{}Hosts{}Flows{}", f.pods, f.cores, f.leaves,
                                              f.spines, f.hosts, f.flows);
                         });

// The case that named a healthy host cable first and missed the lossy uplink (issue 36): 3
// leaves x 3 spines, a host each, 2 % loss on l1's uplink to s1 and 1 % damage on s2's downlink
// to l3. Each is named with its kind and its rate; the hosts' cables, which carry flows of both
// and clean ones, are not.
TEST(Localisation, LossAndDamageAtOnceAreNamedWithTheirKindAndRate) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  const auto found =
      localise(run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.02, 0, "loss_ratio"}, {"s2:l3 -> l3:s2", 0, 0.01, "ber"}},
                          nullptr, 100'000),
               &topology);
  EXPECT_TRUE(found.hosts.empty()) << found.conclusion;
  ASSERT_EQ(found.suspects.size(), 2u) << found.conclusion;
  EXPECT_EQ(found.suspects[0].key, "l1:s1 -> s1:l1") << found.conclusion;
  EXPECT_EQ(found.suspects[0].kind, FaultKind::Loss);
  EXPECT_NEAR(found.suspects[0].rate, 0.02, 0.001);
  EXPECT_EQ(found.suspects[1].key, "s2:l3 -> l3:s2") << found.conclusion;
  EXPECT_EQ(found.suspects[1].kind, FaultKind::Damage);
  EXPECT_NEAR(found.suspects[1].rate, 0.01, 0.0005);
  for (const auto& suspect : found.suspects) EXPECT_NE(suspect.confidence, Confidence::Low) << suspect.evidence;
  EXPECT_THAT(found.conclusion, HasSubstr("also suspect link s2:l3 -> l3:s2"));
  EXPECT_THAT(found.suspects[0].evidence, HasSubstr("loses 2 % of the frames"));
}

// RDMA flows whose NIC counts per QP (mlx5 bound by RDMA netlink): each initiator's QP reports
// its retransmissions and the packets it sent, and those are a rate in the fit as DPDK's frames
// are; before, a QP was pass or fail only ("a ranking, not a rate").
TEST(Localisation, RdmaFlowsQpRetransmitsAreALossRateInTheFit) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.02, 0, "retransmits"}}, nullptr, 100'000);
  for (std::size_t i = 0; i + 1 < streams.size(); i += 2) {  // (the sender's, the receiver's) each
    StreamVerdict& flow = streams[i];
    StreamVerdict& sink = streams[i + 1];
    auto& counted = *sink.stream.mutable_counters();
    flow.stream.set_kind("flow");
    flow.checks = sink.checks;
    (*flow.stream.mutable_counters())[std::string(counters::kQpTxPackets)] =
        counted["rx_frames"] + counted["lost_frames"];
    (*flow.stream.mutable_counters())[std::string(counters::kQpRetransmits)] = counted["lost_frames"];
    sink.stream.set_kind("sink");
    sink.stream.clear_counters();
  }
  const auto found = localise(streams, &topology);
  ASSERT_EQ(found.suspects.size(), 1u) << found.conclusion;
  EXPECT_EQ(found.suspects[0].key, "l1:s1 -> s1:l1") << found.conclusion;
  EXPECT_EQ(found.suspects[0].kind, FaultKind::Loss);
  EXPECT_NEAR(found.suspects[0].rate, 0.02, 0.001) << found.conclusion;
  EXPECT_NE(found.suspects[0].confidence, Confidence::Low) << found.suspects[0].evidence;
}

// Latency as a kind: a link that queues adds to the one-way latency of every flow through it, and
// no flow fails (no threshold judges latency here). The flows between the same hosts on other
// paths are its evidence: the link is named with the delay it adds, and no other.
TEST(Localisation, ALinkThatAddsDelayIsNamedWithTheDelayWhenNoFlowFails) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  auto streams = with_delays(fabric, {"s2:l3 -> l3:s2"}, 80'000);
  const auto found = localise(streams, &topology);
  EXPECT_TRUE(found.suspects.empty()) << found.conclusion;
  ASSERT_EQ(found.delays.size(), 1u) << found.conclusion;
  EXPECT_EQ(found.delays[0].key, "s2:l3 -> l3:s2");
  EXPECT_NEAR(found.delays[0].added_ns, 80'000, 1'000);
  EXPECT_LT(found.delays[0].low_ns, 80'000);
  EXPECT_GT(found.delays[0].high_ns, 80'000);
  EXPECT_THAT(found.conclusion, HasSubstr("adds 80"));
  EXPECT_THAT(found.delays[0].evidence, HasSubstr("sibling"));

  // Without the added delay, nothing is named and there is nothing to conclude.
  for (auto& verdict : streams) {
    auto& gauges = *verdict.stream.mutable_gauges();
    if (const auto it = gauges.find(std::string(counters::kLatencyP50Ns)); it != gauges.end() && it->second > 50'000)
      it->second -= 80'000;
  }
  const auto clean = localise(streams, &topology);
  EXPECT_TRUE(clean.delays.empty()) << clean.conclusion;
  EXPECT_EQ(clean.conclusion, "");
}

// A link that damages frames also loses some: a bit flipped in a header makes a frame no receiver
// counts (a failed IP checksum, a wrong port), and a real link's FCS errors are dropped frames. One
// link, one suspect: named for the kind that makes its case, with the other kind's rate beside it,
// and the flows both explain (seen in the fabric lab: a downlink listed twice, damage at high
// confidence and the loss of one frame at low).
TEST(Localisation, ALinkThatDamagesAndLosesIsOneSuspectWithBothKinds) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  const auto found =
      localise(run_fabric(fabric, {{"s2:l3 -> l3:s2", 0.0005, 0.01, "ber"}}, nullptr, 100'000), &topology);
  EXPECT_TRUE(found.hosts.empty()) << found.conclusion;
  ASSERT_EQ(found.suspects.size(), 1u) << found.conclusion;
  const LinkSuspect& suspect = found.suspects[0];
  EXPECT_EQ(suspect.key, "s2:l3 -> l3:s2") << found.conclusion;
  EXPECT_EQ(suspect.kind, FaultKind::Damage);
  EXPECT_NEAR(suspect.rate, 0.01, 0.0005);
  EXPECT_NE(suspect.confidence, Confidence::Low) << suspect.evidence;
  ASSERT_EQ(suspect.also.size(), 1u) << suspect.evidence;
  EXPECT_EQ(suspect.also[0].kind, FaultKind::Loss);
  EXPECT_NEAR(suspect.also[0].rate, 0.0005, 0.0002);
  EXPECT_LE(suspect.also[0].rate_low, suspect.also[0].rate);
  EXPECT_GE(suspect.also[0].rate_high, suspect.also[0].rate);
  EXPECT_THAT(suspect.evidence, HasSubstr("it also loses 0.05"));
  EXPECT_TRUE(std::is_sorted(suspect.explains.begin(), suspect.explains.end()));
  EXPECT_EQ(std::adjacent_find(suspect.explains.begin(), suspect.explains.end()), suspect.explains.end());
  EXPECT_EQ(found.conclusion.find("also suspect link"), std::string::npos) << found.conclusion;
}

// A peer's counters are bounded by nothing: the largest ones, and more lost than sent, must give
// finite rates and a conclusion, not a wrapped sum or a rate that is not a number.
TEST(Localisation, HostileCountsGiveFiniteRates) {
  const Fabric fabric{2, 2, 1, 4};
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.02, 0, "loss_ratio"}}, nullptr, 100'000);
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  for (auto& s : streams) {
    if (s.stream.kind() != "rx" || s.checks[0].passed) continue;
    auto& counters = *s.stream.mutable_counters();
    counters["lost_frames"] = kMax;
    counters["gap_lost_frames"] = kMax;
    counters["rx_frames"] = kMax;
    counters["errored_frames"] = kMax;
  }
  const auto found = localise(streams, &topology);
  EXPECT_FALSE(found.conclusion.empty());
  for (const auto& suspect : found.suspects) {
    EXPECT_TRUE(std::isfinite(suspect.rate)) << suspect.evidence;
    EXPECT_GE(suspect.rate, 0) << suspect.evidence;
    EXPECT_LE(suspect.rate, 1.0) << "a share of the frames: no wrapped sum; " << suspect.evidence;
    EXPECT_LE(suspect.rate_low, suspect.rate_high) << suspect.evidence;
  }
}

// Counted flows that lost nothing clear their links however many others failed through them.
TEST(Localisation, ACleanCountedFabricHasNoSuspect) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  const auto found = localise(run_fabric(fabric, {}, nullptr, 100'000), &topology);
  EXPECT_TRUE(found.suspects.empty());
  EXPECT_EQ(found.conclusion, "");
}

// One frame lost by hand on one flow of an otherwise clean counted fabric.
std::vector<StreamVerdict> with_one_frame_lost(std::vector<StreamVerdict> streams, std::size_t rx_index) {
  for (auto& s : streams) {
    if (s.stream.kind() != "rx" || rx_index-- > 0) continue;
    auto& counters = *s.stream.mutable_counters();
    counters["lost_frames"] += 1;
    counters["rx_frames"] -= 1;
    s.checks.at(0).passed = false;
    break;
  }
  return streams;
}

// A night meets the odd lost frame on a healthy link: under the noise floor it is reported as
// noise, with its link, and names nothing; with the floor at 0 the same frame names a suspect.
TEST(Localisation, OneFrameLostOnACleanFabricIsNoiseNotASuspect) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  const auto streams = with_one_frame_lost(run_fabric(fabric, {}, nullptr, 100'000), 7);
  const auto found = localise(streams, &topology);
  EXPECT_TRUE(found.suspects.empty()) << found.conclusion;
  EXPECT_TRUE(found.hosts.empty()) << found.conclusion;
  ASSERT_EQ(found.noise.size(), 1u) << found.conclusion;
  EXPECT_EQ(found.noise[0].kind, FaultKind::Loss);
  EXPECT_EQ(found.noise[0].events, 1u);
  EXPECT_LE(found.noise[0].rate_low, NoiseFloor::kDefaultLoss);
  EXPECT_THAT(found.noise_text, HasSubstr("noise: 1 lost frame on 1 link under the noise floor"));
  EXPECT_THAT(found.noise_text, HasSubstr(found.noise[0].name));
  EXPECT_THAT(found.conclusion, HasSubstr("no suspect link; noise: 1 lost frame"));
  // report.json says it, with the floor it was judged against; `report` prints it.
  TestOutcome test;
  test.spec.name = "mesh";
  test.streams = streams;
  test.localisation = found;
  const auto json = localisation_json(test);
  ASSERT_EQ(json.at("noise").size(), 1u);
  EXPECT_EQ(json.at("noise")[0].at("link"), found.noise[0].key);
  EXPECT_EQ(json.at("noise")[0].at("events"), 1);
  EXPECT_EQ(json.at("noise_floor").at("loss"), NoiseFloor::kDefaultLoss);
  EXPECT_EQ(json.at("noise_floor").at("damage"), NoiseFloor::kDefaultDamage);
  EXPECT_EQ(json.at("noise_text"), found.noise_text);
  EXPECT_THAT(report_text({{"run_id", "r"}, {"tests", {{{"name", "mesh"}, {"localisation", json}}}}}),
              HasSubstr("localisation: no suspect link; noise: 1 lost frame"));

  const auto any = localise(streams, &topology, nullptr, NoiseFloor{0, 0});
  EXPECT_TRUE(any.noise.empty());
  EXPECT_EQ(any.suspects.size() + any.hosts.size(), 1u) << any.conclusion;
}

// The floor decides what is named, link by link: a fault above it is named beside the noise
// elsewhere, and the same fault under a floor set above its rate is noise.
TEST(Localisation, AFaultAboveTheFloorIsNamedBesideTheNoiseAndUnderItIsNoise) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  const auto faulty = run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.002, 0, "loss_ratio"}}, nullptr, 100'000);
  std::size_t clean_rx = 0;  // an rx stream of a flow the fault does not cross (each that does lost ~200)
  for (const auto& s : faulty) {
    if (s.stream.kind() != "rx") continue;
    if (s.checks.at(0).passed) break;
    ++clean_rx;
  }
  const auto streams = with_one_frame_lost(faulty, clean_rx);
  const auto found = localise(streams, &topology);
  ASSERT_EQ(found.suspects.size(), 1u) << found.conclusion;
  EXPECT_EQ(found.suspects[0].key, "l1:s1 -> s1:l1");
  EXPECT_GT(found.suspects[0].rate_low, NoiseFloor::kDefaultLoss);
  ASSERT_EQ(found.noise.size(), 1u) << found.conclusion;
  EXPECT_NE(found.noise[0].key, "l1:s1 -> s1:l1");
  EXPECT_THAT(found.conclusion, HasSubstr("suspect link l1:s1"));
  EXPECT_THAT(found.conclusion, HasSubstr("; noise: 1 lost frame on 1 link"));

  const auto high_floor = localise(streams, &topology, nullptr, NoiseFloor{0.01, NoiseFloor::kDefaultDamage});
  EXPECT_TRUE(high_floor.suspects.empty()) << high_floor.conclusion;
  EXPECT_TRUE(high_floor.hosts.empty()) << high_floor.conclusion;
  ASSERT_EQ(high_floor.noise.size(), 2u) << high_floor.conclusion;
  EXPECT_EQ(high_floor.noise[0].key, "l1:s1 -> s1:l1") << "the largest rate first";
  EXPECT_GT(high_floor.noise[0].events, 100u);
}

// A test of 64 one-second samples on the modelled fabric, each receiving stream's counters fed to
// its series as the run feeds them, with `loss` on `link` from sample `from` to sample `to` only.
TestOutcome test_with_a_stretch_of_loss(const Fabric& fabric, const std::string& link, double loss, std::uint32_t from,
                                        std::uint32_t to) {
  constexpr std::uint32_t kSamples = 64;
  constexpr std::uint64_t kFramesPerSample = 25'000, kFrameBytes = 1'000;
  TestOutcome test;
  test.spec.name = "mesh";
  test.spec.sample_interval = std::chrono::seconds(1);
  // Which flows cross the link: those a steady fault there fails.
  test.streams = run_fabric(fabric, {{link, 0.01, 0, "loss_ratio"}}, nullptr, 100'000);
  for (auto& verdict : test.streams) {
    if (verdict.stream.kind() != "rx") continue;
    const bool crosses = !verdict.checks.at(0).passed;
    verdict.stream.set_stream_id(fmt::format("rx:{}/{}", verdict.stream.peer(), verdict.stream.sender_stream_id()));
    std::uint64_t received = 0, lost = 0;
    StreamSeries& series = test.per_agent[verdict.agent].series[verdict.stream.stream_id()];
    for (std::uint32_t i = 1; i <= kSamples; ++i) {
      const std::uint64_t lost_now =
          crosses && i >= from && i <= to ? static_cast<std::uint64_t>(std::llround(kFramesPerSample * loss)) : 0;
      lost += lost_now;
      received += kFramesPerSample - lost_now;
      proto::StreamCounters sample;
      (*sample.mutable_counters())["rx_frames"] = received;
      (*sample.mutable_counters())["rx_bytes"] = received * kFrameBytes;
      (*sample.mutable_counters())["lost_frames"] = lost;
      (*sample.mutable_counters())["errored_frames"] = 0;
      testing::add_named(series, i, i * 1000, sample);
    }
    auto& counters = *verdict.stream.mutable_counters();
    counters["rx_frames"] = received;
    counters["rx_bytes"] = received * kFrameBytes;
    counters["lost_frames"] = lost;
    counters["errored_frames"] = 0;
  }
  return test;
}

// A link that lost frames for 8 seconds of a 64-second test is named with those windows (the
// series' bins, one a sample here), not as a steady fault; a steady one reads as steady.
TEST(LocalisationInTime, AStretchOfLossIsNamedWithTheWindowsThatHeldIt) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  const TestOutcome test = test_with_a_stretch_of_loss(fabric, "l1:s1 -> s1:l1", 0.002, 21, 28);
  const FlowWindows windows = stream_windows(test);
  ASSERT_EQ(windows.size(), 64u);
  EXPECT_EQ(windows.start_ms[20], 20'000u);
  const auto found = localise(test.streams, &topology, nullptr, {}, &windows);
  ASSERT_EQ(found.suspects.size(), 1u) << found.conclusion;
  const LinkSuspect& suspect = found.suspects[0];
  EXPECT_EQ(suspect.key, "l1:s1 -> s1:l1");
  ASSERT_TRUE(suspect.windows.has_value()) << suspect.evidence;
  EXPECT_EQ(suspect.windows->first, 20u);
  EXPECT_EQ(suspect.windows->last, 27u);
  EXPECT_EQ(suspect.windows->count, 8u);
  EXPECT_FALSE(suspect.windows->steady());
  EXPECT_NEAR(suspect.windows->share, 8.0 / 64, 1e-9);
  EXPECT_THAT(suspect.evidence, HasSubstr("at fault in 8 of the test's 64 windows, from 20 s to 28 s into it (12 %"));
  EXPECT_TRUE(found.hosts.empty()) << found.conclusion;

  const TestOutcome steady = test_with_a_stretch_of_loss(fabric, "l1:s1 -> s1:l1", 0.002, 1, 64);
  const FlowWindows steady_windows = stream_windows(steady);
  const auto all = localise(steady.streams, &topology, nullptr, {}, &steady_windows);
  ASSERT_EQ(all.suspects.size(), 1u) << all.conclusion;
  ASSERT_TRUE(all.suspects[0].windows.has_value());
  EXPECT_TRUE(all.suspects[0].windows->steady());
  EXPECT_THAT(all.suspects[0].evidence, HasSubstr("at fault in every one of the test's 64 windows"));
}

// A stream's counts are its agent's word: a hostile one (every frame in one byte) made a window's
// frames, its bytes times the stream's frames per byte, past what a 64-bit integer holds, and the
// conversion's result was undefined. A window holds no more than the whole stream received.
TEST(LocalisationInTime, AHostileStreamsFramesPerByteCannotOverflowAWindow) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  TestOutcome test = test_with_a_stretch_of_loss(fabric, "l1:s1 -> s1:l1", 0.002, 21, 28);
  std::size_t hostile = test.streams.size();
  for (std::size_t i = 0; i < test.streams.size() && hostile == test.streams.size(); ++i) {
    if (test.streams[i].stream.kind() != "rx") continue;
    auto& counted = *test.streams[i].stream.mutable_counters();
    counted["rx_frames"] = std::numeric_limits<std::uint64_t>::max();
    counted["rx_bytes"] = 1;
    hostile = i;
  }
  ASSERT_LT(hostile, test.streams.size());
  const FlowWindows windows = stream_windows(test);
  ASSERT_EQ(windows.size(), 64u);
  for (const auto& window : windows.by_stream[hostile]) EXPECT_LE(window.received, std::uint64_t{1} << 62);
  const auto found = localise(test.streams, &topology, nullptr, {}, &windows);
  for (const auto& suspect : found.suspects) EXPECT_TRUE(std::isfinite(suspect.rate)) << found.conclusion;
}

// Under a floor the whole test's rate does not reach (8 bad seconds in 64 dilute 0.2 % to
// 0.025 %), the windows that held the loss still name the link, at their rate; without windows it
// is noise.
TEST(LocalisationInTime, AFaultTheWholeTestDilutesUnderTheFloorIsNamedFromItsWindows) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  const TestOutcome test = test_with_a_stretch_of_loss(fabric, "l1:s1 -> s1:l1", 0.002, 21, 28);
  const FlowWindows windows = stream_windows(test);
  const NoiseFloor floor{1e-3, NoiseFloor::kDefaultDamage};
  const auto whole = localise(test.streams, &topology, nullptr, floor);
  EXPECT_TRUE(whole.suspects.empty()) << whole.conclusion;
  EXPECT_EQ(whole.noise.size(), 1u) << whole.conclusion;

  const auto in_time = localise(test.streams, &topology, nullptr, floor, &windows);
  ASSERT_EQ(in_time.suspects.size(), 1u) << in_time.conclusion;
  const LinkSuspect& suspect = in_time.suspects[0];
  EXPECT_EQ(suspect.key, "l1:s1 -> s1:l1");
  EXPECT_NEAR(suspect.rate, 0.002, 0.0002) << "the rate of the windows it was at fault in";
  EXPECT_GT(suspect.rate_low, 1e-3);
  ASSERT_TRUE(suspect.windows.has_value());
  EXPECT_EQ(suspect.windows->first, 20u);
  EXPECT_EQ(suspect.windows->count, 8u);
  EXPECT_THAT(suspect.evidence, HasSubstr("the rate is that of those windows"));
  EXPECT_TRUE(in_time.noise.empty()) << in_time.conclusion;
  // report.json says when.
  TestOutcome judged = test;
  judged.localisation = in_time;
  const auto json = localisation_json(judged);
  EXPECT_EQ(json.at("suspects")[0].at("windows").at("first"), 20);
  EXPECT_EQ(json.at("suspects")[0].at("windows").at("first_start_ms"), 20'000);
  EXPECT_EQ(json.at("suspects")[0].at("windows").at("last_end_ms"), 28'000);
  EXPECT_EQ(json.at("suspects")[0].at("windows").at("steady"), false);
}

TEST(Localisation, ACleanFabricHasNoSuspect) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  const auto result = localise(run_fabric(fabric, {}), &topology);
  EXPECT_TRUE(result.suspects.empty());
  EXPECT_TRUE(result.hosts.empty());
  EXPECT_EQ(result.conclusion, "");
  EXPECT_EQ(result.flows->size(), 4u * 3u * 8u);
  for (const auto& flow : traced_flows(result)) {
    EXPECT_TRUE(flow.reached);
    EXPECT_FALSE(flow.failing);
  }
}

TEST(Localisation, ASlowReceiverIsAHostProblemAndBlamesNoLink) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  const auto result = localise(run_fabric(fabric, {}, [](const Endpoint& e) { return e.agent == "l2h1"; }), &topology);
  EXPECT_TRUE(result.suspects.empty()) << result.conclusion;
  ASSERT_EQ(result.hosts.size(), 1u);
  EXPECT_EQ(result.hosts[0].agent, "l2h1");
  EXPECT_EQ(result.hosts[0].problem, "receiver cannot keep up");
  EXPECT_THAT(result.conclusion, HasSubstr("host problem at l2h1"));
}

// A flow whose peer the test lost votes for no link, and is no slow receiver either: "receiver
// cannot keep up" is what `act` drains a node for (seen in the RDMA lab: an agent that died named
// "receiver cannot keep up" for the flow it no longer received).
TEST(Localisation, AFlowWhosePeerWasLostBlamesNoLinkAndNoSlowReceiver) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {});
  for (auto& s : streams) {
    if (s.stream.kind() != "rx" || s.stream.peer() != "l2h1") continue;
    s.checks[0].passed = false;
    s.checks[0].not_the_link = ThresholdCheck::NotTheLink::PeerLost;
    s.checks[0].caveat = "loss_ratio; its peer l2h1 was lost during the test";
  }
  const auto result = localise(streams, &topology);
  EXPECT_TRUE(result.suspects.empty()) << result.conclusion;
  EXPECT_TRUE(result.hosts.empty()) << result.conclusion;
  for (const auto& flow : traced_flows(result)) {
    EXPECT_EQ(flow.failing, flow.sender == "l2h1") << flow.sender << " > " << flow.receiver;
    EXPECT_EQ(flow.host_side, flow.failing) << flow.sender << " > " << flow.receiver;
    EXPECT_FALSE(flow.host_drops);
  }
}

// A check's caveat is what its verdict says, not an excuse: a flow that failed in windows alone (an
// intermittent fault the whole test's ratio dilutes) votes for its links like any other.
TEST(Localisation, AFlowThatFailedOnlyInWindowsVotesForItsLinks) {
  const Fabric fabric{3, 3, 1, 9};
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.02, 0, "loss_ratio"}}, nullptr, 100'000);
  for (auto& s : streams) {
    if (s.stream.kind() != "rx" || s.checks[0].passed) continue;
    s.checks[0].threshold.metric = "failed_windows";
    s.checks[0].caveat = "3 of 10 windows of 1 s failed (loss_ratio in 3); the first at ...";
  }
  const auto result = localise(streams, &topology);
  EXPECT_TRUE(result.hosts.empty()) << result.conclusion;
  ASSERT_FALSE(result.suspects.empty()) << result.conclusion;
  EXPECT_EQ(result.suspects[0].key, "l1:s1 -> s1:l1") << result.conclusion;
}

TEST(Localisation, AHostsOwnCableIsNamedAtTheHostNotOnTheFabric) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  const auto result = localise(run_fabric(fabric, {{"l1h2:port -> l1:h2", 0.02, 0, "loss_ratio"}}), &topology);
  EXPECT_TRUE(result.suspects.empty()) << result.conclusion;
  ASSERT_EQ(result.hosts.size(), 1u) << result.conclusion;
  EXPECT_EQ(result.hosts[0].agent, "l1h2");
  EXPECT_THAT(result.hosts[0].problem, HasSubstr("transmit"));
  EXPECT_THAT(result.hosts[0].evidence, HasSubstr("l1h2:port -> l1:h2"));
}

// A re-test of only the flows through a suspect: every flow of every host fails, but they all
// cross that one link, which explains them better than four bad hosts.
TEST(Localisation, FlowsThatAllShareAFabricLinkBlameItNotTheirHosts) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {{"l1:s2 -> s2:l1", 0.02, 0, "loss_ratio"}});
  std::vector<StreamVerdict> through;
  for (std::size_t i = 0; i + 1 < streams.size(); i += 2) {
    if (!streams[i + 1].passed()) {
      through.push_back(streams[i]);
      through.push_back(streams[i + 1]);
    }
  }
  ASSERT_GE(through.size(), 4u);
  const auto result = localise(through, &topology);
  EXPECT_TRUE(result.hosts.empty()) << result.conclusion;
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, "l1:s2 -> s2:l1");
}

TEST(Localisation, OneFailingFlowIsNoSuspect) {
  Fabric fabric{2, 2, 1, 1};
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {});
  // Only l1h1 -> l2h1's single flow fails: its four links cannot be told apart.
  for (auto& s : streams) {
    if (s.stream.kind() == "rx" && s.agent == "l2h1") s.checks[0].passed = false;
  }
  const auto result = localise(streams, &topology);
  EXPECT_EQ(result.top(), nullptr);
  EXPECT_THAT(result.conclusion, HasSubstr("no suspect link"));
}

TEST(Localisation, WithoutProbesTwinLinksAreATieNotAGuess) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  auto streams = run_fabric(fabric, {{"l1:s2 -> s2:l1", 0.02, 0, "loss_ratio"}});
  for (auto& s : streams) {
    for (auto& hop : *s.stream.mutable_path()) hop.set_answers(hop.probes());  // probes saw nothing
  }
  const auto result = localise(streams, &topology);
  EXPECT_EQ(result.top(), nullptr) << result.conclusion;
  ASSERT_FALSE(result.suspects.empty());
  EXPECT_EQ(result.suspects[0].tied.size(), 1u);
  EXPECT_THAT(result.conclusion, HasSubstr("cannot be told apart"));
}

// The switches' readings of one test: every leaf's and spine's fabric ports counted `frames` out
// and in, and the receiving port of `lossy` (a directed link key) discarded `discarded` of them.
std::pair<std::vector<SwitchReading>, std::vector<SwitchReading>> switch_readings(const FabricTopology& topology,
                                                                                  const std::string& lossy,
                                                                                  std::uint64_t discarded) {
  std::map<std::string, SwitchReading> before, after;
  const auto receiver = lossy.substr(lossy.find(" -> ") + 4);
  for (const auto& link : topology.links()) {
    for (const LinkEnd* end : {&link.a, &link.b}) {
      if (end->device.find('h') != std::string::npos) continue;  // hosts: no SNMP
      before[end->device].device = after[end->device].device = end->device;
      SwitchPortCounters first{1000, 1000, 0, 0, 1000, 1000, 0, 0, true, true};
      SwitchPortCounters last{9000, 9000, 0, 0, 9000, 9000, 0, 0, true, true};
      if (end->text() == receiver) last.in_discards = discarded;
      before[end->device].ports[end->interface] = first;
      after[end->device].ports[end->interface] = last;
    }
  }
  std::pair<std::vector<SwitchReading>, std::vector<SwitchReading>> out;
  for (auto& [name, reading] : before) out.first.push_back(reading);
  for (auto& [name, reading] : after) out.second.push_back(reading);
  return out;
}

// Probes that saw nothing leave twins tied; the switches' counters split them.
TEST(Localisation, SwitchCountersSplitTwinsTheProbesCannotAndConfirmTheSuspect) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  for (const std::string lossy : {"l1:s2 -> s2:l1", "s2:l2 -> l2:s2"}) {
    auto streams = run_fabric(fabric, {{lossy, 0.02, 0, "loss_ratio"}});
    for (auto& s : streams) {
      for (auto& hop : *s.stream.mutable_path()) hop.set_answers(hop.probes());
    }
    const auto [before, after] = switch_readings(topology, lossy, 160);
    const SwitchCounterEvidence counters = count_switch_links(topology, before, after);
    const auto result = localise(streams, &topology, &counters);
    ASSERT_NE(result.top(), nullptr) << result.conclusion;
    EXPECT_EQ(result.top()->key, lossy) << result.conclusion;
    EXPECT_TRUE(result.top()->tied.empty()) << result.conclusion;
    EXPECT_TRUE(result.top()->confirmed_by_counters);
    ASSERT_TRUE(result.top()->counted);
    EXPECT_EQ(result.top()->counted->in_discards, 160u);
    EXPECT_THAT(result.conclusion, HasSubstr("confirmed by the switch counters"));
    EXPECT_THAT(result.top()->evidence, HasSubstr("whose switches counted no loss"));
    ASSERT_FALSE(result.top()->next_steps.empty());
    EXPECT_THAT(result.top()->next_steps[0], HasSubstr("discarded 160 frames on arrival"));
  }
}

// Policed ICMP at the far leaf makes loss seem to start on the second twin too; the counters
// still name the first, and a suspect whose switches counted nothing says so.
TEST(Localisation, SwitchCountersOutweighPolicedProbes) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  Fault quiet;
  quiet.quiet_router = gateway(2);
  quiet.answered_share = 0.5;
  const auto streams = run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.03, 0, "loss_ratio"}, quiet});
  const auto [before, after] = switch_readings(topology, "l1:s1 -> s1:l1", 200);
  const SwitchCounterEvidence counters = count_switch_links(topology, before, after);
  const auto result = localise(streams, &topology, &counters);
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, "l1:s1 -> s1:l1") << result.conclusion;
  EXPECT_TRUE(result.top()->confirmed_by_counters);
  EXPECT_TRUE(result.top()->lossier_past_it.empty()) << result.conclusion;

  const auto [clean_before, clean_after] = switch_readings(topology, "l1:s1 -> s1:l1", 0);
  const SwitchCounterEvidence clean = count_switch_links(topology, clean_before, clean_after);
  const auto unconfirmed = localise(streams, &topology, &clean);
  ASSERT_FALSE(unconfirmed.suspects.empty());
  EXPECT_FALSE(unconfirmed.suspects[0].confirmed_by_counters);
  EXPECT_THAT(unconfirmed.suspects[0].evidence, HasSubstr("the switch counters saw no loss here"));
  EXPECT_THAT(unconfirmed.suspects[0].next_steps[0], HasSubstr("The switches at its ends counted no loss on it"));
}

// 3 % loss on a leaf's uplink, and the far leaf answering a tenth fewer probes than reach it:
// more probes go unanswered at the far leaf than at the spine, but not at the destination past
// it, so that is the far leaf's own policing and the second twin is cleared, not named.
TEST(Localisation, APolicingRouterPastTheLossIsClearedBecauseItsDeficitDoesNotPersist) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  Fault quiet;
  quiet.quiet_router = gateway(2);
  quiet.answered_share = 0.9;
  const auto result = localise(run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.03, 0, "loss_ratio"}, quiet}), &topology);
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, "l1:s1 -> s1:l1") << result.conclusion;
  EXPECT_NE(result.top()->confidence, Confidence::Low) << result.conclusion;
  EXPECT_TRUE(result.top()->tied.empty()) << result.conclusion;
  EXPECT_TRUE(result.top()->lossier_past_it.empty()) << result.conclusion;
  ASSERT_EQ(result.top()->cleared.size(), 1u) << result.conclusion;
  EXPECT_THAT(result.top()->cleared[0], HasSubstr("s1:l2 -> l2:s1"));
  EXPECT_EQ(result.suspects.size(), 1u) << result.conclusion;
}

// The fabric VM lab's case (RDMA: the destination answers no probe, so the far leaf is the last
// hop that answers) with the far leaf policing its answers: its deficit cannot be seen to persist,
// and it shows as much to the flows that reach it over the other spine, so it names nothing.
// Whatever the loss on the first twin, no healthy link is named above low confidence.
TEST(Localisation, APolicingLastAnsweringHopIsNeverNamedAboveLowConfidence) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  Fault quiet;
  quiet.quiet_router = gateway(2);
  quiet.answered_share = 0.85;
  Fault silent;
  silent.silent_destinations = true;
  for (const double loss : {0.0005, 0.002, 0.01, 0.03}) {
    const auto result = localise(run_fabric(fabric, {{"l1:s1 -> s1:l1", loss, 0, "stalls"}, quiet, silent}), &topology);
    for (const LinkSuspect& suspect : result.suspects) {
      if (suspect.confidence == Confidence::Low) continue;
      EXPECT_EQ(suspect.key, "l1:s1 -> s1:l1") << "loss " << loss << ": " << result.conclusion;
    }
    for (const LinkSuspect& suspect : result.suspects) {
      if (suspect.key == "s1:l2 -> l2:s1") {
        EXPECT_FALSE(suspect.probes.starts_here()) << result.conclusion;
      }
    }
  }
}

// Loss on the link into the last hop that answers: the far leaf answers the flows that reach it
// over the other spine as well as their hop before, so the deficit is the link's, and it is named.
TEST(Localisation, LossIntoTheLastAnsweringHopIsToldFromPolicingByTheFarEndsOtherLinks) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  Fault silent;
  silent.silent_destinations = true;
  const auto result = localise(run_fabric(fabric, {{"s1:l2 -> l2:s1", 0.03, 0, "stalls"}, silent}), &topology);
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, "s1:l2 -> l2:s1") << result.conclusion;
  EXPECT_TRUE(result.top()->probes.last_answered());
  EXPECT_TRUE(result.top()->probes.loss_is_the_links());
  EXPECT_TRUE(result.top()->tied.empty()) << result.conclusion;
  EXPECT_EQ(result.top()->cleared.size(), 1u) << result.conclusion;
}

// A quiet router alone is no fault: flows pass, nothing is suspected.
TEST(Localisation, ARouterThatAnswersFewerProbesIsNoSuspect) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  Fault quiet;
  quiet.quiet_router = gateway(2);
  quiet.answered_share = 0.8;
  const auto result = localise(run_fabric(fabric, {quiet}), &topology);
  EXPECT_TRUE(result.suspects.empty()) << result.conclusion;
  EXPECT_EQ(result.conclusion, "");
}

// Real loss on the second twin only: the first shows none, so the second is named.
TEST(Localisation, LossStartingOnlyOnTheSecondTwinNamesTheSecond) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  const auto result = localise(run_fabric(fabric, {{"s1:l2 -> l2:s1", 0.03, 0, "loss_ratio"}}), &topology);
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, "s1:l2 -> l2:s1");
  EXPECT_TRUE(result.top()->lossier_past_it.empty());
  EXPECT_EQ(result.top()->cleared.size(), 1u) << result.conclusion;
}

// A spine that answers leaf 1's probes at a share of its own (ICMP policing per destination), on
// a leaf-1 flow's way to loss on either of its twins: the deficit at the spine is its policing or the
// uplink's loss, and the probes cannot say which, so neither twin is named above low confidence, and
// the healthy one never alone. Counted flows and pass/fail flows alike.
TEST(Localisation, APolicingSpineBeforeTheLossNeverPutsTheFaultOnAHealthyTwin) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  for (const double answered : {0.3, 0.6, 0.9}) {
    Fault quiet;
    quiet.quiet_router = spine_end(1, 1);
    quiet.answered_share = answered;
    for (const std::string lossy : {"l1:s1 -> s1:l1", "s1:l2 -> l2:s1"}) {
      for (const std::uint64_t frames : {std::uint64_t{0}, std::uint64_t{20000}}) {
        const auto result =
            localise(run_fabric(fabric, {{lossy, 0.03, 0, frames ? "loss_ratio" : "stalls"}, quiet}, nullptr, frames),
                     &topology);
        const std::string where =
            fmt::format("{} answered, loss on {}, {} frames: {}", answered, lossy, frames, result.conclusion);
        ASSERT_FALSE(result.suspects.empty()) << where;
        for (const LinkSuspect& suspect : result.suspects) {
          if (suspect.key == lossy) continue;
          EXPECT_EQ(suspect.confidence, Confidence::Low) << where;
          EXPECT_FALSE(suspect.tied.empty()) << "a healthy link named alone: " << where;
        }
        EXPECT_THAT(result.suspects[0].evidence, HasSubstr("s1 answered ")) << where;
        EXPECT_THAT(result.suspects[0].evidence, HasSubstr("of l1h1's probes")) << where;
      }
    }
  }
}

// Every router polices every sender's probes, each at a share of its own: loss on any fabric link
// is named on that link or tied with its twin, never on a healthy link alone, and a fabric with no
// fault names nothing.
TEST(Localisation, RoutersThatAllPoliceTheirAnswersNeverNameAHealthyLink) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  std::vector<Fault> policing;
  double share = 0.35;
  const auto police = [&](const std::string& router) {
    Fault quiet;
    quiet.quiet_router = router;
    quiet.answered_share = share;
    policing.push_back(quiet);
    share += 0.1;
  };
  for (int leaf = 1; leaf <= fabric.leaves; ++leaf) {
    police(gateway(leaf));
    for (int spine = 1; spine <= fabric.spines; ++spine) police(spine_end(leaf, spine));
  }
  const auto clean = localise(run_fabric(fabric, policing, nullptr, 20000), &topology);
  EXPECT_TRUE(clean.suspects.empty()) << clean.conclusion;
  for (const std::string lossy : {"l1:s1 -> s1:l1", "s1:l2 -> l2:s1", "l2:s2 -> s2:l2", "s2:l1 -> l1:s2"}) {
    std::vector<Fault> faults = policing;
    faults.push_back({lossy, 0.03, 0, "loss_ratio"});
    const auto result = localise(run_fabric(fabric, faults, nullptr, 20000), &topology);
    ASSERT_FALSE(result.suspects.empty()) << lossy << ": " << result.conclusion;
    for (const LinkSuspect& suspect : result.suspects) {
      if (suspect.key == lossy) continue;
      EXPECT_FALSE(suspect.tied.empty()) << "a healthy link named alone: " << lossy << ": " << result.conclusion;
      EXPECT_EQ(suspect.confidence, Confidence::Low) << lossy << ": " << result.conclusion;
    }
  }
}

// Policed probes cut some traces short: a failing QP whose trace stopped at its first hop may have
// met its fault past where the trace stopped, so it does not make its sender's own link the fault.
TEST(Localisation, AFailingFlowWhoseTraceStoppedEarlyBlamesNotItsKnownLinksAlone) {
  const Fabric fabric;
  const FabricTopology topology = lab_topology(fabric);
  Fault silent;
  silent.silent_destinations = true;
  auto streams = run_fabric(fabric, {{"l1:s1 -> s1:l1", 0.03, 0, "stalls"}, silent});
  std::size_t cut = 0;
  for (std::size_t i = 0; i < streams.size() && cut < 2; ++i) {
    auto& stream = streams[i].stream;
    if (streams[i].agent != "l1h1" || stream.path_size() < 3) continue;
    const bool through_the_fault = stream.path(1).address() == spine_end(1, 1);
    if (!through_the_fault) continue;
    for (int hop = 1; hop < stream.path_size(); ++hop) {
      stream.mutable_path(hop)->clear_address();  // no answer past the first hop
      stream.mutable_path(hop)->set_answers(0);
    }
    ++cut;
  }
  ASSERT_EQ(cut, 2u);
  const auto result = localise(streams, &topology);
  EXPECT_TRUE(result.hosts.empty()) << result.conclusion;
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, "l1:s1 -> s1:l1") << result.conclusion;
}

TEST(Localisation, WithoutATopologyLinksAreNamedByAddresses) {
  const Fabric fabric{3, 2, 2, 8};
  const auto result = localise(run_fabric(fabric, {{"l2:s1 -> s1:l2", 0.05, 0, "loss_ratio"}}), nullptr);
  ASSERT_NE(result.top(), nullptr) << result.conclusion;
  EXPECT_EQ(result.top()->key, fmt::format("{} -> {}", gateway(2), spine_end(2, 1)));
}

TEST(Localisation, AnUnknownHopEndsThePathThere) {
  const Fabric fabric;
  auto streams = run_fabric(fabric, {});
  for (auto& s : streams) {
    if (s.stream.kind() == "tx" && s.stream.path_size() > 2) s.stream.mutable_path(1)->clear_address();
  }
  const auto result = localise(streams, nullptr);
  for (const auto& flow : traced_flows(result)) {
    if (flow.sender.substr(0, 2) != flow.receiver.substr(0, 2)) {
      EXPECT_FALSE(flow.reached);
      EXPECT_EQ(flow.node_names.size(), 2u) << "the source and the first hop; nothing guessed past the unknown one";
    }
  }
}

TEST(Topology, NamesLinksByPortAndCable) {
  const FabricTopology topology = lab_topology(Fabric{});
  const auto up = topology.link_between(gateway(1), spine_end(1, 2));
  EXPECT_EQ(up.key, "l1:s2 -> s2:l1");
  EXPECT_EQ(up.name, "l1:s2 -> s2:l1, cable C-l1-s2");
  const auto down = topology.link_between(spine_end(2, 1), gateway(2));
  EXPECT_EQ(down.key, "s1:l2 -> l2:s1") << "the downlink, found by the two devices";
  EXPECT_EQ(topology.link_between("10.9.9.9", gateway(1)).key, "10.9.9.9 -> l1");
}

TEST(Topology, ParallelCablesAreNamedAsSuch) {
  const auto topology = load_topology_text(
      "devices:\n  a: {interfaces: {p1: 10.0.0.1, p2: 10.0.0.3}}\n  b: {interfaces: {p1: 10.0.0.2, p2: 10.0.0.4}}\n"
      "links:\n  - a:p1 <-> b:p1\n  - a:p2 <-> b:p2\n",
      "t.yaml");
  EXPECT_EQ(topology.link_between("10.0.0.1", "10.0.0.4").key, "a:p2 -> b:p2") << "b answered from the port facing a";
  const auto devices_only = load_topology_text(
      "devices:\n  a: {interfaces: {lo: 10.0.0.1, p1: ~, p2: ~}}\n  b: {interfaces: {lo: 10.0.0.2, p1: ~, p2: ~}}\n"
      "links:\n  - a:p1 <-> b:p1\n  - a:p2 <-> b:p2\n",
      "t.yaml");
  EXPECT_THAT(devices_only.link_between("10.0.0.1", "10.0.0.2").name, HasSubstr("one of 2 parallel cables"));
}

TEST(Topology, EveryMistakeIsReportedWithItsLine) {
  try {
    load_topology_text(
        "devices:\n"
        "  leaf1:\n"
        "    interfaces:\n"
        "      swp1: 172.16.1.300\n"
        "      swp2: 172.16.1.2\n"
        "  spine1:\n"
        "    interfaces: {swp1: 172.16.1.2}\n"
        "links:\n"
        "  - leaf1:swp9 <-> spine1:swp1\n"
        "  - ends: leaf1:swp2 <-> spine2:swp1\n"
        "    cabel: C-1\n",
        "fabric.yaml");
    FAIL() << "accepted";
  } catch (const TopologyFileInvalid& e) {
    const std::string text = e.what();
    EXPECT_THAT(text, HasSubstr("fabric.yaml:4:"));
    EXPECT_THAT(text, HasSubstr("'172.16.1.300' is not an IPv4 address"));
    EXPECT_THAT(text, HasSubstr("fabric.yaml:7:"));
    EXPECT_THAT(text, HasSubstr("already leaf1:swp2's address"));
    EXPECT_THAT(text, HasSubstr("leaf1 has no interface 'swp9'"));
    EXPECT_THAT(text, HasSubstr("no device 'spine2'"));
    EXPECT_THAT(text, HasSubstr("cable"));  // did you mean
  }
}

TEST(Topology, APortTakesOneCable) {
  EXPECT_THROW(load_topology_text(
                   "devices:\n  a: {interfaces: {p1: ~}}\n  b: {interfaces: {p1: ~}}\n  c: {interfaces: {p1: ~}}\n"
                   "links:\n  - a:p1 <-> b:p1\n  - a:p1 <-> c:p1\n",
                   "t.yaml"),
               TopologyFileInvalid);
  EXPECT_THROW(load_topology_text("", "t.yaml"), TopologyFileInvalid);
  EXPECT_THROW(load_topology_file("/nonexistent/topology.yaml"), TopologyFileInvalid);
}

// ---- link coverage and a schedule's steps judged together

// The streams of `streams` whose flow some traced flow through a link matching `crosses` carried.
std::vector<StreamVerdict> without_flows_through(const std::vector<StreamVerdict>& streams,
                                                 const FabricTopology& topology,
                                                 const std::function<bool(const std::string& link)>& crosses) {
  const Localisation found = localise(streams, &topology);
  std::set<std::size_t> dropped;
  for (const auto& flow : traced_flows(found)) {
    if (std::any_of(flow.links.begin(), flow.links.end(), crosses)) {
      dropped.insert(*flow.rx_stream);
      if (flow.tx_stream) dropped.insert(*flow.tx_stream);
    }
  }
  std::vector<StreamVerdict> kept;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (!dropped.contains(i)) kept.push_back(streams[i]);
  }
  return kept;
}

TEST(LinkCoverage, EveryPairCrossesEveryLinkBothWaysAndTheLinksOfASpineNoFlowCrossedAreNamed) {
  const Fabric fabric{3, 2, 2, 8};
  const FabricTopology topology = lab_topology(fabric);
  const auto streams = run_fabric(fabric, {});
  const auto all = link_coverage(localise(streams, &topology), &topology);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->links, 12u) << "6 leaf-spine cables, 6 host cables";
  EXPECT_EQ(all->share(), 1.0) << all->text();
  EXPECT_EQ(all->both_ways, 12u);
  EXPECT_TRUE(all->never.empty());
  EXPECT_GT(all->flows_min, 0u);
  EXPECT_FALSE(coverage_problem(all, 1.0));

  // As if spine 2's links were down: no flow crossed them.
  const auto spine_down = link_coverage(
      localise(without_flows_through(streams, topology,
                                     [](const std::string& link) { return link.find("s2:") != std::string::npos; }),
               &topology),
      &topology);
  ASSERT_TRUE(spine_down);
  std::vector<std::string> expected;
  for (int leaf = 1; leaf <= 3; ++leaf) {
    expected.push_back(fmt::format("l{0}:s2 -> s2:l{0}, cable C-l{0}-s2", leaf));
    expected.push_back(fmt::format("s2:l{0} -> l{0}:s2, cable C-l{0}-s2", leaf));
  }
  EXPECT_EQ(spine_down->never, expected);
  EXPECT_EQ(spine_down->both_ways, 9u) << "spine 2 has 3 of the 12 cables";
  EXPECT_EQ(spine_down->flows_min, 0u);
  EXPECT_DOUBLE_EQ(spine_down->share(), 0.75);
  const auto problem = coverage_problem(spine_down, 1.0);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("link coverage 75%: 9 of 12 links crossed both ways"));
  EXPECT_THAT(*problem, HasSubstr("never crossed: l1:s2 -> s2:l1, cable C-l1-s2;"));
  EXPECT_THAT(*problem, HasSubstr("below min_link_coverage 100%"));
  EXPECT_FALSE(coverage_problem(spine_down, 0.75));
  EXPECT_THAT(coverage_problem(std::nullopt, 1.0).value_or(""), HasSubstr("coverage is unknown"));
  EXPECT_FALSE(link_coverage(localise(streams, nullptr), nullptr)) << "no topology file, no coverage";
}

// A shift schedule's steps over the fabric's hosts grouped by leaf: each step's streams are those
// of the pairs it runs, localised and folded into the schedule as MethodSteps::record does.
// With `every_flow`, each step's flows are also added to it, none summed. Steps [from, to) of the
// schedule are folded into `result`.
void fold_leaf_shift_steps(const Fabric& fabric, const std::vector<StreamVerdict>& streams,
                           const FabricTopology& topology, MethodResult& result, std::size_t from, std::size_t to,
                           FlowTable* every_flow = nullptr) {
  const auto hosts = testing::model_hosts(fabric);
  std::vector<std::string> agents;
  for (const auto& host : hosts) agents.push_back(host.agent);
  ShiftSpec spec;
  spec.group_by = ShiftSpec::GroupBy::Leaf;
  const ShiftGroups groups = group_agents(
      agents, [](const std::string& agent) { return agent.substr(0, 2); }, "no leaf");
  result.kind = MethodKind::Shift;
  const auto numbers = shift_numbers(spec, agents.size(), groups, "t");
  for (std::size_t n = from; n < std::min(to, numbers.size()); ++n) {
    const ShiftStep step = shift_step(spec, agents.size(), groups, numbers[n]);
    std::set<std::pair<std::string, std::string>> pairs;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      for (const auto peer : step.peers[i]) pairs.emplace(agents[i], agents[peer]);
    }
    TestOutcome outcome;
    outcome.index = static_cast<int>(n + 1);
    for (const auto& stream : streams) {
      const bool rx = stream.stream.kind() == "rx";
      const auto pair =
          rx ? std::pair(stream.stream.peer(), stream.agent) : std::pair(stream.agent, stream.stream.peer());
      if (pairs.contains(pair)) outcome.streams.push_back(stream);
    }
    MethodStep row;
    row.label = step.label;
    row.streams = static_cast<std::uint32_t>(outcome.streams.size());
    outcome.localisation = localise(outcome.streams, &topology);
    outcome.path_faults = path_fault_signs(outcome.streams);
    if (every_flow) every_flow->add(outcome.streams, &topology, static_cast<std::uint32_t>(result.steps.size() + 1));
    fold_schedule_step(outcome, static_cast<std::uint32_t>(result.steps.size() + 1), result);
    result.steps.push_back(row);
    result.step_outcomes.push_back(std::move(outcome));
  }
}

MethodResult leaf_shift_steps(const Fabric& fabric, const std::vector<StreamVerdict>& streams,
                              const FabricTopology& topology, FlowTable* every_flow = nullptr) {
  MethodResult result;
  fold_leaf_shift_steps(fabric, streams, topology, result, 0, SIZE_MAX, every_flow);
  return result;
}

TEST(ScheduleSteps, LossOnOneLinkIsLocalisedFromAllStepsTogetherWithFullCoverage) {
  const Fabric fabric{3, 2, 2, 8};
  const FabricTopology topology = lab_topology(fabric);
  const std::string lossy = testing::uplink(1, 2);
  const auto streams = run_fabric(fabric, {{lossy, 0.01, 0, "loss_ratio"}}, nullptr, 20000);
  TestOutcome test;
  MethodResult steps = leaf_shift_steps(fabric, streams, topology);
  ASSERT_EQ(steps.step_outcomes.size(), 4u) << "3 leaves of 2 hosts: 2 leaf shifts x 2 member shifts";
  std::size_t in_steps = 0, kept = 0, failing = 0;
  for (const auto& row : steps.steps) in_steps += row.streams;
  EXPECT_EQ(in_steps, streams.size() * 4 / 5) << "every pair but those inside a leaf (6 of 30)";
  for (const auto& step : steps.step_outcomes) {
    kept += step.streams.size();
    for (const auto& verdict : step.streams) failing += verdict.passed() ? 0 : 1;
  }
  EXPECT_GT(failing, 0u);
  EXPECT_LT(kept, in_steps) << "a step's passing streams leave memory with it";
  test.spec.min_link_coverage = 1.0;
  judge_steps_together(test, steps, &topology);
  EXPECT_EQ(test.streams.size(), kept) << "the steps' kept streams moved to the test";
  for (const auto& step : steps.step_outcomes) EXPECT_TRUE(step.streams.empty());
  std::size_t failing_flows = 0;
  for (std::size_t f = 0; f < test.localisation.flows->size(); ++f) {
    const FlowRecord& flow = (*test.localisation.flows)[f];
    EXPECT_FALSE(flow.clean()) << "a clean flow is summed, not kept";
    ASSERT_NE(flow.rx_stream, kNoStream) << "a kept flow's streams are kept";
    ASSERT_NE(flow.tx_stream, kNoStream) << "a kept flow's streams are kept";
    EXPECT_EQ(test.streams.at(flow.rx_stream).step, flow.step);
    if (!flow.has(FlowRecord::kFailing)) continue;
    ++failing_flows;
    EXPECT_FALSE(test.streams.at(flow.rx_stream).passed());
  }
  EXPECT_EQ(failing_flows, failing);
  ASSERT_NE(test.localisation.top(), nullptr) << test.localisation.conclusion;
  EXPECT_EQ(test.localisation.top()->key, lossy) << test.localisation.conclusion;
  EXPECT_EQ(test.localisation.suspects.size(), 1u) << test.localisation.conclusion;
  // The suspect gathers failing flows of more than one step.
  std::set<std::uint32_t> steps_with_evidence;
  for (const auto f : test.localisation.top()->explains) {
    steps_with_evidence.insert((*test.localisation.flows)[f].step);
  }
  EXPECT_GE(steps_with_evidence.size(), 2u);
  ASSERT_TRUE(test.coverage);
  EXPECT_EQ(test.coverage->share(), 1.0) << test.coverage->text();
  EXPECT_TRUE(test.problems.empty()) << test.problems.front();
}

TEST(ScheduleSteps, AStepWhoseFlowsMissedALinkIsCoveredByAnotherOrTheTestFails) {
  const Fabric fabric{3, 2, 2, 8};
  const FabricTopology topology = lab_topology(fabric);
  // Nothing crossed spine 2: the schedule's coverage names its links and min_link_coverage fails.
  const auto streams = without_flows_through(
      run_fabric(fabric, {}), topology, [](const std::string& link) { return link.find("s2:") != std::string::npos; });
  TestOutcome test;
  MethodResult steps = leaf_shift_steps(fabric, streams, topology);
  test.spec.min_link_coverage = 1.0;
  judge_steps_together(test, steps, &topology);
  ASSERT_TRUE(test.coverage);
  EXPECT_EQ(test.coverage->never.size(), 6u);
  ASSERT_EQ(test.problems.size(), 1u);
  EXPECT_THAT(test.problems.front(), HasSubstr("below min_link_coverage 100%"));
}

// A schedule sums its clean flows per link as each step ends rather than keep them: what it
// concludes is what it would have concluded from every flow, one by one: the same suspects (a link's
// or a host's own cable), rates, confidence, flows through each, and the same link coverage.
TEST(ScheduleSteps, CleanFlowsSummedPerLinkLocaliseAsEveryFlowKeptWould) {
  const Fabric fabric{3, 2, 2, 8};
  const FabricTopology topology = lab_topology(fabric);
  struct Case {
    std::vector<Fault> faults;
    std::uint64_t frames;   // 0: flows judged pass or fail only, as RDMA QPs are
    std::string host = {};  // named at this host (its own cable), not at a link
  };
  const std::vector<Case> cases{
      {{{testing::uplink(1, 2), 0.01, 0, "loss_ratio"}, {testing::downlink(3, 1), 0, 0.002, "ber"}}, 20000},
      {{{testing::host_to_leaf(2, 1), 0.02, 0, "loss_ratio"}}, 20000, "l2h1"},
      // So light that some flows through the host's cable lose nothing: summed, and still its.
      {{{testing::host_to_leaf(2, 1), 0.0001, 0, "loss_ratio"}}, 20000, "l2h1"},
      {{{testing::leaf_to_host(3, 2), 0.0001, 0, "loss_ratio"}}, 20000, "l3h2"},
      {{{testing::downlink(2, 2), 0.05, 0, "loss_ratio"}}, 0},
      {{}, 20000},
  };
  for (const Case& c : cases) {
    const auto streams = run_fabric(fabric, c.faults, nullptr, c.frames);
    auto every_flow = std::make_shared<FlowTable>();
    MethodResult steps = leaf_shift_steps(fabric, streams, topology, every_flow.get());
    TestOutcome test;
    judge_steps_together(test, steps, &topology);
    const Localisation& summed = test.localisation;
    const Localisation kept = localise(every_flow, &topology);
    const std::string label = c.faults.empty() ? "no fault" : c.faults.front().link;
    ASSERT_TRUE(summed.flows);
    EXPECT_EQ(summed.flows->size() + summed.flows->clean_flows(), every_flow->size()) << label;
    if (!c.faults.empty()) {
      EXPECT_LT(summed.flows->size(), every_flow->size() / 2) << label;
    }
    EXPECT_EQ(summed.conclusion, kept.conclusion) << label;
    ASSERT_EQ(summed.suspects.size(), kept.suspects.size()) << label << ": " << summed.conclusion;
    for (std::size_t i = 0; i < kept.suspects.size(); ++i) {
      const LinkSuspect& a = summed.suspects[i];
      const LinkSuspect& b = kept.suspects[i];
      EXPECT_EQ(a.key, b.key) << label;
      EXPECT_EQ(a.kind, b.kind) << label;
      EXPECT_EQ(a.confidence, b.confidence) << label;
      EXPECT_NEAR(a.rate, b.rate, 1e-9 * b.rate) << label;
      EXPECT_EQ(a.explains.size(), b.explains.size()) << label;
      EXPECT_EQ(a.failing.size(), b.failing.size()) << label;
      EXPECT_EQ(a.passing.size() + a.passing_summed, b.passing.size()) << label;
      EXPECT_EQ(a.tied, b.tied) << label;
      EXPECT_EQ(a.evidence, b.evidence) << label;
    }
    if (!c.host.empty()) {
      ASSERT_EQ(kept.hosts.size(), 1u) << label << ": " << kept.conclusion;
      EXPECT_EQ(kept.hosts[0].agent, c.host) << label;
    }
    ASSERT_EQ(summed.hosts.size(), kept.hosts.size()) << label << ": " << summed.conclusion;
    for (std::size_t i = 0; i < kept.hosts.size(); ++i) {
      EXPECT_EQ(summed.hosts[i].agent, kept.hosts[i].agent) << label;
      EXPECT_EQ(summed.hosts[i].evidence, kept.hosts[i].evidence) << label;
    }
    const auto coverage = link_coverage(kept, &topology);
    ASSERT_TRUE(coverage && test.coverage) << label;
    EXPECT_EQ(test.coverage->text(), coverage->text()) << label;
    EXPECT_EQ(test.coverage->flows, coverage->flows) << label;
  }
}

// A controller that stops after a schedule's second step leaves its ledger; a run that resumes
// from it and folds the last two steps concludes what the schedule run through would have: the
// same suspects, rates and confidence, the same kept streams with the same checks and windows, the
// same flows and link coverage. A ledger cut short, or one whose flow points past its streams, is
// an error that names the file.
TEST(ScheduleSteps, AScheduleResumedFromItsLedgerConcludesWhatItWouldHaveWithoutTheRestart) {
  const Fabric fabric{3, 2, 2, 8};
  const FabricTopology topology = lab_topology(fabric);
  auto streams =
      run_fabric(fabric, {{testing::uplink(1, 2), 0.01, 0, "loss_ratio"}, {testing::downlink(3, 1), 0, 0.002, "ber"}},
                 nullptr, 20000);
  // A failing stream with windows, which the ledger keeps as the report reads them.
  for (auto& verdict : streams) {
    if (verdict.passed()) continue;
    auto windows = std::make_shared<WindowTally>();
    windows->window = std::chrono::seconds(10);
    windows->samples_per_window = 10;
    windows->thresholds = {verdict.checks.front().threshold};
    windows->judged = 6;
    windows->failed = 2;
    windows->failed_by_threshold = {2};
    windows->first = WindowFailure{1, 10'000, 123, 0.5, "lost_frames 3 > max 0"};
    windows->worst = WindowFailure{4, 40'000, 456, 2.5, "lost_frames 9 > max 0"};
    verdict.windows = windows;
    verdict.checks.front().caveat = "failed in 2 of 6 windows";
    verdict.checks.front().not_the_link = ThresholdCheck::NotTheLink::HostDrops;
    break;
  }
  MethodResult straight = leaf_shift_steps(fabric, streams, topology);
  ASSERT_EQ(straight.steps.size(), 4u);

  MethodResult before;
  fold_leaf_shift_steps(fabric, streams, topology, before, 0, 2);
  before.step_outcomes[1].problems.push_back("a problem of step 2");
  before.steps[1].not_covered.push_back({"l1h1", "l2h1", "l2h1 not connected"});
  before.complete = false;
  const testing::ScratchDir scratch("ledger");
  const std::string dir = scratch.path.string();
  LedgerIdentity identity;
  identity.run_id = "run-1";
  identity.agents = {"l1h1", "l1h2"};
  identity.tests_before = {{"a test before", TestVerdict::Fail}};
  write_schedule_ledger(dir, identity, before, {{5, "l2h1", 2, "lost"}}, &topology);
  ScheduleLedger ledger = read_schedule_ledger(dir, &topology);
  EXPECT_EQ(ledger.identity.run_id, "run-1");
  EXPECT_EQ(ledger.identity.agents, identity.agents);
  ASSERT_EQ(ledger.identity.tests_before.size(), 1u);
  EXPECT_EQ(ledger.identity.tests_before[0].second, TestVerdict::Fail);
  ASSERT_EQ(ledger.faults.size(), 1u);
  EXPECT_EQ(ledger.faults[0].message, "lost");
  EXPECT_FALSE(ledger.complete);
  ASSERT_EQ(ledger.steps.size(), 2u);
  ASSERT_EQ(ledger.outcomes.size(), 2u);
  EXPECT_EQ(ledger.steps[1].label, before.steps[1].label);
  EXPECT_EQ(ledger.steps[1].not_covered.at(0).why, "l2h1 not connected");
  EXPECT_EQ(ledger.outcomes[1].problems, before.step_outcomes[1].problems);
  EXPECT_EQ(ledger.outcomes[1].index, 2);

  MethodResult resumed;
  resumed.kind = MethodKind::Shift;
  resumed.steps = std::move(ledger.steps);
  resumed.step_outcomes = std::move(ledger.outcomes);
  resumed.schedule_flows = ledger.flows;
  resumed.step_outcomes[1].problems.clear();
  resumed.steps[1].not_covered.clear();
  fold_leaf_shift_steps(fabric, streams, topology, resumed, 2, SIZE_MAX);

  TestOutcome a, b;
  a.spec.min_link_coverage = b.spec.min_link_coverage = 1.0;
  judge_steps_together(a, straight, &topology);
  judge_steps_together(b, resumed, &topology);
  ASSERT_TRUE(a.localisation.flows && b.localisation.flows);
  EXPECT_EQ(b.localisation.flows->size(), a.localisation.flows->size());
  EXPECT_EQ(b.localisation.flows->clean_flows(), a.localisation.flows->clean_flows());
  const ProbeHops& hops_a = a.localisation.flows->probe_hops();
  const ProbeHops& hops_b = b.localisation.flows->probe_hops();
  ASSERT_FALSE(hops_a.empty());
  ASSERT_EQ(hops_b.size(), hops_a.size());
  for (std::size_t h = 0; h < hops_a.size(); ++h) {
    EXPECT_EQ(hops_b[h].parent, hops_a[h].parent) << h;
    EXPECT_EQ(hops_b[h].link, hops_a[h].link) << h;
    EXPECT_EQ(hops_b[h].sender, hops_a[h].sender) << h;
    EXPECT_EQ(hops_b[h].probes, hops_a[h].probes) << h;
    EXPECT_EQ(hops_b[h].answers, hops_a[h].answers) << h;
    EXPECT_EQ(hops_b[h].damaged, hops_a[h].damaged) << h;
  }
  EXPECT_EQ(b.localisation.conclusion, a.localisation.conclusion);
  ASSERT_EQ(b.localisation.suspects.size(), a.localisation.suspects.size());
  ASSERT_GE(a.localisation.suspects.size(), 2u) << a.localisation.conclusion;
  for (std::size_t i = 0; i < a.localisation.suspects.size(); ++i) {
    EXPECT_EQ(b.localisation.suspects[i].key, a.localisation.suspects[i].key);
    EXPECT_EQ(b.localisation.suspects[i].kind, a.localisation.suspects[i].kind);
    EXPECT_EQ(b.localisation.suspects[i].confidence, a.localisation.suspects[i].confidence);
    EXPECT_EQ(b.localisation.suspects[i].rate, a.localisation.suspects[i].rate);
    EXPECT_EQ(b.localisation.suspects[i].explains, a.localisation.suspects[i].explains);
    EXPECT_EQ(b.localisation.suspects[i].evidence, a.localisation.suspects[i].evidence);
  }
  ASSERT_TRUE(a.coverage && b.coverage);
  EXPECT_EQ(b.coverage->text(), a.coverage->text());
  ASSERT_EQ(b.streams.size(), a.streams.size());
  bool windows_seen = false;
  for (std::size_t s = 0; s < a.streams.size(); ++s) {
    const StreamVerdict& x = a.streams[s];
    const StreamVerdict& y = b.streams[s];
    EXPECT_EQ(y.agent, x.agent);
    EXPECT_EQ(y.step, x.step);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(y.stream, x.stream)) << x.stream.DebugString();
    EXPECT_EQ(y.metrics, x.metrics);
    EXPECT_EQ(y.passed(), x.passed());
    ASSERT_EQ(y.checks.size(), x.checks.size());
    for (std::size_t c = 0; c < x.checks.size(); ++c) {
      EXPECT_EQ(y.checks[c].describe(), x.checks[c].describe());
      EXPECT_EQ(y.checks[c].caveat, x.checks[c].caveat);
      EXPECT_EQ(y.checks[c].not_the_link, x.checks[c].not_the_link);
      EXPECT_EQ(y.checks[c].threshold.key, x.checks[c].threshold.key);
    }
    ASSERT_EQ(static_cast<bool>(y.ber), static_cast<bool>(x.ber));
    if (x.ber) {
      EXPECT_EQ(y.ber->estimate.upper_bound, x.ber->estimate.upper_bound);
    }
    ASSERT_EQ(static_cast<bool>(y.windows), static_cast<bool>(x.windows));
    if (!x.windows) continue;
    windows_seen = true;
    EXPECT_EQ(y.windows->failed, 2u);
    ASSERT_TRUE(y.windows->worst);
    EXPECT_EQ(y.windows->worst->text, x.windows->worst->text);
    EXPECT_EQ(y.windows->thresholds.at(0).metric, x.windows->thresholds.at(0).metric);
  }
  EXPECT_TRUE(windows_seen) << "the stream with windows was kept (it failed) and came back with them";

  // A probe hop that points past its tables (a parent not read yet, a link or a sender the table
  // has not) is refused by its index; counts out of order are bounded, never trusted.
  ledger::FlowTable saved;
  save_flow_table(*a.localisation.flows, saved, &topology);
  ASSERT_GT(saved.probe_hops_size(), 2);
  const std::vector<std::function<void(ledger::ProbeHop&)>> damages{
      [&](ledger::ProbeHop& hop) { hop.set_parent(2); },
      [&](ledger::ProbeHop& hop) { hop.set_link(saved.links_size()); },
      [&](ledger::ProbeHop& hop) { hop.set_sender(0xFFFFFFFF); }};
  for (const auto& damage : damages) {
    ledger::FlowTable damaged = saved;
    damage(*damaged.mutable_probe_hops(1));
    EXPECT_THAT([&] { load_flow_table(damaged, &topology); },
                ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("probe hop 1: an index out of its tables")));
  }
  ledger::FlowTable boastful = saved;
  boastful.mutable_probe_hops(1)->set_answers(~std::uint64_t{0});
  boastful.mutable_probe_hops(1)->set_damaged(~std::uint64_t{0});
  const auto bounded = load_flow_table(boastful, &topology);
  const ProbeHop& hop = bounded->probe_hops()[1];
  EXPECT_EQ(hop.answers, hop.probes);
  EXPECT_LE(hop.damaged, hop.answers);

  // Cut short, it is no ledger; a flow that points past the streams is a damaged one.
  const std::string file = dir + "/" + kScheduleLedgerFileName;
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
  EXPECT_THAT([&] { read_schedule_ledger(dir, &topology); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(file)));
  for (auto& step : before.step_outcomes) {
    step.streams.clear();
    step.outliers.clear();
    step.path_faults.clear();
  }
  write_schedule_ledger(dir, identity, before, {}, &topology);
  EXPECT_THAT([&] { read_schedule_ledger(dir, &topology); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("a damaged schedule ledger: flow")));
  EXPECT_THAT([&] { read_schedule_ledger(dir + "/nowhere", &topology); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("no schedule ledger")));
}

}  // namespace
}  // namespace tusk
