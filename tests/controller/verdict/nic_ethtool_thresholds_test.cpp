// The thresholds on a NIC port's ethtool counters (max_pause_frames, max_rx_discards,
// max_pre_fec_ber): loaded for rdma tests only, and judged on the "nic" streams' metrics.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/counter_names.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/profile/threshold_catalog.hpp"
#include "controller/verdict/verdict.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

namespace c = counters;

constexpr std::string_view kRdmaProfile = R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    thresholds: {max_pause_frames: 0, max_rx_discards: 10, max_pre_fec_ber: 1e-9}
)";

TestSpec rdma_test() {
  return load_profile_text(testing::text_of(kRdmaProfile), "nic.yaml").tests.at(0);
}

const Threshold& threshold(const TestSpec& test, std::string_view key) {
  for (const auto& t : test.thresholds) {
    if (t.key == key) return t;
  }
  throw std::runtime_error("no threshold " + std::string(key));
}

proto::StreamCounters nic_stream(std::initializer_list<std::pair<std::string_view, std::uint64_t>> counts) {
  proto::StreamCounters stream;
  stream.set_stream_id("nic:mlx5_0/1");
  stream.set_kind("nic");
  stream.set_peer("b");
  for (const auto& [name, value] : counts) (*stream.mutable_counters())[std::string(name)] = value;
  return stream;
}

// The check of `key` in the verdict of `stream`; fails the test when there is none.
ThresholdCheck check_of(const StreamVerdict& verdict, std::string_view key) {
  for (const auto& check : verdict.checks) {
    if (check.threshold.key == key) return check;
  }
  ADD_FAILURE() << "no check of " << key;
  return {};
}

TEST(NicEthtoolThresholds, LoadForRdmaOnTheirMetrics) {
  const TestSpec test = rdma_test();
  EXPECT_EQ(threshold(test, "max_pause_frames").metric, c::kPauseFrames);
  EXPECT_EQ(threshold(test, "max_pause_frames").value, 0);
  EXPECT_EQ(threshold(test, "max_rx_discards").metric, c::kRxDiscards);
  EXPECT_EQ(threshold(test, "max_rx_discards").value, 10);
  EXPECT_EQ(threshold(test, "max_pre_fec_ber").metric, "pre_fec_ber");
  EXPECT_DOUBLE_EQ(threshold(test, "max_pre_fec_ber").value, 1e-9);
  EXPECT_EQ(find_threshold("max_pre_fec_ber")->value, ThresholdKind::Value::Ratio);
}

TEST(NicEthtoolThresholds, RefusedForDpdk) {
  const auto errors = testing::errors_thrown<ProfileInvalid>([] {
    load_profile_text(testing::text_of(R"(
name: x
agents: {count: 2}
tests:
  - name: u
    engine: dpdk
    duration: 1s
    thresholds: {max_pause_frames: 0, max_rx_discards: 0, max_pre_fec_ber: 1e-9}
)"),
                      "bad.yaml");
  });
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "bad.yaml:7:18: tests[0].thresholds.max_pause_frames: max_pause_frames is an rdma threshold; "
                        "this test's engine is dpdk",
                        "bad.yaml:7:39: tests[0].thresholds.max_rx_discards: max_rx_discards is an rdma threshold; "
                        "this test's engine is dpdk",
                        "bad.yaml:7:59: tests[0].thresholds.max_pre_fec_ber: max_pre_fec_ber is an rdma threshold; "
                        "this test's engine is dpdk",
                    }));
}

TEST(NicEthtoolThresholds, JudgedOnTheNicStreamsMetrics) {
  const TestSpec test = rdma_test();
  // 8 corrected bits in 8e10: 1e-10, under 1e-9.
  const auto clean = judge_stream(
      test, "a",
      nic_stream(
          {{c::kPauseFrames, 0}, {c::kRxDiscards, 10}, {c::kRxFecCorrectedBits, 8}, {c::kRxPhyBits, 80000000000}}),
      10);
  EXPECT_TRUE(check_of(clean, "max_pause_frames").passed);
  EXPECT_TRUE(check_of(clean, "max_rx_discards").passed);
  EXPECT_TRUE(check_of(clean, "max_pre_fec_ber").passed);
  EXPECT_DOUBLE_EQ(*check_of(clean, "max_pre_fec_ber").measured, 1e-10);

  const auto congested = judge_stream(
      test, "a",
      nic_stream(
          {{c::kPauseFrames, 3}, {c::kRxDiscards, 11}, {c::kRxFecCorrectedBits, 800}, {c::kRxPhyBits, 80000000000}}),
      10);
  EXPECT_FALSE(check_of(congested, "max_pause_frames").passed);
  EXPECT_EQ(*check_of(congested, "max_pause_frames").measured, 3);
  EXPECT_FALSE(check_of(congested, "max_rx_discards").passed);
  EXPECT_FALSE(check_of(congested, "max_pre_fec_ber").passed);
}

TEST(NicEthtoolThresholds, APortWithoutTheCountersIsNotMeasuredNotClean) {
  const TestSpec test = rdma_test();
  // rxe on a veth: no pause, discard or FEC counters; and no bits received, no ratio.
  const auto verdict = judge_stream(test, "a", nic_stream({{c::kRxFecCorrectedBits, 0}, {c::kRxPhyBits, 0}}), 10);
  for (const char* key : {"max_pause_frames", "max_rx_discards", "max_pre_fec_ber"}) {
    const auto check = check_of(verdict, key);
    EXPECT_FALSE(check.measured) << key;
    EXPECT_FALSE(check.passed) << key;
  }
}

TEST(NicEthtoolThresholds, OnlyNicStreamsAreJudgedOnThem) {
  const TestSpec test = rdma_test();
  proto::StreamCounters flow = nic_stream({{c::kPauseFrames, 3}});
  flow.set_kind("flow");
  EXPECT_TRUE(judge_stream(test, "a", flow, 10).checks.empty());
}

}  // namespace
}  // namespace tusk
