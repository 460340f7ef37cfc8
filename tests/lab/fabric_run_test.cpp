// The DPDK engine across the fabric lab's routed leaf-spine network (tests/lab/fabric-lab.sh):
// tusk-controller runs a profile over mutual TLS on 127.0.0.1; real tusk-agent processes, one per
// lab host, send and check IPv4/UDP PRBS frames through their leaves and both spines, each peer's
// traffic spread over flows that ECMP hashes onto the spines by UDP source port. Which spine a
// flow took is asked of the leaf's own kernel (fabric-lab.sh path), never of Tusk. Needs root;
// skips otherwise.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "tests/support/fabric_run.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

// Acceptance 1: four hosts on two leaves, every pair, PRBS-31 over IPv4/UDP for 10 s: no error,
// no loss, every flow judged with its 5-tuple, and both spines carried test traffic.
TEST_F(FabricRun, EveryPairAcrossTheSpinesIsCleanAndBothSpinesCarryFlows) {
  make_lab(2);
  start_agents();
  std::map<std::string, std::uint64_t> before;
  for (const char* link : {"l1-s1", "l1-s2", "l2-s1", "l2-s2"}) before[link] = lab_->counter(link, "up");
  ASSERT_EQ(run(R"(name: fabric-clean
agents:
  hosts: [l1h1, l1h2, l2h1, l2h2]
  wait: 30s
tests:
  - name: mesh
    engine: dpdk
    duration: 10s
    topology: mesh
    rate: 3kpps
    frame_size: 512B
    pattern: prbs31
    encapsulation: ipv4_udp
    dscp: 26
    ecmp_paths: 2
    coverage: 99%
    thresholds:
      max_ber: 1e-12
      max_lost_frames: 0
)",
                {"--topology", topology_file()}),
            0)
      << read_file(dir_ + "/controller.log");
  const json result = report();
  // Issue 12's clean case: every flow's path traced to its receiver, no suspect, no host problem.
  const json& found = result["tests"][0]["localisation"];
  ASSERT_EQ(found["flows"].size(), 96u) << found.dump(1).substr(0, 3000);
  EXPECT_TRUE(found["suspects"].empty()) << found["conclusion"];
  EXPECT_TRUE(found["hosts"].empty()) << found["conclusion"];
  EXPECT_EQ(found["conclusion"], "");
  for (const auto& flow : found["flows"]) EXPECT_TRUE(flow["path_complete"].get<bool>()) << flow.dump(1);
  const auto flows = received_flows(result);
  // 4 receivers x 3 senders x 8 flows (2 paths at 99 % coverage).
  ASSERT_EQ(flows.size(), 96u) << result["tests"][0]["streams"].dump(1).substr(0, 4000);
  std::map<std::string, int> flows_by_uplink;
  std::set<std::uint32_t> source_ports;
  for (const auto& flow : flows) {
    EXPECT_TRUE(flow["passed"].get<bool>()) << flow.dump(1);
    EXPECT_GE(flow["counters"]["rx_frames"].get<std::uint64_t>(), 900u) << flow["stream_id"];
    EXPECT_EQ(flow["counters"]["bit_errors"], 0);
    EXPECT_EQ(flow["counters"]["lost_frames"], 0);
    EXPECT_EQ(flow["flow"]["protocol"], "udp");
    EXPECT_EQ(flow["flow"]["dst_port"], 0x88B5);
    source_ports.insert(flow["flow"]["src_port"].get<std::uint32_t>());
    // The receiver's name for the flow's sender comes from the source address, not the leaf's MAC.
    EXPECT_EQ(flow["flow"]["src_address"].get<std::string>().substr(0, 10), "192.168.10");
    if (flow["flow"]["src_address"].get<std::string>().substr(0, 11) !=
        flow["flow"]["dst_address"].get<std::string>().substr(0, 11)) {
      ++flows_by_uplink[path_of(flow)];
    }
  }
  EXPECT_EQ(source_ports.size(), 8u);
  EXPECT_TRUE(result["tests"][0]["path_faults"].empty());
  // Both spines carried flows, as the leaves hashed them, and test frames on their links.
  EXPECT_GT(flows_by_uplink["l1-s1"] + flows_by_uplink["l2-s1"], 0);
  EXPECT_GT(flows_by_uplink["l1-s2"] + flows_by_uplink["l2-s2"], 0);
  for (const char* link : {"l1-s1", "l1-s2", "l2-s1", "l2-s2"}) {
    const std::uint64_t carried = lab_->counter(link, "up") - before[link];
    const int link_flows = flows_by_uplink[link];
    // Each cross-leaf flow sends ~1,250 frames in 10 s (3 kpps over 24 flows per agent).
    EXPECT_GE(carried, static_cast<std::uint64_t>(link_flows) * 1000) << link << " carried " << carried;
    EXPECT_LE(carried, static_cast<std::uint64_t>(link_flows) * 1400 + 200) << link << " carried " << carried;
  }
  // The summary shows each flow's 5-tuple.
  EXPECT_NE(read_file(dir_ + "/controller.log").find(" > 192.168.102.11:34997 udp"), std::string::npos);
}

