#include "agent/rdma/counters/ethtool_counter_names.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/counter_names.hpp"

namespace tusk::counters::ethtool {
namespace {

// `ethtool -S` of an mlx5 port with PFC on priority 3 only, as the driver lists it (names from the
// kernel's mlx5 counters.rst; a cut-down listing: the driver has hundreds more, per queue).
constexpr std::string_view kMlx5Listing = R"(NIC statistics:
     rx_packets: 1000
     rx_bytes: 1500000
     tx_packets: 900
     tx_bytes: 1200000
     rx_out_of_buffer: 2
     rx_bits_phy: 80000000000
     rx_corrected_bits_phy: 8
     rx_pcs_symbol_err_phy: 1
     rx_crc_errors_phy: 3
     rx_symbol_err_phy: 4
     rx_pause_ctrl_phy: 5
     tx_pause_ctrl_phy: 6
     rx_discards_phy: 7
     tx_discards_phy: 9
     link_down_events_phy: 0
     rx_prio3_bytes: 1400000
     rx_prio3_packets: 950
     rx_prio3_pause: 40
     rx_prio3_pause_duration: 1200
     rx_prio3_pause_transition: 20
     tx_prio3_pause: 30
     tx_prio3_pause_duration: 800
     rx_global_pause: 0
     ch0_arm: 11
)";

struct Listing {
  std::vector<std::string> names;  // in the driver's order
  Values values;
};

Listing parse(std::string_view text) {
  Listing listing;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.rfind(": ");
    if (colon == std::string::npos) continue;  // "NIC statistics:"
    const auto begin = line.find_first_not_of(' ');
    std::string name = line.substr(begin, colon - begin);
    listing.values.emplace(name, std::stoull(line.substr(colon + 2)));
    listing.names.push_back(std::move(name));
  }
  return listing;
}

Values canonical(const Listing& listing) {
  return reported_values(reported_names(listing.names), listing.values);
}

TEST(EthtoolCounterNames, Mlx5ListingUnderCanonicalNames) {
  const Values values = canonical(parse(kMlx5Listing));
  EXPECT_EQ(values.at("out_of_buffer"), 2u);
  EXPECT_EQ(values.at(std::string(kRxPhyBits)), 80000000000u);
  EXPECT_EQ(values.at(std::string(kRxFecCorrectedBits)), 8u);
  EXPECT_EQ(values.at(std::string(kSymbolError)), 1u);
  EXPECT_EQ(values.at("rx_crc_errors"), 3u);
  EXPECT_EQ(values.at("rx_symbol_error_packets"), 4u);
  EXPECT_EQ(values.at("rx_link_pause_frames"), 5u);
  EXPECT_EQ(values.at("tx_link_pause_frames"), 6u);
  EXPECT_EQ(values.at(std::string(kRxDiscards)), 7u);
  EXPECT_EQ(values.at("rx_pause_frames_prio3"), 40u);
  EXPECT_EQ(values.at("rx_pause_duration_us_prio3"), 1200u);
  EXPECT_EQ(values.at("tx_pause_frames_prio3"), 30u);
  EXPECT_EQ(values.at("tx_pause_duration_us_prio3"), 800u);
  // The driver names that were mapped are gone.
  for (const char* driver_name : {"rx_discards_phy", "rx_prio3_pause", "rx_pause_ctrl_phy", "rx_out_of_buffer"}) {
    EXPECT_FALSE(values.contains(driver_name)) << driver_name;
  }
}

TEST(EthtoolCounterNames, UnknownNamesAreKeptRawWithoutAKind) {
  const Values values = canonical(parse(kMlx5Listing));
  for (const char* raw : {"tx_discards_phy", "link_down_events_phy", "rx_prio3_packets", "rx_prio3_pause_transition",
                          "rx_global_pause", "ch0_arm"}) {
    ASSERT_TRUE(values.contains(raw)) << raw;
    EXPECT_FALSE(ethtool_counter_kind(raw)) << raw;
  }
}

TEST(EthtoolCounterNames, RawNamesThatReadAsCanonicalOnesCannotBeJudged) {
  // The netdev's own tx_bytes must not add to a run's rate, another driver's rx_pause_frames must
  // not be taken for Tusk's total.
  const Values values = canonical(parse(kMlx5Listing));
  EXPECT_FALSE(values.contains("tx_bytes"));
  EXPECT_EQ(values.at("ethtool:tx_bytes"), 1200000u);
  EXPECT_EQ(values.at("ethtool:rx_bytes"), 1500000u);
  EXPECT_EQ(values.at("rx_packets"), 1000u);  // no stream counts under rx_packets: raw
  const std::vector<std::string> other_driver{"rx_pause_frames", "pause_frames", "rx_discards"};
  const auto names = reported_names(other_driver);
  ASSERT_EQ(names.size(), 3u);
  for (const auto& entry : names) EXPECT_EQ(entry.name, "ethtool:" + entry.driver_name);
}

