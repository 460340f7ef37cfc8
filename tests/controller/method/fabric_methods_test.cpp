// The fabric methods' judges on made-up flows: the balance random hashing predicts, a leaf whose
// flows all took one uplink (and an uplink no flow took), and which flows a failed link cost.
#include "controller/method/fabric_methods.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/counter_names.hpp"
#include "tests/support/leaf_spine_model.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
namespace c = counters;

TEST(EcmpPrediction, RandomHashingBoundsTheBusiestUplinkAndFewFlowsCannotTell) {
  // 16 flows on 2 uplinks: 15 or more on one has probability 5.2e-4, 14 or more 4.2e-3.
  EXPECT_DOUBLE_EQ(predicted_max_over_mean(16, 2), 15.0 / 8);
  // 8 flows: all on one happens 0.8 % of the time: no bound at 0.1 %.
  EXPECT_EQ(predicted_max_over_mean(8, 2), 0);
  // Many flows: the bound closes in on 1.
  const double wide = predicted_max_over_mean(10000, 4);
  EXPECT_GT(wide, 1.0);
  EXPECT_LT(wide, 1.1);
  EXPECT_EQ(predicted_max_over_mean(0, 2), 0);
  EXPECT_EQ(predicted_max_over_mean(16, 1), 0);
}

struct FlowSpec {
  int src_leaf, dst_leaf, spine;
  std::uint64_t bytes = 1000;
  std::uint64_t lost = 0, gap_lost = 0, gaps = 0, flaps = 0, longest_gap_ms = 0;
  int moved_to_spine = 0;  // the trace saw another spine answer too (the path moved)
};

// A step's outcome: one rx stream per flow (host 1 of each leaf to host 1 of the other), its
// tx stream with a trace through `spine`, and the localisation of their flows.
TestOutcome step_of(const std::vector<FlowSpec>& specs, const FabricTopology& topology) {
  TestOutcome step;
  step.spec.duration = std::chrono::seconds(10);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const FlowSpec& f = specs[i];
    const std::string sender = fmt::format("l{}h1", f.src_leaf), receiver = fmt::format("l{}h1", f.dst_leaf);
    StreamVerdict tx;
    tx.agent = sender;
    tx.stream.set_kind("tx");
    tx.stream.set_peer(receiver);
    const std::vector<std::string> answers{testing::gateway(f.src_leaf), testing::spine_end(f.src_leaf, f.spine),
                                           testing::gateway(f.dst_leaf), testing::host_address(f.dst_leaf, 1)};
    for (std::size_t ttl = 1; ttl <= answers.size(); ++ttl) {
      auto& hop = *tx.stream.add_path();
      hop.set_ttl(static_cast<std::uint32_t>(ttl));
      hop.set_address(answers[ttl - 1]);
      if (ttl == 2 && f.moved_to_spine > 0) hop.set_other_address(testing::spine_end(f.src_leaf, f.moved_to_spine));
    }
    StreamVerdict rx;
    rx.agent = receiver;
    rx.stream.set_kind("rx");
    rx.stream.set_peer(sender);
    auto& flow = *rx.stream.mutable_flow();
    flow.set_src_address(testing::host_address(f.src_leaf, 1));
    flow.set_dst_address(testing::host_address(f.dst_leaf, 1));
    flow.set_src_port(static_cast<std::uint32_t>(49152 + i));
    flow.set_dst_port(4791);
    flow.set_protocol("udp");
    *tx.stream.mutable_flow() = flow;
    tx.stream.mutable_path()->rbegin()->set_destination(true);
    auto& counts = *rx.stream.mutable_counters();
    counts[std::string(c::kRxBytes)] = f.bytes;
    counts[std::string(c::kLostFrames)] = f.lost;
    counts[std::string(c::kGapLostFrames)] = f.gap_lost;
    counts[std::string(c::kTrafficGaps)] = f.gaps;
    counts[std::string(c::kLinkFlaps)] = f.flaps;
    counts[std::string(c::kLongestGapMs)] = f.longest_gap_ms;
    step.streams.push_back(tx);
    step.streams.push_back(rx);
  }
  step.localisation = localise(step.streams, &topology);
  // Each flow's path as the topology names it: host, leaf, spine, leaf, host.
  const auto traced = traced_flows(step.localisation);
  EXPECT_EQ(traced.size(), specs.size());
  for (std::size_t i = 0; i < traced.size() && i < specs.size(); ++i) {
    const FlowSpec& f = specs[i];
    EXPECT_EQ(traced[i].links,
              (std::vector<std::string>{testing::host_to_leaf(f.src_leaf, 1), testing::uplink(f.src_leaf, f.spine),
                                        testing::downlink(f.dst_leaf, f.spine), testing::leaf_to_host(f.dst_leaf, 1)}));
  }
  return step;
}

