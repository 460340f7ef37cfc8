// Safe verdict defaults: a fault that must never read as a pass (a flap, a traffic gap, a stall,
// completion or integrity errors, bit errors, lost frames, a lost agent) fails a test whose profile
// set no threshold on it, and passes with a warning once the profile allows it. The frames a
// receiver cannot see as lost are paired from the sender's count.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/counter_names.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/profile/threshold_catalog.hpp"
#include "controller/report/plan_printer.hpp"
#include "controller/report/reports.hpp"
#include "controller/verdict/unreceived_frames.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {
namespace {

namespace c = counters;

Profile profile_with(const std::string& engine, const std::string& thresholds) {
  std::string text =
      "name: p\nagents: {hosts: [a, b]}\ntests:\n  - name: t\n    engine: " + engine + "\n    duration: 10s\n";
  if (!thresholds.empty()) text += "    thresholds: {" + thresholds + "}\n";
  return load_profile_text(text, "p.yaml");
}

std::vector<std::string> keys_of(const TestSpec& test, bool implicit) {
  std::vector<std::string> keys;
  for (const auto& threshold : test.thresholds) {
    if (threshold.implicit == implicit) keys.push_back(threshold.key);
  }
  return keys;
}

// A DPDK receiver's stream: every counter it always reports, zero unless given.
proto::StreamCounters rx_stream(std::initializer_list<std::pair<std::string_view, std::uint64_t>> counts) {
  proto::StreamCounters stream;
  stream.set_stream_id("rx:a/1");
  stream.set_peer("a");
  stream.set_kind("rx");
  for (auto name : {c::kRxFrames, c::kBitErrors, c::kLostFrames, c::kGapLostFrames, c::kLinkFlaps, c::kTrafficGaps}) {
    (*stream.mutable_counters())[std::string(name)] = 0;
  }
  for (const auto& [name, value] : counts) (*stream.mutable_counters())[std::string(name)] = value;
  return stream;
}

const ThresholdCheck* check_on(const StreamVerdict& verdict, std::string_view metric) {
  for (const auto& check : verdict.checks) {
    if (check.threshold.metric == metric) return &check;
  }
  ADD_FAILURE() << "no check on " << metric;
  static const ThresholdCheck none;
  return &none;
}

// ---- which defaults apply ---------------------------------------------------------------------

TEST(SafeDefaults, AProfileWithoutThresholdsJudgesEveryFaultItsEngineMeasuresAtZero) {
  EXPECT_EQ(keys_of(profile_with("dpdk", "").tests[0], true),
            (std::vector<std::string>{"max_bit_errors", "max_lost_frames", "max_flaps", "max_traffic_gaps",
                                      "max_agents_lost"}));
  EXPECT_EQ(keys_of(profile_with("rdma", "").tests[0], true),
            (std::vector<std::string>{"max_flaps", "max_completion_errors", "max_integrity_errors", "max_stalls",
                                      "max_connect_failures", "max_agents_lost"}));
  const Profile dpdk = profile_with("dpdk", "");
  for (const auto& threshold : dpdk.tests[0].thresholds) EXPECT_EQ(threshold.value, 0);
}

TEST(SafeDefaults, AThresholdOnTheSameFaultRelaxesItsDefault) {
  const TestSpec test = profile_with("dpdk", "max_flaps: 2, max_ber: 1e-9, max_loss: 0.1%").tests[0];
  // max_ber says how many bit errors are accepted, max_loss how many lost frames.
  EXPECT_EQ(keys_of(test, true), (std::vector<std::string>{"max_traffic_gaps", "max_agents_lost"}));
  EXPECT_EQ(keys_of(test, false), (std::vector<std::string>{"max_flaps", "max_ber", "max_loss"}));
  EXPECT_EQ(keys_of(profile_with("dpdk", "max_errored_frames: 3").tests[0], true)[0], "max_lost_frames");
  EXPECT_EQ(
      keys_of(profile_with("rdma", "max_stalls: 1, max_agents_lost: 2").tests[0], true),
      (std::vector<std::string>{"max_flaps", "max_completion_errors", "max_integrity_errors", "max_connect_failures"}));
}

TEST(SafeDefaults, PlanPrintsTheDefaultsThatApply) {
  const Profile profile = profile_with("rdma", "max_flaps: 1");
  const std::string text = plan_text(profile, expand_plan(profile, {"a", "b"}, "run"));
  EXPECT_NE(text.find("pass when: link_flaps <= 1;"), std::string::npos) << text;
  EXPECT_NE(
      text.find("safe defaults (a threshold with that key relaxes one): completion_errors <= 0 "
                "(max_completion_errors); integrity_errors <= 0 (max_integrity_errors); stalls <= 0 "
                "(max_stalls); connect_failures <= 0 (max_connect_failures); agents_lost <= 0 (max_agents_lost);"),
      std::string::npos)
      << text;
}

// ---- judging ----------------------------------------------------------------------------------

TEST(SafeDefaults, AFlapFailsATestWithoutThresholdsAndNamesTheKeyThatAllowsIt) {
  const TestSpec test = profile_with("dpdk", "").tests[0];
  const auto verdict = judge_stream(
      test, "b", rx_stream({{c::kRxFrames, 1000}, {c::kLinkFlaps, 1}, {c::kTrafficGaps, 1}, {c::kGapLostFrames, 30}}),
      10);
  EXPECT_FALSE(verdict.passed());
  const ThresholdCheck* flaps = check_on(verdict, c::kLinkFlaps);
  EXPECT_FALSE(flaps->passed);
  EXPECT_EQ(flaps->describe(),
            "link_flaps 1 > max 0 (a safe default: set max_flaps in the test's thresholds to allow some)");
  // The gap is the flap's (af_packet counts each gap as one), and so are the frames lost in it.
  EXPECT_TRUE(check_on(verdict, c::kTrafficGaps)->passed);
  EXPECT_TRUE(check_on(verdict, c::kLostFrames)->passed);
  EXPECT_TRUE(verdict.warnings().empty());
}

TEST(SafeDefaults, AnAllowedFlapPassesWithAWarning) {
  const TestSpec test = profile_with("dpdk", "max_flaps: 1").tests[0];
  const auto verdict = judge_stream(
      test, "b", rx_stream({{c::kRxFrames, 1000}, {c::kLinkFlaps, 1}, {c::kTrafficGaps, 1}, {c::kGapLostFrames, 30}}),
      10);
  EXPECT_TRUE(verdict.passed());
  EXPECT_EQ(verdict.warnings(), (std::vector<std::string>{"link_flaps 1 (allowed: max_flaps 1)"}));
}

TEST(SafeDefaults, AGapThatNoFlapAccountsForIsATrafficGap) {
  const TestSpec test = profile_with("dpdk", "max_flaps: 5").tests[0];
  const auto verdict =
      judge_stream(test, "b", rx_stream({{c::kRxFrames, 1000}, {c::kLinkFlaps, 1}, {c::kTrafficGaps, 3}}), 10);
  EXPECT_EQ(verdict.metrics.at(std::string(c::kTrafficGaps)), 2);
  EXPECT_FALSE(check_on(verdict, c::kTrafficGaps)->passed);
}

TEST(SafeDefaults, LossOutsideGapsIsJudgedOverEverythingSent) {
  const TestSpec test = profile_with("dpdk", "max_flaps: 1").tests[0];
  const auto verdict = judge_stream(
      test, "b", rx_stream({{c::kRxFrames, 900}, {c::kLostFrames, 10}, {c::kGapLostFrames, 90}, {c::kLinkFlaps, 1}}),
      10);
  EXPECT_DOUBLE_EQ(verdict.metrics.at("loss_ratio"), 10.0 / 1000);
  EXPECT_FALSE(check_on(verdict, c::kLostFrames)->passed);
}

TEST(SafeDefaults, ADefaultJudgesOnlyWhatAStreamMeasures) {
  // An rdma sink without data_check reports no integrity_errors: nothing to judge, nothing failed.
  const TestSpec test = profile_with("rdma", "").tests[0];
  proto::StreamCounters sink;
  sink.set_stream_id("sink:a/qp0");
  sink.set_kind("sink");
  (*sink.mutable_counters())[std::string(c::kRxBytes)] = 1000;
  (*sink.mutable_counters())[std::string(c::kCompletionErrors)] = 0;
  const auto verdict = judge_stream(test, "b", sink, 10);
  EXPECT_TRUE(verdict.passed());
  EXPECT_TRUE(std::none_of(verdict.checks.begin(), verdict.checks.end(),
                           [](const ThresholdCheck& check) { return check.threshold.metric == c::kIntegrityErrors; }));
  // A default that no stream of the test measured is a warning, not a failure.
  const auto warnings = unmeasured_defaults(test, {verdict});
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "stalls not measured: no stream of this test reports it"),
            warnings.end());
  EXPECT_TRUE(unjudged_thresholds(test, {verdict}).empty());
}