// Acceptance 2: 2 % loss on one leaf-to-spine link in one direction: exactly the flows hashed
// through it lose frames, at that rate; their siblings between the same hosts through the other
// spine lose none; the report names the path fault; the run exits 1.
TEST_F(FabricRun, LossOnOneUplinkHitsExactlyTheFlowsThroughItAndTheReportNamesThePathFault) {
  make_lab(1);
  start_agents();
  lab_->run("impair l1-s1 up loss=2");
  ASSERT_EQ(run(R"(name: fabric-lossy-uplink
agents:
  hosts: [l1h1, l2h1]
  wait: 30s
tests:
  - name: pair
    engine: dpdk
    duration: 10s
    topology: pairs
    rate: 8kpps
    frame_size: 512B
    encapsulation: ipv4_udp
    flows_per_peer: 12
    thresholds:
      max_lost_frames: 0
)"),
            1)
      << read_file(dir_ + "/controller.log");
  const json result = report();
  const auto flows = received_flows(result);
  ASSERT_EQ(flows.size(), 24u);
  std::uint64_t hit_received = 0, hit_lost = 0;
  int hit = 0, spared = 0;
  std::set<std::string> failing;
  for (const auto& flow : flows) {
    const bool through_fault = flow["agent"] == "l2h1" && path_of(flow) == "l1-s1";
    const auto lost = flow["counters"]["lost_frames"].get<std::uint64_t>() +
                      flow["counters"].value("tail_lost_frames", std::uint64_t{0});
    const auto received = flow["counters"]["rx_frames"].get<std::uint64_t>();
    EXPECT_EQ(flow["counters"]["bit_errors"], 0);
    if (through_fault) {
      ++hit;
      hit_lost += lost;
      hit_received += received;
      EXPECT_GT(lost, 0u) << flow.dump(1);
      EXPECT_FALSE(flow["passed"].get<bool>());
      failing.insert(flow["stream_id"].get<std::string>());
    } else {
      ++spared;
      EXPECT_EQ(lost, 0u) << "a flow that does not cross l1-s1 upward lost frames: " << flow.dump(1);
      EXPECT_TRUE(flow["passed"].get<bool>());
    }
  }
  ASSERT_GT(hit, 0) << "no flow of 12 hashed onto spine 1: the test proves nothing";
  ASSERT_GT(spared, 12) << "every flow of l1h1 hashed onto spine 1: no sibling to compare";
  const double loss = static_cast<double>(hit_lost) / static_cast<double>(hit_lost + hit_received);
  EXPECT_NEAR(loss, 0.02, 0.005) << hit_lost << " lost of " << hit_lost + hit_received;
  // The report says it: these flows fail while their siblings pass.
  const auto& faults = result["tests"][0]["path_faults"];
  ASSERT_EQ(faults.size(), 1u) << faults.dump(1);
  EXPECT_EQ(faults[0]["receiver"], "l2h1");
  EXPECT_EQ(faults[0]["sender"], "l1h1");
  EXPECT_EQ(faults[0]["failing_streams"].size(), static_cast<std::size_t>(hit));
  for (const auto& id : faults[0]["failing_streams"]) EXPECT_TRUE(failing.count(id.get<std::string>())) << id;
  const std::string summary = read_file(dir_ + "/controller.log");
  EXPECT_NE(summary.find("path fault: l2h1 from l1h1: " + std::to_string(hit) + " of 12 flows fail"), std::string::npos)
      << summary;
}