TEST(EcmpBalance, AnUplinkNoFlowTookCountsAndAllFlowsOnOneFailsAsNoRandomHash) {
  const testing::LeafSpineShape shape{2, 2, 1, 16};
  const FabricTopology topology = testing::lab_topology(shape);
  std::vector<FlowSpec> flows;
  for (int i = 0; i < 16; ++i) flows.push_back({1, 2, 1});                   // leaf 1: all on spine 1
  for (int i = 0; i < 16; ++i) flows.push_back({2, 1, i % 2 == 0 ? 1 : 2});  // leaf 2: even
  MethodSpec method;
  method.kind = MethodKind::EcmpBalance;
  const EcmpBalanceResult result = judge_ecmp_balance(step_of(flows, topology), method, &topology);
  ASSERT_EQ(result.leaves.size(), 2u);
  const LeafBalance& l1 = result.leaves[0];
  EXPECT_EQ(l1.leaf, "l1");
  ASSERT_EQ(l1.uplinks.size(), 2u) << "spine 2's uplink carried nothing and still counts";
  EXPECT_DOUBLE_EQ(l1.max_over_mean, 2.0);
  EXPECT_DOUBLE_EQ(l1.fairness, 0.5);
  EXPECT_FALSE(l1.passed);
  EXPECT_THAT(l1.verdict, HasSubstr("16 of its 16 flows on one of 2 uplinks"));
  const LeafBalance& l2 = result.leaves[1];
  EXPECT_TRUE(l2.passed) << l2.verdict;
  EXPECT_DOUBLE_EQ(l2.max_over_mean, 1.0);
  EXPECT_DOUBLE_EQ(l2.fairness, 1.0);
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_THAT(result.problems[0], HasSubstr("ECMP balance at l1"));

  // The profile's own limits judge bytes: 10 and 6 of 16 equal flows is max/mean 1.25.
  flows.clear();
  for (int i = 0; i < 16; ++i) flows.push_back({1, 2, i < 10 ? 1 : 2});
  method.max_imbalance = 1.2;
  method.min_fairness = 0.99;
  const auto limited = judge_ecmp_balance(step_of(flows, topology), method, &topology);
  ASSERT_EQ(limited.leaves.size(), 1u);
  EXPECT_FALSE(limited.leaves[0].passed);
  EXPECT_THAT(limited.leaves[0].verdict, HasSubstr("max/mean 1.250 > max_imbalance 1.2"));
  EXPECT_THAT(limited.leaves[0].verdict, HasSubstr("Jain's index 0.941 < min_fairness 0.99"));
}

TEST(EcmpBalance, NoFlowBetweenLeavesIsAProblemNotAPass) {
  MethodSpec method;
  method.kind = MethodKind::EcmpBalance;
  const auto result = judge_ecmp_balance(TestOutcome{}, method, nullptr);
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_THAT(result.problems[0], HasSubstr("no traced flow left a leaf"));
}