TEST(SafeDefaults, AStalledFlowFails) {
  const TestSpec test = profile_with("rdma", "").tests[0];
  proto::StreamCounters flow;
  flow.set_stream_id("flow:b/qp0");
  flow.set_kind("flow");
  (*flow.mutable_counters())[std::string(c::kTxBytes)] = 1000;
  (*flow.mutable_counters())[std::string(c::kCompletionErrors)] = 0;
  (*flow.mutable_counters())[std::string(c::kStalls)] = 1;
  const auto verdict = judge_stream(test, "a", flow, 10);
  EXPECT_FALSE(verdict.passed());
  EXPECT_FALSE(check_on(verdict, c::kStalls)->passed);
}

TEST(SafeDefaults, AgentsLostAreAllowedOnlyUpToMaxAgentsLost) {
  EXPECT_EQ(agents_lost_allowed(profile_with("dpdk", "").tests[0]), 0);
  EXPECT_EQ(agents_lost_allowed(profile_with("dpdk", "max_agents_lost: 2").tests[0]), 2);
  // A test-wide threshold judges no stream.
  const auto verdict =
      judge_stream(profile_with("dpdk", "max_agents_lost: 2").tests[0], "b", rx_stream({{c::kRxFrames, 1}}), 1);
  EXPECT_TRUE(std::none_of(verdict.checks.begin(), verdict.checks.end(),
                           [](const ThresholdCheck& check) { return check.threshold.metric == c::kAgentsLost; }));
}

