// The method sequencer on simulated devices: a throughput search against a shaper of a known
// capacity finds it, at rates no lab test uses; incast steps take their senders; a loss curve
// stops after two lossless steps; a lost agent stops a method instead of reading as no loss.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "common/counter_names.hpp"
#include "controller/engines/dpdk/dpdk_slice.hpp"
#include "controller/engines/rdma/rdma_slice.hpp"
#include "controller/method/method_report.hpp"
#include "controller/method/method_steps.hpp"
#include "controller/profile/profile_loader.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

Profile load(const std::string& method, const std::string& extra = "    topology: pipeline\n") {
  return load_profile_text(testing::text_of(R"(
name: qualify
agents: {count: 5}
tests:
  - name: switch
    engine: dpdk
    duration: 2s
    rate: 20Mbit/s
)" + extra + "    method: " + method + "\n"),
                           "qualify.yaml");
}

// One receiver stream: what a device that forwards at most `capacity_bps` of frame bits delivers
// when offered the step's rate for the step's duration; `extra_loss` more on top.
// `sender_share`: how much of what it offered the sender really sent (a starved tester sends less).
TestOutcome shaped(const PlannedStep& step, double capacity_bps, double extra_loss = 0, double sender_share = 1) {
  const auto& test = dpdk::params(step.spec);
  const double seconds = step.spec.duration.count() / 1e3;
  const double bits_per_frame = test.frame_size() * 8.0;
  const double offered_pps = test.rate_bps() / bits_per_frame;
  const double sent = std::floor(offered_pps * seconds);
  const double carried = std::min(sent, std::floor(capacity_bps / bits_per_frame * seconds));
  const auto lost = static_cast<std::uint64_t>(sent - carried + std::ceil(carried * extra_loss));
  TestOutcome outcome;
  outcome.spec = step.spec;
  StreamVerdict rx;
  rx.agent = "b";
  rx.stream.set_kind("rx");
  (*rx.stream.mutable_counters())[std::string(counters::kRxFrames)] = static_cast<std::uint64_t>(sent) - lost;
  (*rx.stream.mutable_counters())[std::string(counters::kLostFrames)] = lost;
  rx.metrics = compute_metrics(rx.stream, seconds);
  StreamVerdict tx;
  tx.agent = "a";
  tx.stream.set_kind("tx");
  (*tx.stream.mutable_counters())[std::string(counters::kTxFrames)] = static_cast<std::uint64_t>(sent);
  (*tx.stream.mutable_counters())[std::string(counters::kTxBytes)] =
      static_cast<std::uint64_t>(sent * test.frame_size() * sender_share);
  outcome.streams = {rx, tx};
  outcome.verdict = TestVerdict::Pass;
  return outcome;
}

MethodResult run(const TestSpec& test, std::size_t agents, const std::function<TestOutcome(const PlannedStep&)>& device,
                 std::vector<PlannedStep>* seen = nullptr) {
  MethodSteps steps(test, agents);
  while (auto step = steps.next()) {
    if (seen) seen->push_back(*step);
    steps.record(device(*step));
  }
  return steps.finish();
}

TEST(MethodSteps, ThroughputSearchFindsTheShapersRateAtEachFrameSize) {
  const Profile profile = load("{kind: throughput, frame_sizes: [256, 1024], resolution: 1%, trials: 16, trial: 1s}");
  for (const double capacity : {7.3e6, 13.9e6, 3.1e6}) {
    const MethodResult result = run(profile.tests[0], 2, [&](const PlannedStep& s) { return shaped(s, capacity); });
    ASSERT_EQ(result.throughput.size(), 2u);
    for (const auto& size : result.throughput) {
      SCOPED_TRACE(fmt::format("{} B at {} bit/s", size.frame_size, capacity));
      EXPECT_TRUE(size.resolved);
      EXPECT_LE(size.ndr_bps(), capacity);
      EXPECT_GE(size.ndr_bps(), capacity - 0.01 * 20e6 - 1);  // within the resolution, 1 % of 20 Mbit/s
      EXPECT_GE(size.pdr_bps(), size.ndr_bps());
      EXPECT_LE(size.trials, 16u);
      EXPECT_DOUBLE_EQ(size.ceiling_bps, 20e6);
      EXPECT_DOUBLE_EQ(size.ceiling_pps, 20e6 / (size.frame_size * 8.0));
    }
    EXPECT_EQ(method_verdict(result), TestVerdict::Pass);  // loss is what a search measures, not a failure
  }
}

TEST(MethodSteps, ATesterThatSentLessThanItOfferedIsSaid) {
  const Profile profile = load("{kind: throughput, frame_sizes: [1024]}");
  const MethodResult honest = run(profile.tests[0], 2, [](const PlannedStep& s) { return shaped(s, 9e6); });
  EXPECT_FALSE(honest.throughput.at(0).sender_short);
  EXPECT_NEAR(honest.throughput.at(0).ndr_sent_bps, honest.throughput.at(0).ndr_bps(), 0.01 * 9e6);
  const MethodResult starved = run(profile.tests[0], 2, [](const PlannedStep& s) { return shaped(s, 9e6, 0, 0.9); });
  EXPECT_TRUE(starved.throughput.at(0).sender_short);
  EXPECT_TRUE(starved.steps.at(0).sender_short);
  EXPECT_NE(method_throughput_rows(starved).at(1).back().find("sent less than it offered"), std::string::npos);
}

