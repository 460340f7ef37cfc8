// The RoCEv2 UDP source port of a QP, as Linux's rdma_get_udp_sport works it out.
#include "agent/rdma/roce_udp_port.hpp"

#include <gtest/gtest.h>

namespace tusk::rdma {
namespace {

TEST(RoceUdpPort, WithoutAFlowLabelThePortComesFromBothQpNumbersAlike) {
  EXPECT_EQ(roce_udp_source_port(0, 17, 18), 49458);  // 17 * 18 = 306, in the dynamic range
  EXPECT_EQ(roce_udp_source_port(0, 0x123456, 0x654321), 63367);
  // Both ends of a connection agree.
  EXPECT_EQ(roce_udp_source_port(0, 0x654321, 0x123456), 63367);
}

TEST(RoceUdpPort, AFlowLabelFoldsItsTop6BitsIntoItsLow14) {
  EXPECT_EQ(roce_udp_source_port(0xABCDE, 1, 2), 0xFCF4);  // 0x3CDE ^ 0x2A, | 0xC000
  EXPECT_EQ(roce_udp_source_port(1, 17, 18), 0xC001);      // the QP numbers do not count then
  for (std::uint32_t label = 1; label < kFlowLabelMask; label += 4099) {
    EXPECT_GE(roce_udp_source_port(label, 1, 1), kRoceSourcePortMin);
  }
}

}  // namespace
}  // namespace tusk::rdma