// ---- frames only the sender's count shows -------------------------------------------------------

AgentStream tx(const std::string& agent, const std::string& peer, std::uint64_t frames) {
  AgentStream entry{agent, {}};
  entry.stream.set_stream_id("tx:" + peer);
  entry.stream.set_peer(peer);
  entry.stream.set_kind("tx");
  (*entry.stream.mutable_counters())[std::string(c::kTxFrames)] = frames;
  return entry;
}

AgentStream rx(const std::string& agent, const std::string& peer, std::uint64_t received, std::uint64_t lost,
               std::uint64_t gap_lost) {
  AgentStream entry{agent,
                    rx_stream({{c::kRxFrames, received}, {c::kLostFrames, lost}, {c::kGapLostFrames, gap_lost}})};
  entry.stream.set_peer(peer);
  entry.stream.set_stream_id("rx:" + peer + "/1");
  return entry;
}

std::uint64_t counter(const AgentStream& entry, std::string_view name) {
  return entry.stream.counters().at(std::string(name));
}

TEST(UnreceivedFrames, FramesSentAfterTheLastOneThatArrivedAreLostAtTheTail) {
  std::vector<AgentStream> streams{tx("a", "b", 1000), rx("b", "a", 700, 50, 100), tx("b", "a", 500),
                                   rx("a", "b", 500, 0, 0)};
  EXPECT_TRUE(account_unreceived_frames(streams, {"a", "b"}).empty());
  EXPECT_EQ(counter(streams[1], c::kTailLostFrames), 150u);
  EXPECT_EQ(counter(streams[1], c::kLostFrames), 200u);  // 50 in the middle, 150 at the end
  EXPECT_EQ(counter(streams[3], c::kTailLostFrames), 0u);
  EXPECT_EQ(counter(streams[3], c::kLostFrames), 0u);
}