TEST(MethodSteps, ThroughputAtTheCeilingTakesOneTrial) {
  const Profile profile = load("{kind: throughput, frame_sizes: [512]}");
  const MethodResult result = run(profile.tests[0], 2, [](const PlannedStep& s) { return shaped(s, 1e9); });
  ASSERT_EQ(result.throughput.size(), 1u);
  EXPECT_EQ(result.throughput[0].trials, 1u);
  EXPECT_DOUBLE_EQ(result.throughput[0].ndr_share, 1);
  EXPECT_EQ(method_throughput_rows(result).size(), 2u);
}

TEST(MethodSteps, PartialDropRateAcceptsTheLossItIsGiven) {
  // A device that loses 0.05 % at any rate and forwards up to 12 Mbit/s: the NDR finds nothing,
  // the PDR at 0.1 % finds the capacity.
  const Profile profile = load("{kind: throughput, frame_sizes: [1024], pdr_loss: 0.1%, resolution: 2%, trial: 20s}");
  const MethodResult result = run(profile.tests[0], 2, [](const PlannedStep& s) { return shaped(s, 12e6, 0.0005); });
  const auto& size = result.throughput.at(0);
  EXPECT_LT(size.ndr_bps(), 0.02 * 20e6 + 1);
  EXPECT_LE(size.pdr_bps(), 12e6);
  EXPECT_GE(size.pdr_bps(), 12e6 - 0.02 * 20e6 - 1);
}

TEST(MethodSteps, RfcDefaultSizesLeaveOutWhatIpv4UdpCannotHold) {
  const Profile profile = load("{kind: throughput}", "    topology: pipeline\n    encapsulation: ipv4_udp\n");
  EXPECT_EQ(profile.tests[0].method->frame_sizes, (std::vector<std::uint32_t>{124, 252, 508, 1020, 1276, 1514}));
}

TEST(MethodSteps, RfcDefaultSizesAreTheRfcsWireSizesLessTheirFcsSoTheLargestFitsA1500Mtu) {
  const Profile profile = load("{kind: throughput}");
  EXPECT_EQ(profile.tests[0].method->frame_sizes, (std::vector<std::uint32_t>{60, 124, 252, 508, 1020, 1276, 1514}));
}

TEST(MethodSteps, LatencyTrialRunsAtTheNdr) {
  const Profile profile = load("{kind: throughput, frame_sizes: [1024], latency: true}");
  std::vector<PlannedStep> seen;
  const MethodResult result = run(
      profile.tests[0], 2, [](const PlannedStep& s) { return shaped(s, 9e6); }, &seen);
  ASSERT_FALSE(result.steps.empty());
  EXPECT_TRUE(result.steps.back().latency_trial);
  EXPECT_NEAR(dpdk::params(seen.back().spec).rate_bps(), result.throughput[0].ndr_bps(), 1);
}

TEST(MethodSteps, IncastStepsTakeTheReceiverAndThatManySenders) {
  const Profile profile = load("{kind: incast, fan_in: 2..4, trial: 1s}", "");
  EXPECT_EQ(profile.tests[0].topology, Topology::Incast);
  std::vector<PlannedStep> seen;
  const MethodResult result = run(
      profile.tests[0], 5, [](const PlannedStep& s) { return shaped(s, 25e6); }, &seen);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].agents, 3u);
  EXPECT_EQ(seen[2].agents, 5u);
  EXPECT_EQ(seen[1].spec.duration, std::chrono::seconds(1));
  EXPECT_FALSE(seen[1].spec.method.has_value());
  EXPECT_EQ(result.steps[2].label, "fan-in 4");
  EXPECT_EQ(method_step_rows(result).size(), 4u);
}

// A port with a buffer of `buffer` frames behind it: each step's trains from every sender arrive
// together, and what does not fit is lost.
TestOutcome buffered(const PlannedStep& step, std::uint64_t buffer) {
  const auto& test = dpdk::params(step.spec);
  const std::uint64_t senders = step.agents - 1;
  const std::uint64_t train = std::max<std::uint32_t>(test.burst_frames(), 1);
  const std::uint64_t trains = 100;
  const std::uint64_t arriving = senders * train;
  const std::uint64_t lost = arriving > buffer ? (arriving - buffer) * trains : 0;
  TestOutcome outcome;
  outcome.spec = step.spec;
  StreamVerdict rx;
  rx.agent = "sink";
  rx.stream.set_kind("rx");
  (*rx.stream.mutable_counters())[std::string(counters::kRxFrames)] = arriving * trains - lost;
  (*rx.stream.mutable_counters())[std::string(counters::kLostFrames)] = lost;
  rx.metrics = compute_metrics(rx.stream, 1);
  outcome.streams = {rx};
  outcome.verdict = TestVerdict::Pass;  // no threshold on loss judges it
  return outcome;
}

