// The one conversion between packet, bit and byte rates that the controller's checks, its plans
// and the agent's pacing and safety check all use.
#include "common/rates.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tusk {
namespace {

const std::vector<std::uint32_t> kImix{64, 64, 64, 64, 64, 64, 64, 576, 576, 576, 576, 1500};

TEST(Rates, ASizeListReplacesTheSingleSize) {
  const SizeMix imix = size_mix(9000, kImix);
  EXPECT_NEAR(imix.mean_bytes, 4252.0 / 12, 1e-9);
  EXPECT_EQ(imix.largest_bytes, 1500u);
  const SizeMix single = size_mix(1500, std::vector<std::uint32_t>{});
  EXPECT_DOUBLE_EQ(single.mean_bytes, 1500);
  EXPECT_EQ(single.largest_bytes, 1500u);
}

TEST(Rates, APacketRateOffersItsMeanBitRateAndIsCappedAtItsLargestFrame) {
  const OfferedRate offered = offered_rate(1e6, 0, size_mix(64, kImix));
  EXPECT_DOUBLE_EQ(offered.pps, 1e6);
  EXPECT_NEAR(offered.bps, 1e6 * 4252.0 / 12 * 8, 1e-3);
  EXPECT_DOUBLE_EQ(offered.capped_bps, 1e6 * 1500 * 8);  // not 64 B: the list replaces frame_size
}

TEST(Rates, ABitRateIsPacedAtTheMeanFrameAndCappedAsGiven) {
  const OfferedRate offered = offered_rate(0, 10e9, size_mix(64, kImix));
  EXPECT_NEAR(offered.pps, 10e9 / (4252.0 / 12 * 8), 1e-6);
  EXPECT_DOUBLE_EQ(offered.bps, 10e9);
  EXPECT_DOUBLE_EQ(offered.capped_bps, 10e9);
}

TEST(Rates, NoRateIsAsFastAsItCanWhichNoCapAllows) {
  const OfferedRate offered = offered_rate(0, 0, size_mix(1500, std::vector<std::uint32_t>{}));
  EXPECT_EQ(offered.pps, 0);
  EXPECT_EQ(offered.capped_bps, 0);
}

TEST(Rates, ThroughputIsBitsOverTimeAndZeroWithoutTime) {
  EXPECT_DOUBLE_EQ(throughput_bps(125'000'000, 1.0), 1e9);
  EXPECT_DOUBLE_EQ(throughput_bps(1000, 0.5), 16000);
  EXPECT_EQ(throughput_bps(1000, 0), 0);
  EXPECT_EQ(throughput_bps(1000, -1), 0);
}

}  // namespace
}  // namespace tusk
