#include "agent/rdma/pacing.hpp"

#include <gtest/gtest.h>

namespace tusk::rdma {
namespace {

// Soft-RoCE reports no packet pacing; a ConnectX-6 paces RC QPs from 1 Mbit/s to 200 Gbit/s
// (ibv_devinfo -v: packet_pacing_caps, qp_rate_limit_min/max in kbps, supported on RC and raw).
const PacingCaps kRxe{};
const PacingCaps kConnectX{1'000, 200'000'000, true};

TEST(Pacing, ANicThatPacesRcQpsTakesARateInsideItsRange) {
  const auto choice = choose_pacing("auto", 12.5e9, false, kConnectX, "mlx5_0");
  EXPECT_TRUE(choice.hardware);
  EXPECT_EQ(choice.kbps, 12'500'000u);
  EXPECT_TRUE(choice.refusal.empty());
  EXPECT_NE(choice.reason.find("paced by mlx5_0"), std::string::npos) << choice.reason;
  // A rate that is not whole kbit/s rounds up: the limit never undercuts the rate asked for.
  EXPECT_EQ(choose_pacing("hardware", 1'000'500, false, kConnectX, "mlx5_0").kbps, 1'001u);
}

TEST(Pacing, WithoutPacingCapsAutoFallsBackToTheAgentAndSaysWhy) {
  const auto choice = choose_pacing("auto", 1e9, false, kRxe, "rxe0");
  EXPECT_FALSE(choice.hardware);
  EXPECT_TRUE(choice.refusal.empty());
  EXPECT_NE(choice.reason.find("rxe0 has no per-QP rate limit"), std::string::npos) << choice.reason;
  EXPECT_NE(choice.reason.find("paced by the agent"), std::string::npos) << choice.reason;
}

TEST(Pacing, HardwareIsRefusedWhereTheNicCannotSayingWhy) {
  EXPECT_NE(choose_pacing("hardware", 1e9, false, kRxe, "rxe0").refusal.find("rxe0 has no per-QP rate limit"),
            std::string::npos);
  const auto below = choose_pacing("hardware", 500e3, false, kConnectX, "mlx5_0");
  EXPECT_FALSE(below.hardware);
  EXPECT_NE(below.refusal.find("between 1.00 Mbit/s and 200 Gbit/s"), std::string::npos) << below.refusal;
  EXPECT_NE(choose_pacing("hardware", 1e9, false, {1'000, 200'000'000, false}, "mlx5_0").refusal.find("RC"),
            std::string::npos);
  EXPECT_NE(choose_pacing("hardware", 1e9, true, kConnectX, "mlx5_0").refusal.find("bursts"), std::string::npos);
}

TEST(Pacing, AutoOutsideTheRangeOrInBurstsIsTheAgents) {
  EXPECT_FALSE(choose_pacing("auto", 500e3, false, kConnectX, "mlx5_0").hardware);
  EXPECT_FALSE(choose_pacing("auto", 400e9, false, kConnectX, "mlx5_0").hardware);
  EXPECT_FALSE(choose_pacing("auto", 1e9, true, kConnectX, "mlx5_0").hardware);
  EXPECT_TRUE(choose_pacing("auto", 1e9, true, kConnectX, "mlx5_0").refusal.empty());
}

TEST(Pacing, SoftwareOrNoRateNeverAsksTheNic) {
  EXPECT_FALSE(choose_pacing("software", 1e9, false, kConnectX, "mlx5_0").hardware);
  const auto unpaced = choose_pacing("hardware", 0, false, kRxe, "rxe0");
  EXPECT_FALSE(unpaced.hardware);
  EXPECT_TRUE(unpaced.refusal.empty()) << "no rate: nothing to pace, nothing to refuse";
}

}  // namespace
}  // namespace tusk::rdma