TEST(MethodSteps, BurstAbsorptionFindsTheLongestTrainTheBufferHolds) {
  const Profile profile = load("{kind: burst_absorption, bursts: [8, 32, 128, 16], senders: 3, trial: 1s}", "");
  const TestSpec& test = profile.tests[0];
  EXPECT_EQ(test.topology, Topology::Incast);
  EXPECT_EQ(test.method->bursts, (std::vector<std::uint32_t>{8, 16, 32, 128})) << "in order, shortest first";
  std::vector<PlannedStep> seen;
  const MethodResult result = run(
      test, 5, [](const PlannedStep& s) { return buffered(s, 60); }, &seen);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].agents, 4u) << "three senders and the port they share";
  EXPECT_EQ(dpdk::params(seen[2].spec).burst_frames(), 32u);
  EXPECT_EQ(dpdk::params(seen[2].spec).rate_bps(), 20e6) << "the mean stays the test's rate";
  // Loss is what it measures: no threshold on loss judges a step.
  for (const auto& threshold : seen[0].spec.thresholds) EXPECT_NE(threshold.metric, "lost_frames");
  ASSERT_TRUE(result.burst_absorption);
  EXPECT_EQ(result.burst_absorption->largest_absorbed, 16u) << "3 x 16 = 48 fit in 60; 3 x 32 do not";
  EXPECT_EQ(result.burst_absorption->smallest_lost, 32u);
  EXPECT_EQ(method_verdict(result), TestVerdict::Pass);
  EXPECT_TRUE(method_problems(result).empty());
  EXPECT_EQ(result.steps[1].label, "trains of 16 frames from 3 senders");

  const Profile strict = load("{kind: burst_absorption, bursts: [8, 32], senders: 3, trial: 1s, min_absorbed: 32}", "");
  const MethodResult short_buffer = run(strict.tests[0], 5, [](const PlannedStep& s) { return buffered(s, 60); });
  ASSERT_EQ(method_problems(short_buffer).size(), 1u);
  EXPECT_THAT(
      method_problems(short_buffer)[0],
      ::testing::HasSubstr("absorbed trains of 8 frames from each of 3 senders at most, under min_absorbed 32"));
}

TEST(MethodSteps, FrameLossRateStopsAfterTwoLosslessSteps) {
  const Profile profile = load("{kind: frame_loss_rate, frame_sizes: [1024], step: 10%}");
  const MethodResult result = run(profile.tests[0], 2, [](const PlannedStep& s) { return shaped(s, 15e6); });
  // 100 %, 90 %, 80 % lose; 70 % and 60 % do not.
  ASSERT_EQ(result.steps.size(), 5u);
  EXPECT_GT(result.steps[0].loss_ratio, result.steps[1].loss_ratio);
  EXPECT_EQ(result.steps[3].lost_frames, 0u);
  EXPECT_EQ(result.steps[4].lost_frames, 0u);
}

TEST(MethodSteps, SweepRunsEverySizeAtEveryRateInOrder) {
  const Profile profile = load("{kind: sweep, frame_sizes: [256, 1024], rates: [25%, 6Mbit/s]}");
  std::vector<PlannedStep> seen;
  run(
      profile.tests[0], 2, [](const PlannedStep& s) { return shaped(s, 1e9); }, &seen);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(dpdk::params(seen[0].spec).frame_size(), 256u);
  EXPECT_DOUBLE_EQ(dpdk::params(seen[0].spec).rate_bps(), 5e6);
  EXPECT_DOUBLE_EQ(dpdk::params(seen[1].spec).rate_bps(), 6e6);
  EXPECT_EQ(dpdk::params(seen[3].spec).frame_size(), 1024u);
}

TEST(MethodSteps, ALostAgentStopsTheMethodAsIncomplete) {
  const Profile profile = load("{kind: throughput, frame_sizes: [256, 1024]}");
  std::size_t steps = 0;
  const MethodResult result = run(profile.tests[0], 2, [&](const PlannedStep& s) {
    TestOutcome outcome = shaped(s, 5e6);
    if (++steps == 2) {
      outcome.agents_lost = true;
      outcome.streams.clear();  // nothing came back: must not read as a lossless trial
    }
    return outcome;
  });
  EXPECT_EQ(result.steps.size(), 2u);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(method_verdict(result), TestVerdict::Incomplete);
}

