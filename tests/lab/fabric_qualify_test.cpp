// The fabric lab as a switch under qualification (issue 15): a leaf's port to a host marks
// ECN-capable frames CE beyond a rate, or rewrites every frame's DSCP, both in the kernel's data
// path (tests/lab/impair.bpf.c), and Tusk's receivers count it per flow and judge it with
// min_ce_marked, max_ce_marked and max_dscp_rewrites. Real frames through the routed lab; needs
// root, skips otherwise.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <string>

#include "tests/support/fabric_run.hpp"

namespace tusk::testing {
namespace {

using nlohmann::json;

// Test `index`'s receiving streams.
std::vector<json> received(const json& report, std::size_t index) {
  std::vector<json> flows;
  for (const auto& stream : report["tests"][index]["streams"]) {
    if (stream["stream_id"].get<std::string>().rfind("rx:", 0) == 0) flows.push_back(stream);
  }
  return flows;
}

std::uint64_t counter(const json& stream, const char* name) {
  return stream["counters"].value(name, std::uint64_t{0});
}

// One test of l1h1 sending to l2h1 through the marking port: `rate` of 512-byte frames with `ecn`
// for `duration` (5 s where each flow must count over 1,000 frames at 250 a second).
std::string marked_test(const std::string& name, const std::string& rate, const std::string& ecn,
                        const std::string& thresholds, const std::string& duration = "5s") {
  return "  - name: " + name + R"(
    engine: dpdk
    duration: )" +
         duration + R"(
    topology: pipeline
    rate: )" +
         rate + R"(
    frame_size: 512B
    encapsulation: ipv4_udp
    ecn: )" +
         ecn + R"(
    flows_per_peer: 4
    thresholds:
)" + thresholds;
}

// Acceptance 2: the port marks beyond 6 Mbit/s. 3 kpps of 512 B (12.3 Mbit/s) is marked on about
// half its frames (1 - 6/12.3), 1 kpps (4.1 Mbit/s) on none; frames that are not ECN-capable are
// never marked; min_ce_marked and max_ce_marked pass and fail on their own flows.
TEST_F(FabricRun, APortMarksCeBeyondItsRateAndTheReceiversCountItPerFlow) {
  make_lab(1);
  start_agents();
  lab_->run("impair l2h1 down mark_ce_above=6");
  const std::string head = "name: ecn-marking\nagents:\n  hosts: [l1h1, l2h1]\n  wait: 30s\ntests:\n";
  ASSERT_EQ(run(head + marked_test("below", "1kpps", "ect0", "      max_ce_marked: 0\n") +
                marked_test("above", "3kpps", "ect1", "      min_ce_marked: 100\n      max_lost_frames: 0\n", "3s")),
            0)
      << read_file(dir_ + "/controller.log");
  json result = report();
  ASSERT_EQ(received(result, 0).size(), 4u) << result["tests"][0].dump(1).substr(0, 3000);
  for (const auto& flow : received(result, 0)) {
    EXPECT_GT(counter(flow, "rx_frames"), 1000u) << flow.dump(1);
    EXPECT_EQ(counter(flow, "ce_marked"), 0u) << "a flow below the port's rate was marked: " << flow.dump(1);
  }
  std::uint64_t marked = 0, frames = 0;
  ASSERT_EQ(received(result, 1).size(), 4u);
  for (const auto& flow : received(result, 1)) {
    EXPECT_TRUE(flow["passed"].get<bool>()) << flow.dump(1);
    EXPECT_GT(counter(flow, "ce_marked"), 100u) << flow.dump(1);
    marked += counter(flow, "ce_marked");
    frames += counter(flow, "rx_frames");
  }
  const double share = static_cast<double>(marked) / static_cast<double>(frames);
  std::cout << marked << " of " << frames << " frames offered at 12.3 Mbit/s arrived CE-marked (" << share * 100
            << " %; a 6 Mbit/s marker: " << (1 - 6.0 / 12.288) * 100 << " %)\n";
  EXPECT_NEAR(share, 1 - 6.0 / 12.288, 0.15) << marked << " of " << frames << " frames marked";

  // The same port, the verdicts the other way round: marks where none may be fail, a flow below
  // the rate that must be marked fails, and frames that are not ECN-capable pass unmarked.
  ASSERT_EQ(run(head + marked_test("above-unmarked", "3kpps", "ect0", "      max_ce_marked: 0\n", "3s") +
                marked_test("not-ect", "3kpps", "not_ect", "      max_ce_marked: 0\n") +
                marked_test("below-marked", "1kpps", "ect0", "      min_ce_marked: 1\n", "3s")),
            1)
      << read_file(dir_ + "/controller.log");
  result = report();
  EXPECT_EQ(result["tests"][0]["verdict"], "fail");
  EXPECT_EQ(result["tests"][1]["verdict"], "pass") << result["tests"][1].dump(1).substr(0, 3000);
  EXPECT_EQ(result["tests"][2]["verdict"], "fail");
  for (const auto& flow : received(result, 0)) {
    EXPECT_GT(counter(flow, "ce_marked"), 100u) << flow.dump(1);
    EXPECT_FALSE(flow["passed"].get<bool>());
  }
  for (const auto& flow : received(result, 1)) {
    EXPECT_GT(counter(flow, "rx_frames"), 3000u) << flow.dump(1);
    EXPECT_EQ(counter(flow, "ce_marked"), 0u) << "a frame that is not ECN-capable was marked: " << flow.dump(1);
  }
  for (const auto& flow : received(result, 2)) EXPECT_FALSE(flow["passed"].get<bool>()) << flow.dump(1);
}

