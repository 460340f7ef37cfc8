// compare_runs: each way a stream or link can get worse beyond its threshold is named, noise and
// improvements are not, and a stream that vanished is reported.
#include "controller/history/run_comparison.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "tests/controller/history/history_test_reports.hpp"

namespace tusk::testing {
namespace {

using json = nlohmann::ordered_json;

RunRows rows(const json& report) {
  return rows_of_report(report, "/reports/" + report["run_id"].get<std::string>());
}

// The earlier run, and the later one changed by `change` on its rows.
// The default thresholds with one changed.
WorseThresholds thresholds_with(double WorseThresholds::*field, double value) {
  WorseThresholds thresholds;
  thresholds.*field = value;
  return thresholds;
}

Comparison compare_changed(const std::function<void(RunRows&)>& change, const WorseThresholds& thresholds = {}) {
  const RunRows before = rows(sample_report("run-1"));
  RunRows after = rows(sample_report("run-2"));
  change(after);
  return compare_runs(before, after, thresholds);
}

StreamRow& stream(RunRows& rows, const std::string& agent, const std::string& stream_id) {
  for (auto& row : rows.streams) {
    if (row.agent == agent && row.stream_id == stream_id) return row;
  }
  throw std::runtime_error("no stream " + agent + " " + stream_id);
}

std::vector<std::string> metrics_of(const Comparison& comparison) {
  std::vector<std::string> metrics;
  for (const auto& regression : comparison.regressions) metrics.push_back(regression.metric);
  return metrics;
}

TEST(RunComparison, TheSameRunTwiceIsNotWorse) {
  const auto comparison = compare_changed([](RunRows&) {});
  EXPECT_FALSE(comparison.worse());
  EXPECT_EQ(comparison.compared_streams, 7u);
  EXPECT_TRUE(comparison.new_streams.empty());
}

TEST(RunComparison, AStreamThatPassedAndNowFailsIsAlwaysWorse) {
  const auto comparison = compare_changed([](RunRows& b) { stream(b, "lab-b", "rx:lab-a/1").passed = false; });
  ASSERT_EQ(metrics_of(comparison), std::vector<std::string>{"passed"});
  const Regression& regression = comparison.regressions[0];
  EXPECT_EQ(regression.subject(), "cable lab-b rx:lab-a/1 (lab-a->lab-b)");
  EXPECT_EQ(regression.text, "passed -> failed");
  // Failing in both runs is no change, and failing then passing is better.
  RunRows failing = rows(sample_report("run-1"));
  stream(failing, "lab-b", "rx:lab-a/1").passed = false;
  EXPECT_FALSE(compare_runs(failing, failing).worse());
  EXPECT_FALSE(compare_runs(failing, rows(sample_report("run-2"))).worse());
}

TEST(RunComparison, BitErrorsWhereThereWereNoneAreWorseWithTheBounds) {
  const auto comparison = compare_changed([](RunRows& b) {
    auto& s = stream(b, "lab-b", "rx:lab-a/1");
    s.bit_errors = 1200;
    s.ber_upper_bound = 1.9e-7;
  });
  ASSERT_EQ(metrics_of(comparison), std::vector<std::string>{"bit_errors"});
  EXPECT_EQ(comparison.regressions[0].text, "bit errors 0 -> 1200, BER bound 4.30e-10 -> 1.90e-07");
  EXPECT_EQ(comparison.regressions[0].before, 0);
  EXPECT_EQ(comparison.regressions[0].after, 1200);
}

TEST(RunComparison, ABerBoundTenTimesHigherWithErrorsIsWorseAndNineTimesIsNot) {
  const auto with_bounds = [](double before_bound, double after_bound, double after_errors) {
    RunRows before = rows(sample_report("run-1"));
    auto& a = stream(before, "lab-b", "rx:lab-a/1");
    a.bit_errors = 10;
    a.ber_upper_bound = before_bound;
    RunRows after = rows(sample_report("run-2"));
    auto& b = stream(after, "lab-b", "rx:lab-a/1");
    b.bit_errors = after_errors;
    b.ber_upper_bound = after_bound;
    return compare_runs(before, after);
  };
  const auto ten = with_bounds(1e-9, 1e-8, 100);
  ASSERT_EQ(metrics_of(ten), std::vector<std::string>{"ber_upper_bound"});
  EXPECT_EQ(ten.regressions[0].text, "BER bound 1.00e-09 -> 1.00e-08 (x10, 100 bit errors)");
  EXPECT_FALSE(with_bounds(1e-9, 9e-9, 90).worse());
  // Lower is better.
  EXPECT_FALSE(with_bounds(1e-8, 1e-9, 1).worse());
  // A custom factor.
  RunRows before = rows(sample_report("run-1"));
  stream(before, "lab-b", "rx:lab-a/1").bit_errors = 10;
  stream(before, "lab-b", "rx:lab-a/1").ber_upper_bound = 1e-9;
  RunRows after = rows(sample_report("run-2"));
  stream(after, "lab-b", "rx:lab-a/1").bit_errors = 30;
  stream(after, "lab-b", "rx:lab-a/1").ber_upper_bound = 4e-9;
  EXPECT_TRUE(compare_runs(before, after, thresholds_with(&WorseThresholds::ber_bound_factor, 3)).worse());
}

TEST(RunComparison, AHigherBoundWithNoErrorOnlyMeansFewerBitsAndIsNotWorse) {
  const auto comparison = compare_changed([](RunRows& b) {
    auto& s = stream(b, "lab-b", "rx:lab-a/1");
    s.bits_compared = 6.96e7;
    s.ber_upper_bound = 4.3e-8;  // 100 times fewer bits, still no error
  });
  EXPECT_FALSE(comparison.worse());
}

TEST(RunComparison, LossMustRiseBothAbsolutelyAndRelatively) {
  const auto with_loss = [](double before, double after) {
    RunRows a = rows(sample_report("run-1"));
    stream(a, "lab-b", "rx:lab-a/1").loss_ratio = before;
    RunRows b = rows(sample_report("run-2"));
    stream(b, "lab-b", "rx:lab-a/1").loss_ratio = after;
    stream(b, "lab-b", "rx:lab-a/1").lost_frames = 120;
    return compare_runs(a, b);
  };
  const auto from_none = with_loss(0, 2e-4);
  ASSERT_EQ(metrics_of(from_none), std::vector<std::string>{"loss_ratio"});
  EXPECT_EQ(from_none.regressions[0].text, "loss ratio 0 -> 2.00e-04 (0 -> 120 frames lost)");
  EXPECT_FALSE(with_loss(0, 5e-7).worse()) << "below the absolute 1e-6";
  EXPECT_FALSE(with_loss(1e-3, 1.5e-3).worse()) << "less than twice as much";
  EXPECT_TRUE(with_loss(1e-3, 2.5e-3).worse());
  EXPECT_FALSE(with_loss(1e-3, 0).worse()) << "an improvement";
}

TEST(RunComparison, RetransmitsMustDoubleAndGrowByTheAbsoluteCount) {
  const auto with_retransmits = [](double after, const WorseThresholds& thresholds = {}) {
    return compare_changed([&](RunRows& b) { stream(b, "lab-b", "sink:lab-a/qp0").retransmits = after; }, thresholds);
  };
  const auto doubled = with_retransmits(80);
  ASSERT_EQ(metrics_of(doubled), std::vector<std::string>{"retransmits"});
  EXPECT_EQ(doubled.regressions[0].text, "retransmits 40 -> 80");
  EXPECT_EQ(doubled.regressions[0].subject(), "fabric lab-b sink:lab-a/qp0 (lab-a->lab-b)");
  EXPECT_EQ(doubled.regressions[0].flow, "10.0.1.1:49152 -> 10.0.2.1:4791 udp");
  EXPECT_FALSE(with_retransmits(70).worse()) << "less than twice";
  EXPECT_FALSE(with_retransmits(80, thresholds_with(&WorseThresholds::retransmits_absolute, 50)).worse())
      << "40 more, not 50";
  EXPECT_FALSE(with_retransmits(0).worse());
}

TEST(RunComparison, ThroughputFivePercentLowerIsWorseAndFourIsNot) {
  const auto with_throughput = [](double share, const WorseThresholds& thresholds = {}) {
    return compare_changed([&](RunRows& b) { stream(b, "lab-a", "tx:lab-b").throughput_bps = 239033902.75 * share; },
                           thresholds);
  };
  const auto five = with_throughput(0.95);
  ASSERT_EQ(metrics_of(five), std::vector<std::string>{"throughput_bps"});
  EXPECT_EQ(five.regressions[0].text, "throughput 239 Mbit/s -> 227 Mbit/s (-5.0 %)");
  EXPECT_FALSE(with_throughput(0.96).worse());
  EXPECT_FALSE(with_throughput(1.5).worse());
  EXPECT_TRUE(with_throughput(0.96, thresholds_with(&WorseThresholds::throughput_drop, 0.03)).worse());
}

TEST(RunComparison, LatencyP99TwentyPercentHigherIsWorse) {
  const auto with_p99 = [](double p99) {
    return compare_changed([&](RunRows& b) { stream(b, "lab-a", "rx:lab-b/1").latency_p99_ns = p99; });
  };
  const auto higher = with_p99(236543.0 * 1.25);
  ASSERT_EQ(metrics_of(higher), std::vector<std::string>{"latency_p99_ns"});
  EXPECT_EQ(higher.regressions[0].text, "latency p99 236.543 us -> 295.679 us (+25.0 %)");
  EXPECT_FALSE(with_p99(236543.0 * 1.1).worse());
  EXPECT_FALSE(with_p99(100000).worse());
}

TEST(RunComparison, CompletionErrorsWhereThereWereNoneAreWorse) {
  const auto comparison =
      compare_changed([](RunRows& b) { stream(b, "lab-b", "sink:lab-a/qp0").completion_errors = 1; });
  ASSERT_EQ(metrics_of(comparison), std::vector<std::string>{"completion_errors"});
  EXPECT_EQ(comparison.regressions[0].text, "completion errors 0 -> 1");
}

TEST(RunComparison, AStreamMissingFromTheLaterRunIsReportedAndANewOneIsNotWorse) {
  const auto comparison = compare_changed([](RunRows& b) {
    std::erase_if(b.streams,
                  [](const StreamRow& row) { return row.agent == "lab-a" && row.stream_id == "rx:lab-b/1"; });
    StreamRow added = b.streams.front();
    added.stream_id = "tx:lab-c";
    added.peer = "lab-c";
    b.streams.push_back(added);
  });
  ASSERT_EQ(metrics_of(comparison), std::vector<std::string>{"missing"});
  EXPECT_EQ(comparison.regressions[0].subject(), "cable lab-a rx:lab-b/1 (lab-b->lab-a)");
  EXPECT_EQ(comparison.regressions[0].text, "in the earlier run, missing from the later one");
  EXPECT_EQ(comparison.new_streams, std::vector<std::string>{"cable lab-a tx:lab-c"});
  EXPECT_EQ(comparison.compared_streams, 6u);
}

TEST(RunComparison, StreamsAreMatchedByTestAgentAndStreamIdNotByPosition) {
  const auto comparison = compare_changed([](RunRows& b) { std::reverse(b.streams.begin(), b.streams.end()); });
  EXPECT_FALSE(comparison.worse());
  EXPECT_EQ(comparison.compared_streams, 7u);
}

TEST(RunComparison, AFabricLinkThatLocalisationNowNamesIsWorse) {
  RunRows before = rows(sample_report("run-1"));
  before.links.clear();
  const RunRows after = rows(sample_report("run-2"));
  const auto comparison = compare_runs(before, after);
  ASSERT_EQ(metrics_of(comparison), std::vector<std::string>{"suspect"});
  EXPECT_EQ(comparison.regressions[0].subject(), "fabric link spine-1 eth2 -> leaf-2 eth1 (cable C7)");
  EXPECT_EQ(comparison.regressions[0].text,
            "localisation now names it (high confidence; 1 of 1 flows through it failed)");
  // Named in both runs: no change. A low-confidence suspect is not named.
  EXPECT_FALSE(compare_runs(after, after).worse());
  RunRows low = after;
  low.links[0].confidence = "low";
  EXPECT_FALSE(compare_runs(before, low).worse());
}

TEST(RunComparison, SeveralRegressionsOfOneStreamAreEachListed) {
  const auto comparison = compare_changed([](RunRows& b) {
    auto& s = stream(b, "lab-b", "rx:lab-a/1");
    s.passed = false;
    s.bit_errors = 5;
    s.loss_ratio = 0.01;
    s.throughput_bps = 1e8;
  });
  EXPECT_EQ(metrics_of(comparison), (std::vector<std::string>{"passed", "bit_errors", "loss_ratio", "throughput_bps"}));
}

}  // namespace
}  // namespace tusk::testing