TEST(LinkFailure, FlowsThatCrossedTheLinkEitherWayAreItsAndOthersThatLostAreCollateral) {
  const testing::LeafSpineShape shape{2, 2, 1, 8};
  const FabricTopology topology = testing::lab_topology(shape);
  MethodSpec method;
  method.kind = MethodKind::LinkFailure;
  method.link = "l1:s2 <-> s2:l1";
  method.at = std::chrono::seconds(3);
  method.max_convergence = std::chrono::milliseconds(400);
  std::vector<FlowSpec> flows{
      // up through s2, moved to s1 after: 300 ms gap
      {1, 2, 1, 1000, 0, 30, 1, 1, 300, 2},
      // down through s2 into l1 (from l2): 500 ms gap
      {2, 1, 2, 1000, 0, 50, 1, 1, 500},
      // through s1 only, clean
      {1, 2, 1},
      // through s1 only, yet lost frames: collateral
      {2, 1, 1, 1000, 4},
      // through s2 and never back
      {1, 2, 2, 1000, 0, 80, 1, 0},
  };
  const auto result = judge_link_failure(step_of(flows, topology), method, &topology, HookRun{"cut it", 3.01, 0});
  ASSERT_EQ(result.flows.size(), 5u);
  EXPECT_TRUE(result.flows[0].crossed) << "its trace saw s2 answer too";
  EXPECT_TRUE(result.flows[1].crossed);
  EXPECT_FALSE(result.flows[2].crossed);
  EXPECT_FALSE(result.flows[3].crossed);
  EXPECT_TRUE(result.flows[4].crossed);
  EXPECT_FALSE(result.flows[4].resumed);
  EXPECT_EQ(result.crossed, 3u);
  EXPECT_EQ(result.collateral, 1u);
  EXPECT_EQ(result.convergence_min_ms, 300);
  EXPECT_EQ(result.convergence_max_ms, 500);
  EXPECT_EQ(result.convergence_median_ms, 400);
  const std::string problems = fmt::format("{}", fmt::join(result.problems, "\n"));
  EXPECT_THAT(problems, HasSubstr("crossed l1:s2 <-> s2:l1 and its traffic never resumed"));
  EXPECT_THAT(problems, HasSubstr("1 flow(s) that never crossed l1:s2 <-> s2:l1 lost traffic"));
  EXPECT_THAT(problems, HasSubstr("the slowest flow resumed after 500 ms, more than max_convergence 400 ms"));

  // A command that failed, or none that ran, is the test's problem.
  const auto failed = judge_link_failure(step_of({}, topology), method, &topology, HookRun{"cut it", 3.0, 2});
  EXPECT_THAT(fmt::format("{}", fmt::join(failed.problems, "\n")), HasSubstr("the down command exited 2"));
  EXPECT_THAT(fmt::format("{}", fmt::join(failed.problems, "\n")), HasSubstr("no traced flow crossed"));
  const auto never = judge_link_failure(step_of({}, topology), method, &topology, HookRun{"cut it", {}, {}});
  EXPECT_THAT(fmt::format("{}", fmt::join(never.problems, "\n")), HasSubstr("the down command did not run"));
}

TEST(LinkFailure, AHostilePeersGapIsBoundedByTheTest) {
  const testing::LeafSpineShape shape{2, 2, 1, 8};
  const FabricTopology topology = testing::lab_topology(shape);
  MethodSpec method;
  method.kind = MethodKind::LinkFailure;
  method.link = "l1:s2 <-> s2:l1";
  const auto result = judge_link_failure(step_of({{1, 2, 2, 1000, ~0ull, ~0ull, 1, 1, ~0ull}}, topology), method,
                                         &topology, HookRun{"x", 1.0, 0});
  ASSERT_EQ(result.flows.size(), 1u);
  EXPECT_EQ(result.flows[0].resume_ms, 10000) << "at most the test's 10 s";
  EXPECT_LT(result.flows[0].lost_frames, ~0ull);
}

}  // namespace
}  // namespace tusk
