// Judging a finished test from what its agents sent, with no run around it: the same input always
// comes to the same outcome, and what an agent failed to do is the test's problem.
#include "controller/run/judge_test.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/profile_text.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kPlannedStart = 5'000'000'000;

TestOutcome two_agent_test() {
  const Profile profile = testing::load_profile_yaml(R"(
name: judged
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
)");
  TestOutcome test;
  test.spec = profile.tests.at(0);
  test.agents = {"a", "b"};
  test.planned_start_ns = kPlannedStart;
  return test;
}

proto::TestResult completed_at(std::int64_t start_agent_ns) {
  proto::TestResult result;
  result.set_completed(true);
  result.set_actual_start_agent_ns(start_agent_ns);
  result.set_actual_stop_agent_ns(start_agent_ns + 1'000'000'000);
  return result;
}

TEST(JudgeTest, EachAgentsStartIsReadOnTheControllersClockAndTheSkewIsTheirSpread) {
  TestOutcome test = two_agent_test();
  // a's clock runs 1 us ahead of ours and it started on time; b started 2 us late.
  test.per_agent["a"].clock = ClockSample{1'000, 50'000};
  test.per_agent["a"].result = completed_at(kPlannedStart + 1'000);
  test.per_agent["b"].result = completed_at(kPlannedStart + 2'000);
  judge_test(test, nullptr);
  ASSERT_EQ(test.starts.size(), 2u);
  EXPECT_EQ(test.starts[0].start_error_ns, 0);
  EXPECT_EQ(test.starts[1].start_error_ns, 2'000);
  EXPECT_EQ(test.start_skew_ns, 2'000);
}

TEST(JudgeTest, APlanRefusedAndAnAgentLostAreTheTestsProblemsAndItDoesNotPass) {
  TestOutcome test = two_agent_test();
  proto::PlanAck refused;
  refused.set_ok(false);
  refused.set_error("no such port");
  test.per_agent["a"].plan_ack = refused;
  test.per_agent["a"].result = completed_at(kPlannedStart);
  test.per_agent["b"].lost = true;
  judge_test(test, nullptr);
  const std::string problems = fmt::format("{}", fmt::join(test.problems, "\n"));
  EXPECT_THAT(problems, HasSubstr("a: plan refused: no such port"));
  EXPECT_THAT(problems, HasSubstr("b: no result (agent lost)")) << "no agent loss is allowed by default";
  EXPECT_TRUE(test.agents_lost);
  EXPECT_EQ(test.verdict, TestVerdict::Incomplete);
}

TEST(JudgeTest, TheSameInputIsJudgedTheSameWayEveryTime) {
  TestOutcome first = two_agent_test();
  first.per_agent["a"].result = completed_at(kPlannedStart);
  first.per_agent["a"].result->set_samples(7);  // more than a 1 s test at the default interval makes
  TestOutcome second = first;
  judge_test(first, nullptr);
  judge_test(second, nullptr);
  EXPECT_EQ(first.problems, second.problems);
  EXPECT_EQ(first.warnings, second.warnings);
  EXPECT_EQ(first.verdict, second.verdict);
  EXPECT_NE(first.verdict, TestVerdict::Pass);
}

}  // namespace
}  // namespace tusk