// Issue 39's fleet-relative verdict: four hosts in a ring (each receives one flow), and the leaf's
// port to l2h1 held to 70 % of what its one sender offers (a tbf, as a slow port or an optic
// renegotiated to a lower speed would): that flow loses 30 %, which the loose loss threshold lets
// pass, but against its three siblings it is an outlier, a warning in the first test and a
// failure in the second (`outliers: fail`). No other stream is named. (No traces: they would
// split the ring's same-leaf and cross-leaf flows into classes of two.)
TEST_F(FabricRun, AFlowShapedTo70PercentOfItsSiblingsIsAnOutlierAndNoOtherIs) {
  make_lab(2);
  start_agents();
  // 1,000 frames/s of 512 B from each agent: 4.1 Mbit/s a flow. 4 s a test: the shaper's queue of
  // 20 frames adds 0.5 % to the shaped flow's 2,800 frames, against the ±5 % its share is held to.
  lab_->run("shape l2h1 down 2.87 queue=20");
  ASSERT_EQ(run(R"(name: fabric-outliers
agents:
  hosts: [l1h1, l1h2, l2h1, l2h2]
  wait: 30s
defaults:
  engine: dpdk
  duration: 4s
  topology: ring
  rate: 1000pps
  frame_size: 512B
  encapsulation: ipv4_udp
  flows_per_peer: 1
  trace_rate: 0
  thresholds:
    max_ber: 1e-12
    max_loss: 50%
tests:
  - name: warned
  - name: failed
    outliers: fail
)"),
            1)
      << read_file(dir_ + "/controller.log");
  const json result = report();
  ASSERT_EQ(result["tests"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const json& test = result["tests"][i];
    SCOPED_TRACE(test["name"].get<std::string>());
    ASSERT_TRUE(test["outliers"].is_object()) << test.dump(1).substr(0, 3000);
    std::set<std::string> metrics;
    for (const auto& outlier : test["outliers"]["streams"]) {
      EXPECT_EQ(outlier["agent"], "l2h1") << outlier.dump(1);
      EXPECT_EQ(outlier["stream"].get<std::string>().rfind("rx:l1h2/", 0), 0u) << outlier.dump(1);
      EXPECT_EQ(outlier["class_size"], 4);
      EXPECT_GT(outlier["deviations"].get<double>(), 5.0);
      metrics.insert(outlier["metric"].get<std::string>());
      if (outlier["metric"] == "throughput_bps") {
        const double share = outlier["value"].get<double>() / outlier["class_median"].get<double>();
        EXPECT_NEAR(share, 0.7, 0.05) << outlier.dump(1);
        std::cout << outlier["text"].get<std::string>() << "\n";
      }
    }
    EXPECT_EQ(metrics, (std::set<std::string>{"throughput_bps", "loss_ratio"})) << test["outliers"].dump(1);
    for (const auto& stream : test["streams"]) {
      if (stream["stream_id"].get<std::string>().rfind("rx:", 0) == 0) {
        EXPECT_TRUE(stream["passed"].get<bool>()) << stream["stream_id"];
      }
    }
    const auto& lines = test[i == 0 ? "warnings" : "problems"];
    const auto outlier_lines = std::count_if(lines.begin(), lines.end(), [](const json& line) {
      return line.get<std::string>().rfind("outlier: l1h2 -> l2h1 ", 0) == 0;
    });
    EXPECT_EQ(outlier_lines, 2) << lines.dump(1);
  }
  EXPECT_EQ(result["tests"][0]["verdict"], "pass");
  EXPECT_EQ(result["tests"][1]["verdict"], "fail");
}

// Not a test: what bench/outlier_false_alarms.sh runs (it is disabled, so ctest never does). Clean
// runs of the mesh above without the shaping (TUSK_OUTLIER_RUNS, default 20), at the lowest k (2)
// so every stream beyond 2 spreads is listed with its distance; prints, for k 3 to 10, how many
// streams of how many would have been flagged: the false-alarm rate of each k on this lab.
TEST_F(FabricRun, DISABLED_OutlierFalseAlarmsOnCleanRuns) {
  const char* runs_text = std::getenv("TUSK_OUTLIER_RUNS");
  const int runs = runs_text ? std::atoi(runs_text) : 20;
  make_lab(2);
  start_agents();
  std::size_t streams = 0;
  std::vector<double> deviations;  // of every stream beyond k 2, on any metric
  for (int run_index = 0; run_index < runs; ++run_index) {
    std::filesystem::remove_all(dir_ + "/report");
    ASSERT_EQ(run(R"(name: fabric-outliers-clean
agents:
  hosts: [l1h1, l1h2, l2h1, l2h2]
  wait: 30s
tests:
  - name: mesh
    engine: dpdk
    duration: 8s
    topology: mesh
    rate: 1500pps
    frame_size: 512B
    encapsulation: ipv4_udp
    flows_per_peer: 2
    outlier_k: 2
    thresholds:
      max_ber: 1e-12
)",
                  {"--topology", topology_file()}),
              0)
        << read_file(dir_ + "/controller.log");
    const json test = report()["tests"][0];
    std::map<std::string, double> worst;  // stream -> its largest distance on any metric
    for (const auto& outlier : test["outliers"]["streams"]) {
      const std::string key = outlier["agent"].get<std::string>() + " " + outlier["stream"].get<std::string>();
      worst[key] = std::max(worst[key], outlier["deviations"].get<double>());
    }
    std::size_t received = 0;
    for (const auto& stream : test["streams"]) received += stream["stream_id"].get<std::string>().rfind("rx:", 0) == 0;
    streams += received;
    for (const auto& [key, distance] : worst) deviations.push_back(distance);
    std::cout << "run " << run_index + 1 << ": " << received << " streams, " << worst.size() << " beyond k 2\n";
  }
  std::cout << "outlier false alarms over " << runs << " clean runs, " << streams << " streams:\n";
  for (const double k : {3.0, 4.0, 5.0, 6.0, 8.0, 10.0}) {
    const auto flagged = std::count_if(deviations.begin(), deviations.end(), [k](double d) { return d > k; });
    std::cout << "  k " << k << ": " << flagged << " streams flagged ("
              << 100.0 * flagged / std::max<std::size_t>(streams, 1) << " %)\n";
  }
}

// Acceptance 4, in a run: an agent given a gateway that does not exist refuses the test with an
// error naming its port and the gateway it asked, and the run exits with a usage error.
TEST_F(FabricRun, AWrongGatewayStopsTheRunWithTheAddressItAskedNotSilentLoss) {
  make_lab(1);
  // The host on leaf 2 names .99 as its gateway: nobody answers ARP for it.
  start_agents({{"l2h1", "192.168.102.99"}});
  const int exit = run(R"(name: fabric-wrong-gateway
agents:
  hosts: [l1h1, l2h1]
  wait: 30s
tests:
  - name: pair
    engine: dpdk
    duration: 3s
    topology: pairs
    rate: 1kpps
    frame_size: 256B
    encapsulation: ipv4_udp
)");
  EXPECT_NE(exit, 0);
  const std::string log = read_file(dir_ + "/controller.log");
  EXPECT_NE(log.find("no ARP reply from 192.168.102.99"), std::string::npos) << log;
}

}  // namespace
}  // namespace tusk::testing