TEST(EthtoolCounterNames, TwoDriverNamesForOneCounterKeepTheFirst) {
  const std::vector<std::string> names{"rx_crc_errors_phy", "rx_crc_errors", "rx_crc_errors_phy"};
  const auto reported = reported_names(names);
  ASSERT_EQ(reported.size(), 2u);  // the repeated name once
  EXPECT_EQ(reported[0].name, "rx_crc_errors");
  EXPECT_EQ(reported[1].name, "ethtool:rx_crc_errors");
}

TEST(EthtoolCounterNames, EveryPriorityZeroToSevenAndNoOther) {
  for (unsigned priority = 0; priority < kPriorities; ++priority) {
    const auto p = std::to_string(priority);
    const auto mapped = map_ethtool_counter("tx_prio" + p + "_pause_duration");
    ASSERT_TRUE(mapped) << p;
    EXPECT_EQ(mapped->canonical, "tx_pause_duration_us_prio" + p);
    EXPECT_EQ(mapped->kind, CounterKind::kCongestion);
    EXPECT_EQ(ethtool_counter_kind("rx_pause_frames_prio" + p), CounterKind::kCongestion);
  }
  EXPECT_FALSE(map_ethtool_counter("rx_prio8_pause"));
  EXPECT_FALSE(map_ethtool_counter("rx_prio_pause"));
  EXPECT_FALSE(map_ethtool_counter("rx_prio33_pause"));
  EXPECT_FALSE(ethtool_counter_kind("rx_pause_frames_prio8"));
}

TEST(EthtoolCounterNames, KindsFollowTheRdmaTable) {
  EXPECT_EQ(ethtool_counter_kind(kRxDiscards), CounterKind::kError);
  EXPECT_EQ(ethtool_counter_kind(kSymbolError), CounterKind::kError);
  EXPECT_EQ(ethtool_counter_kind(kRxFecCorrectedBits), CounterKind::kError);
  EXPECT_EQ(ethtool_counter_kind(kRxPhyBits), CounterKind::kTraffic);
  EXPECT_EQ(ethtool_counter_kind(kPauseFrames), CounterKind::kCongestion);
  // Shared names mean the same on both sides.
  EXPECT_EQ(ethtool_counter_kind(kOutOfBuffer), rdma::rdma_counter_kind(kOutOfBuffer));
  EXPECT_EQ(ethtool_counter_kind(kSymbolError), rdma::rdma_counter_kind(kSymbolError));
}

TEST(EthtoolCounterNames, EachDriverNameOnce) {
  std::set<std::string_view> seen;
  for (const auto& entry : ethtool_counter_table())
    EXPECT_TRUE(seen.insert(entry.driver_name).second) << entry.driver_name;
}

TEST(EthtoolPauseTotals, PerPriorityCountsAreSummedAndTheLinkCountIsNotAdded) {
  Values values = canonical(parse(kMlx5Listing));
  values["rx_pause_frames_prio4"] = 2;  // a second PFC priority
  add_pause_totals(values);
  EXPECT_EQ(values.at("rx_pause_frames"), 42u);  // 40 + 2; rx_link_pause_frames (5) not added
  EXPECT_EQ(values.at("tx_pause_frames"), 30u);
  EXPECT_EQ(values.at(std::string(kPauseFrames)), 72u);
  EXPECT_EQ(values.at("rx_link_pause_frames"), 5u);  // still reported
}

TEST(EthtoolPauseTotals, WithoutPfcTheLinkLevelCountIsTheTotal) {
  Values values{{"rx_link_pause_frames", 5}, {"tx_link_pause_frames", 6}};
  add_pause_totals(values);
  EXPECT_EQ(values.at("rx_pause_frames"), 5u);
  EXPECT_EQ(values.at("tx_pause_frames"), 6u);
  EXPECT_EQ(values.at("pause_frames"), 11u);
}

TEST(EthtoolPauseTotals, OneDirectionOnlyAndNone) {
  Values rx_only{{"rx_pause_frames_prio0", 3}};
  add_pause_totals(rx_only);
  EXPECT_EQ(rx_only.at("pause_frames"), 3u);
  EXPECT_FALSE(rx_only.contains("tx_pause_frames"));
  Values none{{"rx_crc_errors", 1}};
  add_pause_totals(none);
  EXPECT_EQ(none.size(), 1u);  // no pause counters: no totals, so max_pause_frames says "not measured"
}

}  // namespace
}  // namespace tusk::counters::ethtool