// Several flows to one peer: each flow's frames are accounted on that flow's stream at the receiver.
TEST(UnreceivedFrames, EachFlowOfAPeerIsAccountedOnItsOwnStream) {
  const auto flow = [](AgentStream entry, std::uint32_t id) {
    entry.stream.set_sender_stream_id(id);
    entry.stream.set_stream_id(entry.stream.stream_id() + "#" + std::to_string(id));
    return entry;
  };
  std::vector<AgentStream> streams{flow(tx("a", "b", 1000), 1), flow(tx("a", "b", 1000), 2), flow(tx("a", "b", 900), 3),
                                   flow(rx("b", "a", 1000, 0, 0), 2), flow(rx("b", "a", 990, 0, 0), 1)};
  EXPECT_EQ(account_unreceived_frames(streams, {"a", "b"}),
            (std::vector<std::string>{"b received none of the 900 frames a sent it on tx:b#3"}));
  EXPECT_EQ(counter(streams[4], c::kTailLostFrames), 10u);  // flow 1: 1000 sent, 990 arrived
  EXPECT_EQ(counter(streams[3], c::kTailLostFrames), 0u);   // flow 2: all of them
}

TEST(UnreceivedFrames, AReceiverWithNoStreamFromItsSenderIsAProblem) {
  std::vector<AgentStream> streams{tx("a", "b", 1000), tx("b", "a", 1000), rx("a", "b", 1000, 0, 0)};
  EXPECT_EQ(account_unreceived_frames(streams, {"a", "b"}),
            (std::vector<std::string>{"b received none of the 1000 frames a sent it"}));
  // b's stream of it, appended: nothing arrived, every frame lost, so it fails where b's own would.
  ASSERT_EQ(streams.size(), 4u);
  EXPECT_EQ(streams[3].agent, "b");
  EXPECT_EQ(streams[3].stream.kind(), "rx");
  EXPECT_EQ(streams[3].stream.peer(), "a");
  EXPECT_EQ(counter(streams[3], c::kRxFrames), 0u);
  EXPECT_EQ(counter(streams[3], c::kLostFrames), 1000u);
  // A lost receiver's streams are missing for that reason, which the test reports already.
  std::vector<AgentStream> lost{tx("a", "b", 1000), tx("b", "a", 1000), rx("a", "b", 1000, 0, 0)};
  EXPECT_TRUE(account_unreceived_frames(lost, {"a"}).empty());
  EXPECT_EQ(lost.size(), 3u);
  // Nothing sent, nothing missing.
  std::vector<AgentStream> idle{tx("a", "b", 0)};
  EXPECT_TRUE(account_unreceived_frames(idle, {"a", "b"}).empty());
}

// Before: a loopback sender's stream (peer "self") was paired with nothing, so a port whose plug
// returned no frame at all passed its test beside another agent's port that did.
TEST(UnreceivedFrames, ALoopbackPortIsItsOwnReceiverAndOneThatReturnedNothingLosesEveryFrame) {
  std::vector<AgentStream> streams{tx("a", "self", 1000), rx("a", "self", 990, 0, 0), tx("b", "self", 500)};
  EXPECT_EQ(account_unreceived_frames(streams, {"a", "b"}),
            (std::vector<std::string>{"b's port returned none of the 500 frames it sent itself"}));
  EXPECT_EQ(counter(streams[1], c::kTailLostFrames), 10u);
  ASSERT_EQ(streams.size(), 4u);
  EXPECT_EQ(streams[3].agent, "b");
  EXPECT_EQ(streams[3].stream.peer(), "self");
  EXPECT_EQ(counter(streams[3], c::kLostFrames), 500u);
}

