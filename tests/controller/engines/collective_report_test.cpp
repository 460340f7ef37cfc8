// The collective replay's result is read from the plans as sent (the planner's scaled S and bytes
// per peer) and the flows' counters, never worked out again from the profile.
#include "controller/engines/rdma/collective_report.hpp"

#include <gtest/gtest.h>

#include "common/counter_names.hpp"
#include "controller/engines/rdma/rdma_slice.hpp"
#include "controller/plan/planner.hpp"
#include "controller/profile/profile_loader.hpp"

namespace tusk {
namespace {

namespace c = counters;

// A ring all-reduce of S = 2 MB scaled by 50 % over three ranks, 5 steps; each rank's flow sent
// `bytes_per_step` a step, taking `step_s` on average (the slowest rank is vm2).
TestOutcome ring_outcome(double step_s_vm2) {
  const Profile profile = load_profile_text(R"(name: p
agents: {hosts: [vm1, vm2, vm3]}
tests:
  - name: replay
    engine: rdma
    collective: all_reduce
    collective_bytes: 2MB
    scale: 50%
    steps: 5
    step_period: 3s
)",
                                            "p.yaml");
  TestOutcome test;
  test.spec = profile.tests[0];
  test.agents = {"vm1", "vm2", "vm3"};
  for (auto& plan : plan_test(profile, 0, test.agents, "run")) test.plans[plan.agent] = plan.plan;
  const std::map<std::string, std::string> next{{"vm1", "vm2"}, {"vm2", "vm3"}, {"vm3", "vm1"}};
  for (const auto& [agent, peer] : next) {
    StreamVerdict verdict;
    verdict.agent = agent;
    verdict.stream.set_stream_id("flow:" + peer + "/qp0");
    verdict.stream.set_peer(peer);
    verdict.stream.set_kind("flow");
    // 2(G-1)/G * S = 4/3 MB per step, 5 steps.
    (*verdict.stream.mutable_counters())[std::string(c::kTxBytes)] = 5 * 4'000'000 / 3;
    (*verdict.stream.mutable_counters())[std::string(c::kStepsDone)] = 5;
    (*verdict.stream.mutable_gauges())[std::string(c::kStepTimeMeanNs)] = (agent == "vm2" ? step_s_vm2 : 0.5) * 1e9;
    (*verdict.stream.mutable_gauges())[std::string(c::kStepTimeMaxNs)] = (agent == "vm2" ? step_s_vm2 : 0.5) * 1e9;
    test.streams.push_back(verdict);
  }
  return test;
}

TEST(CollectiveReport, ReadsSAndEachRanksBytesFromThePlansAsSent) {
  const auto result = collective_result(ring_outcome(1.0));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->collective, "all_reduce");
  EXPECT_EQ(result->ranks, 3u);
  EXPECT_EQ(result->bytes_per_step, 1'000'000u);  // 2 MB scaled by 50 %, as the planner sent it
  EXPECT_EQ(result->steps, 5u);
  ASSERT_EQ(result->per_rank.size(), 3u);
  for (const auto& rank : result->per_rank) {
    // The model: 2(G-1)/G * S to the ring's next rank.
    EXPECT_NEAR(rank.model_bytes_per_step, 4.0 / 3 * 1e6, 1) << rank.agent;
    EXPECT_NEAR(rank.bytes_per_step, 4.0 / 3 * 1e6, 1) << rank.agent;
    EXPECT_EQ(rank.steps_done, 5u);
  }
  EXPECT_EQ(result->slowest_rank, "vm2");
  EXPECT_DOUBLE_EQ(result->time_per_step_s, 1.0);
  EXPECT_DOUBLE_EQ(result->algbw_bytes_per_s, 1e6);
  EXPECT_DOUBLE_EQ(result->busbw_bytes_per_s, 1e6 * 4 / 3);
}

