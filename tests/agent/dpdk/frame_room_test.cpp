// Sizing ports for jumbo frames: mbufs, and net_af_packet's ring frames, for --dpdk-max-frame.
#include "agent/dpdk/frame_room.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using namespace tusk::dpdk;

TEST(FrameRoom, ReadsOneVdevArgumentAndNotAPrefixOfAnother) {
  const std::string vdev = "net_af_packet0,iface=lab0,framesz=4096,blocksz=8192";
  EXPECT_EQ(vdev_argument(vdev, "framesz"), "4096");
  EXPECT_EQ(vdev_argument(vdev, "blocksz"), "8192");
  EXPECT_EQ(vdev_argument(vdev, "iface"), "lab0");
  EXPECT_FALSE(vdev_argument(vdev, "frame").has_value());
  EXPECT_FALSE(vdev_argument("net_af_packet0", "iface").has_value());
}

TEST(FrameRoom, WithoutAMaxFrameNothingChanges) {
  EXPECT_EQ(vdev_for_max_frame("net_af_packet0,iface=lab0", 0), "net_af_packet0,iface=lab0");
  EXPECT_EQ(mbuf_data_room("net_af_packet0,iface=lab0", 0), kDefaultMbufDataRoom);
  EXPECT_EQ(mbuf_data_room("", 0), kDefaultMbufDataRoom);
}

TEST(FrameRoom, AfPacketGetsRingFramesThatHoldAJumboFrameAndMbufsThatHoldTheRingFrame) {
  const std::string vdev = vdev_for_max_frame("net_af_packet0,iface=lab0", 9216);
  EXPECT_EQ(vdev, "net_af_packet0,iface=lab0,framesz=12288,blocksz=12288");
  // The PMD refuses an RX queue whose mbufs are smaller than a ring frame less its 32-byte header.
  EXPECT_GE(mbuf_data_room(vdev, 9216), 12288u - 32u);
  EXPECT_EQ(mbuf_data_room(vdev, 9216) % 64, 0u);
}

TEST(FrameRoom, ANicGetsMbufsForTheFrameAndATagButNoRingArguments) {
  EXPECT_EQ(vdev_for_max_frame("net_pcap0,iface=x", 9216), "net_pcap0,iface=x");
  const auto room = mbuf_data_room("", 9216);
  EXPECT_GE(room, 9216u + 4u);
  EXPECT_LT(room, 9216u + 4u + 64u);
}

TEST(FrameRoom, AStandardMaxFrameLeavesTheDefaultRing) {
  EXPECT_EQ(vdev_for_max_frame("net_af_packet0,iface=lab0", 1518), "net_af_packet0,iface=lab0");
  EXPECT_EQ(mbuf_data_room("net_af_packet0,iface=lab0", 1518), kDefaultMbufDataRoom);
}

TEST(FrameRoom, AGivenRingFrameTooSmallIsRefusedWithWhatWouldDo) {
  try {
    vdev_for_max_frame("net_af_packet0,iface=lab0,framesz=2048", 9000);
    FAIL() << "a 2048-byte ring frame cannot hold 9000-byte frames";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("net_af_packet0,iface=lab0,framesz=2048"), std::string::npos) << what;
    EXPECT_NE(what.find("--dpdk-max-frame 9000"), std::string::npos) << what;
    EXPECT_NE(what.find("framesz=12288"), std::string::npos) << what;
  }
  // Big enough: kept as given.
  EXPECT_EQ(vdev_for_max_frame("net_af_packet0,iface=lab0,framesz=16384,blocksz=16384", 9000),
            "net_af_packet0,iface=lab0,framesz=16384,blocksz=16384");
  EXPECT_THROW(vdev_for_max_frame("net_af_packet0,framesz=big", 9000), std::invalid_argument);
}