// Issue 59: a schedule's step that lost an agent is incomplete, and the schedule goes on; its
// uncovered pairs, and those of later steps its agent was away for, are said once per reason.
TEST(MethodSteps, AScheduleGoesOnPastALostAgentAndSaysWhatItDidNotCover) {
  const Profile profile = load_profile_text(testing::text_of(R"(
name: night
agents: {count: 4}
tests:
  - name: pod
    engine: dpdk
    topology: shift
    shifts: all
    duration: 1s
    rate: 10Mbit/s
)"),
                                            "night.yaml");
  MethodSteps steps(profile.tests[0], 4);
  std::size_t count = 0;
  while (auto step = steps.next()) {
    ++count;
    ASSERT_EQ(step->peers.size(), 4u);
    TestOutcome outcome = shaped(*step, 1e9);
    std::vector<UncoveredPair> not_covered;
    if (count == 1) {
      outcome.agents_lost = true;
      outcome.problems.push_back("c: no result (agent lost)");
      not_covered.push_back({"c", "a", "c lost during the step"});
    } else {
      not_covered.push_back({"c", "d", "c not connected"});
      not_covered.push_back({"b", "c", "c not connected"});
    }
    steps.record(std::move(outcome), std::move(not_covered));
  }
  EXPECT_EQ(count, 3u) << "every shift of four agents ran";
  const MethodResult result = steps.finish();
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.steps[0].verdict, TestVerdict::Incomplete);
  EXPECT_EQ(result.steps[1].verdict, TestVerdict::Pass);
  EXPECT_EQ(result.steps[0].pairs, 4u);
  EXPECT_EQ(method_verdict(result), TestVerdict::Incomplete);
  EXPECT_THAT(method_problems(result), ::testing::Contains(::testing::HasSubstr(
                                           "5 of 12 planned pairs not covered: c lost during the step (step 1); "
                                           "c not connected (steps 2, 3)")));
  // A method's own problems do not take the place of what the schedule did not cover.
  MethodResult failed_over = result;
  failed_over.link_failure.emplace().problems = {"the flows took 3 s to converge"};
  EXPECT_THAT(method_problems(failed_over),
              ::testing::ElementsAre("the flows took 3 s to converge", ::testing::HasSubstr("5 of 12 planned pairs")));
}

TEST(MethodSteps, AStepCastAmongThePresentLeavesOutEveryPairOfAnAgentAway) {
  PlannedStep step;
  step.agents = 4;
  step.peers = {{1}, {2}, {3}, {0}};  // a ring: 0 -> 1 -> 2 -> 3 -> 0
  const StepCast cast = cast_step(step, {false, false, true, false});
  EXPECT_EQ(cast.agents, (std::vector<std::size_t>{0, 1, 3}));
  // 0 -> 1 and 3 -> 0 run, renumbered among the three; 1 -> 2 and 2 -> 3 are left out.
  EXPECT_EQ(cast.peers, (std::vector<std::vector<std::size_t>>{{1}, {}, {0}}));
  using Pair = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(cast.left_out, (std::vector<Pair>{{1, 2}, {2, 3}}));
  // No one away: the step as planned.
  const StepCast all = cast_step(step, {});
  EXPECT_EQ(all.peers, step.peers);
  EXPECT_TRUE(all.left_out.empty());
}

TEST(MethodSteps, AStepThatMeasuredNothingIsNotALosslessTrial) {
  const Profile profile = load("{kind: throughput, frame_sizes: [256]}");
  const MethodResult result = run(profile.tests[0], 2, [](const PlannedStep& s) {
    TestOutcome outcome = shaped(s, 5e6);
    outcome.streams.clear();
    return outcome;
  });
  EXPECT_EQ(result.steps.size(), 1u);
  EXPECT_EQ(result.throughput[0].ndr_share, 0);
  EXPECT_EQ(method_verdict(result), TestVerdict::Fail);
}

TEST(MethodSteps, SearchTrialsAreNotJudgedOnLossButOnEverythingElse) {
  const Profile profile = load("{kind: throughput, frame_sizes: [256]}",
                               "    topology: pipeline\n    thresholds: {max_loss: 0, max_ber: 1e-9}\n");
  MethodSteps steps(profile.tests[0], 2);
  const auto step = steps.next();
  ASSERT_TRUE(step);
  for (const auto& threshold : step->spec.thresholds) {
    EXPECT_NE(threshold.metric, "loss_ratio");
    EXPECT_NE(threshold.metric, counters::kLostFrames);
  }
  EXPECT_TRUE(std::any_of(step->spec.thresholds.begin(), step->spec.thresholds.end(),
                          [](const Threshold& t) { return t.key == "max_ber"; }));
}

