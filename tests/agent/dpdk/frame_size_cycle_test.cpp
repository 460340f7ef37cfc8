#include "agent/dpdk/frame_size_cycle.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

namespace tusk::dpdk {
namespace {

const std::vector<std::uint32_t> kImix{64, 64, 64, 64, 64, 64, 64, 576, 576, 576, 576, 1500};

TEST(FrameSizeCycle, OneSizeWhenNoListIsGiven) {
  FrameSizeCycle cycle(FrameSpec{}, 1000, {});
  ASSERT_EQ(cycle.sizes().size(), 1u);
  for (int i = 0; i < 3; ++i) {
    const FrameSize& size = cycle.next();
    EXPECT_EQ(size.frame, 1000u);
    EXPECT_EQ(size.payload, 1000u - kEthernetHeaderLength - kTuskHeaderLength);
  }
  EXPECT_DOUBLE_EQ(cycle.mean_frame_bytes(), 1000.0);
  EXPECT_EQ(cycle.largest_frame_bytes(), 1000u);
}

TEST(FrameSizeCycle, ImixIsSentInTheListsOrderAndEveryCycleCarriesTheWholeMix) {
  FrameSizeCycle cycle(FrameSpec{}, 1500, kImix);
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < kImix.size(); ++i) ASSERT_EQ(cycle.next().frame, kImix[i]) << round << "/" << i;
  }
  // 7 × 64 + 4 × 576 + 1500 = 4252 B over 12 frames.
  EXPECT_DOUBLE_EQ(cycle.mean_frame_bytes(), 4252.0 / 12);
  EXPECT_EQ(cycle.largest_frame_bytes(), 1500u);
}

TEST(FrameSizeCycle, PayloadsLeaveRoomForTheVlanTag) {
  FrameSpec tagged;
  tagged.tagged = true;
  tagged.vlan = 100;
  FrameSizeCycle cycle(tagged, 0, {64, 1500});
  EXPECT_EQ(cycle.next().payload, 64u - kEthernetHeaderLength - kVlanTagLength - kTuskHeaderLength);
  EXPECT_EQ(cycle.next().payload, 1500u - kEthernetHeaderLength - kVlanTagLength - kTuskHeaderLength);
}

TEST(FrameSizeCycle, CopiesCycleIndependently) {
  // The engine keeps one per stream: each stream gets the whole mix, whatever the others do.
  const FrameSizeCycle prototype(FrameSpec{}, 0, {64, 576, 1500});
  std::vector<FrameSizeCycle> streams(2, prototype);
  std::map<int, std::vector<std::uint16_t>> seen;
  for (int i = 0; i < 6; ++i) seen[i % 2].push_back(streams[i % 2].next().frame);
  EXPECT_EQ(seen[0], (std::vector<std::uint16_t>{64, 576, 1500}));
  EXPECT_EQ(seen[1], (std::vector<std::uint16_t>{64, 576, 1500}));
}

TEST(FrameSizeCycle, RejectsASizeThatCannotHoldTheHeadersNamingIt) {
  EXPECT_THROW(FrameSizeCycle(FrameSpec{}, 0, {64, 40}), std::invalid_argument);
  try {
    FrameSizeCycle(FrameSpec{}, 0, {64, 40});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("40 B"), std::string::npos) << e.what();
  }
  EXPECT_THROW(FrameSizeCycle(FrameSpec{}, 0, {70'000}), std::invalid_argument);
  FrameSpec bad;
  bad.vlan = 5;  // a VLAN id on an untagged spec
  EXPECT_THROW(FrameSizeCycle(bad, 1000, {}), std::invalid_argument);
}

}  // namespace
}  // namespace tusk::dpdk
