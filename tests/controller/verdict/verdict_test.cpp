#include "controller/verdict/verdict.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "common/counter_names.hpp"
#include "controller/profile/threshold_catalog.hpp"

namespace tusk {
namespace {

namespace c = counters;

proto::StreamCounters stream(std::initializer_list<std::pair<std::string_view, std::uint64_t>> counts) {
  proto::StreamCounters s;
  s.set_stream_id("s0");
  s.set_peer("b");
  for (const auto& [name, value] : counts) (*s.mutable_counters())[std::string(name)] = value;
  return s;
}

Threshold max_of(std::string metric, double value) {
  Threshold t;
  t.key = "max_" + metric;
  t.metric = std::move(metric);
  t.bound = Bound::Max;
  t.value = value;
  return t;
}

Threshold min_of(std::string metric, double value) {
  Threshold t;
  t.key = "min_" + metric;
  t.metric = std::move(metric);
  t.bound = Bound::Min;
  t.value = value;
  return t;
}

TestSpec test_with(std::initializer_list<Threshold> thresholds) {
  TestSpec test;
  test.name = "t";
  test.engine = "dpdk";
  test.params = proto::DpdkTest{};  // no BER target: confidence 0 claims no bound
  test.thresholds = thresholds;
  return test;
}

// The single check of judging `counts` (over `duration_s`) against one threshold.
ThresholdCheck check_of(const Threshold& threshold, const proto::StreamCounters& counts, double duration_s = 10) {
  const auto verdict = judge_stream(test_with({threshold}), "a", counts, duration_s);
  EXPECT_EQ(verdict.checks.size(), 1u);
  return verdict.checks.empty() ? ThresholdCheck{} : verdict.checks.front();
}

// ---- counter names ---------------------------------------------------------------------------

TEST(CounterNames, AreTheCanonicalSnakeCaseNames) {
  // Engines, profiles and reports all key on these exact strings.
  EXPECT_EQ(c::kTxBytes, "tx_bytes");
  EXPECT_EQ(c::kRxBytes, "rx_bytes");
  EXPECT_EQ(c::kTxFrames, "tx_frames");
  EXPECT_EQ(c::kRxFrames, "rx_frames");
  EXPECT_EQ(c::kBitErrors, "bit_errors");
  EXPECT_EQ(c::kBitsCompared, "bits_compared");
  EXPECT_EQ(c::kErroredFrames, "errored_frames");
  EXPECT_EQ(c::kLostFrames, "lost_frames");
  EXPECT_EQ(c::kLinkFlaps, "link_flaps");
  EXPECT_EQ(c::kCompletionErrors, "completion_errors");
  EXPECT_EQ(c::kIntegrityErrors, "integrity_errors");
  EXPECT_EQ(c::kRetransmits, "retransmits");
  EXPECT_EQ(c::kHostDrops, "host_drops");
  EXPECT_EQ(c::kLatencyP99Ns, "latency_p99_ns");
  EXPECT_EQ(c::kTrafficStartDelayMs, "traffic_start_delay_ms");
}

// ---- compute_metrics -------------------------------------------------------------------------

TEST(Verdict, ThroughputIsReceivedBitsPerSecond) {
  // 1'250'000'000 bytes * 8 / 10 s = 1e9 bit/s; tx_bytes is ignored when rx_bytes is there.
  const auto metrics = compute_metrics(stream({{c::kRxBytes, 1'250'000'000}, {c::kTxBytes, 2'000'000'000}}), 10);
  ASSERT_TRUE(metrics.contains("throughput_bps"));
  EXPECT_DOUBLE_EQ(metrics.at("throughput_bps"), 1e9);
}

TEST(Verdict, ThroughputFallsBackToSentBytes) {
  // 500'000'000 bytes * 8 / 4 s = 1e9 bit/s.
  const auto metrics = compute_metrics(stream({{c::kTxBytes, 500'000'000}}), 4);
  ASSERT_TRUE(metrics.contains("throughput_bps"));
  EXPECT_DOUBLE_EQ(metrics.at("throughput_bps"), 1e9);
}

TEST(Verdict, ThroughputIsMeasuredFromTheStreamsFirstTraffic) {
  // 500'000'000 bytes sent from 200 ms after the start of a 4.2 s window: 4 s of traffic, 1e9 bit/s.
  auto late = stream({{c::kTxBytes, 500'000'000}});
  (*late.mutable_gauges())[std::string(c::kTrafficStartDelayMs)] = 200;
  EXPECT_DOUBLE_EQ(compute_metrics(late, 4.2).at("throughput_bps"), 1e9);
  // A delay from a peer that is not one inside the window measures over the whole window.
  for (double bogus : {-50.0, 4200.0, 1e300, std::nan("")}) {
    (*late.mutable_gauges())[std::string(c::kTrafficStartDelayMs)] = bogus;
    EXPECT_DOUBLE_EQ(compute_metrics(late, 4).at("throughput_bps"), 1e9) << bogus;
  }
}

TEST(Verdict, ZeroBytesReceivedIsZeroThroughputNotTheSentRate) {
  // The receiver counted and got nothing: that is 0 bit/s, not what the sender pushed.
  const auto metrics = compute_metrics(stream({{c::kRxBytes, 0}, {c::kTxBytes, 1'000}}), 1);
  ASSERT_TRUE(metrics.contains("throughput_bps"));
  EXPECT_EQ(metrics.at("throughput_bps"), 0.0);
}

TEST(Verdict, NoThroughputWithoutBytesOrDuration) {
  EXPECT_FALSE(compute_metrics(stream({{c::kRxFrames, 10}}), 10).contains("throughput_bps"));
  EXPECT_FALSE(compute_metrics(stream({{c::kRxBytes, 1'000}}), 0).contains("throughput_bps"));
}

TEST(Verdict, BerIsBitErrorsOverBitsCompared) {
  // 3 / 1e12 = 3e-12.
  const auto metrics = compute_metrics(stream({{c::kBitErrors, 3}, {c::kBitsCompared, 1'000'000'000'000}}), 10);
  ASSERT_TRUE(metrics.contains("ber"));
  EXPECT_DOUBLE_EQ(metrics.at("ber"), 3e-12);
  EXPECT_EQ(metrics.at("bit_errors"), 3.0);
}

TEST(Verdict, BerIsZeroWhenBitsWereComparedWithoutErrors) {
  // bits_compared > 0 and no bit_errors counter: 0 / 8e9 = 0.
  const auto metrics = compute_metrics(stream({{c::kBitsCompared, 8'000'000'000}}), 10);
  ASSERT_TRUE(metrics.contains("ber"));
  EXPECT_EQ(metrics.at("ber"), 0.0);
}

TEST(Verdict, BerIsAbsentWhenNoBitsWereCompared) {
  EXPECT_FALSE(compute_metrics(stream({{c::kBitErrors, 0}, {c::kBitsCompared, 0}}), 10).contains("ber"));
  EXPECT_FALSE(compute_metrics(stream({{c::kBitErrors, 5}}), 10).contains("ber"));
  EXPECT_FALSE(compute_metrics(stream({}), 10).contains("ber"));
}

TEST(Verdict, LossRatioIsLostOverLostPlusReceived) {
  // 25 / (25 + 975) = 25 / 1000 = 0.025.
  const auto metrics = compute_metrics(stream({{c::kLostFrames, 25}, {c::kRxFrames, 975}}), 10);
  ASSERT_TRUE(metrics.contains("loss_ratio"));
  EXPECT_DOUBLE_EQ(metrics.at("loss_ratio"), 0.025);
}

TEST(Verdict, EverythingLostIsALossRatioOfOne) {
  // 5 / (5 + 0) = 1.
  const auto metrics = compute_metrics(stream({{c::kLostFrames, 5}, {c::kRxFrames, 0}}), 10);
  ASSERT_TRUE(metrics.contains("loss_ratio"));
  EXPECT_EQ(metrics.at("loss_ratio"), 1.0);
}

TEST(Verdict, LossRatioNeedsBothCountersAndSomeFrames) {
  EXPECT_FALSE(compute_metrics(stream({{c::kLostFrames, 5}}), 10).contains("loss_ratio"));
  EXPECT_FALSE(compute_metrics(stream({{c::kRxFrames, 5}}), 10).contains("loss_ratio"));
  EXPECT_FALSE(compute_metrics(stream({{c::kLostFrames, 0}, {c::kRxFrames, 0}}), 10).contains("loss_ratio"));
}

TEST(Verdict, CountsAreCopiedAsMetrics) {
  const auto metrics = compute_metrics(stream({{c::kErroredFrames, 7},
                                               {c::kLostFrames, 25},
                                               {c::kLinkFlaps, 1},
                                               {c::kCompletionErrors, 2},
                                               {c::kIntegrityErrors, 3},
                                               {c::kRetransmits, 4},
                                               {c::kHostDrops, 5},
                                               {c::kBitErrors, 6}}),
                                       10);
  EXPECT_EQ(metrics.at("errored_frames"), 7.0);
  EXPECT_EQ(metrics.at("lost_frames"), 25.0);
  EXPECT_EQ(metrics.at("link_flaps"), 1.0);
  EXPECT_EQ(metrics.at("completion_errors"), 2.0);
  EXPECT_EQ(metrics.at("integrity_errors"), 3.0);
  EXPECT_EQ(metrics.at("retransmits"), 4.0);
  EXPECT_EQ(metrics.at("host_drops"), 5.0);
  EXPECT_EQ(metrics.at("bit_errors"), 6.0);
}

TEST(Verdict, TosAndNicCountersAreMetricsEveryThresholdOfTheCatalogCanRead) {
  const auto metrics = compute_metrics(stream({{c::kCeMarked, 11},
                                               {c::kDscpRewrites, 12},
                                               {c::kOutOfSequence, 13},
                                               {c::kPacketSeqErr, 14},
                                               {c::kLocalAckTimeoutErr, 15},
                                               {c::kNpCnpSent, 16},
                                               {c::kNpEcnMarkedRocePackets, 17},
                                               {c::kSymbolError, 18}}),
                                       10);
  EXPECT_EQ(metrics.at("ce_marked"), 11.0);
  EXPECT_EQ(metrics.at("dscp_rewrites"), 12.0);
  EXPECT_EQ(metrics.at("out_of_sequence"), 13.0);
  EXPECT_EQ(metrics.at("packet_seq_err"), 14.0);
  EXPECT_EQ(metrics.at("local_ack_timeout_err"), 15.0);
  EXPECT_EQ(metrics.at("np_cnp_sent"), 16.0);
  EXPECT_EQ(metrics.at("np_ecn_marked_roce_packets"), 17.0);
  EXPECT_EQ(metrics.at("symbol_error"), 18.0);
  // min_ce_marked: a switch that must mark, judged on the same metric from below.
  EXPECT_TRUE(check_of(min_of("ce_marked", 10), stream({{c::kCeMarked, 11}})).passed);
  EXPECT_FALSE(check_of(min_of("ce_marked", 10), stream({{c::kCeMarked, 9}})).passed);
}

TEST(Verdict, EveryCountThresholdOfTheCatalogFindsItsCounterAsAMetric) {
  for (const auto& kind : threshold_catalog()) {
    if (kind.value != ThresholdKind::Value::Count || kind.scope != ThresholdKind::Scope::Stream) continue;
    EXPECT_TRUE(compute_metrics(stream({{kind.metric, 5}}), 10).contains(std::string(kind.metric))) << kind.key;
  }
}

TEST(Verdict, CountsTheStreamDoesNotReportAreAbsentNotZero) {
  const auto metrics = compute_metrics(stream({{c::kLinkFlaps, 0}}), 10);
  EXPECT_EQ(metrics.at("link_flaps"), 0.0);
  EXPECT_FALSE(metrics.contains("completion_errors"));
  EXPECT_FALSE(metrics.contains("retransmits"));
  EXPECT_FALSE(metrics.contains("errored_frames"));
}

TEST(Verdict, LatencyP99ComesFromTheGauge) {
  auto s = stream({});
  (*s.mutable_gauges())[std::string(c::kLatencyP99Ns)] = 12'345.5;
  const auto metrics = compute_metrics(s, 10);
  ASSERT_TRUE(metrics.contains("latency_p99_ns"));
  EXPECT_EQ(metrics.at("latency_p99_ns"), 12'345.5);
  EXPECT_FALSE(compute_metrics(stream({}), 10).contains("latency_p99_ns"));
}

// ---- judge_stream: max thresholds ------------------------------------------------------------

TEST(Verdict, MaxThresholdPassesBelowAndAtTheLimitAndFailsAbove) {
  const auto limit = max_of("errored_frames", 5);
  EXPECT_TRUE(check_of(limit, stream({{c::kErroredFrames, 4}})).passed);
  EXPECT_TRUE(check_of(limit, stream({{c::kErroredFrames, 5}})).passed);  // equal passes
  EXPECT_FALSE(check_of(limit, stream({{c::kErroredFrames, 6}})).passed);
}

TEST(Verdict, MaxZeroAllowsOnlyZero) {
  const auto limit = max_of("link_flaps", 0);
  EXPECT_TRUE(check_of(limit, stream({{c::kLinkFlaps, 0}})).passed);
  EXPECT_FALSE(check_of(limit, stream({{c::kLinkFlaps, 1}})).passed);
}

TEST(Verdict, MaxBerAroundTheLimit) {
  const auto limit = max_of("ber", 1e-12);
  // 0 / 1e12 = 0 <= 1e-12.
  EXPECT_TRUE(check_of(limit, stream({{c::kBitErrors, 0}, {c::kBitsCompared, 1'000'000'000'000}})).passed);
  // 1 / 1e12 = 1e-12: at the limit.
  EXPECT_TRUE(check_of(limit, stream({{c::kBitErrors, 1}, {c::kBitsCompared, 1'000'000'000'000}})).passed);
  // 2 / 1e12 = 2e-12 > 1e-12.
  EXPECT_FALSE(check_of(limit, stream({{c::kBitErrors, 2}, {c::kBitsCompared, 1'000'000'000'000}})).passed);
}

TEST(Verdict, CheckRecordsTheMeasuredValueAndTheThreshold) {
  const auto check = check_of(max_of("lost_frames", 10), stream({{c::kLostFrames, 3}}));
  ASSERT_TRUE(check.measured.has_value());
  EXPECT_EQ(*check.measured, 3.0);
  EXPECT_EQ(check.threshold.metric, "lost_frames");
  EXPECT_EQ(check.threshold.key, "max_lost_frames");
  EXPECT_EQ(check.threshold.value, 10.0);
}

// ---- judge_stream: min thresholds ------------------------------------------------------------

TEST(Verdict, MinThresholdPassesAtAndAboveTheLimitAndFailsBelow) {
  const auto limit = min_of("throughput_bps", 1e9);
  // 1'250'000'000 B * 8 / 10 s = 1e9: equal passes.
  EXPECT_TRUE(check_of(limit, stream({{c::kRxBytes, 1'250'000'000}})).passed);
  // 1'250'000'001 * 8 / 10 = 1'000'000'000.8 > 1e9.
  EXPECT_TRUE(check_of(limit, stream({{c::kRxBytes, 1'250'000'001}})).passed);
  // 1'249'999'999 * 8 / 10 = 999'999'999.2 < 1e9.
  EXPECT_FALSE(check_of(limit, stream({{c::kRxBytes, 1'249'999'999}})).passed);
}

// ---- judge_stream: the verdict as a whole ----------------------------------------------------

TEST(Verdict, StreamPassesOnlyWhenEveryCheckPasses) {
  const auto test = test_with({max_of("errored_frames", 0), min_of("throughput_bps", 1e9)});
  // 2'500'000'000 B * 8 / 10 s = 2e9 bit/s >= 1e9.
  const auto good = judge_stream(test, "a", stream({{c::kErroredFrames, 0}, {c::kRxBytes, 2'500'000'000}}), 10);
  ASSERT_EQ(good.checks.size(), 2u);
  EXPECT_TRUE(good.passed());

  const auto bad = judge_stream(test, "a", stream({{c::kErroredFrames, 1}, {c::kRxBytes, 2'500'000'000}}), 10);
  ASSERT_EQ(bad.checks.size(), 2u);
  EXPECT_FALSE(bad.checks[0].passed);
  EXPECT_TRUE(bad.checks[1].passed);
  EXPECT_FALSE(bad.passed());
}

TEST(Verdict, ChecksFollowTheThresholdOrder) {
  const auto verdict = judge_stream(test_with({min_of("throughput_bps", 1), max_of("link_flaps", 0), max_of("ber", 1)}),
                                    "a", stream({}), 10);
  ASSERT_EQ(verdict.checks.size(), 3u);
  EXPECT_EQ(verdict.checks[0].threshold.metric, "throughput_bps");
  EXPECT_EQ(verdict.checks[1].threshold.metric, "link_flaps");
  EXPECT_EQ(verdict.checks[2].threshold.metric, "ber");
}

TEST(Verdict, NoThresholdsPasses) {
  const auto verdict = judge_stream(test_with({}), "a", stream({{c::kErroredFrames, 1'000}}), 10);
  EXPECT_TRUE(verdict.checks.empty());
  EXPECT_TRUE(verdict.passed());
}

TEST(Verdict, VerdictKeepsTheAgentTheStreamAndItsMetrics) {
  const auto counts = stream({{c::kRxBytes, 1'250'000'000}, {c::kLinkFlaps, 2}});
  const auto verdict = judge_stream(test_with({}), "rack1-a", counts, 10);
  EXPECT_EQ(verdict.agent, "rack1-a");
  EXPECT_EQ(verdict.stream.stream_id(), "s0");
  EXPECT_EQ(verdict.stream.peer(), "b");
  EXPECT_EQ(verdict.metrics, compute_metrics(counts, 10));
  EXPECT_DOUBLE_EQ(verdict.metrics.at("throughput_bps"), 1e9);  // 1.25e9 * 8 / 10
}

TEST(Verdict, AThresholdOnAnUnmeasuredMetricFails) {
  // A burn-in that asked for a BER and got no compared bits must not pass quietly.
  const auto check = check_of(max_of("ber", 1e-12), stream({{c::kRxBytes, 1'000}}));
  EXPECT_FALSE(check.measured.has_value());
  EXPECT_FALSE(check.passed);
  EXPECT_EQ(check.describe(), "ber not measured (threshold max 1e-12)");

  const auto min_check = check_of(min_of("throughput_bps", 1e9), stream({}));
  EXPECT_FALSE(min_check.passed);
  EXPECT_EQ(min_check.describe(), "throughput_bps not measured (threshold min 1e+09)");

  const auto verdict = judge_stream(test_with({max_of("ber", 1e-12)}), "a", stream({}), 10);
  EXPECT_FALSE(verdict.passed());
}

// ---- describe --------------------------------------------------------------------------------

TEST(Verdict, DescribeAFailingMaxCheck) {
  // 1e9 errored bits / 1e12 compared = 0.001.
  const auto check =
      check_of(max_of("ber", 1e-12), stream({{c::kBitErrors, 1'000'000'000}, {c::kBitsCompared, 1'000'000'000'000}}));
  EXPECT_FALSE(check.passed);
  EXPECT_EQ(check.describe(), "ber 0.001 > max 1e-12");
}

TEST(Verdict, DescribeAPassingMaxCheck) {
  const auto check = check_of(max_of("errored_frames", 5), stream({{c::kErroredFrames, 5}}));
  EXPECT_EQ(check.describe(), "errored_frames 5 <= max 5");
}

// Issue 57, before: "throughput_bps 7.99992e+06 < min 3.75e+11", where the rest of Tusk prints
// bit rates with their unit.
TEST(Verdict, DescribeABitRateAndADurationAsTheRestOfTuskPrintsThem) {
  Threshold floor = min_of("throughput_bps", 375e9);
  floor.key = "min_throughput";
  const auto failing = check_of(floor, stream({{c::kRxBytes, 10'000'000}}));
  EXPECT_EQ(failing.describe(), "throughput_bps 8.00 Mbit/s < min 375 Gbit/s");
  EXPECT_EQ(check_of(floor, stream({})).describe(), "throughput_bps not measured (threshold min 375 Gbit/s)");
  const ThresholdKind* duration = nullptr;
  for (const auto& kind : threshold_catalog()) {
    if (kind.value == ThresholdKind::Value::Duration && kind.scope == ThresholdKind::Scope::Stream) duration = &kind;
  }
  ASSERT_NE(duration, nullptr);
  Threshold longest;
  longest.key = std::string(duration->key);
  longest.metric = std::string(duration->metric);
  longest.bound = duration->bound;
  longest.value = 250e6;  // ns
  EXPECT_NE(check_of(longest, stream({})).describe().find("250 ms"), std::string::npos)
      << check_of(longest, stream({})).describe();
}

TEST(Verdict, DescribeMinChecks) {
  // 1'000'000'000 B * 8 / 10 s = 8e8 bit/s < 1e9.
  const auto failing = check_of(min_of("throughput_bps", 1e9), stream({{c::kRxBytes, 1'000'000'000}}));
  EXPECT_EQ(failing.describe(), "throughput_bps 8e+08 < min 1e+09");
  // 2'500'000'000 B * 8 / 10 s = 2e9 bit/s >= 1e9.
  const auto passing = check_of(min_of("throughput_bps", 1e9), stream({{c::kRxBytes, 2'500'000'000}}));
  EXPECT_EQ(passing.describe(), "throughput_bps 2e+09 >= min 1e+09");
}

TEST(Verdict, DescribeRoundsToSixSignificantDigits) {
  // 1 errored bit in 3e9 compared: 1 / 3e9 = 3.33333...e-10, shown as 3.33333e-10.
  const auto check = check_of(max_of("ber", 1e-12), stream({{c::kBitErrors, 1}, {c::kBitsCompared, 3'000'000'000}}));
  EXPECT_EQ(check.describe(), "ber 3.33333e-10 > max 1e-12");
}

}  // namespace
}  // namespace tusk

namespace tusk {
namespace {

// Before: estimate_ber threw on a count of bit errors above the bits compared, and one bogus
// stream took the whole report down (exit 2, empty report directory).
TEST(Verdict, MoreBitErrorsThanBitsComparedFailsTheStreamWithoutTakingTheReportDown) {
  TestSpec test;
  test.name = "t";
  test.engine = "dpdk";
  test.params = [] {
    proto::DpdkTest dpdk;
    dpdk.set_confidence(0.95);
    dpdk.set_target_ber(1e-12);
    return dpdk;
  }();
  test.thresholds.push_back({"max_ber", "ber", Bound::Max, 1e-12, {}});
  proto::StreamCounters stream;
  (*stream.mutable_counters())["bits_compared"] = 5;
  (*stream.mutable_counters())["bit_errors"] = 10;
  StreamVerdict verdict;
  ASSERT_NO_THROW(verdict = judge_stream(test, "lab-b", stream, 1.0));
  EXPECT_FALSE(verdict.passed());
  ASSERT_TRUE(verdict.ber.has_value());
  EXPECT_EQ(verdict.ber->estimate.errors, 5u);  // held to the bits compared for the bound
}

TEST(Verdict, LossOnAReceiverThatDroppedFramesItselfIsNotJudgedAsTheLinks) {
  // 100 frames lost by sequence, and the receiving host's own sockets dropped 100: that loss
  // says nothing about the cable, so max_lost_frames cannot pass and the text says why.
  TestSpec test;
  test.thresholds.push_back({"max_lost_frames", "lost_frames", Bound::Max, 1e9, {}});
  test.thresholds.push_back({"max_ber", "ber", Bound::Max, 1e-12, {}});
  proto::StreamCounters stream;
  (*stream.mutable_counters())["lost_frames"] = 100;
  (*stream.mutable_counters())["rx_frames"] = 900;
  (*stream.mutable_counters())["host_drops"] = 100;
  (*stream.mutable_counters())["bits_compared"] = 7'200'000;
  (*stream.mutable_counters())["bit_errors"] = 0;
  const auto verdict = judge_stream(test, "lab-b", stream, 1.0);
  ASSERT_EQ(verdict.checks.size(), 2u);
  EXPECT_FALSE(verdict.checks[0].passed);
  EXPECT_NE(verdict.checks[0].describe().find("not a verdict on the link"), std::string::npos)
      << verdict.checks[0].describe();
  EXPECT_TRUE(verdict.checks[1].passed) << "bit errors are still judged: every received bit was checked";
  (*stream.mutable_counters())["host_drops"] = 0;
  EXPECT_TRUE(judge_stream(test, "lab-b", stream, 1.0).checks[0].passed);
}

}  // namespace
}  // namespace tusk

namespace {

tusk::TestSpec spec_with(std::initializer_list<std::pair<const char*, double>> maxima) {
  tusk::TestSpec spec;
  for (const auto& [metric, value] : maxima) {
    tusk::Threshold threshold;
    threshold.metric = metric;
    threshold.bound = tusk::Bound::Max;
    threshold.value = value;
    spec.thresholds.push_back(threshold);
  }
  return spec;
}

TEST(VerdictKinds, RdmaStreamsAreJudgedOnlyOnWhatTheyCarry) {
  const auto spec = spec_with({{"integrity_errors", 0}, {"retransmits", 0}});
  tusk::proto::StreamCounters flow;
  flow.set_kind("flow");
  (*flow.mutable_counters())["tx_bytes"] = 1000;
  tusk::proto::StreamCounters nic;
  nic.set_kind("nic");
  (*nic.mutable_counters())["retransmits"] = 12;
  const auto flow_verdict = tusk::judge_stream(spec, "a", flow, 1.0);
  const auto nic_verdict = tusk::judge_stream(spec, "a", nic, 1.0);
  EXPECT_TRUE(flow_verdict.checks.empty()) << "a sender carries neither integrity errors nor NIC counters";
  ASSERT_EQ(nic_verdict.checks.size(), 1u);
  EXPECT_FALSE(nic_verdict.passed()) << "12 retransmits > max 0";
  // integrity_errors was judged on no stream: the test must say so rather than pass.
  const auto problems = tusk::unjudged_thresholds(spec, {flow_verdict, nic_verdict});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("integrity_errors"), std::string::npos);
}

TEST(VerdictKinds, DpdkSendersAreNotJudgedAndReceiversOnEverything) {
  EXPECT_FALSE(tusk::kind_judges("tx", "ber"));
  EXPECT_TRUE(tusk::kind_judges("rx", "ber"));
  EXPECT_TRUE(tusk::kind_judges("", "retransmits"));
  EXPECT_TRUE(tusk::kind_judges("sink", "integrity_errors"));
  EXPECT_FALSE(tusk::kind_judges("sink", "retransmits"));
  EXPECT_TRUE(tusk::kind_judges("read", "integrity_errors")) << "a READ initiator checks the data it pulled";
  EXPECT_FALSE(tusk::kind_judges("source", "throughput_bps")) << "a READ target only serves";
  EXPECT_TRUE(tusk::informational_kind("port"));
  EXPECT_FALSE(tusk::kind_judges("port", "ber"));
  EXPECT_FALSE(tusk::informational_kind("nic")) << "an RDMA port's counters are judged on retransmits";
}

}  // namespace