// Before: the safe defaults (max_lost_frames 0, ...) were dropped from every method's steps, so a
// shift schedule with no thresholds passed with hundreds of frames lost in every step. Only the
// methods that lose by design leave them out; the others hold each step as a plain test is held.
TEST(MethodSteps, OnlyMethodsThatLoseByDesignDropTheSafeDefaults) {
  const auto safe_loss_in = [](const PlannedStep& step) {
    return std::any_of(step.spec.thresholds.begin(), step.spec.thresholds.end(),
                       [](const Threshold& t) { return t.implicit && t.metric == counters::kLostFrames; });
  };
  const auto safe_gaps_in = [](const PlannedStep& step) {
    return std::any_of(step.spec.thresholds.begin(), step.spec.thresholds.end(),
                       [](const Threshold& t) { return t.implicit && t.metric == counters::kTrafficGaps; });
  };
  const auto first_step = [](const Profile& profile) {
    MethodSteps steps(profile.tests[0], 5);
    auto step = steps.next();
    EXPECT_TRUE(step);
    return step ? *step : PlannedStep{};
  };
  const Profile shift = load_profile_text(testing::text_of(R"(
name: night
agents: {count: 5}
tests:
  - name: pod
    engine: dpdk
    topology: shift
    step: 2s
    rate: 1kpps
)"),
                                          "night.yaml");
  ASSERT_TRUE(shift.tests[0].method);
  EXPECT_TRUE(safe_loss_in(first_step(shift)));
  EXPECT_TRUE(safe_gaps_in(first_step(shift)));
  const Profile sweep = load("{kind: sweep, frame_sizes: [256, 512]}");
  EXPECT_TRUE(safe_loss_in(first_step(sweep)));
  for (const char* by_design : {"{kind: throughput, frame_sizes: [256]}", "{kind: frame_loss_rate}"}) {
    const PlannedStep step = first_step(load(by_design));
    EXPECT_FALSE(safe_loss_in(step)) << by_design;
    EXPECT_FALSE(safe_gaps_in(step)) << by_design;
  }
  const PlannedStep incast = first_step(load("{kind: incast, fan_in: [2]}", ""));
  EXPECT_FALSE(safe_loss_in(incast));
  EXPECT_TRUE(method_loses_by_design(MethodKind::LinkFailure));
  EXPECT_TRUE(method_loses_by_design(MethodKind::BurstAbsorption));
  EXPECT_FALSE(method_loses_by_design(MethodKind::EcmpBalance));
  EXPECT_FALSE(method_loses_by_design(MethodKind::Shift));
  EXPECT_FALSE(method_loses_by_design(MethodKind::Sweep));
  EXPECT_TRUE(method_localises_steps_together(MethodKind::Shift));
  EXPECT_TRUE(method_localises_steps_together(MethodKind::EcmpBalance));
  // A threshold the profile wrote judges a step of every method but a search's trials.
  const Profile incast_written = load("{kind: incast, fan_in: [2]}", "    thresholds: {max_lost_frames: 10}\n");
  const PlannedStep written = first_step(incast_written);
  EXPECT_TRUE(std::any_of(written.spec.thresholds.begin(), written.spec.thresholds.end(),
                          [](const Threshold& t) { return !t.implicit && t.metric == counters::kLostFrames; }));
}

// A step that lost frames fails the method under the safe defaults, as a plain test would.
TEST(MethodSteps, ASweepStepThatLostFramesFailsWithNoThresholdWritten) {
  const Profile sweep = load("{kind: sweep, frame_sizes: [256]}");
  MethodSteps steps(sweep.tests[0], 5);
  auto step = steps.next();
  ASSERT_TRUE(step);
  TestOutcome outcome = shaped(*step, 1e12, 0.02);
  for (auto& stream : outcome.streams) stream = judge_stream(step->spec, stream.agent, stream.stream, 2);
  outcome.verdict =
      std::all_of(outcome.streams.begin(), outcome.streams.end(), [](const StreamVerdict& v) { return v.passed(); })
          ? TestVerdict::Pass
          : TestVerdict::Fail;
  EXPECT_EQ(outcome.verdict, TestVerdict::Fail);
  steps.record(std::move(outcome));
  EXPECT_FALSE(steps.next());
  EXPECT_EQ(method_verdict(steps.finish()), TestVerdict::Fail);
}

// The congestion control step's outcome: `congested_lost` of 1000 frames lost at the first agent's
// port, `uncongested_lost` of 1000 at the second's.
TestOutcome congestion_outcome(const PlannedStep& step, std::uint64_t congested_lost, std::uint64_t uncongested_lost) {
  TestOutcome outcome;
  outcome.spec = step.spec;
  outcome.agents = {"c", "d", "a", "b"};
  for (const auto& [agent, lost] :
       {std::pair<std::string, std::uint64_t>{"c", congested_lost}, {"d", uncongested_lost}}) {
    StreamVerdict rx;
    rx.agent = agent;
    rx.stream.set_kind("rx");
    (*rx.stream.mutable_counters())[std::string(counters::kRxFrames)] = 1000 - lost;
    (*rx.stream.mutable_counters())[std::string(counters::kLostFrames)] = lost;
    rx.metrics = compute_metrics(rx.stream, 2);
    outcome.streams.push_back(rx);
  }
  outcome.verdict = TestVerdict::Pass;
  return outcome;
}