// ---- what the reports show ----------------------------------------------------------------------

RunOutcome outcome_with(const TestSpec& spec, const StreamVerdict& verdict, const proto::AgentEvent& event) {
  RunOutcome outcome;
  outcome.run_id = "r";
  outcome.profile.name = "p";
  TestOutcome test;
  test.spec = spec;
  test.agents = {"b"};
  test.per_agent["b"].events.push_back(event);
  test.streams.push_back(verdict);
  test.verdict = verdict.passed() ? TestVerdict::Pass : TestVerdict::Fail;
  test.warnings.push_back("c: no result (agent lost)");
  outcome.tests.push_back(test);
  outcome.conclusion = "done";
  return outcome;
}

TEST(SafeDefaults, SummaryAndJunitCarryTheWarningsAndTheStreamsEvents) {
  const TestSpec spec = profile_with("dpdk", "max_flaps: 1").tests[0];
  const auto verdict =
      judge_stream(spec, "b", rx_stream({{c::kRxFrames, 1000}, {c::kLinkFlaps, 1}, {c::kTrafficGaps, 1}}), 10);
  proto::AgentEvent gap;
  gap.set_message("traffic gap on a stream 1: nothing for 300 ms, resumed");
  gap.set_stream_id("rx:a/1");
  const RunOutcome outcome = outcome_with(spec, verdict, gap);

  const std::string summary = summary_table(outcome);
  // The stream named by its traffic's direction, then where it was measured.
  EXPECT_NE(summary.find("warning: a -> b (b rx:a/1): link_flaps 1 (allowed: max_flaps 1)"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("warning: b: traffic gap on a stream 1: nothing for 300 ms, resumed"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("warning: c: no result (agent lost)"), std::string::npos) << summary;

  const std::string junit = report_junit(outcome);
  EXPECT_NE(junit.find("<system-out>warning: link_flaps 1 (allowed: max_flaps 1)\nb: traffic gap on a stream 1: "
                       "nothing for 300 ms, resumed\n</system-out>"),
            std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<system-out>warning: c: no result (agent lost)\n</system-out>"), std::string::npos) << junit;
  EXPECT_EQ(junit.find("<failure"), std::string::npos) << junit;

  const auto json = report_json(outcome);
  EXPECT_EQ(json["tests"][0]["warnings"].size(), 2u) << json.dump(2);
  EXPECT_EQ(json["tests"][0]["agents"][0]["events"][0]["stream_id"], "rx:a/1");
}

// Issue 57, before: junit.xml counted each failed check as a failure: tests="16" failures="60".
TEST(SafeDefaults, JunitCountsAFailedTestcaseOnceHoweverManyOfItsChecksFailed) {
  const TestSpec spec = profile_with("dpdk", "max_flaps: 0").tests[0];
  const auto verdict = judge_stream(
      spec, "b", rx_stream({{c::kRxFrames, 1000}, {c::kLostFrames, 5}, {c::kLinkFlaps, 2}, {c::kTrafficGaps, 3}}), 10);
  std::size_t failed_checks = 0;
  for (const auto& check : verdict.checks) failed_checks += check.passed ? 0 : 1;
  ASSERT_GE(failed_checks, 2u);
  const std::string junit = report_junit(outcome_with(spec, verdict, proto::AgentEvent{}));
  EXPECT_NE(junit.find("tests=\"1\" failures=\"1\""), std::string::npos) << junit;
}

}  // namespace
}  // namespace tusk
