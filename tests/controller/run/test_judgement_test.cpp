// Judging a finished test from what its agents sent, with no run around it: the same input always
// comes to the same outcome, and what an agent failed to do is the test's problem.
#include "controller/run/test_judgement.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "controller/run/run_data.hpp"
#include "controller/verdict/port_optics.hpp"
#include "tests/support/optics_port.hpp"
#include "tests/support/profile_text.hpp"

namespace tusk {
namespace {

using ::testing::Contains;
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

// Issue 59: b was lost mid-test. a's stream from b failed on frames b stopped sending: the check
// still fails, but says its peer was lost, and the flow votes for no link. a's stream from an
// agent the test did not lose stays a plain failure.
TEST(JudgeTest, AStreamWhosePeerWasLostFailsWithoutBlamingTheLink) {
  TestOutcome test = two_agent_test();
  test.agents = {"a", "b"};
  proto::TestResult result = completed_at(kPlannedStart);
  for (const std::string peer : {"b", "c"}) {
    auto& stream = *result.add_streams();
    stream.set_stream_id("rx:" + peer + "/1");
    stream.set_kind("rx");
    stream.set_peer(peer);
    (*stream.mutable_counters())["rx_frames"] = 900;
    (*stream.mutable_counters())["lost_frames"] = 100;
  }
  test.per_agent["a"].result = result;
  test.per_agent["b"].lost = true;
  judge_test(test, nullptr);
  ASSERT_EQ(test.streams.size(), 2u);
  for (const StreamVerdict& verdict : test.streams) {
    SCOPED_TRACE(verdict.stream.peer());
    EXPECT_FALSE(verdict.passed());
    bool excused = false;
    for (const auto& check : verdict.checks) {
      if (check.passed) continue;
      excused |= check.caveat.find("its peer b was lost during the test") != std::string::npos;
    }
    EXPECT_EQ(excused, verdict.stream.peer() == "b");
  }
}

// A sender that let more than 1 % of its frame slots pass is a warning that names it: its
// throughput falls short by the tester's doing.
TEST(JudgeTest, ASenderThatFellBehindItsPaceIsAWarning) {
  TestOutcome test = two_agent_test();
  proto::TestResult result = completed_at(kPlannedStart);
  // d's counters are a hostile pair whose 64-bit sum wraps to 50: 100 skipped of 2^64 sent is no share.
  const std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> senders{
      {"b", 77'600, 2'400}, {"c", 77'600, 50}, {"d", std::numeric_limits<std::uint64_t>::max() - 49, 100}};
  for (const auto& [peer, sent, skipped] : senders) {
    auto& stream = *result.add_streams();
    stream.set_stream_id("tx:" + peer);
    stream.set_kind("tx");
    stream.set_peer(peer);
    (*stream.mutable_counters())["tx_frames"] = sent;
    (*stream.mutable_counters())["tx_skipped_frames"] = skipped;
  }
  test.per_agent["a"].result = result;
  test.per_agent["b"].result = completed_at(kPlannedStart);
  judge_test(test, nullptr);
  EXPECT_THAT(test.warnings, Contains(HasSubstr("a tx:b: the sender fell behind its pace and let 2400 frame slots "
                                                "pass (3% of what it owed)")));
  for (const auto& warning : test.warnings) {
    EXPECT_THAT(warning, ::testing::Not(HasSubstr("tx:c")));
    EXPECT_THAT(warning, ::testing::Not(HasSubstr("tx:d")));
  }
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

namespace tusk {
namespace {

// A minute of samples with a 2 s flap at 40 s, under `window: 10s`: the run folds them as they
// come, and the verdict names the one window that failed, on the agent's clock and into the test.
TEST(JudgeTest, AWindowedThresholdFailsTheWindowThatHeldAFlapAndSaysWhen) {
  const Profile profile = testing::load_profile_yaml(R"(
name: windowed
agents: {count: 2}
tests:
  - name: soak
    engine: dpdk
    duration: 60s
    sample_interval: 100ms
    thresholds: {window: 10s, min_throughput: 900kbps, max_lost_frames: 0}
)");
  const TestSpec& spec = profile.tests.at(0);
  ASSERT_EQ(spec.window, std::chrono::seconds(10));
  RunData data("run", {most_samples(spec.duration, spec.sample_interval)});
  data.expect("b", 0, 1);
  data.judge_windows(0, spec);
  const std::int64_t start_ns = 1'795'000'000'000'000'000;  // 2026-11-18T11:06:40Z
  std::uint64_t bytes = 0, lost = 0;
  proto::StreamCounters last;
  for (std::uint32_t i = 1; i <= 600; ++i) {
    bytes += i > 400 && i <= 420 ? 0 : 12'500;
    lost += i == 410 ? 5 : 0;
    proto::Record record;
    auto& sample = *record.mutable_sample();
    sample.set_run_id("run");
    sample.set_index(i);
    sample.set_elapsed_ms(i * 100);
    sample.set_agent_time_ns(start_ns + std::int64_t{i} * 100'000'000);
    auto& stream = *sample.add_streams();
    stream.set_stream_id("rx:a/1");
    stream.set_kind("rx");
    stream.set_peer("a");
    (*stream.mutable_counters())["rx_bytes"] = bytes;
    (*stream.mutable_counters())["rx_frames"] = bytes / 1250;
    (*stream.mutable_counters())["lost_frames"] = lost;
    last = stream;
    data.on_record("b", record);
  }
  TestOutcome test;
  test.spec = spec;
  test.agents = {"b"};
  data.with([&](RunState& s) { test.per_agent["b"] = s.tests[{0, "b"}]; });
  proto::TestResult result = completed_at(start_ns);
  result.set_actual_stop_agent_ns(start_ns + 60'000'000'000);
  result.set_samples(600);
  *result.add_streams() = last;
  test.per_agent["b"].result = result;
  judge_test(test, nullptr);
  ASSERT_EQ(test.streams.size(), 1u);
  const StreamVerdict& verdict = test.streams[0];
  EXPECT_FALSE(verdict.passed());
  ASSERT_TRUE(verdict.windows);
  EXPECT_EQ(verdict.windows->judged, 6u);
  EXPECT_EQ(verdict.windows->failed, 1u);
  std::string texts;
  for (const auto& check : verdict.checks) texts += check.describe() + "\n";
  EXPECT_THAT(texts, HasSubstr("1 of 6 windows of 10 s failed (min_throughput in 1, max_lost_frames in 1); the first "
                               "at 2026-11-18T11:07:20.000Z (+40 s)"));
  EXPECT_THAT(texts, HasSubstr("throughput_bps 800000 < min 900000"));
}

TEST(JudgeTest, AnAgentReportingTooManyPortsIsAProblemAndOnlyTheBoundIsJudgedAndKept) {
  TestOutcome test = two_agent_test();
  test.per_agent["a"].result = completed_at(kPlannedStart);
  test.per_agent["b"].result = completed_at(kPlannedStart);
  for (std::size_t i = 0; i < kMaxOpticsPortsPerAgent + 10; ++i) {
    proto::PortOptics* port = test.per_agent["a"].result->add_optics();
    port->set_port(fmt::format("port{}", i));
    port->set_netdev(fmt::format("eth{}", i));
  }
  judge_test(test, nullptr);
  EXPECT_EQ(test.optics.size(), kMaxOpticsPortsPerAgent);
  EXPECT_THAT(test.problems, Contains(HasSubstr(fmt::format("reported the optics of {} ports, more than the {} judged",
                                                            kMaxOpticsPortsPerAgent + 10, kMaxOpticsPortsPerAgent))));
  // Judged, the raw readings go: a method's steps keep their agents' results until the run ends.
  EXPECT_EQ(test.per_agent["a"].result->optics_size(), 0);
}

TEST(JudgeTest, AFailingIntervalTheWholeReadingHidesFailsTheTestOnTheControllersClock) {
  TestOutcome test = two_agent_test();
  test.spec.optics.thresholds.max_module_temp_c = 70;
  test.per_agent["a"].clock = ClockSample{2'000'000'000, 50'000};  // a's clock runs 2 s ahead of ours
  test.per_agent["a"].result = completed_at(kPlannedStart);
  *test.per_agent["a"].result->add_optics() = testing::port_at_temperature("p0", 40);  // cool at the end
  test.per_agent["b"].result = completed_at(kPlannedStart);
  OpticsThresholds thresholds;
  thresholds.max_module_temp_c = 70;
  OpticsTimeline& timeline = test.per_agent["a"].optics_timeline["p0"];
  add_optics_interval(timeline, judge_port_optics("a", testing::port_at_temperature("p0", 85), thresholds),
                      kPlannedStart + 3'000'000'000, 1'000'000'000);
  // b's port ran hot at the end as in every interval: the whole test's problem, said once.
  *test.per_agent["b"].result->add_optics() = testing::port_at_temperature("p1", 85);
  add_optics_interval(test.per_agent["b"].optics_timeline["p1"],
                      judge_port_optics("b", testing::port_at_temperature("p1", 85), thresholds),
                      kPlannedStart + 1'000'000'000, 1'000'000'000);
  judge_test(test, nullptr);
  ASSERT_EQ(test.optics_timeline.size(), 2u);
  const OpticsTimeline& a = test.optics_timeline[0].agent == "a" ? test.optics_timeline[0] : test.optics_timeline[1];
  EXPECT_EQ(a.first_end_ns, kPlannedStart + 1'000'000'000) << "on the controller's clock";
  std::size_t interval_problems = 0;
  for (const auto& problem : test.problems) {
    if (problem.find("optics per interval:") == std::string::npos) continue;
    ++interval_problems;
    EXPECT_THAT(problem, HasSubstr("a eth-p0 (p0): failing in 1 of 1 intervals"));
  }
  EXPECT_EQ(interval_problems, 1u) << ::testing::PrintToString(test.problems);
  EXPECT_TRUE(test.per_agent["a"].optics_timeline.empty()) << "moved into the outcome";
}

}  // namespace
}  // namespace tusk