TEST(MethodSteps, CongestionControlFailsOnlyOnLossOfTheUncongestedFlow) {
  const Profile profile = load("{kind: congestion_control}", "");
  EXPECT_EQ(profile.tests[0].topology, Topology::Congestion);
  std::vector<PlannedStep> seen;
  const MethodResult healthy = run(
      profile.tests[0], 5, [](const PlannedStep& s) { return congestion_outcome(s, 480, 0); }, &seen);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].agents, 4u);
  ASSERT_TRUE(healthy.congestion);
  EXPECT_NEAR(healthy.congestion->congested_loss_ratio, 0.48, 1e-9);
  EXPECT_FALSE(healthy.congestion->head_of_line_blocking);
  EXPECT_EQ(method_verdict(healthy), TestVerdict::Pass);
  EXPECT_TRUE(method_problems(healthy).empty());

  const MethodResult blocking =
      run(profile.tests[0], 4, [](const PlannedStep& s) { return congestion_outcome(s, 480, 3); });
  EXPECT_TRUE(blocking.congestion->head_of_line_blocking);
  EXPECT_EQ(method_verdict(blocking), TestVerdict::Fail);
  ASSERT_EQ(method_problems(blocking).size(), 1u);
  EXPECT_NE(method_problems(blocking)[0].find("head-of-line blocking: the flow to the uncongested port (d) lost 0.3%"),
            std::string::npos)
      << method_problems(blocking)[0];

  // A device allowed some loss on the uncongested flow; one that was never congested is said.
  const Profile lenient = load("{kind: congestion_control, uncongested_loss: 0.5%}", "");
  EXPECT_EQ(
      method_verdict(run(lenient.tests[0], 4, [](const PlannedStep& s) { return congestion_outcome(s, 480, 3); })),
      TestVerdict::Pass);
  const MethodResult idle = run(profile.tests[0], 4, [](const PlannedStep& s) { return congestion_outcome(s, 0, 0); });
  ASSERT_EQ(method_warnings(idle).size(), 1u);
  EXPECT_NE(method_warnings(idle)[0].find("was not congested"), std::string::npos);
}

// Tail drop on an overloaded port can lock one paced flow out for a second: the receiver reads a
// traffic gap and counts its frames as gap_lost_frames. A method counts them as lost, and the safe
// defaults on gaps and flaps do not judge the steps of a method that overloads; written ones do,
// and a sweep keeps the safe defaults.
TEST(MethodSteps, FramesLostInGapsOfAnOverloadedPortAreLossNotFlaps) {
  const Profile profile = load("{kind: congestion_control}", "");
  const MethodResult result = run(profile.tests[0], 4, [](const PlannedStep& s) {
    TestOutcome outcome = congestion_outcome(s, 300, 0);
    (*outcome.streams[0].stream.mutable_counters())[std::string(counters::kGapLostFrames)] = 200;
    return outcome;
  });
  ASSERT_TRUE(result.congestion);
  EXPECT_EQ(result.congestion->congested_lost_frames, 500u);
  EXPECT_NEAR(result.congestion->congested_loss_ratio, 500.0 / 1200, 1e-9);
  ASSERT_EQ(result.steps.size(), 1u);
  EXPECT_EQ(result.steps[0].lost_frames, 500u);

  const auto judged = [](const std::string& method, const std::string& extra) {
    const Profile p = load(method, extra);
    MethodSteps steps(p.tests[0], 5);
    const auto step = steps.next();
    std::set<std::string> keys;
    if (step) {
      for (const auto& threshold : step->spec.thresholds) keys.insert(threshold.key);
    }
    return keys;
  };
  for (const std::string method : {"{kind: throughput, frame_sizes: [256]}", "{kind: incast, fan_in: [2]}"}) {
    const auto keys = judged(method, method.find("incast") != std::string::npos ? "" : "    topology: pipeline\n");
    EXPECT_FALSE(keys.contains("max_flaps")) << method;
    EXPECT_FALSE(keys.contains("max_traffic_gaps")) << method;
    EXPECT_TRUE(keys.contains("max_bit_errors")) << method << ": every other safe default still judges";
  }
  EXPECT_TRUE(
      judged("{kind: throughput, frame_sizes: [256]}", "    topology: pipeline\n    thresholds: {max_flaps: 0}\n")
          .contains("max_flaps"));
  EXPECT_TRUE(
      judged("{kind: sweep, frame_sizes: [256], rates: [50%]}", "    topology: pipeline\n").contains("max_flaps"));
}

// An RDMA incast counts bytes, not frames: its steps are measured, and the NIC counters of each
// step are in its row.
TEST(MethodSteps, IncastStepsOfAnEngineThatCountsBytesAreMeasured) {
  const Profile profile = load("{kind: incast, fan_in: [1, 2]}", "");
  const MethodResult result = run(profile.tests[0], 3, [](const PlannedStep& s) {
    TestOutcome outcome;
    outcome.spec = s.spec;
    StreamVerdict rx;
    rx.agent = "r";
    rx.stream.set_kind("rx");
    (*rx.stream.mutable_counters())[std::string(counters::kRxBytes)] = 1'000'000;
    rx.metrics = compute_metrics(rx.stream, 2);
    StreamVerdict flow;
    flow.agent = "s";
    flow.stream.set_kind("flow");
    (*flow.stream.mutable_counters())[std::string(counters::kTxBytes)] = 1'000'000;
    StreamVerdict nic;
    nic.agent = "r";
    nic.stream.set_kind("nic");
    (*nic.stream.mutable_counters())[std::string(counters::kOutOfSequence)] = 7;
    nic.metrics = compute_metrics(nic.stream, 2);
    outcome.streams = {rx, flow, nic};
    outcome.verdict = TestVerdict::Pass;
    return outcome;
  });
  ASSERT_EQ(result.steps.size(), 2u);
  EXPECT_TRUE(result.complete);
  EXPECT_DOUBLE_EQ(result.steps[1].nic.at(std::string(counters::kOutOfSequence)), 7);
  EXPECT_GT(result.steps[1].sent_bps, 0);
}