// Acceptance 3: a port that rewrites every frame's DSCP to 10. Two classes (26 and 46) share the
// flows both ways between l1h1 and l2h1: every frame into l2h1 is counted as rewritten and fails
// max_dscp_rewrites: 0, each flow reports the class it was sent with, and the flows the other way
// (not through the port) arrive with their own class, so the sender's and the receiver's idea of
// each flow's class agree.
TEST_F(FabricRun, ADscpRewriteIsCountedPerFlowAndClassAndFailsTheThreshold) {
  make_lab(1);
  start_agents();
  lab_->run("impair l2h1 down dscp=10");
  ASSERT_EQ(run(R"(name: dscp-rewrite
agents:
  hosts: [l1h1, l2h1]
  wait: 30s
tests:
  - name: classes
    engine: dpdk
    duration: 5s
    topology: pairs
    rate: 1kpps
    frame_size: 512B
    encapsulation: ipv4_udp
    dscp: [26, 46]
    flows_per_peer: 4
    thresholds:
      max_dscp_rewrites: 0
)"),
            1)
      << read_file(dir_ + "/controller.log");
  const json result = report();
  const auto flows = received(result, 0);
  ASSERT_EQ(flows.size(), 8u) << result["tests"][0].dump(1).substr(0, 3000);
  std::map<std::string, std::map<int, int>> classes_by_receiver;
  for (const auto& flow : flows) {
    const int dscp = flow["flow"]["dscp"].get<int>();
    EXPECT_EQ(dscp, (flow["flow"]["src_port"].get<int>() - 49152) % 2 == 0 ? 26 : 46) << flow.dump(1);
    ++classes_by_receiver[flow["agent"].get<std::string>()][dscp];
    EXPECT_GT(counter(flow, "rx_frames"), 900u) << flow.dump(1);
    if (flow["agent"] == "l2h1") {
      EXPECT_EQ(counter(flow, "dscp_rewrites"), counter(flow, "rx_frames")) << flow.dump(1);
      EXPECT_FALSE(flow["passed"].get<bool>());
    } else {
      EXPECT_EQ(counter(flow, "dscp_rewrites"), 0u) << flow.dump(1);
      EXPECT_TRUE(flow["passed"].get<bool>()) << flow.dump(1);
    }
  }
  EXPECT_EQ(classes_by_receiver["l2h1"], (std::map<int, int>{{26, 2}, {46, 2}}));
  EXPECT_EQ(classes_by_receiver["l1h1"], (std::map<int, int>{{26, 2}, {46, 2}}));
  // The receiver says what happened, once per flow.
  bool told = false;
  for (const auto& agent : result["tests"][0]["agents"]) {
    for (const auto& event : agent["events"]) {
      told =
          told || event["message"].get<std::string>().find("arrives with DSCP 10, sent with 26") != std::string::npos;
    }
  }
  EXPECT_TRUE(told) << result["tests"][0]["agents"].dump(1).substr(0, 3000);
}

}  // namespace
}  // namespace tusk::testing