// Worked out once, when the test is judged (the slice's conclude), and only read by the summary and
// report.json: neither view computes it again.
TEST(CollectiveReport, ConcludedOnceAndReadByBothViews) {
  TestOutcome test = ring_outcome(1.0);
  const EngineSlice& engine = rdma::slice();
  EXPECT_EQ(engine.summary_extra(test), "");
  nlohmann::ordered_json before;
  engine.json_extra(test, before);
  EXPECT_FALSE(before.contains("collective"));

  test.engine_result = engine.conclude(test);
  const std::string summary = engine.summary_extra(test);
  EXPECT_NE(summary.find("all_reduce over 3 ranks"), std::string::npos) << summary;
  EXPECT_NE(summary.find("slowest rank vm2"), std::string::npos) << summary;
  nlohmann::ordered_json out;
  engine.json_extra(test, out);
  EXPECT_DOUBLE_EQ(out["collective"]["busbw_bytes_per_s"].get<double>(), 1e6 * 4 / 3);
  EXPECT_EQ(out["collective"]["slowest_rank"], "vm2");
}

// Rails: a ring per rail, so a rank is an agent's NIC. Two agents on two rails, each NIC's flow to
// the other agent's NIC on its rail sending S = 2 MB (2(G-1)/G * S with G = 2); vm2's rail 1 is slow.
TEST(CollectiveReport, OnRailsARankIsANicAndEachIsHeldToItsRailsModel) {
  const Profile profile = load_profile_text(R"(name: p
agents: {hosts: [vm1, vm2]}
tests:
  - name: replay
    engine: rdma
    rails: 2
    collective: all_reduce
    collective_bytes: 2MB
    steps: 4
    step_period: 3s
)",
                                            "p.yaml");
  TestOutcome test;
  test.spec = profile.tests[0];
  test.agents = {"vm1", "vm2"};
  for (auto& plan : plan_test(profile, 0, test.agents, "run")) test.plans[plan.agent] = plan.plan;
  for (const std::string agent : {"vm1", "vm2"}) {
    for (int rail = 0; rail < 2; ++rail) {
      StreamVerdict verdict;
      verdict.agent = agent;
      verdict.stream.set_peer(agent == "vm1" ? "vm2" : "vm1");
      verdict.stream.set_stream_id("flow:" + verdict.stream.peer() + "/rail" + std::to_string(rail) + "/qp0");
      verdict.stream.set_kind("flow");
      verdict.stream.set_nic("mlx5_" + std::to_string(rail) + "/1");
      (*verdict.stream.mutable_counters())[std::string(c::kTxBytes)] = 4 * 2'000'000;
      (*verdict.stream.mutable_counters())[std::string(c::kStepsDone)] = 4;
      const double step_s = agent == "vm2" && rail == 1 ? 2.0 : 0.5;
      (*verdict.stream.mutable_gauges())[std::string(c::kStepTimeMeanNs)] = step_s * 1e9;
      (*verdict.stream.mutable_gauges())[std::string(c::kStepTimeMaxNs)] = step_s * 1e9;
      test.streams.push_back(verdict);
    }
  }
  const auto result = collective_result(test);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->ranks, 2u);  // in each ring
  EXPECT_EQ(result->rails, 2u);
  ASSERT_EQ(result->per_rank.size(), 4u);
  for (const auto& rank : result->per_rank) {
    EXPECT_FALSE(rank.nic.empty()) << rank.agent;
    EXPECT_DOUBLE_EQ(rank.model_bytes_per_step, 2'000'000) << rank.agent << " " << rank.nic;
    EXPECT_DOUBLE_EQ(rank.bytes_per_step, 2'000'000) << rank.agent << " " << rank.nic;
  }
  EXPECT_EQ(result->slowest_rank, "vm2 mlx5_1/1");
  EXPECT_EQ(result->links.size(), 4u);
}

TEST(CollectiveReport, NothingWithoutThePlans) {
  TestOutcome test = ring_outcome(1.0);
  test.plans.clear();
  EXPECT_FALSE(collective_result(test).has_value());
}

}  // namespace
}  // namespace tusk