// perftest's -a as a profile key: message_sizes: 2..16 is one step per power of two, each an
// ordinary RDMA test of that message size; a step's row has what it sent, its message rate and
// its completion latency.
TEST(MethodSteps, AnRdmaMessageSizeSweepRunsOneStepPerSizeAndReportsMessageRateAndLatency) {
  const Profile profile = load_profile_text(testing::text_of(R"(
name: sweep
agents: {count: 2}
tests:
  - name: sizes
    engine: rdma
    duration: 2s
    message_sizes: 2..16
    data_check: false
)"),
                                            "sweep.yaml");
  std::vector<PlannedStep> seen;
  const MethodResult result = run(
      profile.tests[0], 2,
      [](const PlannedStep& s) {
        const auto size = rdma::params(s.spec).message_size();
        TestOutcome outcome;
        outcome.spec = s.spec;
        StreamVerdict flow;
        flow.agent = "a";
        flow.stream.set_kind("flow");
        auto& counters = *flow.stream.mutable_counters();
        counters[std::string(counters::kTxMessages)] = 1000;
        counters[std::string(counters::kTxBytes)] = 1000 * size;
        (*flow.stream.mutable_gauges())[std::string(counters::kLatencyP50Ns)] = 1000.0 * size;
        (*flow.stream.mutable_gauges())[std::string(counters::kLatencyP99Ns)] = 2000.0 * size;
        outcome.streams = {flow};
        outcome.verdict = TestVerdict::Pass;
        return outcome;
      },
      &seen);
  ASSERT_EQ(seen.size(), 4u);
  ASSERT_EQ(result.steps.size(), 4u);
  const std::vector<std::uint64_t> sizes{2, 4, 8, 16};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(rdma::params(seen[i].spec).message_size(), sizes[i]);
    EXPECT_EQ(rdma::params(seen[i].spec).message_sizes_size(), 0);
    EXPECT_EQ(result.steps[i].label, fmt::format("{} B", sizes[i]));
    EXPECT_DOUBLE_EQ(result.steps[i].messages_per_s, 500);  // 1000 in 2 s
    EXPECT_DOUBLE_EQ(result.steps[i].sent_bps, 1000.0 * sizes[i] * 8 / 2);
    EXPECT_DOUBLE_EQ(*result.steps[i].latency_p99_ns, 2000.0 * sizes[i]);
  }
  EXPECT_TRUE(result.complete);
  const auto rows = method_step_rows(result);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"step", "sent", "messages/s", "latency p50", "latency p99",
                                               "latency max", "verdict"}));
  EXPECT_EQ(rows[4][2], "500");
}

std::vector<std::string> errors_of(const std::string& yaml) {
  return testing::errors_thrown<ProfileInvalid>([&] { load_profile_text(testing::text_of(yaml), "q.yaml"); });
}

TEST(MethodKeys, BurstAbsorptionNeedsBurstsARateAndEnoughAgents) {
  const auto error = [](const std::string& method, const std::string& extra) {
    try {
      load(method, extra);
    } catch (const ProfileInvalid& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_THAT(error("{kind: burst_absorption}", ""), ::testing::HasSubstr("give bursts"));
  EXPECT_THAT(error("{kind: burst_absorption, bursts: [8], senders: 5}", ""),
              ::testing::HasSubstr("5 senders and the port they send into need 6 agents; agents selects 5"));
  EXPECT_THAT(error("{kind: burst_absorption, bursts: [8]}", "    topology: ring\n"),
              ::testing::HasSubstr("leave topology out or set topology: incast"));
  EXPECT_THAT(error("{kind: burst_absorption, bursts: [1]}", ""), ::testing::HasSubstr("bursts"));
}

TEST(MethodKeys, BadMethodsAreRefusedWithFileLineAndField) {
  const std::string head = R"(
name: q
agents: {count: 3}
tests:
  - name: t
    engine: dpdk
    topology: pipeline
    duration: 2s
)";
  EXPECT_EQ(errors_of(head + "    method: {kind: throughput}\n"),
            (std::vector<std::string>{"q.yaml:8:13: tests[0].method: method throughput offers shares of the test's "
                                      "rate: set rate: to the highest rate to offer (a bit or packet rate, not max)"}));
  auto errors = errors_of(head + "    rate: 1Mbit/s\n    method: {kind: throughput, trails: 3}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("q.yaml:9:"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("trials"), std::string::npos) << errors[0];
  std::string incast_head = head;
  incast_head.erase(incast_head.find("    topology: pipeline\n"), 23);
  errors = errors_of(incast_head + "    method: {kind: incast, fan_in: 2..5}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("a fan-in of 3 needs 4 agents; agents selects 3"), std::string::npos) << errors[0];
  errors = errors_of(head + "    rate: 1Mbit/s\n    method: {kind: sweep, rates: [150%]}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("between 0 and 1"), std::string::npos) << errors[0];
  errors = errors_of(incast_head + "    method: {kind: incast, fan_in: 4..2}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("FROM..TO"), std::string::npos) << errors[0];
  errors = errors_of(head + "    method: {kind: incast, fan_in: [2]}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("leave topology out or set topology: incast"), std::string::npos) << errors[0];
  std::string rdma_head = head;
  rdma_head.replace(rdma_head.find("engine: dpdk"), 12, "engine: rdma");
  errors = errors_of(rdma_head + "    method: {kind: sweep, frame_sizes: [256]}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("q.yaml:8:13: tests[0].method: an rdma test sweeps message sizes with message_sizes:"),
            std::string::npos)
      << errors[0];
  errors = errors_of(rdma_head + "    message_sizes: 2..64\n    method: {kind: sweep}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("message_sizes is a sweep of its own: not with method:"), std::string::npos) << errors[0];
  // Before: validate passed what every agent refuses. A checked message holds its 24 B header; a
  // message is at most 1 GiB.
  errors = errors_of(rdma_head + "    message_sizes: 2..8MiB\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(
      errors[0].find("q.yaml:8:20: tests[0].message_sizes: 2 B cannot hold the 24 B header of a checked message "
                     "(data_check, on by default): start the sweep at 32 B (e.g. 32..8MiB), or set data_check: false"),
      std::string::npos)
      << errors[0];
  EXPECT_TRUE(errors_of(rdma_head + "    message_sizes: 2..8MiB\n    data_check: false\n").empty());
  EXPECT_TRUE(errors_of(rdma_head + "    message_sizes: 32..8MiB\n").empty());
  errors = errors_of(rdma_head + "    message_size: 8B\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("tests[0].message_size: 8 B cannot hold the 24 B header"), std::string::npos) << errors[0];
  errors = errors_of(rdma_head + "    message_size: 2GiB\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("1GiB"), std::string::npos) << errors[0];
  errors = errors_of(rdma_head + "    message_sizes: 64..2\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("expected FROM..TO, e.g. 2..8MiB"), std::string::npos) << errors[0];
  EXPECT_TRUE(errors_of(head + "    method: {kind: sweep, frame_sizes: [256]}\n").empty());  // at the test's rate
  errors = errors_of(incast_head + "    method: {kind: congestion_control}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("method congestion_control needs 4 agents; agents selects 3"), std::string::npos)
      << errors[0];
  errors = errors_of(head + "    method: {kind: warp}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("throughput"), std::string::npos) << errors[0];
  errors = errors_of(head +
                     "    encapsulation: ipv4_udp\n    rate: 1Mbit/s\n    method: {kind: sweep, frame_sizes: [64]}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("cannot hold ipv4_udp headers"), std::string::npos) << errors[0];
}

// Before: max_imbalance 1.5 was "not a ratio between 0 and 1", 0.9 "below 1": only 1 passed.
TEST(MethodKeys, MaxImbalanceIsABusiestOverMeanOfOneOrMore) {
  const std::string head = R"(
name: q
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    topology: pairs
    duration: 2s
    encapsulation: ipv4_udp
    trace_rate: 100
)";
  const Profile loaded =
      load_profile_text(testing::text_of(head + "    method: {kind: ecmp_balance, max_imbalance: 1.5}\n"), "q.yaml");
  ASSERT_TRUE(loaded.tests[0].method);
  EXPECT_DOUBLE_EQ(*loaded.tests[0].method->max_imbalance, 1.5);
  auto errors = errors_of(head + "    method: {kind: ecmp_balance, max_imbalance: 0.9}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "q.yaml:10:49: tests[0].method.max_imbalance: max_imbalance 0.9 is below the minimum 1");
  errors = errors_of(head + "    method: {kind: ecmp_balance, max_imbalance: 150%}\n");
  ASSERT_EQ(errors.size(), 1u) << "a share is not a busiest-over-mean";
}

// Before: bursts: 2..4096 expanded to 4,095 steps without a word; a range doubles, as
// message_sizes does.
TEST(MethodKeys, ABurstRangeDoubles) {
  const Profile profile = load("{kind: burst_absorption, bursts: 2..4096}", "");
  ASSERT_TRUE(profile.tests[0].method);
  EXPECT_EQ(profile.tests[0].method->bursts,
            (std::vector<std::uint32_t>{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
  const Profile odd = load("{kind: burst_absorption, bursts: 3..20}", "");
  EXPECT_EQ(odd.tests[0].method->bursts, (std::vector<std::uint32_t>{3, 6, 12, 20}));
}

}  // namespace
}  // namespace tusk
